/** Label selectors as the API server's list calls and the scale subresource take them. Pure. */

/**
 * `metav1.LabelSelector` as client-go's `labels.Selector.String()` writes it: requirements sorted by key, values
 * sorted; the form of a list call's `labelSelector` and of a scale subresource's `status.labelSelector`.
 */
export function selectorString(sel: {
  matchLabels?: Record<string, string>;
  matchExpressions?: ReadonlyArray<{ key: string; operator: string; values?: string[] }>;
}): string {
  const parts: Array<{ key: string; s: string }> = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) parts.push({ key: k, s: `${k}=${v}` });
  for (const e of sel.matchExpressions ?? []) {
    const vals = [...(e.values ?? [])].sort().join(',');
    const s =
      e.operator === 'In'
        ? `${e.key} in (${vals})`
        : e.operator === 'NotIn'
          ? `${e.key} notin (${vals})`
          : e.operator === 'Exists'
            ? e.key
            : `!${e.key}`;
    parts.push({ key: e.key, s });
  }
  return parts
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((p) => p.s)
    .join(',');
}

/*
 * User values in messages: bounded and unambiguous. A value from a manifest can be megabytes long, or a YAML alias
 * graph that would expand exponentially if serialized, so messages never call JSON.stringify on user data; they
 * quote it through these helpers, which stop after a fixed budget.
 */

/** Longest quoted user value in a message, in characters (the quote marks and the ellipsis not counted). */
export const MAX_QUOTED = 120;
/** Most names listed in a message before "and N more". */
export const MAX_LISTED = 5;

/**
 * A user value as JSON-like text of at most `max` characters plus an ellipsis. Strings are quoted; objects and
 * arrays are serialized only as far as the budget reaches (never in full, so shared alias subtrees cost nothing).
 */
export function quoteValue(value: unknown, max = MAX_QUOTED): string {
  const out: string[] = [];
  let used = 0;
  const budgetLeft = () => max - used;
  const emit = (s: string): boolean => {
    if (used >= max) return false;
    const take = s.length > budgetLeft() ? s.slice(0, budgetLeft()) : s;
    out.push(take);
    used += take.length;
    return take.length === s.length;
  };
  const walk = (v: unknown, depth: number): boolean => {
    if (typeof v === 'string') return emit(JSON.stringify(v.length > max ? v.slice(0, max + 1) : v));
    if (v === null || typeof v !== 'object')
      return emit(v === undefined ? 'undefined' : typeof v === 'number' || typeof v === 'boolean' ? String(v) : typeof v);
    if (depth > 20) return emit('…');
    if (Array.isArray(v)) {
      if (!emit('[')) return false;
      for (let i = 0; i < v.length; i++) {
        if (i > 0 && !emit(',')) return false;
        if (!walk(v[i], depth + 1)) return false;
      }
      return emit(']');
    }
    if (!emit('{')) return false;
    let first = true;
    for (const k in v as Record<string, unknown>) {
      if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
      if (!first && !emit(',')) return false;
      first = false;
      if (!emit(`${JSON.stringify(k.length > max ? k.slice(0, max + 1) : k)}:`)) return false;
      if (!walk((v as Record<string, unknown>)[k], depth + 1)) return false;
    }
    return emit('}');
  };
  const complete = walk(value, 0);
  return complete ? out.join('') : `${out.join('')}…`;
}

/** Unquoted text cut to `max` characters with an ellipsis, for values printed bare (numbers written as strings). */
export function truncate(text: string, max = MAX_QUOTED): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A user-given name quoted and truncated like quoteValue, for "container "x" does not exist" style messages. */
export function quoteName(name: string, max = MAX_QUOTED): string {
  return quoteValue(name, max);
}

/** At most `max` names joined with ", ", each truncated, then "and N more" for the rest. */
export function listNames(names: readonly string[], max = MAX_LISTED): string {
  const shown = names.slice(0, max).map((n) => (n.length > MAX_QUOTED ? `${n.slice(0, MAX_QUOTED)}…` : n));
  const rest = names.length - shown.length;
  return rest > 0 ? `${shown.join(', ')} and ${rest} more` : shown.join(', ');
}

// C0 controls, DEL, C1 controls (ESC starts ANSI sequences; CR and LF forge lines), and the Unicode line
// separators and bidirectional overrides that make terminals and CI logs show something other than the bytes.
// eslint-disable-next-line no-control-regex -- matching control characters is the point: they are escaped
const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Text safe for a terminal or CI log line: every control character replaced by its escape (`\n`, `\x1b`, `\u202e`). */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE_TEXT, (c) => {
    switch (c) {
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default: {
        const code = c.charCodeAt(0);
        return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
      }
    }
  });
}

/**
 * A line of a text report that CI runners cannot read as a workflow command: runners treat a line whose first
 * non-blank characters are `::` as a command (`::error::`, `::add-mask::`, `::stop-commands::`), so such a line
 * gets a visible prefix. Control characters are escaped first, so a value cannot start a new line either.
 */
export function safeLine(line: string): string {
  const escaped = escapeControl(line);
  return /^\s*::/.test(escaped) ? `> ${escaped}` : escaped;
}

/**
 * Field projections: keep only the declared fields of a JSON object. Used where a reader declares what it reads
 * of objects it holds for long (the runtime's informer caches, the policy engine's cross-document rules), so
 * the rest can be dropped without a reader silently missing a field it did not declare.
 *
 * Field paths are dot-separated. A segment may select array elements: `containers[]` keeps every element,
 * `env[name^=KRUISE_]` the elements whose `name` starts with `KRUISE_`, `conditions[type=Ready]` those whose
 * `type` equals `Ready`. A path ending at an object or array keeps it whole; `*` keeps the whole object. A path
 * that does not exist in an object keeps nothing there.
 */

/** A field path as described in the module comment. */
export type FieldPath = string;

interface ElementSelector {
  /** Undefined: every element. */
  readonly key?: string;
  readonly op?: '=' | '^=';
  readonly value?: string;
}

interface Projection {
  whole: boolean;
  readonly fields: Map<string, Projection>;
  /** Set when the value is an array whose elements are selected. */
  elements?: Array<{ readonly selector: ElementSelector; readonly projection: Projection }>;
}

function emptyProjection(): Projection {
  return { whole: false, fields: new Map() };
}

const SEGMENT = /^([^[\]]+)(?:\[(?:([A-Za-z0-9_]+)(\^=|=)([^\]]*))?\])?$/;

function sameSelector(a: ElementSelector, b: ElementSelector): boolean {
  return a.key === b.key && a.op === b.op && a.value === b.value;
}

function addPath(root: Projection, path: FieldPath): void {
  if (path === '*') {
    root.whole = true;
    return;
  }
  let node = root;
  for (const raw of path.split('.')) {
    const m = SEGMENT.exec(raw);
    if (!m) throw new Error(`invalid field path segment "${raw}" in "${path}"`);
    const [, name, key, op, value] = m;
    let child = node.fields.get(name!);
    if (!child) node.fields.set(name!, (child = emptyProjection()));
    if (raw.includes('[')) {
      const selector: ElementSelector = key ? { key, op: op as '=' | '^=', value } : {};
      child.elements ??= [];
      let entry = child.elements.find((e) => sameSelector(e.selector, selector));
      if (!entry) child.elements.push((entry = { selector, projection: emptyProjection() }));
      node = entry.projection;
    } else {
      node = child;
    }
  }
  node.whole = true;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function selects(s: ElementSelector, element: unknown): boolean {
  if (s.key === undefined) return true;
  if (!isRecord(element)) return false;
  const v = element[s.key];
  if (typeof v !== 'string') return false;
  return s.op === '=' ? v === s.value : v.startsWith(s.value ?? '');
}

function merge(into: Projection, from: Projection): void {
  into.whole ||= from.whole;
  for (const [k, p] of from.fields) {
    let mine = into.fields.get(k);
    if (!mine) into.fields.set(k, (mine = emptyProjection()));
    merge(mine, p);
  }
  for (const e of from.elements ?? []) {
    into.elements ??= [];
    let mine = into.elements.find((x) => sameSelector(x.selector, e.selector));
    if (!mine) into.elements.push((mine = { selector: e.selector, projection: emptyProjection() }));
    merge(mine.projection, e.projection);
  }
}

function project(value: unknown, p: Projection): unknown {
  if (p.whole || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    if (!p.elements) return undefined;
    const out: unknown[] = [];
    for (const element of value) {
      const matching = p.elements.filter((e) => selects(e.selector, element));
      if (matching.length === 0) continue;
      let projection = matching[0]!.projection;
      if (matching.length > 1) {
        projection = emptyProjection();
        for (const m of matching) merge(projection, m.projection);
      }
      out.push(project(element, projection));
    }
    return out;
  }
  if (p.elements && p.fields.size === 0) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, child] of p.fields) {
    if (!(k in value)) continue;
    const v = project((value as Record<string, unknown>)[k], child);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** The projection of `paths`; throws on an invalid path. */
export function compileProjection(paths: readonly FieldPath[]): { readonly whole: boolean; apply(value: unknown): unknown } {
  const root = emptyProjection();
  for (const p of paths) addPath(root, p);
  return { whole: root.whole, apply: (value) => project(value, root) };
}

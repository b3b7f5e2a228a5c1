/**
 * Cache plans: each controller declares, per resource it watches, the fields it reads from cached
 * objects; the informer factory gives every resource one cache whose transform keeps the union of what
 * its readers declared. A new controller that reads pod labels therefore cannot get them silently
 * stripped by another controller's slimmer cache, and a reader that declared nothing for a resource is
 * refused loudly when it asks for that cache.
 *
 * Field paths are dot-separated. A segment may select array elements: `containers[]` keeps every
 * element, `env[name^=KRUISE_]` the elements whose `name` starts with `KRUISE_`, `conditions[type=Ready]`
 * those whose `type` equals `Ready`. A path ending at an object or array keeps it whole. `*` keeps the
 * whole object (less `metadata.managedFields`, which no reader uses).
 */
import type { ResourceType } from '../../contracts/resources.js';
import type { KubeObject } from './types.js';

/** A field path as described in the module comment. */
export type FieldPath = string;

/** What one controller reads of one resource's cached objects. */
export interface CacheRead {
  readonly resource: ResourceType;
  /** Fields read from cached objects; `['*']` for the whole object. */
  readonly fields: readonly FieldPath[];
}

/** Kept in every cache: what the informer and every key function need. */
export const BASE_FIELDS: readonly FieldPath[] = [
  'apiVersion',
  'kind',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'metadata.resourceVersion',
  'metadata.generation',
  'metadata.deletionTimestamp',
];

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
    if (!m) throw new Error(`cache plan: invalid field path segment "${raw}" in "${path}"`);
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

function stripManaged(obj: KubeObject): KubeObject {
  if (!obj.metadata?.managedFields) return obj;
  const { managedFields: _drop, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** The fields one resource's cache keeps, and the transform that keeps them. */
export interface ResourceCachePlan {
  readonly resource: ResourceType;
  /** Union of the declared fields (with the base fields), sorted; `['*']` when some reader needs everything. */
  readonly fields: readonly FieldPath[];
  readonly transform: (obj: KubeObject) => KubeObject;
}

function resourceKey(t: ResourceType): string {
  return `${t.group}/${t.resource}`;
}

/**
 * One cache plan per resource: the union of what `reads` declared. Refuses (throws) a declaration that
 * names the same resource with different versions, and invalid field paths.
 */
export class CachePlan {
  private readonly plans = new Map<string, ResourceCachePlan>();

  constructor(reads: readonly CacheRead[]) {
    const byResource = new Map<string, { resource: ResourceType; fields: Set<FieldPath> }>();
    for (const r of reads) {
      const key = resourceKey(r.resource);
      const seen = byResource.get(key);
      if (seen && seen.resource.version !== r.resource.version) {
        throw new Error(
          `cache plan: ${key} is read at versions ${seen.resource.version} and ${r.resource.version}; one cache serves one version`,
        );
      }
      const entry = seen ?? { resource: r.resource, fields: new Set<FieldPath>() };
      for (const f of r.fields) entry.fields.add(f);
      byResource.set(key, entry);
    }
    for (const [key, { resource, fields }] of byResource) {
      const all = fields.has('*') ? ['*'] : [...new Set([...BASE_FIELDS, ...fields])].sort();
      const root = emptyProjection();
      for (const f of all) addPath(root, f);
      const transform = root.whole ? stripManaged : (obj: KubeObject) => project(obj, root) as KubeObject;
      this.plans.set(key, { resource, fields: all, transform });
    }
  }

  /** The plan of `resource`; throws when no reader declared it (a controller forgot its `reads`). */
  for(resource: ResourceType): ResourceCachePlan {
    const plan = this.plans.get(resourceKey(resource));
    if (!plan) {
      throw new Error(
        `cache plan: nothing declared that it reads ${resourceKey(resource)}; add a CacheRead for it to the controller's \`reads\``,
      );
    }
    return plan;
  }

  /** Every resource with a cache, for diagnostics and tests. */
  all(): readonly ResourceCachePlan[] {
    return [...this.plans.values()];
  }
}

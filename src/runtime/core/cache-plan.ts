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
 * whole object (less `metadata.managedFields`, which no reader uses). Every cache of a plan shares one string
 * table (intern.ts): a pod's namespace, node name and images are the same strings as its node's and its owner's.
 */
import type { ResourceType } from '../../contracts/resources.js';
import type { KubeObject } from './types.js';
import { compileProjection, type FieldPath } from '../../api/field-projection.js';
import { StringInterner } from './intern.js';

/** A field path as described in `src/api/field-projection.ts`. */
export type { FieldPath };

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

  private readonly strings = new StringInterner();

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
      const projection = compileProjection(all);
      const keep = projection.whole ? stripManaged : (obj: KubeObject) => projection.apply(obj) as KubeObject;
      const transform = (obj: KubeObject) => this.strings.intern(keep(obj));
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

/**
 * Objects as upstream's own clients write them are accepted, at every version each kind is served at. A Go client serializes every non-pointer struct
 * field, set or not, as `{}`, and any field upstream v1.9.1's CRD schema allows may be present; such objects
 * must pass our CRD schema (nothing refused, nothing pruned) and our schema validation (the validating
 * webhook's and `validate`'s KRUISE-SCHEMA-001), or a Go program that works against upstream fails against us.
 *
 * The structure (which fields, empty structs, list and map sizes) is generated from upstream's schema. Leaf values
 * are ones both sides mean to accept: an enum value of our schema where it has one (upstream's Go types leave
 * many enums to the webhook), otherwise a plain value of the field's type. Pod templates (preserved unknown
 * fields on both sides) are the representative sample's.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KINDS, openApiV3Schema, validateObject, type KindDefinition } from '../../../src/api/index.js';
import { upstreamCrd } from '../../harness/upstream-crds.js';
import { compileOpenApi, prunedFields } from './openapi.js';
import { SAMPLES } from './samples.js';

type Json = Record<string, any>;

function upstreamSchema(def: KindDefinition, version: string): Json {
  const v = upstreamCrd(def.group, def.plural).spec.versions.find((x: Json) => x.name === version);
  if (!v) throw new Error(`upstream ${def.plural} has no ${version}`);
  return v.schema.openAPIV3Schema as Json;
}
/** Our CRD's schema of `def` at `version` (each served version's own fields). */
function ourSchema(def: KindDefinition, version: string): Json {
  return openApiV3Schema(def, version);
}

/** The value at `path` (property names) in `obj`, if any. */
function at(obj: unknown, path: readonly string[]): unknown {
  let cur: any = obj;
  for (const k of path) cur = cur === null || typeof cur !== 'object' ? undefined : cur[k];
  return cur;
}

const child = (schema: Json | undefined, key: string): Json | undefined =>
  schema?.properties?.[key] ?? (typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined);

/** A leaf value of `up`'s type that `ours` (same path in our schema) means to accept. */
function leaf(up: Json, ours: Json | undefined): fc.Arbitrary<unknown> {
  if (Array.isArray(ours?.enum) && ours.enum.length) return fc.constantFrom(...(ours.enum as unknown[]));
  if (Array.isArray(up.enum) && up.enum.length) return fc.constantFrom(...(up.enum as unknown[]));
  if (up['x-kubernetes-int-or-string']) return fc.constantFrom<unknown>(1, '25%');
  switch (up.type) {
    case 'integer':
      return fc.integer({ min: Math.max(0, up.minimum ?? 0), max: 5 });
    case 'number':
      return fc.constantFrom(0, 1.5);
    case 'boolean':
      return fc.boolean();
    case 'string':
      return up.format === 'date-time' ? fc.constant('2026-01-01T00:00:00Z') : fc.constantFrom('a', 'b1');
    default:
      return fc.constant({});
  }
}

/**
 * Objects of upstream's schema `up`. `empty` draws the Go serialization of unset fields: each object-typed
 * property as `{}` (recursively), each list with one such element, nothing else.
 */
function fromSchema(up: Json, ours: Json | undefined, path: string[], sample: unknown, empty: boolean): fc.Arbitrary<unknown> {
  if (up['x-kubernetes-preserve-unknown-fields'] && !up.properties) return fc.constant(at(sample, path) ?? {});
  if (up.type === 'array') {
    const item = fromSchema(up.items ?? {}, ours?.items, [...path, '0'], sample, empty);
    return empty ? item.map((i) => [i]) : fc.array(item, { maxLength: 2 });
  }
  if (up.type === 'object' && up.properties) {
    const required = new Set<string>(up.required ?? []);
    const entries: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [k, s] of Object.entries(up.properties as Record<string, Json>)) {
      const sub = fromSchema(s, child(ours, k), [...path, k], sample, empty);
      if (required.has(k)) entries[k] = sub;
      else if (!empty) entries[k] = fc.option(sub, { nil: undefined, freq: 2 });
      else if (s.properties || s.items?.properties) entries[k] = sub; // a struct, or a list of structs
    }
    return fc.record(entries).map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
  }
  if (up.type === 'object' && typeof up.additionalProperties === 'object') {
    if (empty) return fc.constant({});
    const value = fromSchema(up.additionalProperties, child(ours, '*'), [...path, '*'], sample, empty);
    return fc.dictionary(fc.constantFrom('k1', 'k2', 'example.io/k3'), value, { maxKeys: 2 });
  }
  return leaf(up, ours);
}

/** A whole object of `def` at `version`: generated spec, fixed metadata (the API server owns its rules), no status. */
function objects(def: KindDefinition, version: string, empty: boolean): fc.Arbitrary<Json> {
  const up = upstreamSchema(def, version);
  const sample = SAMPLES[def.kind as keyof typeof SAMPLES]();
  const spec = fromSchema(up.properties.spec, ourSchema(def, version).properties.spec, ['spec'], sample, empty);
  const namespaced = def.scope === 'Namespaced';
  return spec.map((s) => ({
    apiVersion: `${def.group}/${version}`,
    kind: def.kind,
    metadata: { name: 'x', ...(namespaced ? { namespace: 'default' } : {}) },
    spec: s,
  }));
}

/**
 * Refusals that are deliberate: upstream's own admission refuses the same objects (only the layer that says so
 * differs), so no client that works against upstream sends them. Keyed by kind, matched against the pointer.
 */
const SAME_AS_UPSTREAM_ADMISSION: readonly { kind: string; pointer: RegExp; reason: string }[] = [
  {
    kind: 'SidecarSet',
    pointer: /^\/spec\/(containers|initContainers)\/\d+\/name$/,
    reason: "upstream's SidecarSet webhook validates each container as a core Container, whose name is required",
  },
  {
    kind: 'ContainerRecreateRequest',
    pointer: /^\/spec\/containers$/,
    reason: 'upstream\'s CRR webhook refuses an empty container list ("containers list can not be null")',
  },
  {
    kind: 'ContainerRecreateRequest',
    pointer: /^\/spec\/activeDeadlineSeconds$/,
    reason: "upstream's CRR webhook refuses a deadline below 3 seconds",
  },
  {
    kind: 'ContainerRecreateRequest',
    pointer: /^\/spec\/containers\/\d+\/(ports|preStop|statusContext)(\/|$)/,
    reason: "upstream's CRR webhook refuses these when set (read-only: it copies them from the pod)",
  },
  {
    kind: 'ImagePullJob',
    pointer: /^\/spec\/completionPolicy\/activeDeadlineSeconds$/,
    reason: "upstream's ImagePullJob webhook refuses a deadline below pullPolicy.timeoutSeconds (default 600)",
  },
  {
    kind: 'ImageListPullJob',
    pointer: /^\/spec\/completionPolicy\/activeDeadlineSeconds$/,
    reason:
      'upstream admits the list, but each ImagePullJob made from it carries the deadline and its webhook refuses one below pullPolicy.timeoutSeconds (default 600), so no list with such a deadline pulls',
  },
];

function deliberate(kind: string, pointer: string): boolean {
  return SAME_AS_UPSTREAM_ADMISSION.some((d) => d.kind === kind && d.pointer.test(pointer));
}

/** What our CRD and our schema validation refuse of `obj` (empty when both accept it whole). */
function refusals(def: KindDefinition, version: string, obj: Json): string[] {
  const ours = ourSchema(def, version);
  const crd = compileOpenApi(ours);
  const out: string[] = [];
  if (!crd(obj))
    for (const e of crd.errors ?? []) {
      const pointer = e.keyword === 'required' ? `${e.instancePath}/${String(e.params.missingProperty)}` : e.instancePath;
      if (!deliberate(def.kind, pointer)) out.push(`CRD: ${pointer} ${e.message}`);
    }
  out.push(...prunedFields(ours, obj).map((p) => `CRD prunes ${p}`));
  for (const i of validateObject(obj).issues) if (!deliberate(def.kind, i.jsonPointer)) out.push(`schema: ${i.jsonPointer} ${i.message}`);
  return out;
}

// Every version each kind is served at: upstream's clients write v1beta1 for the kinds upstream v1.9 stores there.
const SERVED = KINDS.flatMap((d) => [d.version, ...(d.alsoServed ?? [])].map((v) => [`${d.kind} ${v}`, d, v] as const));

describe.each(SERVED)('%s as upstream clients write it', (_name, def, version) => {
  it('every struct empty, as a Go client sends unset struct fields', () => {
    fc.assert(
      fc.property(objects(def, version, true), (obj) => {
        expect(refusals(def, version, obj)).toEqual([]);
      }),
      { numRuns: 1 },
    );
  });

  it('any shape upstream v1.9.1 accepts', () => {
    fc.assert(
      fc.property(objects(def, version, false), (obj) => {
        expect(refusals(def, version, obj), JSON.stringify(obj)).toEqual([]);
      }),
      { numRuns: 200 },
    );
    // 200 generated objects through the schema and the webhook: seconds alone, more on a loaded machine.
  }, 120_000);
});

import { groupOf, KRUISE_GROUPS } from '../contracts/groups.js';
import { POD_TEMPLATE_PATHS } from '../contracts/pod-templates.js';
import { toPointer } from './locate.js';
import type { Manifest } from './types.js';
import { compileProjection, type FieldPath } from '../api/field-projection.js';
import { detectFeatures, type FeatureUse } from '../install/app-features.js';

export { imageReferenceError, isEmptySelector, labelValueError, qualifiedNameError, selectorMatches } from '../contracts/validators.js';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function obj(v: unknown): Obj {
  return isObj(v) ? v : {};
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function group(apiVersion: unknown): string {
  return typeof apiVersion === 'string' ? groupOf(apiVersion) : '';
}

export function isKruise(m: Manifest): boolean {
  return KRUISE_GROUPS.has(group(m.object.apiVersion));
}

export function isKind(m: Manifest, grp: string, kind: string): boolean {
  return m.object.kind === kind && group(m.object.apiVersion) === grp;
}

/** A pod template inside an object, with the pointer to it. */
export interface PodTemplate {
  readonly manifest: Manifest;
  /** Pointer to the template (`/spec/template`), or `""` for a Pod. */
  readonly pointer: string;
  readonly metadata: Obj;
  readonly spec: Obj;
  /** Pointer to the pod spec. */
  readonly specPointer: string;
}

/**
 * Memoizes a pure function of one argument by identity: several rules derive the same facts (pod templates,
 * containers, markers) from the same parsed objects, and objects are never mutated during a run.
 */
export function memo<K extends object, V>(fn: (k: K) => V): (k: K) => V {
  const cache = new WeakMap<K, V>();
  return (k) => {
    let v = cache.get(k);
    if (v === undefined) cache.set(k, (v = fn(k)));
    return v;
  };
}

/** The pod templates an object owns (none for kinds that own no pods). */
export const podTemplates = memo(podTemplatesOf);

/** The app features one object uses, alone (the gate and runtime-support rules each ask, for every object). */
export const featureUsesOf = memo((object: Record<string, unknown>): FeatureUse[] =>
  detectFeatures([{ object: object as never, path: '0' }]),
);

/**
 * A projection of pod-template owners to `fields` of their pod templates (paths relative to a template, e.g.
 * `metadata.labels`, `spec.containers[].name`) plus the object's identity and `objectFields` of the object
 * itself, for cross-document rules that read only those (`Rule.retain`). Returns undefined for kinds that own no
 * pods.
 */
export function podTemplateProjection(
  fields: readonly FieldPath[],
  objectFields: readonly FieldPath[] = [],
): (m: Manifest) => Record<string, unknown> | undefined {
  const projections = new Map<string, { apply(value: unknown): unknown }>();
  for (const [g, kinds] of Object.entries(POD_TEMPLATE_PATHS)) {
    for (const [kind, paths] of Object.entries(kinds)) {
      const full = paths.flatMap((path) => fields.map((f) => [...path, f].join('.')));
      projections.set(`${g}/${kind}`, compileProjection([...IDENTITY_FIELDS, ...objectFields, ...full]));
    }
  }
  return (m) => {
    const projection = projections.get(`${group(m.object.apiVersion)}/${String(m.object.kind)}`);
    return projection ? (projection.apply(m.object) as Record<string, unknown>) : undefined;
  };
}

/** What reports need of any object (`resourceRef`). */
const IDENTITY_FIELDS: readonly FieldPath[] = ['apiVersion', 'kind', 'metadata.name', 'metadata.generateName', 'metadata.namespace'];

function podTemplatesOf(m: Manifest): PodTemplate[] {
  const kinds = POD_TEMPLATE_PATHS[group(m.object.apiVersion)];
  const paths = kinds && typeof m.object.kind === 'string' ? kinds[m.object.kind] : undefined;
  if (!paths) return [];
  const out: PodTemplate[] = [];
  for (const path of paths) {
    let cur: unknown = m.object;
    for (const seg of path) cur = isObj(cur) ? cur[seg] : undefined;
    if (!isObj(cur)) continue;
    const pointer = toPointer(path);
    out.push({ manifest: m, pointer, metadata: obj(cur.metadata), spec: obj(cur.spec), specPointer: `${pointer}/spec` });
  }
  return out;
}

export interface Container {
  readonly name: string;
  readonly index: number;
  readonly value: Obj;
  readonly pointer: string;
}

/** `spec.containers` of a pod spec, with pointers. */
export const containers = memo(containersOf);

function containersOf(t: PodTemplate): Container[] {
  return arr(t.spec.containers).map((c, index) => ({
    name: typeof obj(c).name === 'string' ? (obj(c).name as string) : '',
    index,
    value: obj(c),
    pointer: `${t.specPointer}/containers/${index}`,
  }));
}

/** Finds an env var by name in a container, with its index. */
export function envVar(c: Container, name: string): { index: number; value: unknown } | undefined {
  const env = arr(c.value.env);
  for (let i = 0; i < env.length; i++) {
    const e = obj(env[i]);
    if (e.name === name) return { index: i, value: e.value };
  }
  return undefined;
}

import { toPointer } from './locate.js';
import type { Manifest } from './types.js';

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
  if (typeof apiVersion !== 'string') return '';
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

export const KRUISE_GROUPS = new Set(['apps.kruise.io', 'policy.kruise.io']);

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

// Where each pod-template owner keeps its pod template. Kinds not listed carry no pod and are skipped by the
// pod-level rules (the markers mean nothing elsewhere).
const TEMPLATE_PATHS: Record<string, Record<string, string[][]>> = {
  '': { Pod: [[]], ReplicationController: [['spec', 'template']], PodTemplate: [['template']] },
  apps: {
    Deployment: [['spec', 'template']],
    StatefulSet: [['spec', 'template']],
    DaemonSet: [['spec', 'template']],
    ReplicaSet: [['spec', 'template']],
  },
  batch: { Job: [['spec', 'template']], CronJob: [['spec', 'jobTemplate', 'spec', 'template']] },
  'apps.kruise.io': {
    CloneSet: [['spec', 'template']],
    StatefulSet: [['spec', 'template']],
    DaemonSet: [['spec', 'template']],
    BroadcastJob: [['spec', 'template']],
    AdvancedCronJob: [
      ['spec', 'template', 'jobTemplate', 'spec', 'template'],
      ['spec', 'template', 'broadcastJobTemplate', 'spec', 'template'],
    ],
  },
};

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

function podTemplatesOf(m: Manifest): PodTemplate[] {
  const kinds = TEMPLATE_PATHS[group(m.object.apiVersion)];
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

// Kubernetes validation (k8s.io/apimachinery/pkg/util/validation), which the API server applies to label keys
// and finalizers.
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Why `key` is not a Kubernetes qualified name (label key / finalizer), or undefined when it is one. */
export function qualifiedNameError(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return 'a qualified name has at most one "/"';
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) return 'the prefix before "/" is empty';
    if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) return `the prefix "${prefix}" is not a lowercase DNS subdomain`;
  }
  if (name.length === 0) return 'the name part is empty';
  if (name.length > 63) return 'the name part is longer than 63 characters';
  if (!QUALIFIED_NAME_PART.test(name)) return `the name part "${name}" must be alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric`;
  return undefined;
}

export function labelValueError(value: string): string | undefined {
  if (value.length > 63) return 'a label value is at most 63 characters';
  if (!LABEL_VALUE.test(value)) return 'a label value must be empty or alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric';
  return undefined;
}

// The reference grammar of the container registry ecosystem (distribution/reference), which kubelet and
// containerd apply when pulling.
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const NAME = `(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@(${DIGEST}))?$`);

/** Why `ref` is not a valid image reference, or undefined when it is one. */
export function imageReferenceError(ref: unknown): string | undefined {
  if (typeof ref !== 'string' || ref.length === 0) return 'the image reference is empty';
  if (ref !== ref.trim()) return 'the image reference has leading or trailing whitespace';
  const m = REFERENCE.exec(ref);
  if (!m) {
    if (/[A-Z]/.test(ref.split('/').slice(-1)[0]!.split(':')[0]!)) return 'repository names must be lowercase';
    return 'it does not match [registry/]repository[:tag][@digest]';
  }
  if (m[1]!.length > 255) return 'the repository name is longer than 255 characters';
  return undefined;
}

/** Kubernetes label-selector semantics (matchLabels AND matchExpressions). */
export function selectorMatches(selector: Obj, labels: Obj): boolean {
  for (const [k, v] of Object.entries(obj(selector.matchLabels))) if (labels[k] !== v) return false;
  for (const raw of arr(selector.matchExpressions)) {
    const e = obj(raw);
    const key = String(e.key);
    const values = arr(e.values).map(String);
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(String(labels[key]))) return false;
        break;
      case 'NotIn':
        if (has && values.includes(String(labels[key]))) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

export function isEmptySelector(selector: Obj): boolean {
  return Object.keys(obj(selector.matchLabels)).length === 0 && arr(selector.matchExpressions).length === 0;
}

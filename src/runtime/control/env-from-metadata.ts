/**
 * In-place update of env from metadata (gate InPlaceUpdateEnvFromMetadata): which containers read a label or
 * annotation through an env `fieldRef`, and the hash of those values. Two units act on it: the CloneSet
 * controller (which metadata changes it patches in place, and whether the daemon has restarted every container
 * whose values changed) and the node daemon's containermeta unit (the hash of the env a running container
 * started with, the hash the pod now asks for, and the `apps.kruise.io/runtime-containers-meta` record).
 *
 * Upstream's semantics: only env entries without a literal value whose fieldRef is `metadata.labels['k']` or
 * `metadata.annotations['k']` count, except SIDECARSET_VERSION(_ALT); values are hashed sorted by env name. The
 * hash value is this project's (FNV-1a over the sorted JSON), computed the same way on both sides.
 */
import type { Container, Pod } from '../core/types.js';

/** Env names the SidecarSet hot upgrade sets from metadata itself; a change of them never restarts a container. */
const EXCLUDED_ENV = new Set(['SIDECARSET_VERSION', 'SIDECARSET_VERSION_ALT']);

export type MetadataField = 'labels' | 'annotations';

export interface EnvMetadataRef {
  readonly env: string;
  readonly field: MetadataField;
  readonly key: string;
}

const SUBSCRIPTED = /^metadata\.(labels|annotations)\['(.*)'\]$/;

/** The env entries of `c` that read a label or annotation of the pod. */
export function envMetadataRefs(c: Pick<Container, 'env'>): EnvMetadataRef[] {
  const out: EnvMetadataRef[] = [];
  for (const e of c.env ?? []) {
    if (e.value || !e.valueFrom?.fieldRef || EXCLUDED_ENV.has(e.name)) continue;
    const m = SUBSCRIPTED.exec(e.valueFrom.fieldRef.fieldPath);
    if (m) out.push({ env: e.name, field: m[1] as MetadataField, key: m[2]! });
  }
  return out;
}

/** Whether `c` reads metadata `field` key `key` into its env. */
export function readsMetadata(c: Pick<Container, 'env'>, field: MetadataField, key: string): boolean {
  return envMetadataRefs(c).some((r) => r.field === field && r.key === key);
}

function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function hashValues(values: ReadonlyArray<{ name: string; value: string }>): number {
  const sorted = [...values].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // Zero means "not read yet" in the record, so a real hash never takes it.
  return fnv1a32(JSON.stringify(sorted.map((v) => (v.value ? { name: v.name, value: v.value } : { name: v.name })))) || 1;
}

/** The hash of the env values `c` should have now, from the pod's current labels and annotations. */
export function expectedEnvHash(
  c: Pick<Container, 'env'>,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> },
): number {
  return hashValues(envMetadataRefs(c).map((r) => ({ name: r.env, value: meta[r.field]?.[r.key] ?? '' })));
}

/** The hash of the env values a running container has (`env` maps its environment, as `env` printed it). */
export function currentEnvHash(c: Pick<Container, 'env'>, env: ReadonlyMap<string, string>): number {
  return hashValues(envMetadataRefs(c).map((r) => ({ name: r.env, value: env.get(r.env) ?? '' })));
}

/** Parses the output of `env` (NAME=value per line; a line without `=` is skipped). */
export function parseEnvOutput(stdout: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of stdout.trim().split('\n')) {
    const t = line.trim();
    const eq = t.indexOf('=');
    if (eq > 0) out.set(t.slice(0, eq), t.slice(eq + 1));
  }
  return out;
}

/** `apps.kruise.io/runtime-containers-meta`, upstream's shape. */
export interface RuntimeContainerMeta {
  name: string;
  containerID: string;
  restartCount: number;
  hashes: { plainHash: number; extractedEnvFromMetadataHash?: number };
}

export interface RuntimeContainerMetaSet {
  containers: RuntimeContainerMeta[];
}

/** The record, or undefined when absent or not of its shape (a hostile or stale value never throws). */
export function parseRuntimeContainerMeta(raw: string | undefined): RuntimeContainerMetaSet | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as { containers?: unknown };
    if (!v || !Array.isArray(v.containers)) return undefined;
    const containers = v.containers.filter(
      (c): c is RuntimeContainerMeta =>
        !!c &&
        typeof c === 'object' &&
        typeof (c as RuntimeContainerMeta).name === 'string' &&
        typeof (c as RuntimeContainerMeta).containerID === 'string',
    );
    return {
      containers: containers.map((c) => ({
        ...c,
        hashes: {
          plainHash: Number(c.hashes?.plainHash) || 0,
          extractedEnvFromMetadataHash: Number(c.hashes?.extractedEnvFromMetadataHash) || 0,
        },
      })),
    };
  } catch {
    return undefined;
  }
}

/**
 * Upstream's completion check for an update that changed env from metadata: every spec container is in
 * status and in the record with the same container ID, and the record's env hash equals what the pod asks for.
 */
export function envFromMetadataConsistent(pod: Pod, record: RuntimeContainerMetaSet | undefined): boolean {
  if (!record) return false;
  for (const c of pod.spec?.containers ?? []) {
    const status = pod.status?.containerStatuses?.find((s) => s.name === c.name);
    if (!status) return false;
    const meta = record.containers.find((m) => m.name === c.name);
    if (!meta || meta.containerID !== status.containerID) return false;
    if (meta.hashes.extractedEnvFromMetadataHash !== expectedEnvHash(c, pod.metadata)) return false;
  }
  return true;
}

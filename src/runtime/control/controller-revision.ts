/**
 * ControllerRevisions of the workloads that version only their pod template (CloneSet, Advanced StatefulSet,
 * Advanced DaemonSet), pure: the revision data, the hash and name as Kubernetes' controller history computes
 * them, the choice of the update revision and history truncation.
 */
import { LABEL_CONTROLLER_REVISION_HASH_KEY } from '../../contracts/index.js';
import type { KubeObject } from '../core/types.js';

/** k8s `rand` alphabet (no vowels, no confusable digits). */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** k8s `rand.SafeEncodeString`: each byte maps to the alphabet by remainder. */
export function safeEncode(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) out += SAFE_ALPHABET[b % SAFE_ALPHABET.length];
  return out;
}

/** FNV-1 (not 1a) 32-bit over bytes. */
export function fnv1(bytes: Uint8Array, h = 0x811c9dc5): number {
  for (const b of bytes) {
    h = Math.imul(h, 0x01000193) >>> 0;
    h = (h ^ b) >>> 0;
  }
  return h >>> 0;
}

/** FNV-1a 32-bit over bytes (CloneSet's volumeClaimTemplates hash). */
export function fnv1a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) {
    h = (h ^ b) >>> 0;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** JSON with object keys sorted at every level (Go's encoding of maps; stable across key order). */
export function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Revision data: `{"spec":{"template":{…,"$patch":"replace"}}}` with sorted keys. */
export function revisionData(template: unknown): Record<string, unknown> {
  return { spec: { template: { ...(template as Record<string, unknown>), $patch: 'replace' } } };
}

/** Hash of a revision: SafeEncode(decimal FNV-1 32 of the raw data followed by the decimal collision count). */
export function revisionHash(data: unknown, collisionCount: number): string {
  const raw = Buffer.from(sortedJson(data), 'utf8');
  const h = fnv1(Buffer.from(String(collisionCount), 'utf8'), fnv1(raw));
  return safeEncode(String(h));
}

/** `<parent ≤223 chars>-<hash>`. */
export function revisionName(parent: string, hash: string): string {
  return `${parent.slice(0, 223)}-${hash}`;
}

/** A ControllerRevision as read from the API. */
export interface Revision extends KubeObject {
  data?: unknown;
  revision?: number;
}

/** Same data (the hash label may differ after a collision). */
export function equalRevision(a: Revision, b: Revision): boolean {
  return sortedJson(a.data) === sortedJson(b.data);
}

export interface NewRevisionInput {
  readonly parentName: string;
  readonly namespace: string;
  readonly template: unknown;
  readonly templateLabels: Readonly<Record<string, string>>;
  readonly parentAnnotations: Readonly<Record<string, string>>;
  /** Annotations of the kind's own on top of the parent's (CloneSet: its volumeClaimTemplates hash). */
  readonly extraAnnotations?: Readonly<Record<string, string>>;
  readonly collisionCount: number;
  readonly revision: number;
  readonly ownerReference: NonNullable<KubeObject['metadata']['ownerReferences']>[number];
}

/** The ControllerRevision for a template (name, labels, annotations, data, revision number). */
export function newRevision(i: NewRevisionInput): Revision {
  const data = revisionData(i.template);
  const hash = revisionHash(data, i.collisionCount);
  const annotations: Record<string, string> = { ...i.parentAnnotations, ...i.extraAnnotations };
  delete annotations['kubectl.kubernetes.io/last-applied-configuration'];
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(i.parentName, hash),
      namespace: i.namespace,
      labels: { ...i.templateLabels, [LABEL_CONTROLLER_REVISION_HASH_KEY]: hash },
      annotations,
      ownerReferences: [i.ownerReference],
    },
    data,
    revision: i.revision,
  };
}

/** What to do to get the update revision among the existing ones. */
export type UpdateRevisionPlan =
  | { readonly action: 'reuse'; readonly revision: Revision }
  | { readonly action: 'bump'; readonly revision: Revision; readonly to: number }
  | { readonly action: 'create'; readonly revision: Revision };

/** Newest equal revision is reused; an older equal one gets the next revision number; else a new one. */
export function planUpdateRevision(existing: readonly Revision[], wanted: Revision): UpdateRevisionPlan {
  const sorted = [...existing].sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
  const max = sorted.length ? (sorted[sorted.length - 1]!.revision ?? 0) : 0;
  const equal = sorted.filter((r) => equalRevision(r, wanted));
  if (equal.length > 0) {
    const newestEqual = equal[equal.length - 1]!;
    if (newestEqual === sorted[sorted.length - 1]) return { action: 'reuse', revision: newestEqual };
    return { action: 'bump', revision: newestEqual, to: max + 1 };
  }
  return { action: 'create', revision: { ...wanted, revision: max + 1 } };
}

/** Revisions to delete: neither current nor update nor used by a pod, oldest first, beyond `limit`. */
export function revisionsToTruncate(
  existing: readonly Revision[],
  keep: ReadonlySet<string>,
  podRevisions: ReadonlySet<string>,
  limit: number,
): Revision[] {
  const dead = existing
    .filter((r) => !keep.has(r.metadata.name ?? '') && !podRevisions.has(r.metadata.name ?? ''))
    .sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
  const n = dead.length - Math.max(limit, 0);
  return n > 0 ? dead.slice(0, n) : [];
}

/** The template of a revision's data. */
export function templateOf(r: Revision | undefined): Record<string, unknown> | undefined {
  const t = ((r?.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec?.template ?? undefined) as
    Record<string, unknown> | undefined;
  if (!t) return undefined;
  const { $patch: _p, ...rest } = t;
  void _p;
  return rest;
}

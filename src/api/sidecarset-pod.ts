/**
 * What a SidecarSet and the pods it injected say to each other: which pods a set matches, the set's
 * hashes (with and without images), and the pod annotations that record what was injected
 * (`kruise.io/sidecarset-hash`, `-hash-without-image`, `-injected-list`). The pod webhook writes them, the
 * SidecarSet controller reads them; both take them from here.
 *
 * Hash values: upstream hashes Go's JSON encoding of the defaulted containers; ours is sha256 over the
 * canonical (key-sorted) JSON of the containers as stored. Both sides of every comparison are computed
 * here, so only the value differs from upstream, never the annotation's shape.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
  ANNOTATION_SIDECARSET_INJECTED_LIST,
  ANNOTATION_SIDECARSET_NATIVE_SIDECARS,
} from '../contracts/keys.js';
import { isEmptySelector, selectorMatches } from '../contracts/validators.js';
import type { SidecarSetHashEntry } from './pod-contracts.js';
import type { SidecarContainer, SidecarSet } from './kinds/sidecarset.js';

/** Kubernetes' `rand.SafeEncodeString` alphabet (no vowels, no confusable digits). */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function safeEncodeString(s: string): string {
  let out = '';
  for (const b of Buffer.from(s)) out += SAFE_ALPHABET[b % SAFE_ALPHABET.length];
  return out;
}

/** JSON with object keys sorted at every level, so equal values always give equal text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** True when the set asks for its containers as native sidecars. */
export function usesNativeSidecars(set: Pick<SidecarSet, 'metadata'>): boolean {
  return set.metadata.annotations?.[ANNOTATION_SIDECARSET_NATIVE_SIDECARS] === 'true';
}

function hashOf(containers: readonly SidecarContainer[], initContainers: readonly SidecarContainer[] | undefined, native: boolean): string {
  const body: Record<string, unknown> = { containers };
  // Native-sidecar init containers are upgraded like containers, so they are part of the hash; plain init
  // containers only run at start and never make a pod "not updated".
  const nativeInit = (initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  if (nativeInit.length > 0) body.initContainers = nativeInit;
  if (native) body.nativeSidecars = true;
  return safeEncodeString(createHash('sha256').update(canonicalJson(body)).digest('hex'));
}

/** The set's hash (`kruise.io/sidecarset-hash`): changes with anything injected containers carry. */
export function sidecarSetHash(set: Pick<SidecarSet, 'metadata' | 'spec'>): string {
  return hashOf(set.spec.containers ?? [], set.spec.initContainers, usesNativeSidecars(set));
}

/** The hash with images blanked (`kruise.io/sidecarset-hash-without-image`): equal when only images changed. */
export function sidecarSetHashWithoutImage(set: Pick<SidecarSet, 'metadata' | 'spec'>): string {
  const blank = (cs: readonly SidecarContainer[] | undefined) => cs?.map((c) => ({ ...c, image: '' }));
  return hashOf(blank(set.spec.containers) ?? [], blank(set.spec.initContainers), usesNativeSidecars(set));
}

/** Where a pod lives, as matching needs it. */
export interface PodPlace {
  readonly namespace: string;
  /** Labels of the pod's namespace (undefined: unknown, which no namespaceSelector matches). */
  readonly namespaceLabels: Readonly<Record<string, string>> | undefined;
  readonly labels: Readonly<Record<string, string>>;
}

/** Upstream PodMatchedSidecarSet: `namespace`, `namespaceSelector`, then `selector` (empty matches nothing). */
export function sidecarSetMatches(set: Pick<SidecarSet, 'spec'>, pod: PodPlace): boolean {
  const { selector, namespace, namespaceSelector } = set.spec;
  if (namespace && namespace !== pod.namespace) return false;
  if (namespaceSelector && (!pod.namespaceLabels || !selectorMatches(namespaceSelector, pod.namespaceLabels))) return false;
  if (!selector || isEmptySelector(selector)) return false;
  return selectorMatches(selector, pod.labels);
}

/** A pod's hash annotation, parsed; entries that are not objects are dropped (never a crash on bad input). */
export function parseSidecarSetHashes(raw: string | undefined): Record<string, SidecarSetHashEntry> {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    const out: Record<string, SidecarSetHashEntry> = {};
    for (const [k, e] of Object.entries(v as Record<string, unknown>)) {
      if (e && typeof e === 'object' && typeof (e as SidecarSetHashEntry).hash === 'string') out[k] = e as SidecarSetHashEntry;
    }
    return out;
  } catch {
    return {};
  }
}

/** The names in `kruise.io/sidecarset-injected-list`. */
export function injectedSidecarSets(annotations: Readonly<Record<string, string>> | undefined): string[] {
  return (annotations?.[ANNOTATION_SIDECARSET_INJECTED_LIST] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The hash entry the pod records for `setName` (undefined when the pod was not injected by it). */
export function podSidecarSetHash(
  annotations: Readonly<Record<string, string>> | undefined,
  setName: string,
  withoutImage = false,
): SidecarSetHashEntry | undefined {
  return parseSidecarSetHashes(annotations?.[withoutImage ? ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE : ANNOTATION_SIDECARSET_HASH])[
    setName
  ];
}

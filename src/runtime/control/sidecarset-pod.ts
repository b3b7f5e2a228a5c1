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
  ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
} from '../../contracts/keys.js';
import { SIDECARSET_PATCH_METADATA_WHITELIST_KEY } from '../../contracts/names.js';
import { isEmptySelector, selectorMatches, type LabelSelectorLike } from '../../contracts/validators.js';
import type { SidecarSetHashEntry } from '../../api/pod-contracts.js';
import type { SidecarContainer, SidecarSet } from '../../api/kinds/sidecarset.js';

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
  // containers only run at start and never make a pod "not updated". An init container's podInjectPolicy
  // AfterAppContainer is what an unset one means (the CRD now writes it as the default, as upstream's webhook
  // does), so it is hashed as unset: the default appearing on sets stored before must not make pods look out of date.
  const nativeInit = (initContainers ?? [])
    .filter((c) => c.restartPolicy === 'Always')
    .map(({ podInjectPolicy, ...c }) => (podInjectPolicy === 'BeforeAppContainer' ? { ...c, podInjectPolicy } : c));
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

/**
 * The `sidecarList` of a pod's hash annotations: the names of the set's sidecars (its containers, and its
 * init containers that are native sidecars), sorted, as upstream writes it.
 */
export function sidecarListOf(set: Pick<SidecarSet, 'spec'>): string[] {
  const names = new Set((set.spec.containers ?? []).map((c) => c.name));
  for (const c of set.spec.initContainers ?? []) if (c.restartPolicy === 'Always') names.add(c.name);
  return [...names].sort();
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

/** The spec fields a SidecarSet ControllerRevision records: what injection reads of a version. */
const REVISION_FIELDS = ['volumes', 'containers', 'initContainers', 'imagePullSecrets', 'patchPodMetadata'] as const;
type RevisionField = (typeof REVISION_FIELDS)[number];

/**
 * What a SidecarSet ControllerRevision stores (`data`): the injected part of the spec and the native opt-in. As
 * upstream writes it, each recorded field is present, null when the set has none, under `$patch: replace` (the
 * recorded fields replace the set's when the revision is applied as a patch).
 */
export interface SidecarSetRevisionData {
  readonly spec: { readonly [K in RevisionField]?: SidecarSet['spec'][K] | null } & { readonly $patch?: string };
  readonly native?: boolean;
}

/** The `data` of the ControllerRevision of the set's current version. */
export function sidecarSetRevisionData(set: Pick<SidecarSet, 'metadata' | 'spec'>): SidecarSetRevisionData {
  const spec: Record<string, unknown> = { $patch: 'replace' };
  for (const k of REVISION_FIELDS) spec[k] = set.spec[k] ?? null;
  return { spec: spec as SidecarSetRevisionData['spec'], native: usesNativeSidecars(set) };
}

/**
 * The hash of a set version's ControllerRevision: of everything the revision records, so that a change of the
 * volumes, pull secrets or patched metadata alone is a new revision too, as upstream names revisions by their data.
 */
export function sidecarSetRevisionHash(set: Pick<SidecarSet, 'metadata' | 'spec'>): string {
  return safeEncodeString(
    createHash('sha256')
      .update(canonicalJson(sidecarSetRevisionData(set)))
      .digest('hex'),
  );
}

/**
 * The ControllerRevision name of a set version: `<set>-<first 10 characters of its revision hash>`
 * (`revisionHash`: the set's `sidecarSetRevisionHash`, when the caller has it already).
 */
export function sidecarSetRevisionName(set: Pick<SidecarSet, 'metadata' | 'spec'>, revisionHash = sidecarSetRevisionHash(set)): string {
  return `${set.metadata.name!.slice(0, 200)}-${revisionHash.slice(0, 10)}`;
}

/**
 * The set as it was at a revision: the latest set with the revision's injected fields, which replace the latest
 * ones (a field the revision does not have, or has as null, was not set at that version). A `data` that is not a
 * revision of a SidecarSet (edited by hand) gives the reason instead.
 */
export function sidecarSetAtRevision(latest: SidecarSet, data: SidecarSetRevisionData): SidecarSet | { readonly error: string } {
  const recorded = (data as { spec?: unknown } | null | undefined)?.spec;
  if (!recorded || typeof recorded !== 'object' || Array.isArray(recorded)) return { error: 'its data has no spec object' };
  const annotations = { ...(latest.metadata.annotations ?? {}) };
  if (data.native) annotations[ANNOTATION_SIDECARSET_NATIVE_SIDECARS] = 'true';
  else delete annotations[ANNOTATION_SIDECARSET_NATIVE_SIDECARS];
  const spec: Record<string, unknown> = { ...latest.spec };
  for (const k of REVISION_FIELDS) {
    const v = (recorded as Record<string, unknown>)[k];
    if (v === undefined || v === null) delete spec[k];
    else if (!Array.isArray(v)) return { error: `its data.spec.${k} is not a list` };
    else spec[k] = v;
  }
  return { ...latest, metadata: { ...latest.metadata, annotations }, spec: spec as SidecarSet['spec'] };
}

/** One rule of the kruise-configuration whitelist: SidecarSets its selector matches may patch these keys. */
export interface PatchMetadataWhitelistRule {
  /** Against the SidecarSet's labels; absent means every SidecarSet. */
  readonly selector?: LabelSelectorLike;
  readonly allowedAnnotationKeyExprs: readonly RegExp[];
}

/** The parsed whitelist, or why it cannot be used (reported, never thrown). */
export type PatchMetadataWhitelist = { readonly rules: readonly PatchMetadataWhitelistRule[] } | { readonly error: string };

/** Upper bound of the whitelist text and of each expression: an admin's ConfigMap, but bounded anyway. */
const MAX_WHITELIST_BYTES = 64 * 1024;
const MAX_EXPR_LENGTH = 1024;

/**
 * Parses the `SidecarSet_PatchPodMetadata_WhiteList` value (`{"rules":[{"selector":…,
 * "allowedAnnotationKeyExprs":["^…$"]}]}`). Expressions are unanchored regular expressions, as upstream
 * matches them.
 */
export function parsePatchMetadataWhitelist(text: string): PatchMetadataWhitelist {
  const where = `ConfigMap kruise-configuration key ${SIDECARSET_PATCH_METADATA_WHITELIST_KEY}`;
  if (text.length > MAX_WHITELIST_BYTES) return { error: `${where}: larger than ${MAX_WHITELIST_BYTES} bytes` };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { error: `${where}: not JSON (${(e as Error).message})` };
  }
  const rulesIn = (doc as { rules?: unknown } | null)?.rules;
  if (!Array.isArray(rulesIn)) return { error: `${where}: expected {"rules": [...]}` };
  const rules: PatchMetadataWhitelistRule[] = [];
  for (const [i, r] of rulesIn.entries()) {
    const rule = r as { selector?: unknown; allowedAnnotationKeyExprs?: unknown } | null;
    if (!rule || typeof rule !== 'object') return { error: `${where}: /rules/${i} must be an object` };
    if (rule.selector !== undefined && (rule.selector === null || typeof rule.selector !== 'object')) {
      return { error: `${where}: /rules/${i}/selector must be a label selector` };
    }
    const exprs = rule.allowedAnnotationKeyExprs ?? [];
    if (!Array.isArray(exprs)) return { error: `${where}: /rules/${i}/allowedAnnotationKeyExprs must be a list of regular expressions` };
    const compiled: RegExp[] = [];
    for (const [j, x] of exprs.entries()) {
      if (typeof x !== 'string' || x.length > MAX_EXPR_LENGTH) {
        return { error: `${where}: /rules/${i}/allowedAnnotationKeyExprs/${j} must be a string of at most ${MAX_EXPR_LENGTH} characters` };
      }
      try {
        compiled.push(new RegExp(x));
      } catch (e) {
        return { error: `${where}: /rules/${i}/allowedAnnotationKeyExprs/${j}: ${(e as Error).message}` };
      }
    }
    rules.push({ ...(rule.selector ? { selector: rule.selector as LabelSelectorLike } : {}), allowedAnnotationKeyExprs: compiled });
  }
  return { rules };
}

/**
 * The patchPodMetadata annotation keys of `set` the whitelist does not allow (empty: all allowed), with
 * upstream's semantics: without a whitelist, or when no rule's selector matches the set's labels, every key
 * is refused unless gate SidecarSetPatchPodMetadataDefaultsAllowed is on; otherwise a key must match one
 * expression of a matching rule (the gate does not widen a whitelist that applies).
 */
export function patchMetadataKeysRefused(
  set: Pick<SidecarSet, 'metadata' | 'spec'>,
  whitelist: PatchMetadataWhitelist | undefined,
  defaultsAllowed: boolean,
): { readonly refused: readonly string[]; readonly reason?: string } {
  const keys = [...new Set((set.spec.patchPodMetadata ?? []).flatMap((p) => Object.keys(p.annotations ?? {})))];
  if (keys.length === 0) return { refused: [] };
  if (whitelist && 'error' in whitelist) return { refused: keys, reason: whitelist.error };
  const labels = set.metadata.labels ?? {};
  const exprs = (whitelist?.rules ?? [])
    .filter((r) => !r.selector || selectorMatches(r.selector, labels))
    .flatMap((r) => r.allowedAnnotationKeyExprs);
  if (exprs.length === 0) {
    if (defaultsAllowed) return { refused: [] };
    return {
      refused: keys,
      reason: whitelist
        ? `no rule of the kruise-configuration ${SIDECARSET_PATCH_METADATA_WHITELIST_KEY} whitelist selects this SidecarSet's labels`
        : `there is no ${SIDECARSET_PATCH_METADATA_WHITELIST_KEY} in ConfigMap kruise-configuration (and gate SidecarSetPatchPodMetadataDefaultsAllowed is off)`,
    };
  }
  const refused = keys.filter((k) => !exprs.some((x) => x.test(k)));
  return refused.length
    ? {
        refused,
        reason: `not matched by the kruise-configuration ${SIDECARSET_PATCH_METADATA_WHITELIST_KEY} expressions that apply to this SidecarSet`,
      }
    : { refused: [] };
}

/** RFC 7386 JSON merge patch. */
function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const base: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete base[k];
    else base[k] = jsonMergePatch(base[k], v);
  }
  return base;
}

/** What applying a set's patchPodMetadata did: keys skipped by `allowed`, or why a MergePatchJson failed. */
export interface PatchPodMetadataResult {
  readonly skipped: readonly string[];
  readonly error?: string;
}

/**
 * Applies `set.spec.patchPodMetadata` to `annotations` (edited in place), as upstream does at injection and
 * again at each in-place sidecar upgrade: Retain (the default) sets only absent keys, Overwrite sets the
 * value, MergePatchJson merges the JSON value into the current one (absent: `{}`). A key `allowed` refuses is
 * skipped; a MergePatchJson whose value or current value is not JSON stops with `error` (keys before it are
 * applied).
 */
export function applyPatchPodMetadata(
  set: Pick<SidecarSet, 'metadata' | 'spec'>,
  annotations: Record<string, string>,
  allowed: (key: string) => boolean = () => true,
): PatchPodMetadataResult {
  const skipped: string[] = [];
  for (const [i, p] of (set.spec.patchPodMetadata ?? []).entries()) {
    for (const [key, value] of Object.entries(p.annotations ?? {})) {
      if (!allowed(key)) {
        skipped.push(key);
        continue;
      }
      const policy = p.patchPolicy ?? 'Retain';
      if (policy === 'Retain') {
        if (annotations[key] === undefined) annotations[key] = value;
      } else if (policy === 'Overwrite') {
        annotations[key] = value;
      } else {
        let patch: unknown;
        let current: unknown = {};
        try {
          patch = JSON.parse(value);
          if (annotations[key] !== undefined) current = JSON.parse(annotations[key]);
        } catch {
          return {
            skipped,
            error: `SidecarSet ${set.metadata.name}: spec.patchPodMetadata[${i}] (MergePatchJson) on annotation "${key}": the value and the pod's current value must both be JSON`,
          };
        }
        annotations[key] = JSON.stringify(jsonMergePatch(current, patch));
      }
    }
  }
  return { skipped };
}

/** JSON of a string map with its keys sorted, as Go writes a map. */
export function sortedJson(map: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/** Whether a SidecarSet container is upgraded hot: two pod containers take turns, so the sidecar never stops. */
export function isHotUpgrade(sidecar: Pick<SidecarContainer, 'upgradeStrategy'>): boolean {
  return sidecar.upgradeStrategy?.upgradeType === 'HotUpgrade';
}

/** The two pod containers of a HotUpgrade sidecar: `<name>-1` (working at injection) and `<name>-2`. */
export function hotUpgradeContainerNames(sidecar: string): readonly [string, string] {
  return [`${sidecar}-1`, `${sidecar}-2`];
}

/** Pod annotation whose value a hot-upgrade container reads as SIDECARSET_VERSION (its version; "0" while it idles). */
export const hotUpgradeVersionAnnotation = (container: string): string => `version.sidecarset.kruise.io/${container}`;
/** Pod annotation read as SIDECARSET_VERSION_ALT (the version of its partner container). */
export const hotUpgradeVersionAltAnnotation = (container: string): string => `versionalt.sidecarset.kruise.io/${container}`;

/** A pod's record of which container of each hot-upgrade pair works (`{"<sidecar>": "<sidecar>-1"}`); bad text counts as empty. */
export function workingHotUpgradeContainers(annotations: Readonly<Record<string, string>> | undefined): Record<string, string> {
  try {
    const v = JSON.parse(annotations?.[ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER] ?? '{}') as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

/** The working and the idle container of a hot-upgrade sidecar in a pod: the record's choice, else `<name>-2` works. */
export function hotUpgradeRoles(
  sidecar: string,
  annotations: Readonly<Record<string, string>> | undefined,
): { working: string; idle: string } {
  const [one, two] = hotUpgradeContainerNames(sidecar);
  return workingHotUpgradeContainers(annotations)[sidecar] === one ? { working: one, idle: two } : { working: two, idle: one };
}

/** The pod containers a set's sidecars occupy: the name, or both names of a HotUpgrade pair. */
export function sidecarContainerNamesInPod(set: Pick<SidecarSet, 'spec'>): string[] {
  return (set.spec.containers ?? []).flatMap((c) => (isHotUpgrade(c) ? [...hotUpgradeContainerNames(c.name)] : [c.name]));
}

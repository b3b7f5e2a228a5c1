/**
 * SidecarSet controller decision (upstream sidecarset processor + strategy), pure: from a set and the pods
 * its selector matches, the status, which pods get their sidecar images upgraded in place now (and the
 * patch for each), which pods cannot be upgraded in place, and whether the rollout is stuck and why.
 */
import type { SidecarSet } from '../../../api/kinds/sidecarset.js';
import type { SidecarSetHashEntry } from '../../../api/pod-contracts.js';
import {
  applyPatchPodMetadata,
  hotUpgradeContainerNames,
  hotUpgradeRoles,
  hotUpgradeVersionAltAnnotation,
  hotUpgradeVersionAnnotation,
  injectedSidecarSets,
  isHotUpgrade,
  sidecarContainerNamesInPod,
  sortedJson,
  workingHotUpgradeContainers,
  parseSidecarSetHashes,
  sidecarListOf,
  sidecarSetHash,
  sidecarSetHashWithoutImage,
  usesNativeSidecars,
} from '../../control/sidecarset-pod.js';
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
  ANNOTATION_SIDECARSET_INJECTED_LIST,
  ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE,
  ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
  CONDITION_SIDECARSET_UPGRADABLE,
  selectorMatches,
} from '../../../contracts/index.js';
import type { Container, ContainerStatus, Pod, PodCondition } from '../../core/types.js';
import { conditionIsTrue, rfc3339 } from '../../core/meta.js';

/** Condition type on the SidecarSet status when matched pods cannot be upgraded. */
export const CONDITION_ROLLOUT_STUCK = 'RolloutStuck';
/** How long an upgraded pod may stay unavailable before the rollout counts as stuck on it. */
export const STUCK_AFTER_MS = 5 * 60_000;

export interface SidecarSetStatusCounts {
  matchedPods: number;
  updatedPods: number;
  readyPods: number;
  updatedReadyPods: number;
}

export interface PodUpgrade {
  readonly pod: Pod;
  /** New image per sidecar container name. */
  readonly images: Readonly<Record<string, string>>;
  /** Whether the sidecars are native (initContainers). */
  readonly native: boolean;
  /** Annotation values to set on the pod. */
  readonly annotations: Readonly<Record<string, string>>;
}

export interface StuckCondition {
  readonly reason: 'NotUpgradablePods' | 'UnavailablePods';
  readonly message: string;
}

export interface SidecarSetDecision {
  readonly status: SidecarSetStatusCounts;
  readonly upgrades: readonly PodUpgrade[];
  /** HotUpgrade handovers: the old version's container back to the empty image (decided before any upgrade). */
  readonly handovers?: readonly PodUpgrade[];
  /** Matched, not updated pods whose sidecars changed in more than their images. */
  readonly notUpgradable: readonly Pod[];
  readonly stuck?: StuckCondition;
}

/** `"N%"` of `total` rounded as upstream's GetScaledValueFromIntOrPercent; ints as they are. */
export function scaled(v: number | string | undefined, total: number, roundUp: boolean, dflt: number): number {
  if (v === undefined || v === null) return dflt;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) return /^\d+$/.test(v) ? Number(v) : dflt;
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/** Upstream CalculatePartitionReplicas: percent rounded up; below 100% never the whole set (when > 1). */
export function partitionOf(v: number | string | undefined, replicas: number): number {
  let p = scaled(v, replicas, true, 0);
  if (typeof v === 'string' && v.endsWith('%') && v !== '100%' && p >= replicas && replicas > 1) p = replicas - 1;
  return Math.max(0, Math.min(p, replicas));
}

/** The pod containers of the set's sidecars (both of a HotUpgrade pair). */
function sidecarNames(set: SidecarSet): string[] {
  return sidecarContainerNamesInPod(set);
}

function podContainers(pod: Pod, native: boolean): Container[] {
  return (native ? pod.spec?.initContainers : pod.spec?.containers) ?? [];
}

function podStatuses(pod: Pod, native: boolean): ContainerStatus[] {
  return ((native ? pod.status?.initContainerStatuses : pod.status?.containerStatuses) ?? []) as ContainerStatus[];
}

function isActive(pod: Pod): boolean {
  return !pod.metadata.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

function isPodReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && conditionIsTrue(pod.status.conditions, 'Ready');
}

interface InPlaceState {
  revision?: string;
  updateTimestamp?: string;
  lastContainerStatuses?: Record<string, { imageID?: string }>;
}

function parseStates(raw: string | undefined): Record<string, InPlaceState> {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, InPlaceState>) : {};
  } catch {
    return {};
  }
}

/** Adds `:latest` to a reference without tag or digest, as the kubelet resolves it. */
function withTag(image: string): string {
  const last = image.slice(image.lastIndexOf('/') + 1);
  return last.includes(':') || last.includes('@') ? image : `${image}:latest`;
}

/** Strips the default registry and library prefixes containerd adds to status.image. */
function sameImage(spec: string, status: string): boolean {
  const norm = (s: string) => withTag(s).replace(/^docker\.io\/(library\/)?/, '');
  return norm(spec) === norm(status);
}

/**
 * Upstream IsPodStateConsistent: the kubelet runs the images the spec names. A sidecar recorded in the
 * in-place-update state is done once its imageID changed or its status image equals the spec's. `only` checks
 * that one pod container alone.
 */
export function sidecarsConsistent(set: SidecarSet, pod: Pod, only?: string): boolean {
  const native = usesNativeSidecars(set);
  const containers = podContainers(pod, native);
  const statuses = podStatuses(pod, native);
  if (!native && (pod.spec?.containers.length ?? 0) !== (pod.status?.containerStatuses?.length ?? 0)) return false;
  const state = parseStates(pod.metadata.annotations?.[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE])[set.metadata.name!];
  for (const name of only === undefined ? sidecarNames(set) : [only]) {
    const c = containers.find((x) => x.name === name);
    const st = statuses.find((x) => x.name === name);
    if (!c) continue;
    if (!st) return false;
    const recorded = state?.lastContainerStatuses?.[name]?.imageID;
    if (recorded !== undefined && st.imageID === recorded && !sameImage(c.image ?? '', st.image ?? '')) return false;
    if (recorded === undefined && st.image && c.image && !sameImage(c.image, st.image)) return false;
  }
  return true;
}

/**
 * Upstream IsSidecarSetUpgradable's wait: a sidecar container still ready but not yet running the image the
 * spec names is being restarted by the kubelet, so the next upgrade waits for it. A sidecar that is not ready
 * does not hold the pod back: when its new image cannot be pulled, the kubelet keeps reporting the old image and
 * imageID for ever, and only the next upgrade (to an image that can be pulled) gets the pod running again.
 */
export function sidecarRestarting(set: SidecarSet, pod: Pod): boolean {
  const statuses = podStatuses(pod, usesNativeSidecars(set));
  return sidecarNames(set).some((n) => statuses.find((st) => st.name === n)?.ready === true && !sidecarsConsistent(set, pod, n));
}

/**
 * Memoizes `parse` by the raw annotation text for one decision. The pods of a set mostly carry the same
 * annotation values (they were injected from the same version), and a decision reads them for every
 * matched pod on every pod event, so parsing once per distinct value keeps a reconcile linear in cheap
 * steps. Callers must not edit what it returns.
 */
function memoByText<T>(parse: (raw: string | undefined) => T): (raw: string | undefined) => T {
  const memo = new Map<string | undefined, T>();
  return (raw) => {
    let v = memo.get(raw);
    if (v === undefined && !memo.has(raw)) memo.set(raw, (v = parse(raw)));
    return v as T;
  };
}

/** Pods counted by the set: active, listed in the injected-list, carrying every sidecar. */
export function isMatchedPod(
  set: SidecarSet,
  pod: Pod,
  injected: (raw: string | undefined) => readonly string[] = (raw) =>
    injectedSidecarSets({ [ANNOTATION_SIDECARSET_INJECTED_LIST]: raw ?? '' }),
): boolean {
  if (!isActive(pod)) return false;
  if (!injected(pod.metadata.annotations?.[ANNOTATION_SIDECARSET_INJECTED_LIST]).includes(set.metadata.name!)) return false;
  const containers = podContainers(pod, usesNativeSidecars(set));
  return sidecarNames(set).every((n) => containers.some((c) => c.name === n));
}

function weightOf(set: SidecarSet, pod: Pod): number[] {
  const p = set.spec.updateStrategy?.priorityStrategy;
  const labels = pod.metadata.labels ?? {};
  if (p?.weightPriority?.length) {
    return [p.weightPriority.reduce((sum, t) => sum + (selectorMatches(t.matchSelector, labels) ? t.weight : 0), 0)];
  }
  if (p?.orderPriority?.length) {
    return p.orderPriority.map((o) => {
      const m = /(\d+)$/.exec(labels[o.orderedKey] ?? '');
      return m ? Number(m[1]) : -1;
    });
  }
  return [];
}

function compareDesc(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (b[i] ?? -1) - (a[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Spreads the pods matching each scatter term evenly over the order (upstream scatterStrategy), so a label
 * value (e.g. a zone) is not upgraded all at once.
 */
function scatter(set: SidecarSet, pods: Pod[]): Pod[] {
  let order = pods;
  for (const term of set.spec.updateStrategy?.scatterStrategy ?? []) {
    const hit = order.filter((p) => p.metadata.labels?.[term.key] === term.value);
    const rest = order.filter((p) => p.metadata.labels?.[term.key] !== term.value);
    if (hit.length < 2 || rest.length === 0) continue;
    const out: Pod[] = [];
    const gap = (rest.length + hit.length) / hit.length;
    let next = 0;
    let h = 0;
    let r = 0;
    for (let i = 0; i < pods.length; i++) {
      if (h < hit.length && i >= Math.floor(next)) {
        out.push(hit[h++]!);
        next += gap;
      } else if (r < rest.length) out.push(rest[r++]!);
      else out.push(hit[h++]!);
    }
    order = out;
  }
  return order;
}

export interface DecideInput {
  readonly set: SidecarSet;
  /** Pods the set's selector and namespace rules match (the caller filters by selector). */
  readonly pods: readonly Pod[];
  /** Now, in ms since the epoch. */
  readonly nowMs: number;
  /** The set's latest ControllerRevision name, when known. */
  readonly revision?: string;
  /** The set's hashes when the caller has them (they hash the whole spec): computed from `set` otherwise. */
  readonly hashes?: SetHashes;
  /** Facts of pods already seen by this version of the set (PodFactsBySet); filled with those of new pods. */
  readonly podFacts?: PodFactsMemo;
}

/** What a decision reads of one pod for one version of its set. */
export interface PodFacts {
  /** Counted by the set (isMatchedPod). */
  readonly matched: boolean;
  /** Matched and carrying the set's current hash. */
  readonly updated: boolean;
  /** Matched, ready, and running the sidecar images its spec names. */
  readonly ready: boolean;
}

/**
 * The facts of cached pod objects for one version of a set. They depend only on the pod object and on the set's
 * name and hash (its containers and native flag), and a cached pod is replaced, never edited, when it changes: so a
 * reconcile reads the facts of the pods that did not change instead of recomputing them. With 3,000 pods the
 * recount held the event loop for tens of milliseconds per reconcile, and admission calls waited behind it.
 */
export type PodFactsMemo = WeakMap<Pod, PodFacts>;

/** One PodFactsMemo per set, replaced when the set's hash changes. */
export class PodFactsBySet {
  private readonly memos = new Map<string, { readonly hash: string; readonly memo: PodFactsMemo }>();

  for(setName: string, hash: string): PodFactsMemo {
    let m = this.memos.get(setName);
    if (m?.hash !== hash) this.memos.set(setName, (m = { hash, memo: new WeakMap() }));
    return m.memo;
  }

  forget(setName: string): void {
    this.memos.delete(setName);
  }
}

/** A SidecarSet's two hashes, as its pods' hash annotations record them. */
export interface SetHashes {
  readonly hash: string;
  readonly withoutImage: string;
}

function podName(p: Pod): string {
  return `${p.metadata.namespace}/${p.metadata.name}`;
}

function listNames(pods: readonly Pod[]): string {
  const names = pods.slice(0, 5).map(podName).join(', ');
  return pods.length > 5 ? `${names} and ${pods.length - 5} more` : names;
}

export function decide(input: DecideInput): SidecarSetDecision {
  const { set } = input;
  const name = set.metadata.name!;
  const hash = input.hashes?.hash ?? sidecarSetHash(set);
  const hashWithoutImage = input.hashes?.withoutImage ?? sidecarSetHashWithoutImage(set);
  const injected = memoByText((raw) => injectedSidecarSets({ [ANNOTATION_SIDECARSET_INJECTED_LIST]: raw ?? '' }));
  const hashes = memoByText(parseSidecarSetHashes);
  const entry = (p: Pod, withoutImage = false): SidecarSetHashEntry | undefined =>
    hashes(p.metadata.annotations?.[withoutImage ? ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE : ANNOTATION_SIDECARSET_HASH])[name];
  const factsOf = (p: Pod): PodFacts => {
    let f = input.podFacts?.get(p);
    if (f === undefined) {
      const m = isMatchedPod(set, p, injected);
      f = {
        matched: m,
        updated: m && entry(p)?.hash === hash,
        // A pod whose hot upgrade has not handed over yet (both containers run a version) is not ready, as upstream.
        ready: m && isPodReady(p) && sidecarsConsistent(set, p) && !hotUpgrading(set, p),
      };
      input.podFacts?.set(p, f);
    }
    return f;
  };
  const matched = input.pods.filter((p) => factsOf(p).matched);
  const isUpdated = (p: Pod) => factsOf(p).updated;
  const isReady = (p: Pod) => factsOf(p).ready;
  const updated = matched.filter(isUpdated);
  const status: SidecarSetStatusCounts = {
    matchedPods: matched.length,
    updatedPods: updated.length,
    readyPods: matched.filter(isReady).length,
    updatedReadyPods: updated.filter(isReady).length,
  };
  // Pods whose new sidecar version runs (and is ready) in the idle container: the old one goes back to the
  // empty image before anything else is upgraded, as upstream hands over first.
  const handovers = matched.flatMap((p) => {
    const h = hotUpgradeHandover(set, p);
    return h ? [h] : [];
  });
  if (handovers.length > 0) return { status, upgrades: [], notUpgradable: [], handovers };
  const strategy = set.spec.updateStrategy ?? {};
  if (strategy.type === 'NotUpdate' || strategy.paused || updated.length >= matched.length) {
    return { status, upgrades: [], notUpgradable: [] };
  }

  const waiting = matched.filter(
    (p) => !isUpdated(p) && (!strategy.selector || selectorMatches(strategy.selector, p.metadata.labels ?? {})),
  );
  const notUpgradable = waiting.filter((p) => entry(p, true)?.hash !== hashWithoutImage);
  // A sidecar still restarting from an earlier upgrade is left alone until the kubelet caught up.
  const candidates = waiting.filter((p) => !notUpgradable.includes(p) && !sidecarRestarting(set, p));
  const sorted = scatter(
    set,
    [...candidates].sort(
      (a, b) =>
        Number(isPodReady(a)) - Number(isPodReady(b)) ||
        compareDesc(weightOf(set, a), weightOf(set, b)) ||
        podName(a).localeCompare(podName(b)),
    ),
  );

  const partition = partitionOf(strategy.partition, matched.length);
  let quota = Math.max(0, matched.length - partition - updated.length);
  const maxUnavailable = Math.max(1, scaled(strategy.maxUnavailable, matched.length, true, 1));
  const unavailableUpdated = updated.filter((p) => !isReady(p));
  let unavailable = unavailableUpdated.length;
  const chosen: Pod[] = [];
  for (const p of sorted) {
    if (quota <= 0) break;
    if (!isPodReady(p)) {
      chosen.push(p);
      quota--;
      continue;
    }
    if (unavailable >= maxUnavailable) continue;
    chosen.push(p);
    unavailable++;
    quota--;
  }

  const now = rfc3339(input.nowMs);
  const native = usesNativeSidecars(set);
  const upgrades = chosen.map((pod): PodUpgrade => {
    const images: Record<string, string> = {};
    const hot: Record<string, string> = {};
    for (const c of set.spec.containers ?? []) {
      if (!c.image) continue;
      if (!isHotUpgrade(c)) {
        images[c.name] = c.image;
        continue;
      }
      const { target, other } = hotUpgradeTarget(c.name, c.upgradeStrategy?.hotUpgradeEmptyImage, pod, set);
      // The new version starts in the idle container; the working one keeps serving until the handover.
      if (podContainers(pod, native).find((x) => x.name === other)?.image === c.image) continue;
      images[target] = c.image;
      hot[c.name] = target;
    }
    const hashes = parseSidecarSetHashes(pod.metadata.annotations?.[ANNOTATION_SIDECARSET_HASH]);
    hashes[name] = {
      updateTimestamp: now,
      hash,
      sidecarSetName: name,
      sidecarList: sidecarListOf(set),
      ...(input.revision ? { controllerRevision: input.revision } : {}),
    };
    const states = parseStates(pod.metadata.annotations?.[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE]);
    const statuses = podStatuses(pod, native);
    const last: Record<string, { imageID?: string }> = {};
    for (const n of Object.keys(images)) {
      const imageID = statuses.find((s) => s.name === n)?.imageID as string | undefined;
      last[n] = imageID ? { imageID } : {};
    }
    const previous = states[name];
    states[name] = { revision: previous?.revision ?? hash, updateTimestamp: previous?.updateTimestamp ?? now, lastContainerStatuses: last };
    return {
      pod,
      images,
      native,
      annotations: {
        ...patchedAnnotations(set, pod),
        ...hotUpgradeStartAnnotations(pod, hot, set.metadata.resourceVersion ?? ''),
        [ANNOTATION_SIDECARSET_HASH]: JSON.stringify(hashes),
        [ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE]: JSON.stringify(states),
      },
    };
  });

  let stuck: StuckCondition | undefined;
  if (notUpgradable.length > 0) {
    stuck = {
      reason: 'NotUpgradablePods',
      message: `${notUpgradable.length} of ${matched.length} matched pods cannot be upgraded in place because more than the sidecar images changed (${listNames(notUpgradable)}); recreate them to get the new sidecars`,
    };
  } else if (chosen.length === 0 && candidates.length > 0 && quota > 0) {
    const old = unavailableUpdated.filter((p) => input.nowMs - Date.parse(entry(p)?.updateTimestamp ?? '') > STUCK_AFTER_MS);
    if (old.length > 0 && old.length >= unavailable - (maxUnavailable - 1)) {
      stuck = {
        reason: 'UnavailablePods',
        message: `rollout waits: ${unavailable} upgraded pods are unavailable (maxUnavailable ${maxUnavailable}), ${old.length} of them for more than ${STUCK_AFTER_MS / 60_000} minutes (${listNames(old)}); fix or delete them, or raise maxUnavailable`,
      };
    }
  }
  return { status, upgrades, notUpgradable, ...(stuck ? { stuck } : {}) };
}

/**
 * The annotations the set's patchPodMetadata changes on `pod`, applied again with each in-place upgrade as
 * upstream does (so a patch edited since injection reaches the pod with the next image). The keys were
 * checked against the kruise-configuration whitelist when the set was admitted. A MergePatchJson the pod's
 * value cannot take leaves the keys from it on unchanged (the webhook refused such pods at creation).
 */
export function patchedAnnotations(set: SidecarSet, pod: Pod): Record<string, string> {
  const before = pod.metadata.annotations ?? {};
  const after = { ...before };
  applyPatchPodMetadata(set, after);
  const changed: Record<string, string> = {};
  for (const [k, v] of Object.entries(after)) if (before[k] !== v) changed[k] = v;
  return changed;
}

/**
 * Pod condition SidecarSetUpgradable after SidecarSet `setName` found the pod upgradable (it upgraded it) or
 * not (more than images changed), as upstream keeps it: the message is a JSON object of set name → whether
 * that set could upgrade the pod (keys sorted, as Go writes a map); the condition is True with reason
 * AllSidecarsetUpgradable when every recorded set could, else False with reason UpdateImmutableField. The
 * transition time moves only when the status changes. Undefined when nothing would change. A message that
 * is not such an object (edited by hand) counts as empty.
 */
export function upgradableCondition(
  conditions: readonly PodCondition[] | undefined,
  setName: string,
  upgradable: boolean,
  now: string,
): PodCondition | undefined {
  const old = conditions?.find((c) => c.type === CONDITION_SIDECARSET_UPGRADABLE);
  let kv: Record<string, unknown> = {};
  try {
    const parsed = old?.message ? (JSON.parse(old.message) as unknown) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) kv = { ...(parsed as Record<string, unknown>) };
  } catch {
    kv = {};
  }
  kv[setName] = upgradable;
  const all = Object.values(kv).every((v) => v !== false);
  const status = all ? 'True' : 'False';
  const message = JSON.stringify(Object.fromEntries(Object.entries(kv).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
  const reason = all ? 'AllSidecarsetUpgradable' : 'UpdateImmutableField';
  if (old && old.status === status && old.reason === reason && old.message === message) return undefined;
  return {
    type: CONDITION_SIDECARSET_UPGRADABLE,
    status,
    reason,
    message,
    lastTransitionTime: old && old.status === status && old.lastTransitionTime ? old.lastTransitionTime : now,
  };
}

/**
 * Which container of a HotUpgrade pair gets the new image (upstream's choice): the one on the empty image; else
 * the one not ready while its partner is; else the idle one of the pod's record. `other` keeps serving meanwhile.
 */
export function hotUpgradeTarget(
  sidecar: string,
  emptyImage: string | undefined,
  pod: Pod,
  set: SidecarSet,
): { readonly target: string; readonly other: string } {
  const [one, two] = hotUpgradeContainerNames(sidecar);
  const native = usesNativeSidecars(set);
  const image = (n: string) => podContainers(pod, native).find((c) => c.name === n)?.image;
  if (image(one) === emptyImage) return { target: one, other: two };
  if (image(two) === emptyImage) return { target: two, other: one };
  const ready = (n: string) => podStatuses(pod, native).find((st) => st.name === n)?.ready === true && sidecarsConsistent(set, pod, n);
  if (ready(one) && !ready(two)) return { target: two, other: one };
  if (!ready(one) && ready(two)) return { target: one, other: two };
  const { working, idle } = hotUpgradeRoles(sidecar, pod.metadata.annotations);
  return { target: idle, other: working };
}

/**
 * The annotations an upgrade that starts new versions in idle containers writes (`started`: sidecar → the
 * container now starting): the record names it the working one, its SIDECARSET_VERSION is the set's
 * resourceVersion and its SIDECARSET_VERSION_ALT the version its partner runs; the partner's ALT becomes the new
 * version, so each side knows the other during the handover.
 */
export function hotUpgradeStartAnnotations(pod: Pod, started: Readonly<Record<string, string>>, version: string): Record<string, string> {
  if (Object.keys(started).length === 0) return {};
  const before = pod.metadata.annotations ?? {};
  const record = workingHotUpgradeContainers(before);
  const out: Record<string, string> = {};
  for (const [sidecar, target] of Object.entries(started)) {
    const [one, two] = hotUpgradeContainerNames(sidecar);
    const partner = target === one ? two : one;
    record[sidecar] = target;
    out[hotUpgradeVersionAnnotation(target)] = version;
    out[hotUpgradeVersionAltAnnotation(target)] = before[hotUpgradeVersionAnnotation(partner)] ?? '0';
    out[hotUpgradeVersionAltAnnotation(partner)] = version;
  }
  out[ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER] = sortedJson(record);
  return out;
}

/** Whether some HotUpgrade pair of the set in the pod runs two versions (the idle one is off the empty image). */
export function hotUpgrading(set: SidecarSet, pod: Pod): boolean {
  const native = usesNativeSidecars(set);
  return (set.spec.containers ?? []).some((c) => {
    if (!isHotUpgrade(c)) return false;
    const { idle } = hotUpgradeRoles(c.name, pod.metadata.annotations);
    const image = podContainers(pod, native).find((x) => x.name === idle)?.image;
    return image !== undefined && image !== c.upgradeStrategy?.hotUpgradeEmptyImage;
  });
}

/**
 * The handover of a pod in hot upgrade, once the kubelet runs what the spec names (the idle containers aside) and
 * the pod, or every container but the idle ones, is ready: each idle container of the old version goes back to the
 * empty image, its SIDECARSET_VERSION and its partner's ALT become "0". Undefined when there is nothing to hand over.
 */
export function hotUpgradeHandover(set: SidecarSet, pod: Pod): PodUpgrade | undefined {
  if (!hotUpgrading(set, pod)) return undefined;
  const native = usesNativeSidecars(set);
  const idle = new Set((set.spec.containers ?? []).filter(isHotUpgrade).map((c) => hotUpgradeRoles(c.name, pod.metadata.annotations).idle));
  const working = { ...set, spec: { ...set.spec, containers: (set.spec.containers ?? []).filter((c) => !isHotUpgrade(c)) } } as SidecarSet;
  const statuses = podStatuses(pod, native);
  const allButIdleReady = statuses.length > 0 && statuses.every((st) => idle.has(st.name) || st.ready === true);
  const consistentButIdle = sidecarsConsistentExcept(set, pod, idle) && sidecarsConsistent(working, pod);
  if (!consistentButIdle || !(isPodReady(pod) || allButIdleReady)) return undefined;
  const images: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  for (const c of set.spec.containers ?? []) {
    if (!isHotUpgrade(c)) continue;
    const roles = hotUpgradeRoles(c.name, pod.metadata.annotations);
    const empty = c.upgradeStrategy?.hotUpgradeEmptyImage ?? '';
    if (podContainers(pod, native).find((x) => x.name === roles.idle)?.image === empty) continue;
    images[roles.idle] = empty;
    annotations[hotUpgradeVersionAnnotation(roles.idle)] = '0';
    annotations[hotUpgradeVersionAltAnnotation(roles.working)] = '0';
  }
  const states = parseStates(pod.metadata.annotations?.[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE]);
  const name = set.metadata.name!;
  const last = { ...(states[name]?.lastContainerStatuses ?? {}) };
  for (const n of Object.keys(images)) {
    const imageID = statuses.find((st) => st.name === n)?.imageID as string | undefined;
    last[n] = imageID ? { imageID } : {};
  }
  states[name] = { ...states[name], lastContainerStatuses: last };
  annotations[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE] = JSON.stringify(states);
  return { pod, images, native, annotations };
}

/** sidecarsConsistent for the set's containers, leaving out the pod containers in `except`. */
function sidecarsConsistentExcept(set: SidecarSet, pod: Pod, except: ReadonlySet<string>): boolean {
  const native = usesNativeSidecars(set);
  const containers = podContainers(pod, native).filter((c) => !except.has(c.name));
  const statuses = podStatuses(pod, native).filter((st) => !except.has(st.name));
  const hotOnly = { ...set, spec: { ...set.spec, containers: (set.spec.containers ?? []).filter(isHotUpgrade) } } as SidecarSet;
  const view: Pod = {
    ...pod,
    spec: { ...pod.spec!, ...(native ? { initContainers: containers } : { containers }) },
    status: { ...pod.status, ...(native ? { initContainerStatuses: statuses } : { containerStatuses: statuses }) },
  };
  return sidecarsConsistent(hotOnly, view);
}

/**
 * SidecarSet injection into a pod at creation (upstream pod webhook, SidecarSet step), pure: given the pod,
 * where it lives and the SidecarSets, edit the pod in place. Order, as upstream: patchPodMetadata →
 * initContainers (name-sorted, after the pod's own) → containers (BeforeAppContainer prepended,
 * AfterAppContainer appended, a same-named container replaced in place) → volumes (only those the injected
 * containers use; the pod's own win) → imagePullSecrets (deduplicated) → hash and injected-list annotations.
 */
import type { SidecarContainer, SidecarSet } from '../../../api/kinds/sidecarset.js';
import type { SidecarSetHashEntry } from '../../../api/pod-contracts.js';
import {
  applyPatchPodMetadata,
  hotUpgradeContainerNames,
  hotUpgradeVersionAltAnnotation,
  hotUpgradeVersionAnnotation,
  isHotUpgrade,
  sortedJson,
  workingHotUpgradeContainers,
  parseSidecarSetHashes,
  sidecarSetAtRevision,
  sidecarSetRevisionHash,
  sidecarSetRevisionName,
  type SidecarSetRevisionData,
  sidecarSetHash,
  sidecarSetHashWithoutImage,
  sidecarListOf,
  sidecarSetMatches,
  usesNativeSidecars,
} from '../../control/sidecarset-pod.js';
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
  ANNOTATION_SIDECARSET_INJECTED_LIST,
  ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
  ENV_IS_INJECTED,
  ENV_SIDECARSET_VERSION,
  ENV_SIDECARSET_VERSION_ALT,
  selectorMatches,
} from '../../../contracts/index.js';
import type { Container, EnvVar, Pod } from '../../core/types.js';
import { computeSidecarResources, ResourceExprError, type TargetContainer } from '../../../api/sidecar-resources.js';

/** Fields of a SidecarContainer that configure injection and are not part of the pod's container. */
const SIDECAR_ONLY_FIELDS = [
  'podInjectPolicy',
  'upgradeStrategy',
  'shareVolumePolicy',
  'shareVolumeDevicePolicy',
  'transferEnv',
  'resourcesPolicy',
] as const;

/** The service-account token mount is the kubelet's business; sharing it would collide with the sidecar's own. */
const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface InjectionInput {
  /** Edited in place. */
  readonly pod: Pod;
  readonly namespace: string;
  readonly namespaceLabels: Readonly<Record<string, string>> | undefined;
  readonly sidecarSets: readonly SidecarSet[];
  /** RFC 3339 time written into the hash annotations. */
  readonly now: string;
  /** Whether a patchPodMetadata annotation key may be written (the kruise-configuration whitelist). */
  readonly metadataKeyAllowed: (set: SidecarSet, key: string) => boolean;
  /**
   * The ControllerRevision a set's `injectionStrategy.revision` names (by revisionName or customVersion),
   * looked up by the caller; undefined when it does not exist.
   */
  readonly pinnedRevision?: (set: SidecarSet) => { readonly name: string; readonly data: SidecarSetRevisionData } | undefined;
  /** A number in [0, 1) for the Partial policy's draw (Math.random in the webhook). */
  readonly random?: () => number;
  /**
   * A set's hashes (`computeHashes`). Each is a canonical JSON and a sha256 of the set's containers (or of its
   * revision data), for every pod: the webhook memoizes them per cached SidecarSet object.
   */
  readonly hashes?: (set: SidecarSet) => SidecarSetHashes;
}

export interface SidecarSetHashes {
  readonly hash: string;
  readonly withoutImage: string;
  /** `sidecarSetRevisionHash`: names the revision a pod records. */
  readonly revision: string;
}

export const computeHashes = (set: SidecarSet): SidecarSetHashes => ({
  hash: sidecarSetHash(set),
  withoutImage: sidecarSetHashWithoutImage(set),
  revision: sidecarSetRevisionHash(set),
});

export type InjectionResult = { readonly injected: readonly string[]; readonly warnings: readonly string[] } | { readonly deny: string };

interface VolumeLike {
  name: string;
  [k: string]: unknown;
}
interface MountLike {
  name: string;
  mountPath?: string;
  devicePath?: string;
  [k: string]: unknown;
}

function labelsOf(pod: Pod): Record<string, string> {
  return pod.metadata.labels ?? {};
}

/** Value of a pod fieldRef (`metadata.name`, `metadata.labels['k']`, …) as the downward API resolves it. */
function podFieldValue(pod: Pod, namespace: string, fieldPath: string): string | undefined {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (m) return (m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[m[2]!];
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata.name;
    case 'metadata.namespace':
      return namespace;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName as string | undefined;
    default:
      return undefined;
  }
}

/** transferEnv: env vars copied from an app container (named directly or through a pod field). */
function transferredEnv(sidecar: SidecarContainer, pod: Pod, namespace: string): EnvVar[] {
  const out: EnvVar[] = [];
  for (const t of sidecar.transferEnv ?? []) {
    const source =
      t.sourceContainerName ??
      (t.sourceContainerNameFrom?.fieldRef ? podFieldValue(pod, namespace, t.sourceContainerNameFrom.fieldRef.fieldPath) : undefined);
    const from = pod.spec?.containers.find((c) => c.name === source);
    if (!from) continue;
    const names = [...(t.envName ? [t.envName] : []), ...(t.envNames ?? [])];
    for (const n of names) {
      const e = from.env?.find((x) => x.name === n);
      if (e && !out.some((x) => x.name === n)) out.push(e);
    }
  }
  return out;
}

/** `$(NAME)` references in a subPathExpr, as the kubelet expands them. */
const SUBPATH_EXPR_VAR = /\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)/g;

/**
 * The env vars the app containers' shared volume mounts name in their `subPathExpr`, taken from the
 * container that has the mount: the kubelet expands a subPathExpr from the env of the container it mounts
 * into, so a sidecar sharing the mount without them cannot start (CreateContainerConfigError). Injected
 * sidecars (IS_INJECTED) are not app containers; a name no app container defines is left out, as upstream.
 */
export function subPathExprEnv(pod: Pod): EnvVar[] {
  const out: EnvVar[] = [];
  for (const app of pod.spec?.containers ?? []) {
    if ((app.env ?? []).some((e) => e.name === ENV_IS_INJECTED)) continue;
    for (const m of (app.volumeMounts ?? []) as MountLike[]) {
      if (m.mountPath === SERVICE_ACCOUNT_MOUNT || typeof m.subPathExpr !== 'string') continue;
      for (const [, name] of m.subPathExpr.matchAll(SUBPATH_EXPR_VAR)) {
        const e = app.env?.find((x) => x.name === name);
        if (e && !out.some((x) => x.name === name)) out.push(e);
      }
    }
  }
  return out;
}

/** The pod container (or init container) a sidecar becomes in this pod. */
function buildContainer(sidecar: SidecarContainer, pod: Pod, namespace: string, native: boolean): Container {
  const c: Record<string, unknown> = { ...(sidecar as unknown as Record<string, unknown>) };
  for (const f of SIDECAR_ONLY_FIELDS) delete c[f];
  const own = (sidecar.env ?? []) as EnvVar[];
  // transferEnv first, then what shared mounts' subPathExprs need (upstream's merge order; first name wins).
  const wanted = transferredEnv(sidecar, pod, namespace);
  if (sidecar.shareVolumePolicy?.type === 'enabled') {
    for (const e of subPathExprEnv(pod)) if (!wanted.some((w) => w.name === e.name)) wanted.push(e);
  }
  const transferred = wanted.filter((e) => !own.some((o) => o.name === e.name));
  // Upstream's order: the sidecar's own env, IS_INJECTED, then the transferred ones.
  const env = [...own.filter((e) => e.name !== ENV_IS_INJECTED), { name: ENV_IS_INJECTED, value: 'true' }, ...transferred];
  c.env = env;
  if (sidecar.shareVolumePolicy?.type === 'enabled') {
    const mounts = [...((sidecar.volumeMounts ?? []) as MountLike[])];
    for (const app of pod.spec?.containers ?? []) {
      for (const m of (app.volumeMounts ?? []) as MountLike[]) {
        if (m.mountPath === SERVICE_ACCOUNT_MOUNT) continue;
        if (mounts.some((x) => x.name === m.name || x.mountPath === m.mountPath)) continue;
        mounts.push(m);
      }
    }
    if (mounts.length) c.volumeMounts = mounts;
  }
  if (sidecar.shareVolumeDevicePolicy?.type === 'enabled') {
    const devices = [...((sidecar.volumeDevices ?? []) as MountLike[])];
    for (const app of pod.spec?.containers ?? []) {
      for (const d of (app.volumeDevices ?? []) as MountLike[]) {
        if (!devices.some((x) => x.name === d.name || x.devicePath === d.devicePath)) devices.push(d);
      }
    }
    if (devices.length) c.volumeDevices = devices;
  }
  if (native) c.restartPolicy = 'Always';
  return c as Container;
}

/**
 * A HotUpgrade sidecar becomes two containers, as upstream injects it: `<name>-1` runs the sidecar's image and
 * works, `<name>-2` runs `hotUpgradeEmptyImage` and idles until an upgrade starts the new version in it. Each reads
 * its own version and its partner's from pod annotations (SIDECARSET_VERSION / SIDECARSET_VERSION_ALT, "1" for the
 * working one, "0" for the idle one), so the two can hand over without a restart; the pod records which one works.
 */
function hotUpgradePair(sidecar: SidecarContainer, built: Container, pod: Pod): Container[] {
  const annotations = (pod.metadata.annotations ??= {});
  const [working, idle] = hotUpgradeContainerNames(sidecar.name);
  const versionEnv = (name: string): EnvVar[] => [
    {
      name: ENV_SIDECARSET_VERSION,
      valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${hotUpgradeVersionAnnotation(name)}']` } },
    },
    {
      name: ENV_SIDECARSET_VERSION_ALT,
      valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${hotUpgradeVersionAltAnnotation(name)}']` } },
    },
  ];
  annotations[hotUpgradeVersionAnnotation(working)] = '1';
  annotations[hotUpgradeVersionAltAnnotation(working)] = '0';
  annotations[hotUpgradeVersionAnnotation(idle)] = '0';
  annotations[hotUpgradeVersionAltAnnotation(idle)] = '1';
  const record = { ...workingHotUpgradeContainers(pod.metadata.annotations), [sidecar.name]: working };
  annotations[ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER] = sortedJson(record);
  return [
    { ...built, name: working, env: [...(built.env ?? []), ...versionEnv(working)] },
    { ...built, name: idle, image: sidecar.upgradeStrategy?.hotUpgradeEmptyImage ?? '', env: [...(built.env ?? []), ...versionEnv(idle)] },
  ];
}

function patchMetadata(set: SidecarSet, pod: Pod, allowed: InjectionInput['metadataKeyAllowed'], warnings: string[]): string | undefined {
  const result = applyPatchPodMetadata(set, (pod.metadata.annotations ??= {}), (key) => allowed(set, key));
  for (const key of result.skipped) {
    warnings.push(
      `SidecarSet ${set.metadata.name}: patchPodMetadata annotation "${key}" is not in the kruise-configuration whitelist (SidecarSet_PatchPodMetadata_WhiteList); not applied`,
    );
  }
  return result.error;
}

/**
 * resourcesPolicy: the sidecar's resources computed from the pod as submitted (its containers and native
 * sidecars, less every container the matched sets inject); the reason the pod is refused, or undefined.
 */
function applyResourcesPolicy(
  set: SidecarSet,
  sidecar: SidecarContainer,
  built: Container,
  pod: Pod,
  excluded: ReadonlySet<string>,
): string | undefined {
  if (!sidecar.resourcesPolicy) return undefined;
  try {
    const computed = computeSidecarResources(
      sidecar.resourcesPolicy,
      (pod.spec?.containers ?? []) as unknown as TargetContainer[],
      (pod.spec?.initContainers ?? []) as unknown as TargetContainer[],
      excluded,
    );
    // As upstream, the computed requirements replace the sidecar's (validation keeps both from being set).
    (built as { resources?: unknown }).resources = computed;
    return undefined;
  } catch (err) {
    if (!(err instanceof ResourceExprError)) throw err;
    return `SidecarSet ${set.metadata.name}: resourcesPolicy of container ${sidecar.name}: ${err.message}`;
  }
}

/** The containers a set injects (container and init names), to detect two sets injecting the same one. */
function injectedNames(set: SidecarSet): string[] {
  return [...(set.spec.containers ?? []), ...(set.spec.initContainers ?? [])].map((c) => c.name);
}

function addHashEntry(pod: Pod, key: string, set: SidecarSet, hash: string, now: string, revision: string | undefined): void {
  const annotations = (pod.metadata.annotations ??= {});
  const entries = parseSidecarSetHashes(annotations[key]);
  const entry: SidecarSetHashEntry = {
    updateTimestamp: now,
    hash,
    sidecarSetName: set.metadata.name!,
    sidecarList: sidecarListOf(set),
    // Upstream names the revision in the hash annotation only; the without-image entry has none.
    ...(revision && key === ANNOTATION_SIDECARSET_HASH ? { controllerRevision: revision } : {}),
  };
  entries[set.metadata.name!] = entry;
  annotations[key] = JSON.stringify(entries);
}

/**
 * The share of selected new pods a Partial pin keeps on the pinned revision: a percentage partition (`"20%"`) as
 * a fraction; no partition or a number of pods (upstream defaults it to 0) keeps none, as upstream draws only
 * against a percentage.
 */
export function partitionFraction(v: number | string | undefined): number {
  const m = typeof v === 'string' ? /^(\d+)%$/.exec(v) : null;
  return m ? Math.min(1, Number(m[1]) / 100) : 0;
}

/**
 * The version a pod gets: the latest, or the revision `injectionStrategy.revision` pins. Under policy
 * Partial a pod the update selector matches gets the latest with probability 1 - partition, as upstream;
 * while the update is paused every new pod gets the pinned revision.
 */
function chooseVersion(latest: SidecarSet, pod: Pod, input: InjectionInput): { set: SidecarSet; revision: string } | { deny: string } {
  const pin = latest.spec.injectionStrategy?.revision;
  const latestRevision = () => sidecarSetRevisionName(latest, (input.hashes ?? computeHashes)(latest).revision);
  if (!pin || (!pin.customVersion && !pin.revisionName)) return { set: latest, revision: latestRevision() };
  if (pin.policy === 'Partial' && !latest.spec.updateStrategy?.paused) {
    const strategy = latest.spec.updateStrategy ?? {};
    const selected = !strategy.selector || selectorMatches(strategy.selector, labelsOf(pod));
    if (selected && (input.random ?? Math.random)() >= partitionFraction(strategy.partition)) {
      return { set: latest, revision: latestRevision() };
    }
  }
  const found = input.pinnedRevision?.(latest);
  if (!found) {
    const what = pin.revisionName ? `revisionName "${pin.revisionName}"` : `customVersion "${pin.customVersion}"`;
    return {
      deny: `SidecarSet ${latest.metadata.name}: injectionStrategy.revision ${what} names no ControllerRevision of this SidecarSet; fix the pin or remove it`,
    };
  }
  const set = sidecarSetAtRevision(latest, found.data);
  if ('error' in set) {
    return { deny: `SidecarSet ${latest.metadata.name}: ControllerRevision ${found.name} cannot be injected: ${set.error}` };
  }
  return { set, revision: found.name };
}

/** Injects every matching, non-paused SidecarSet into `input.pod`. */
export function injectSidecarSets(input: InjectionInput): InjectionResult {
  const { pod, namespace } = input;
  if (!pod.spec) return { injected: [], warnings: [] };
  const place = { namespace, namespaceLabels: input.namespaceLabels, labels: labelsOf(pod) };
  const matched = input.sidecarSets
    .filter((s) => !s.metadata.deletionTimestamp && !s.spec.injectionStrategy?.paused && sidecarSetMatches(s, place))
    .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  if (matched.length === 0) return { injected: [], warnings: [] };

  const owner = new Map<string, string>();
  for (const s of matched) {
    for (const n of injectedNames(s)) {
      const other = owner.get(n);
      if (other) {
        return {
          deny: `SidecarSets ${other} and ${s.metadata.name} both inject a container named "${n}" into this pod; make their selectors disjoint or rename one container`,
        };
      }
      owner.set(n, s.metadata.name!);
    }
  }

  const warnings: string[] = [];
  const before: Container[] = [];
  const after: Container[] = [];
  const nativeBefore: Container[] = [];
  const nativeAfter: Container[] = [];
  const inits: Container[] = [];
  const initsBefore: Container[] = [];
  const volumes: VolumeLike[] = [];
  const pullSecrets: Array<{ name: string }> = [];
  const injected: string[] = [];
  // Upstream builds every sidecar from the pod as submitted; so do we (a sidecar never shares another's mounts).
  // Only the annotations change before the spec is rebuilt below, so a copy of them is all the snapshot needs
  // (a deep copy of every matched pod was the largest cost of the webhook under load).
  const original: Pod = {
    ...pod,
    metadata: { ...pod.metadata, ...(pod.metadata.annotations ? { annotations: { ...pod.metadata.annotations } } : {}) },
  };

  const excluded = new Set(owner.keys());
  for (const latest of matched) {
    const version = chooseVersion(latest, original, input);
    if ('deny' in version) return version;
    const { set, revision } = version;
    const denied = patchMetadata(set, pod, input.metadataKeyAllowed, warnings);
    if (denied) return { deny: denied };
    const native = usesNativeSidecars(set);
    for (const ic of [...(set.spec.initContainers ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if ((original.spec!.initContainers ?? []).some((c) => c.name === ic.name)) continue;
      const builtInit = buildContainer(ic, original, namespace, false);
      const refusedInit = applyResourcesPolicy(set, ic, builtInit, original, excluded);
      if (refusedInit) return { deny: refusedInit };
      (ic.podInjectPolicy === 'BeforeAppContainer' ? initsBefore : inits).push(builtInit);
    }
    for (const sc of set.spec.containers ?? []) {
      const built = buildContainer(sc, original, namespace, native);
      const refused = applyResourcesPolicy(set, sc, built, original, excluded);
      if (refused) return { deny: refused };
      const cs = isHotUpgrade(sc) ? hotUpgradePair(sc, built, pod) : [built];
      const where = sc.podInjectPolicy === 'AfterAppContainer' ? 'after' : 'before';
      if (native) (where === 'after' ? nativeAfter : nativeBefore).push(...cs);
      else (where === 'after' ? after : before).push(...cs);
    }
    const used = new Set<string>();
    for (const c of [...(set.spec.containers ?? []), ...(set.spec.initContainers ?? [])]) {
      for (const m of [...(c.volumeMounts ?? []), ...((c.volumeDevices ?? []) as MountLike[])]) used.add(m.name);
    }
    for (const v of (set.spec.volumes ?? []) as VolumeLike[]) {
      if (used.has(v.name) && !volumes.some((x) => x.name === v.name)) volumes.push(v);
    }
    for (const s of set.spec.imagePullSecrets ?? []) if (s.name) pullSecrets.push({ name: s.name });
    const hashes = (input.hashes ?? computeHashes)(set);
    addHashEntry(pod, ANNOTATION_SIDECARSET_HASH, latest, hashes.hash, input.now, revision);
    addHashEntry(pod, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE, latest, hashes.withoutImage, input.now, revision);
    injected.push(latest.metadata.name!);
  }

  const spec = pod.spec;
  // Containers: a same-named app container is replaced where it stands; the others go before/after.
  const replaceInPlace = (list: Container[], additions: Container[]): Container[] => {
    const rest: Container[] = [];
    for (const a of additions) {
      const i = list.findIndex((c) => c.name === a.name);
      if (i >= 0) list[i] = a;
      else rest.push(a);
    }
    return rest;
  };
  const containers = [...spec.containers];
  const newBefore = replaceInPlace(containers, before);
  const newAfter = replaceInPlace(containers, after);
  spec.containers = [...newBefore, ...containers, ...newAfter];

  const podInits = [...(spec.initContainers ?? [])];
  const nb = replaceInPlace(podInits, nativeBefore);
  const na = replaceInPlace(podInits, nativeAfter);
  // Native sidecars the app's init containers may need (BeforeAppContainer) start first; injected init containers
  // go before the pod's own when BeforeAppContainer, else after them (the default), as upstream places them.
  const allInits = [...nb, ...initsBefore, ...podInits, ...inits, ...na];
  if (allInits.length) spec.initContainers = allInits;

  const podVolumes = (spec.volumes ?? []) as VolumeLike[];
  const newVolumes = volumes.filter((v) => !podVolumes.some((p) => p.name === v.name));
  if (newVolumes.length) spec.volumes = [...podVolumes, ...newVolumes];

  const podSecrets = (spec.imagePullSecrets ?? []) as Array<{ name: string }>;
  const newSecrets = pullSecrets.filter(
    (s, i) => !podSecrets.some((p) => p.name === s.name) && pullSecrets.findIndex((x) => x.name === s.name) === i,
  );
  if (newSecrets.length) spec.imagePullSecrets = [...podSecrets, ...newSecrets];

  const annotations = (pod.metadata.annotations ??= {});
  const list = new Set([...(annotations[ANNOTATION_SIDECARSET_INJECTED_LIST] ?? '').split(',').filter(Boolean), ...injected]);
  annotations[ANNOTATION_SIDECARSET_INJECTED_LIST] = [...list].sort().join(',');
  return { injected, warnings };
}

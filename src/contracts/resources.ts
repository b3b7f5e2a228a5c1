import { KRUISE_GROUP, KRUISE_POLICY_GROUP, KRUISE_VERSION } from './groups.js';

/**
 * REST identity of a resource type: what a request path and an RBAC check need (group, version, plural,
 * scope). The runtime's client refuses calls it cannot name this way; RBAC is generated from the same
 * strings.
 */
export interface ResourceType {
  /** API group, `''` for core. */
  readonly group: string;
  readonly version: string;
  /** Plural resource name as used in URLs and RBAC. */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

function rt(group: string, version: string, resource: string, kind: string, namespaced: boolean): ResourceType {
  return Object.freeze({ group, version, resource, kind, namespaced });
}

export const PODS = rt('', 'v1', 'pods', 'Pod', true);
export const NODES = rt('', 'v1', 'nodes', 'Node', false);
export const EVENTS = rt('', 'v1', 'events', 'Event', true);
export const SECRETS = rt('', 'v1', 'secrets', 'Secret', true);
export const NAMESPACES = rt('', 'v1', 'namespaces', 'Namespace', false);
export const LEASES = rt('coordination.k8s.io', 'v1', 'leases', 'Lease', true);
export const PERSISTENT_VOLUME_CLAIMS = rt('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true);
export const STORAGE_CLASSES = rt('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false);
export const CONTROLLER_REVISIONS = rt('apps', 'v1', 'controllerrevisions', 'ControllerRevision', true);
export const DEPLOYMENTS = rt('apps', 'v1', 'deployments', 'Deployment', true);
export const REPLICA_SETS = rt('apps', 'v1', 'replicasets', 'ReplicaSet', true);
export const STATEFUL_SETS = rt('apps', 'v1', 'statefulsets', 'StatefulSet', true);
export const CUSTOM_RESOURCE_DEFINITIONS = rt('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false);
export const POD_DISRUPTION_BUDGETS = rt('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true);
export const MUTATING_WEBHOOK_CONFIGURATIONS = rt(
  'admissionregistration.k8s.io',
  'v1',
  'mutatingwebhookconfigurations',
  'MutatingWebhookConfiguration',
  false,
);
export const VALIDATING_WEBHOOK_CONFIGURATIONS = rt(
  'admissionregistration.k8s.io',
  'v1',
  'validatingwebhookconfigurations',
  'ValidatingWebhookConfiguration',
  false,
);

/**
 * Names and scope of one kind we model. The API model (`src/api/registry.ts`) adds the schema, printer
 * columns and subresources to these; the runtime derives its REST identities from them.
 */
export interface KruiseKindIdentity {
  /** API group: {@link KRUISE_GROUP} unless the kind is upstream's in another Kruise group (policy.kruise.io). */
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
  /**
   * Versions served besides {@link KRUISE_VERSION}, as upstream v1.9 serves them (its clients and e2e suite write
   * these kinds as v1beta1). The one schema of the kind holds every version's fields; a field only some versions
   * have is marked in the API model (`servedIn`) and left out of the other versions' CRD schemas.
   */
  readonly alsoServed?: readonly string[];
  /**
   * The version the API server stores, where upstream stores another than {@link KRUISE_VERSION}: one of `alsoServed`,
   * so a cluster moved between upstream's install and ours never needs a storage migration. With conversion None the
   * API server reads objects stored earlier at {@link KRUISE_VERSION} as they are, only their apiVersion changes.
   */
  readonly storageVersion?: string;
  /**
   * The versions' schemas differ in more than fields one version lacks (upstream moves a value between a label and
   * a spec field), so the CRD converts through the manager's `/convert` endpoint instead of conversion None.
   */
  readonly conversionWebhook?: boolean;
}

function kruiseKind(
  kind: string,
  plural: string,
  namespaced: boolean,
  shortNames?: readonly string[],
  alsoServed?: readonly string[],
  group: string = KRUISE_GROUP,
): KruiseKindIdentity {
  return Object.freeze({ group, kind, plural, namespaced, ...(shortNames ? { shortNames } : {}), ...(alsoServed ? { alsoServed } : {}) });
}

/** Every kind we model, in CRD output order. */
export const KRUISE_KINDS = Object.freeze({
  // Upstream v1.9 stores v1beta1 and converts with a webhook: v1alpha1's spec.namespace becomes a namespaceSelector,
  // its custom-version label v1beta1's spec.customVersion (src/runtime/webhooks/sidecarset/conversion.ts).
  SidecarSet: Object.freeze({
    ...kruiseKind('SidecarSet', 'sidecarsets', false, undefined, ['v1beta1']),
    storageVersion: 'v1beta1',
    conversionWebhook: true,
  }),
  CloneSet: kruiseKind('CloneSet', 'clonesets', true, ['clone']),
  // Upstream v1.9 serves these at v1beta1 too and stores v1beta1.
  ImagePullJob: Object.freeze({ ...kruiseKind('ImagePullJob', 'imagepulljobs', true, undefined, ['v1beta1']), storageVersion: 'v1beta1' }),
  ContainerRecreateRequest: kruiseKind('ContainerRecreateRequest', 'containerrecreaterequests', true, ['crr']),
  NodeImage: Object.freeze({ ...kruiseKind('NodeImage', 'nodeimages', false, undefined, ['v1beta1']), storageVersion: 'v1beta1' }),
  BroadcastJob: Object.freeze({ ...kruiseKind('BroadcastJob', 'broadcastjobs', true, ['bcj'], ['v1beta1']), storageVersion: 'v1beta1' }),
  ImageListPullJob: Object.freeze({
    ...kruiseKind('ImageListPullJob', 'imagelistpulljobs', true, undefined, ['v1beta1']),
    storageVersion: 'v1beta1',
  }),
  PodProbeMarker: kruiseKind('PodProbeMarker', 'podprobemarkers', true),
  NodePodProbe: kruiseKind('NodePodProbe', 'nodepodprobes', false),
  PodUnavailableBudget: kruiseKind('PodUnavailableBudget', 'podunavailablebudgets', true, ['pub'], undefined, KRUISE_POLICY_GROUP),
  // Advanced StatefulSet: upstream v1.9 serves v1alpha1 and v1beta1 and stores v1beta1 (src/api/kinds/statefulset.ts).
  StatefulSet: Object.freeze({
    ...kruiseKind('StatefulSet', 'statefulsets', true, ['sts', 'asts'], ['v1beta1']),
    storageVersion: 'v1beta1',
  }),
  // Upstream v1.9 stores v1beta1; the one schema holds both versions' fields (src/api/kinds/daemonset.ts).
  DaemonSet: Object.freeze({
    ...kruiseKind('DaemonSet', 'daemonsets', true, ['daemon', 'ads'], ['v1beta1']),
    storageVersion: 'v1beta1',
  }),
});

export type KruiseKindName = keyof typeof KRUISE_KINDS;

/** The REST identity of one of our kinds. */
export function kruiseResource(kind: KruiseKindName): ResourceType {
  const k = KRUISE_KINDS[kind];
  return rt(k.group, KRUISE_VERSION, k.plural, k.kind, k.namespaced);
}

/**
 * SidecarSets at v1beta1, the version upstream stores: the runtime reads and writes them there, so its own reads
 * never go through the conversion webhook it serves (a manager that is down cannot block the daemon or its restart).
 */
export const SIDECARSETS = rt(KRUISE_GROUP, 'v1beta1', 'sidecarsets', 'SidecarSet', false);
export const CLONESETS = kruiseResource('CloneSet');
export const IMAGE_PULL_JOBS = kruiseResource('ImagePullJob');
export const CONTAINER_RECREATE_REQUESTS = kruiseResource('ContainerRecreateRequest');
export const NODE_IMAGES = kruiseResource('NodeImage');
export const BROADCAST_JOBS = kruiseResource('BroadcastJob');
export const IMAGE_LIST_PULL_JOBS = kruiseResource('ImageListPullJob');
export const POD_PROBE_MARKERS = kruiseResource('PodProbeMarker');
export const NODE_POD_PROBES = kruiseResource('NodePodProbe');
export const POD_UNAVAILABLE_BUDGETS = kruiseResource('PodUnavailableBudget');
/** Advanced StatefulSets at v1beta1, upstream's storage version: its v1alpha1 lacks the fields the controller reads. */
export const ADVANCED_STATEFULSETS = rt(KRUISE_GROUP, 'v1beta1', 'statefulsets', 'StatefulSet', true);
export const ADVANCED_DAEMONSETS = kruiseResource('DaemonSet');
/**
 * Advanced DaemonSets at v1beta1, the version upstream stores: the status goes there, since a field only one version
 * has is pruned at the storage version (the revision hash is v1beta1's `updateRevision`, v1alpha1's `daemonSetHash`).
 */
export const ADVANCED_DAEMONSETS_V1BETA1 = rt(KRUISE_GROUP, 'v1beta1', 'daemonsets', 'DaemonSet', true);

/** `apiVersion` string of a resource type (`v1`, `apps.kruise.io/v1alpha1`). */
export function apiVersionOf(t: ResourceType): string {
  return t.group === '' ? t.version : `${t.group}/${t.version}`;
}

/** REST path of a collection or an object, optionally a subresource. */
export function resourcePath(t: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  let p = t.group === '' ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  if (t.namespaced && namespace !== undefined) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${t.resource}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource !== undefined) p += `/${subresource}`;
  return p;
}
export const CONFIGMAPS = rt('', 'v1', 'configmaps', 'ConfigMap', true);

/**
 * Kinds that are one-shot operations, not desired state: applied once by a person or a tool, they finish and are
 * garbage-collected (TTL). A GitOps sync would re-create or prune them at every sync, so synth writes them to
 * `ops/` outside the synced tree and `validate` warns when one sits in a synced tree.
 */
export const OPERATION_KINDS: readonly KruiseKindName[] = Object.freeze(['ContainerRecreateRequest'] as const);

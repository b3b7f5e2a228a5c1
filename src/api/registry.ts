/**
 * The registry of kinds: names, scope, printer columns and subresources next to each schema, so
 * the CRD generator, the validator and the CLI all read one table.
 *
 * @module
 */
import type { TSchema } from '@sinclair/typebox';
import { API_VERSION, VERSION } from './common.js';
import { isKruiseApiVersion, KRUISE_KINDS, type KruiseKindName } from '../contracts/index.js';
import { CloneSetSchema } from './kinds/cloneset.js';
import { ContainerRecreateRequestSchema } from './kinds/containerrecreaterequest.js';
import { ImagePullJobSchema } from './kinds/imagepulljob.js';
import { NodeImageSchema } from './kinds/nodeimage.js';
import { BroadcastJobSchema } from './kinds/broadcastjob.js';
import { ImageListPullJobSchema } from './kinds/imagelistpulljob.js';
import { NodePodProbeSchema, PodProbeMarkerSchema } from './kinds/podprobemarker.js';
import { PodUnavailableBudgetSchema } from './kinds/podunavailablebudget.js';
import { StatefulSetSchema } from './kinds/statefulset.js';
import { DaemonSetSchema } from './kinds/daemonset.js';
import { SidecarSetSchema } from './kinds/sidecarset.js';

/** An `additionalPrinterColumns` entry of a CRD version. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  /** 0 = shown by default; 1 = only with `-o wide`. */
  readonly priority?: number;
  readonly format?: string;
  /** The versions whose CRD entry shows the column (upstream dropped some at v1beta1); absent: every version. */
  readonly servedIn?: readonly string[];
}

/** CRD subresources. */
export interface Subresources {
  readonly status?: Record<string, never>;
  readonly scale?: {
    readonly specReplicasPath: string;
    readonly statusReplicasPath: string;
    readonly labelSelectorPath?: string;
  };
}

/** Everything needed to validate, document and install one kind. */
export interface KindDefinition {
  readonly group: string;
  readonly version: string;
  /** Versions the CRD also serves (conversion None); fields some versions lack are marked `servedIn` in the schema. */
  readonly alsoServed?: readonly string[];
  /** The storage version when it is one of `alsoServed` (upstream's storage version); else `version`. */
  readonly storageVersion?: string;
  /** The versions' schemas differ beyond pruning: the CRD converts through the runtime's webhook (src/install/crds.ts). */
  readonly conversionWebhook?: boolean;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly listKind: string;
  readonly scope: 'Namespaced' | 'Cluster';
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  /** TypeBox schema of the whole object (apiVersion, kind, metadata, spec, status). */
  readonly schema: TSchema;
  readonly printerColumns: readonly PrinterColumn[];
  readonly subresources: Subresources;
}

const AGE: PrinterColumn = {
  name: 'AGE',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since the object was created.',
};

/** The `-o wide` columns of a workload's pod template; upstream's descriptions say whose (`of` …). */
function templateColumns(of: string): PrinterColumn[] {
  return [
    {
      name: 'CONTAINERS',
      type: 'string',
      jsonPath: '.spec.template.spec.containers[*].name',
      priority: 1,
      description: `The containers of ${of}.`,
    },
    {
      name: 'IMAGES',
      type: 'string',
      jsonPath: '.spec.template.spec.containers[*].image',
      priority: 1,
      description: `The images of ${of}.`,
    },
  ];
}

/** The subresources of a workload an autoscaler or `kubectl scale` can scale. */
const SCALABLE: Subresources = {
  status: {},
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
};

/** A kind's names and scope come from the contract layer; the API model adds schema, columns and subresources. */
function def(
  kind: KruiseKindName,
  d: Omit<
    KindDefinition,
    | 'group'
    | 'version'
    | 'alsoServed'
    | 'storageVersion'
    | 'conversionWebhook'
    | 'listKind'
    | 'singular'
    | 'kind'
    | 'plural'
    | 'scope'
    | 'shortNames'
  >,
): KindDefinition {
  const id = KRUISE_KINDS[kind];
  return Object.freeze({
    group: id.group,
    version: VERSION,
    kind: id.kind,
    plural: id.plural,
    singular: id.kind.toLowerCase(),
    listKind: `${id.kind}List`,
    scope: id.namespaced ? ('Namespaced' as const) : ('Cluster' as const),
    ...(id.shortNames ? { shortNames: id.shortNames } : {}),
    ...(id.alsoServed ? { alsoServed: id.alsoServed } : {}),
    ...(id.storageVersion ? { storageVersion: id.storageVersion } : {}),
    ...(id.conversionWebhook ? { conversionWebhook: true } : {}),
    ...d,
  });
}

/** Registry entry of SidecarSet: names, scope, schema, printer columns and subresources. */
export const SidecarSetDefinition = def('SidecarSet', {
  schema: SidecarSetSchema,
  subresources: { status: {} },
  printerColumns: [
    { name: 'MATCHED', type: 'integer', jsonPath: '.status.matchedPods', description: 'The number of pods matched.' },
    { name: 'UPDATED', type: 'integer', jsonPath: '.status.updatedPods', description: 'The number of pods matched and updated.' },
    { name: 'READY', type: 'integer', jsonPath: '.status.readyPods', description: 'The number of pods matched and ready.' },
    AGE,
  ],
});

/** Registry entry of CloneSet: names, scope, schema, printer columns and subresources. */
export const CloneSetDefinition = def('CloneSet', {
  schema: CloneSetSchema,
  subresources: SCALABLE,
  printerColumns: [
    { name: 'DESIRED', type: 'integer', jsonPath: '.spec.replicas', description: 'The desired number of pods.' },
    { name: 'UPDATED', type: 'integer', jsonPath: '.status.updatedReplicas', description: 'The number of pods updated.' },
    {
      name: 'UPDATED_READY',
      type: 'integer',
      jsonPath: '.status.updatedReadyReplicas',
      description: 'The number of pods updated and ready.',
    },
    {
      name: 'UPDATED_AVAILABLE',
      type: 'integer',
      jsonPath: '.status.updatedAvailableReplicas',
      description: 'The number of pods updated and available.',
    },
    { name: 'READY', type: 'integer', jsonPath: '.status.readyReplicas', description: 'The number of pods ready.' },
    { name: 'TOTAL', type: 'integer', jsonPath: '.status.replicas', description: 'The number of currently all pods.' },
    AGE,
    ...templateColumns('currently cloneset'),
    {
      name: 'SELECTOR',
      type: 'string',
      jsonPath: '.status.labelSelector',
      priority: 1,
      description: 'The selector of currently cloneset.',
    },
  ],
});

/** Registry entry of ImagePullJob: names, scope, schema, printer columns and subresources. */
export const ImagePullJobDefinition = def('ImagePullJob', {
  schema: ImagePullJobSchema,
  subresources: { status: {} },
  printerColumns: [
    { name: 'TOTAL', type: 'integer', jsonPath: '.status.desired', description: 'Number of all nodes matched by this job' },
    { name: 'ACTIVE', type: 'integer', jsonPath: '.status.active', description: 'Number of image pull task active' },
    { name: 'SUCCEED', type: 'integer', jsonPath: '.status.succeeded', description: 'Number of image pull task succeeded' },
    { name: 'FAILED', type: 'integer', jsonPath: '.status.failed', description: 'Number of image pull tasks failed' },
    AGE,
    {
      name: 'MESSAGE',
      type: 'string',
      jsonPath: '.status.message',
      description: 'Summary of status when job is failed',
      servedIn: ['v1alpha1'],
    },
  ],
});

/** Registry entry of ContainerRecreateRequest: names, scope, schema, printer columns and subresources. */
export const ContainerRecreateRequestDefinition = def('ContainerRecreateRequest', {
  schema: ContainerRecreateRequestSchema,
  subresources: { status: {} },
  printerColumns: [
    { name: 'PHASE', type: 'string', jsonPath: '.status.phase', description: 'Phase of this ContainerRecreateRequest.' },
    { name: 'POD', type: 'string', jsonPath: '.spec.podName', description: 'Pod name of this ContainerRecreateRequest.' },
    { name: 'NODE', type: 'string', jsonPath: '.metadata.labels.crr\\.apps\\.kruise\\.io/node-name', description: 'Node name of the pod.' },
    AGE,
  ],
});

/** Registry entry of NodeImage: names, scope, schema, printer columns and subresources. */
export const NodeImageDefinition = def('NodeImage', {
  schema: NodeImageSchema,
  subresources: { status: {} },
  printerColumns: [
    { name: 'DESIRED', type: 'integer', jsonPath: '.status.desired', description: 'Number of all images on this node' },
    { name: 'PULLING', type: 'integer', jsonPath: '.status.pulling', description: 'Number of image pull task active' },
    { name: 'SUCCEED', type: 'integer', jsonPath: '.status.succeeded', description: 'Number of image pull task succeeded' },
    { name: 'FAILED', type: 'integer', jsonPath: '.status.failed', description: 'Number of image pull tasks failed' },
    AGE,
  ],
});

/** Registry entry of BroadcastJob: names, scope, schema, printer columns (upstream's) and subresources. */
export const BroadcastJobDefinition = def('BroadcastJob', {
  schema: BroadcastJobSchema,
  subresources: { status: {} },
  printerColumns: [
    {
      name: 'Desired',
      type: 'integer',
      jsonPath: '.status.desired',
      description: 'The desired number of pods. This is typically equal to the number of nodes satisfied to run pods.',
    },
    { name: 'Active', type: 'integer', jsonPath: '.status.active', description: 'The number of actively running pods.' },
    { name: 'Succeeded', type: 'integer', jsonPath: '.status.succeeded', description: 'The number of pods which reached phase Succeeded.' },
    { name: 'Failed', type: 'integer', jsonPath: '.status.failed', description: 'The number of pods which reached phase Failed.' },
    AGE,
  ],
});

/** Registry entry of PodProbeMarker: names, scope, schema and subresources (upstream has no printer columns). */
export const PodProbeMarkerDefinition = def('PodProbeMarker', {
  schema: PodProbeMarkerSchema,
  subresources: { status: {} },
  printerColumns: [],
});

/** Registry entry of NodePodProbe: names, scope, schema and subresources (upstream has no printer columns). */
export const NodePodProbeDefinition = def('NodePodProbe', { schema: NodePodProbeSchema, subresources: { status: {} }, printerColumns: [] });

/** Registry entry of ImageListPullJob: names, scope, schema, printer columns (upstream's) and subresources. */
export const ImageListPullJobDefinition = def('ImageListPullJob', {
  schema: ImageListPullJobSchema,
  subresources: { status: {} },
  printerColumns: [
    { name: 'TOTAL', type: 'integer', jsonPath: '.status.desired', description: 'Number of image pull jobs' },
    { name: 'SUCCEEDED', type: 'integer', jsonPath: '.status.succeeded', description: 'Number of image pull jobs succeeded' },
    { name: 'COMPLETED', type: 'integer', jsonPath: '.status.completed', description: 'Number of image pull jobs finished' },
    AGE,
  ],
});

/** Registry entry of PodUnavailableBudget (policy.kruise.io): names, scope, schema, printer columns (upstream's) and subresources. */
export const PodUnavailableBudgetDefinition = def('PodUnavailableBudget', {
  schema: PodUnavailableBudgetSchema,
  subresources: { status: {} },
  printerColumns: [
    {
      name: 'Allowed',
      type: 'integer',
      jsonPath: '.status.unavailableAllowed',
      description: 'UnavailableAllowed number of pod unavailable that are currently allowed',
    },
    {
      name: 'Current',
      type: 'integer',
      jsonPath: '.status.currentAvailable',
      description: 'CurrentAvailable current number of available pods',
    },
    {
      name: 'Desired',
      type: 'integer',
      jsonPath: '.status.desiredAvailable',
      description: 'DesiredAvailable minimum desired number of available pods',
    },
    {
      name: 'Total',
      type: 'integer',
      jsonPath: '.status.totalReplicas',
      description: 'TotalReplicas total number of pods counted by this budget',
    },
  ],
});

/** Registry entry of Advanced StatefulSet: names, scope, schema, printer columns (upstream's) and the scale subresource. */
export const StatefulSetDefinition = def('StatefulSet', {
  schema: StatefulSetSchema,
  subresources: SCALABLE,
  printerColumns: [
    { name: 'DESIRED', type: 'integer', jsonPath: '.spec.replicas', description: 'The desired number of pods.' },
    { name: 'CURRENT', type: 'integer', jsonPath: '.status.replicas', description: 'The number of currently all pods.' },
    { name: 'UPDATED', type: 'integer', jsonPath: '.status.updatedReplicas', description: 'The number of pods updated.' },
    { name: 'READY', type: 'integer', jsonPath: '.status.readyReplicas', description: 'The number of pods ready.' },
    AGE,
    ...templateColumns('currently advanced statefulset'),
  ],
});

/** Registry entry of Advanced DaemonSet: names, scope, schema, printer columns (upstream's) and subresources. */
export const DaemonSetDefinition = def('DaemonSet', {
  schema: DaemonSetSchema,
  subresources: { status: {} },
  printerColumns: [
    { name: 'DESIRED', type: 'integer', jsonPath: '.status.desiredNumberScheduled', description: 'The desired number of pods.' },
    { name: 'CURRENT', type: 'integer', jsonPath: '.status.currentNumberScheduled', description: 'The current number of pods.' },
    { name: 'READY', type: 'integer', jsonPath: '.status.numberReady', description: 'The ready number of pods.' },
    { name: 'UP-TO-DATE', type: 'integer', jsonPath: '.status.updatedNumberScheduled', description: 'The updated number of pods.' },
    { name: 'AVAILABLE', type: 'integer', jsonPath: '.status.numberAvailable', description: 'The available number of pods.' },
    AGE,
    ...templateColumns('the pod template'),
  ],
});

/** Every kind we model, in a stable order (used for CRD output order). */
export const KINDS: readonly KindDefinition[] = Object.freeze([
  SidecarSetDefinition,
  CloneSetDefinition,
  ImagePullJobDefinition,
  ContainerRecreateRequestDefinition,
  NodeImageDefinition,
  BroadcastJobDefinition,
  ImageListPullJobDefinition,
  PodProbeMarkerDefinition,
  NodePodProbeDefinition,
  PodUnavailableBudgetDefinition,
  StatefulSetDefinition,
  DaemonSetDefinition,
]);

// A kind is found at its model version and at each version also served (one schema; `servedIn` marks the differences).
const byKey = new Map<string, KindDefinition>(
  KINDS.flatMap((d) => [d.version, ...(d.alsoServed ?? [])].map((v): [string, KindDefinition] => [`${d.group}/${v}|${d.kind}`, d])),
);

/** The definition for `apiVersion` + `kind`, or undefined for kinds we do not model. */
export function findKind(apiVersion: string, kind: string): KindDefinition | undefined {
  return byKey.get(`${apiVersion}|${kind}`);
}

/** True for any kind of a Kruise API group (modelled or not). */
export { isKruiseApiVersion };

export { API_VERSION };

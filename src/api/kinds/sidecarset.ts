/**
 * SidecarSet (apps.kruise.io/v1alpha1 and v1beta1, cluster-scoped): injects sidecar containers into matching
 * pods at creation and upgrades them in place. Upstream v1.9 serves both versions and stores v1beta1; they differ in
 * two fields, marked `servedIn`: v1alpha1's `spec.namespace` (v1beta1 says it with a namespaceSelector) and v1beta1's
 * `spec.customVersion` (v1alpha1 keeps it in the label apps.kruise.io/sidecarset-custom-version). The CRD converts
 * between them through the manager's conversion webhook.
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type * as G from '../types/generated.js';
import { KRUISE_KINDS } from '../../contracts/resources.js';
import {
  DateTime,
  IntOrPercent,
  Int32,
  Int64,
  LabelSelector,
  ServedKindObject,
  servedIn,
  StringEnum,
  StringMap,
  Struct,
} from '../common.js';
import { CoreExtend, LocalObjectReferenceSchema, ObjectFieldSelectorSchema, VolumeSchema } from '../core.js';
import { UpdatePriorityStrategySchema } from './cloneset.js';
import type { V1Container } from '../core/k8s-core-types.js';

/** Where an injected container goes relative to the pod's own containers. */
export const PodInjectPolicyValues = ['BeforeAppContainer', 'AfterAppContainer'] as const;
/** One of {@link PodInjectPolicyValues}. */
export type PodInjectPolicy = (typeof PodInjectPolicyValues)[number];

/** How a sidecar container is upgraded. */
export const SidecarUpgradeTypeValues = ['ColdUpgrade', 'HotUpgrade'] as const;
/** One of {@link SidecarUpgradeTypeValues}. */
export type SidecarUpgradeType = (typeof SidecarUpgradeTypeValues)[number];

/** Whether a sidecar also mounts the app containers' volumeMounts / volumeDevices. */
export const ShareVolumePolicyTypeValues = ['enabled', 'disabled'] as const;
/** One of {@link ShareVolumePolicyTypeValues}. */
export type ShareVolumePolicyType = (typeof ShareVolumePolicyTypeValues)[number];

/** How resourcesPolicy aggregates the target containers' resources. */
export const TargetContainersModeValues = ['sum', 'max'] as const;

/** SidecarSet update strategy types. */
export const SidecarSetUpdateStrategyTypeValues = ['RollingUpdate', 'NotUpdate'] as const;
/** One of {@link SidecarSetUpdateStrategyTypeValues}. */
export type SidecarSetUpdateStrategyType = (typeof SidecarSetUpdateStrategyTypeValues)[number];

/** How injectionStrategy.revision applies to new pods. */
export const SidecarSetInjectRevisionPolicyValues = ['Always', 'Partial'] as const;

/** How patchPodMetadata treats annotations that already exist on the pod. */
export const SidecarSetPatchPolicyValues = ['Retain', 'Overwrite', 'MergePatchJson'] as const;
/** One of {@link SidecarSetPatchPolicyValues}. */
export type SidecarSetPatchPolicy = (typeof SidecarSetPatchPolicyValues)[number];

const ShareVolumePolicySchema = Struct(
  // Optional, as upstream's CRD has it: Go clients send an unset policy as `{}` (a struct, not a pointer).
  { type: Type.Optional(StringEnum(ShareVolumePolicyTypeValues, { description: '`enabled` or `disabled` (default, also when unset).' })) },
  { description: "Whether the sidecar shares the app containers' volumes." },
);

const ResourceExprSchema = Struct(
  {
    cpu: Type.Optional(Type.String({ description: "Expression over variable 'cpu' (+ - * / max() min())." })),
    memory: Type.Optional(Type.String({ description: "Expression over variable 'memory' (+ - * / max() min())." })),
  },
  { description: 'Resource expressions.' },
);

/** Kruise-specific fields of a SidecarSet container, on top of a full core Container. */
export const SidecarContainerFields = {
  podInjectPolicy: Type.Optional(
    StringEnum(PodInjectPolicyValues, {
      description: 'Where the container is injected: BeforeAppContainer (default) or AfterAppContainer.',
    }),
  ),
  upgradeStrategy: Type.Optional(
    Struct(
      {
        upgradeType: Type.Optional(
          StringEnum(SidecarUpgradeTypeValues, {
            description: 'ColdUpgrade (default; stateless sidecars) or HotUpgrade (e.g. envoy).',
          }),
        ),
        hotUpgradeEmptyImage: Type.Optional(
          Type.String({
            description: 'HotUpgrade only: an image that behaves like the sidecar (command, probes) but does no work.',
          }),
        ),
      },
      { description: 'How the sidecar is upgraded.' },
    ),
  ),
  shareVolumePolicy: Type.Optional(ShareVolumePolicySchema),
  shareVolumeDevicePolicy: Type.Optional(ShareVolumePolicySchema),
  transferEnv: Type.Optional(
    Type.Array(
      Struct({
        sourceContainerName: Type.Optional(Type.String({ description: 'Name of the app container to copy env from.' })),
        sourceContainerNameFrom: Type.Optional(
          Struct(
            { fieldRef: Type.Optional(ObjectFieldSelectorSchema({ description: 'Pod field holding the source container name.' })) },
            { description: 'Take the source container name from a pod field.' },
          ),
        ),
        envName: Type.Optional(Type.String({ description: 'Env var to copy.' })),
        envNames: Type.Optional(Type.Array(Type.String(), { description: 'Env vars to copy.' })),
      }),
      { description: 'Env vars copied from an app container into the sidecar.' },
    ),
  ),
  resourcesPolicy: Type.Optional(
    Struct(
      {
        targetContainersMode: StringEnum(TargetContainersModeValues, {
          description: "How matched containers' resources aggregate: sum or max.",
        }),
        targetContainersNameRegex: Type.Optional(
          Type.String({ description: 'Regex over app container names whose resources are aggregated.' }),
        ),
        resourcesExpr: Struct(
          { limits: Type.Optional(ResourceExprSchema), requests: Type.Optional(ResourceExprSchema) },
          { description: 'Expressions computing the sidecar resources.' },
        ),
      },
      {
        description: 'Compute the sidecar resources from the app containers at pod creation (Kruise v1.9+). Excludes `resources`.',
      },
    ),
  ),
};

/** A SidecarSet container: a full core Container plus the Kruise fields. */
export const SidecarContainerSchema = CoreExtend<V1Container, typeof SidecarContainerFields>(
  'Container',
  SidecarContainerFields,
  // The CRD keeps the core part unpruned, like upstream; our validator checks it fully.
  { description: 'A sidecar container: a core Container plus injection and upgrade settings.', crd: 'preserve' },
);
/** A sidecar container: a core Container plus injection and upgrade settings. Every field is documented (generated from the schema descriptions). */
export type SidecarContainer = G.SidecarContainer;

/**
 * A SidecarSet init container: the same fields, its `podInjectPolicy` defaulted by the CRD to AfterAppContainer as
 * upstream's SidecarSet defaulting writes it, so clients read back what they would from OpenKruise.
 */
export const SidecarInitContainerSchema = CoreExtend<V1Container, typeof SidecarContainerFields>(
  'Container',
  {
    ...SidecarContainerFields,
    podInjectPolicy: Type.Optional(
      StringEnum(PodInjectPolicyValues, {
        description:
          "Where the init container is injected: before the pod's own init containers (BeforeAppContainer) or after them (AfterAppContainer, the default, as upstream writes it).",
        default: 'AfterAppContainer',
      }),
    ),
  },
  { description: 'An init container to inject: a core Container plus the sidecar container settings.', crd: 'preserve' },
);
/** An init container to inject: a core Container plus the sidecar container settings. Every field is documented (generated from the schema descriptions). */
export type SidecarInitContainer = G.SidecarInitContainer;

/** TypeBox schema of {@link SidecarSetUpdateStrategy}: How injected pods are upgraded when the SidecarSet changes. */
export const SidecarSetUpdateStrategySchema = Struct(
  {
    type: Type.Optional(
      StringEnum(SidecarSetUpdateStrategyTypeValues, {
        description: 'RollingUpdate (default): upgrade injected pods in place; NotUpdate: only inject new pods.',
      }),
    ),
    paused: Type.Optional(Type.Boolean({ description: 'Pause the rolling update.' })),
    selector: Type.Optional(LabelSelector('Only pods matching this selector are upgraded (canary).')),
    partition: Type.Optional(IntOrPercent({ description: 'Number or percentage of pods kept at the old version (default 0).' })),
    maxUnavailable: Type.Optional(IntOrPercent({ description: 'Max pods unavailable during the update; default 1, must not be 0.' })),
    priorityStrategy: Type.Optional(UpdatePriorityStrategySchema),
    scatterStrategy: Type.Optional(
      Type.Array(
        Struct({
          key: Type.String({ description: 'Label key.' }),
          value: Type.String({ description: 'Label value.' }),
        }),
        { description: 'Spread pods with these labels across the update.' },
      ),
    ),
  },
  { description: 'How injected pods are upgraded when the SidecarSet changes.' },
);
/** How injected pods are upgraded when the SidecarSet changes. Every field is documented (generated from the schema descriptions). */
export type SidecarSetUpdateStrategy = G.SidecarSetUpdateStrategy;

/** TypeBox schema of {@link SidecarSetSpec}: Desired state of a SidecarSet. */
export const SidecarSetSpecSchema = Struct(
  {
    selector: Type.Optional(LabelSelector('Pods to inject into. An empty selector matches nothing.')),
    namespace: Type.Optional(
      servedIn(
        ['v1alpha1'],
        Type.String({ description: 'Only inject pods in this namespace (v1alpha1).' }),
        'a namespaceSelector matching the label kubernetes.io/metadata.name',
      ),
    ),
    namespaceSelector: Type.Optional(LabelSelector('Only inject pods in namespaces whose labels match.')),
    initContainers: Type.Optional(
      Type.Array(SidecarInitContainerSchema, {
        description: "Init containers to inject (sorted by name), after the pod's own unless BeforeAppContainer.",
      }),
    ),
    containers: Type.Optional(Type.Array(SidecarContainerSchema, { description: 'Sidecar containers to inject.' })),
    volumes: Type.Optional(
      Type.Array(VolumeSchema({ crd: 'preserve' }), {
        description: 'Volumes the sidecars may mount; only those they reference are added to a pod.',
      }),
    ),
    updateStrategy: Type.Optional(SidecarSetUpdateStrategySchema),
    injectionStrategy: Type.Optional(
      Struct(
        {
          paused: Type.Optional(Type.Boolean({ description: 'Stop injecting into new pods.' })),
          revision: Type.Optional(
            Struct(
              {
                customVersion: Type.Optional(Type.String({ description: 'Inject the revision with this custom version.' })),
                revisionName: Type.Optional(Type.String({ description: 'Inject this ControllerRevision.' })),
                policy: Type.Optional(
                  StringEnum(SidecarSetInjectRevisionPolicyValues, {
                    description: 'Always (default): always the pinned revision; Partial: canary pods may get the latest.',
                    default: 'Always',
                  }),
                ),
              },
              { description: 'Pin the injected revision.' },
            ),
          ),
        },
        { description: 'How new pods are injected.' },
      ),
    ),
    imagePullSecrets: Type.Optional(
      Type.Array(LocalObjectReferenceSchema(), { description: 'Pull secrets added to injected pods (at creation only).' }),
    ),
    revisionHistoryLimit: Type.Optional(Int32({ minimum: 0, description: 'Revisions kept (default 10).' })),
    customVersion: Type.Optional(
      servedIn(
        ['v1beta1'],
        Type.String({
          description:
            'Custom version recorded on the revisions of this SidecarSet (label apps.kruise.io/sidecarset-custom-version), which injectionStrategy.revision.customVersion can pin (v1beta1).',
        }),
        'the label apps.kruise.io/sidecarset-custom-version',
      ),
    ),
    patchPodMetadata: Type.Optional(
      Type.Array(
        Struct({
          annotations: Type.Optional(StringMap({ description: 'Annotations to set on injected pods.' })),
          patchPolicy: Type.Optional(
            StringEnum(SidecarSetPatchPolicyValues, {
              description: 'Retain (default) keeps existing values; Overwrite replaces; MergePatchJson merges JSON values.',
            }),
          ),
        }),
        { description: 'Pod metadata patched at injection (keys must be whitelisted in kruise-configuration).' },
      ),
    ),
  },
  { description: 'Desired state of a SidecarSet.' },
);
/** Desired state of a SidecarSet. Every field is documented (generated from the schema descriptions). */
export type SidecarSetSpec = G.SidecarSetSpec;

/** TypeBox schema of {@link SidecarSetStatus}: Observed state of a SidecarSet. */
export const SidecarSetStatusSchema = Struct(
  {
    observedGeneration: Type.Optional(Int64({ description: 'Most recent generation observed.' })),
    matchedPods: Int32({ description: 'Pods matched by the selector.' }),
    updatedPods: Int32({ description: 'Matched pods running the latest sidecar version.' }),
    readyPods: Int32({ description: 'Matched pods that are ready.' }),
    updatedReadyPods: Type.Optional(Int32({ description: 'Updated pods that are ready.' })),
    latestRevision: Type.Optional(Type.String({ description: 'Name of the latest ControllerRevision.' })),
    collisionCount: Type.Optional(Int32({ description: 'Hash collision counter for revision names.' })),
    conditions: Type.Optional(
      Type.Array(
        Struct({
          type: Type.String({ description: 'Condition type, e.g. RolloutStuck.' }),
          status: Type.String({ description: 'True, False or Unknown.' }),
          lastTransitionTime: Type.Optional(DateTime({ description: 'When the status last changed.' })),
          reason: Type.Optional(Type.String({ description: 'Machine-readable reason.' })),
          message: Type.Optional(Type.String({ description: 'Human-readable details.' })),
        }),
        {
          description:
            'Written by the cdk8s-kruise runtime only (upstream has none): RolloutStuck says why matched pods cannot be upgraded in place.',
        },
      ),
    ),
  },
  { description: 'Observed state of a SidecarSet.' },
);
/** Observed state of a SidecarSet. Every field is documented (generated from the schema descriptions). */
export type SidecarSetStatus = G.SidecarSetStatus;

/** TypeBox schema of {@link SidecarSet}: SidecarSet injects sidecar containers into matching pods and upgrades them in place (cluster-scoped). */
export const SidecarSetSchema = ServedKindObject(
  'SidecarSet',
  SidecarSetSpecSchema,
  SidecarSetStatusSchema,
  'SidecarSet injects sidecar containers into matching pods and upgrades them in place (cluster-scoped).',
  KRUISE_KINDS.SidecarSet.alsoServed ?? [],
);
/** A SidecarSet object. */
export type SidecarSet = G.SidecarSet;

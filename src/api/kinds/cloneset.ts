/**
 * CloneSet (apps.kruise.io/v1alpha1, namespaced): a stateless workload with in-place update,
 * lifecycle hooks, selective scale-in and PVC templates.
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type * as G from '../types/generated.js';
import {
  DateTime,
  Int32,
  Int64,
  IntOrPercent,
  KindObject,
  LabelSelector,
  LabelSelectorSchema,
  StringEnum,
  StringMap,
  Struct,
} from '../common.js';
import { PersistentVolumeClaimSchema, PodTemplateSpecSchema } from '../core.js';

/** CloneSet update strategy types (OnDelete since Kruise v1.9). */
export const CloneSetUpdateStrategyTypeValues = ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly', 'OnDelete'] as const;
/** One of {@link CloneSetUpdateStrategyTypeValues}. */
export type CloneSetUpdateStrategyType = (typeof CloneSetUpdateStrategyTypeValues)[number];

/** A lifecycle hook: the pod waits in a hook state while any listed label/finalizer is present. */
export const LifecycleHookSchema = Struct(
  {
    labelsHandler: Type.Optional(StringMap({ description: 'Labels your operator removes (or the controller adds) to release the hook.' })),
    finalizersHandler: Type.Optional(
      Type.Array(Type.String(), { description: 'Finalizers whose presence holds the pod in the hook state.' }),
    ),
    markPodNotReady: Type.Optional(
      Type.Boolean({
        description: 'Set condition KruisePodReady=False while hooked (preDelete and inPlaceUpdate only; no effect on preNormal).',
      }),
    ),
  },
  { description: 'A pod lifecycle hook (labels and/or finalizers).' },
);
/** A pod lifecycle hook (labels and/or finalizers). Every field is documented (generated from the schema descriptions). */
export type LifecycleHook = G.LifecycleHook;

/** TypeBox schema of {@link Lifecycle}: Pod lifecycle hooks (state in label lifecycle.apps.kruise.io/state). */
export const LifecycleSchema = Struct(
  {
    preDelete: Type.Optional(
      Struct(LifecycleHookSchema.properties, { description: 'Hook before a pod is deleted (scale-in, recreate update).' }),
    ),
    inPlaceUpdate: Type.Optional(Struct(LifecycleHookSchema.properties, { description: 'Hook before a pod is updated in place.' })),
    preNormal: Type.Optional(Struct(LifecycleHookSchema.properties, { description: 'Hook before a new pod becomes Normal (available).' })),
  },
  { description: 'Pod lifecycle hooks (state in label lifecycle.apps.kruise.io/state).' },
);
/** Pod lifecycle hooks (state in label lifecycle.apps.kruise.io/state). Every field is documented (generated from the schema descriptions). */
export type Lifecycle = G.Lifecycle;

/** TypeBox schema of {@link UpdatePriorityStrategy}: Which pods update first. */
export const UpdatePriorityStrategySchema = Struct(
  {
    weightPriority: Type.Optional(
      Type.Array(
        Struct({
          weight: Int32({ description: 'Weight of pods matching matchSelector (higher updates first).' }),
          matchSelector: LabelSelectorSchema,
        }),
        { description: 'Weighted selectors.' },
      ),
    ),
    orderPriority: Type.Optional(
      Type.Array(Struct({ orderedKey: Type.String({ description: 'Label key whose integer value orders pods.' }) }), {
        description: 'Order by label values.',
      }),
    ),
  },
  { description: 'Which pods update first.' },
);

/** TypeBox schema of {@link CloneSetUpdateStrategy}: How pods are updated when the template changes. */
export const CloneSetUpdateStrategySchema = Struct(
  {
    type: Type.Optional(
      StringEnum(CloneSetUpdateStrategyTypeValues, {
        description:
          'ReCreate (default): recreate pods; InPlaceIfPossible: in place when only images/metadata changed; InPlaceOnly: in place or fail; OnDelete (v1.9+).',
      }),
    ),
    partition: Type.Optional(IntOrPercent({ description: 'Number or percentage of pods kept at the old revision (default 0).' })),
    maxUnavailable: Type.Optional(IntOrPercent({ description: 'Max pods unavailable during the update (default 20%).' })),
    maxSurge: Type.Optional(IntOrPercent({ description: 'Max pods created above replicas during the update (default 0).' })),
    paused: Type.Optional(Type.Boolean({ description: 'Pause the update (scaling still happens).' })),
    priorityStrategy: Type.Optional(UpdatePriorityStrategySchema),
    scatterStrategy: Type.Optional(
      Type.Array(Struct({ key: Type.String({ description: 'Label key.' }), value: Type.String({ description: 'Label value.' }) }), {
        description: 'Spread pods with these labels across the update.',
      }),
    ),
    inPlaceUpdateStrategy: Type.Optional(
      Struct(
        {
          gracePeriodSeconds: Type.Optional(Int32({ minimum: 0, description: 'Seconds between marking not-ready and updating.' })),
        },
        { description: 'In-place update tuning.' },
      ),
    ),
  },
  { description: 'How pods are updated when the template changes.' },
);
/** How pods are updated when the template changes. Every field is documented (generated from the schema descriptions). */
export type CloneSetUpdateStrategy = G.CloneSetUpdateStrategy;

/** TypeBox schema of {@link CloneSetScaleStrategy}: How pods are scaled. */
export const CloneSetScaleStrategySchema = Struct(
  {
    podsToDelete: Type.Optional(Type.Array(Type.String(), { description: 'Names of pods to delete first (selective scale-in).' })),
    maxUnavailable: Type.Optional(IntOrPercent({ description: 'Max unavailable pods while scaling up.' })),
    disablePVCReuse: Type.Optional(
      Type.Boolean({ description: 'Do not reuse PVCs of failed pods; new pods get fresh PVCs (default false).' }),
    ),
  },
  { description: 'How pods are scaled.' },
);
/** How pods are scaled. Every field is documented (generated from the schema descriptions). */
export type CloneSetScaleStrategy = G.CloneSetScaleStrategy;

/** TypeBox schema of {@link CloneSetSpec}: Desired state of a CloneSet. */
export const CloneSetSpecSchema = Struct(
  {
    replicas: Type.Optional(Int32({ minimum: 0, description: 'Desired number of pods (default 1).' })),
    selector: LabelSelector('Label query over pods; must match the template labels.'),
    template: PodTemplateSpecSchema({ crd: 'preserve', description: 'Pod template.' }),
    volumeClaimTemplates: Type.Optional(
      Type.Array(PersistentVolumeClaimSchema(), {
        description: 'PVCs created per pod (deleted with the pod). The CRD keeps these unpruned, as upstream.',
        'x-kruise-crd': 'preserve',
      }),
    ),
    scaleStrategy: Type.Optional(CloneSetScaleStrategySchema),
    updateStrategy: Type.Optional(CloneSetUpdateStrategySchema),
    revisionHistoryLimit: Type.Optional(Int32({ minimum: 0, description: 'Revisions kept (default 10).' })),
    minReadySeconds: Type.Optional(Int32({ minimum: 0, description: 'Seconds a pod must be ready to count as available.' })),
    lifecycle: Type.Optional(LifecycleSchema),
    progressDeadlineSeconds: Type.Optional(Int32({ minimum: 0, description: 'Seconds before a stuck rollout is reported.' })),
  },
  { description: 'Desired state of a CloneSet.' },
);
/** Desired state of a CloneSet. Every field is documented (generated from the schema descriptions). */
export type CloneSetSpec = G.CloneSetSpec;

/** TypeBox schema of {@link CloneSetCondition}: A CloneSet condition. */
export const CloneSetConditionSchema = Struct(
  {
    type: Type.String({ description: 'Condition type.' }),
    status: Type.String({ description: 'True, False or Unknown.' }),
    lastTransitionTime: Type.Optional(DateTime({ description: 'When the status last changed.' })),
    lastUpdateTime: Type.Optional(DateTime({ description: 'When the condition was last updated.' })),
    reason: Type.Optional(Type.String({ description: 'Machine-readable reason of the last transition.' })),
    message: Type.Optional(Type.String({ description: 'Human-readable details.' })),
  },
  { description: 'A CloneSet condition.' },
);

/** TypeBox schema of {@link CloneSetStatus}: Observed state of a CloneSet. */
export const CloneSetStatusSchema = Struct(
  {
    observedGeneration: Type.Optional(Int64({ description: 'Most recent generation observed.' })),
    replicas: Int32({ description: 'Pods created by the CloneSet.' }),
    readyReplicas: Int32({ description: 'Pods with a Ready condition.' }),
    availableReplicas: Int32({ description: 'Pods ready for minReadySeconds.' }),
    updatedReplicas: Int32({ description: 'Pods at the update revision.' }),
    updatedReadyReplicas: Int32({ description: 'Updated pods that are ready.' }),
    updatedAvailableReplicas: Type.Optional(Int32({ description: 'Updated pods that are available.' })),
    expectedUpdatedReplicas: Type.Optional(Int32({ description: 'Pods expected at the update revision (partition).' })),
    updateRevision: Type.Optional(Type.String({ description: 'Revision of the current template.' })),
    currentRevision: Type.Optional(Type.String({ description: 'Revision before the update.' })),
    collisionCount: Type.Optional(Int32({ description: 'Hash collision counter for revision names.' })),
    labelSelector: Type.Optional(Type.String({ description: 'Serialized selector (for the scale subresource).' })),
    conditions: Type.Optional(Type.Array(CloneSetConditionSchema, { description: 'Observations of the state.' })),
  },
  { description: 'Observed state of a CloneSet.' },
);
/** Observed state of a CloneSet. Every field is documented (generated from the schema descriptions). */
export type CloneSetStatus = G.CloneSetStatus;

/** TypeBox schema of {@link CloneSet}: CloneSet manages stateless pods with in-place update, lifecycle hooks and selective scale-in. */
export const CloneSetSchema = KindObject(
  'CloneSet',
  CloneSetSpecSchema,
  CloneSetStatusSchema,
  'CloneSet manages stateless pods with in-place update, lifecycle hooks and selective scale-in.',
);
/** A CloneSet object. */
export type CloneSet = G.CloneSet;
/** See the generated interface for field docs. */
export type CloneSetCondition = G.CloneSetCondition;
/** See the generated interface for field docs. */
export type UpdatePriorityStrategy = G.UpdatePriorityStrategy;

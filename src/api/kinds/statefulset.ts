/**
 * Advanced StatefulSet (apps.kruise.io StatefulSet, namespaced): a native StatefulSet (ordered identities, stable
 * storage, OrderedReady or Parallel management, start ordinal, PVC retention) plus in-place update, partition,
 * maxUnavailable, pause, reserved ordinals, scale-time maxUnavailable and lifecycle hooks.
 *
 * Upstream v1.9 serves it at v1alpha1 and v1beta1 and stores v1beta1. v1alpha1 lacks the fields v1beta1 added
 * (reserveOrdinals, lifecycle, scaleStrategy, persistentVolumeClaimRetentionPolicy, ordinals,
 * volumeClaimUpdateStrategy; status updatedReadyReplicas, updatedAvailableReplicas, volumeClaims): they are marked
 * `servedIn(['v1beta1'])`, so the v1alpha1 CRD schema is upstream's. The bundled runtime reads and writes v1beta1.
 *
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  DateTime,
  Int32,
  Int64,
  IntOrPercent,
  IntOrString,
  LabelSelector,
  ServedKindObject,
  servedIn,
  StringEnum,
  Struct,
} from '../common.js';
import { PersistentVolumeClaimSchema, PodTemplateSpecSchema } from '../core.js';
import { KRUISE_KINDS } from '../../contracts/resources.js';
import { LifecycleSchema, UpdatePriorityStrategySchema } from './cloneset.js';

/** The fields upstream added at v1beta1 (its v1alpha1 schema lacks them). */
const V1BETA1 = ['v1beta1'];

/** Upstream's upper bound of `updateStrategy.rollingUpdate.minReadySeconds`. */
export const STATEFULSET_MAX_MIN_READY_SECONDS = 300;

/** How pods of an Advanced StatefulSet are updated (`rollingUpdate.podUpdatePolicy`). */
export const StatefulSetPodUpdatePolicyValues = ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'] as const;
/** One of {@link StatefulSetPodUpdatePolicyValues}. */
export type StatefulSetPodUpdatePolicy = (typeof StatefulSetPodUpdatePolicyValues)[number];

/** Update strategy types, as a native StatefulSet. */
export const StatefulSetUpdateStrategyTypeValues = ['RollingUpdate', 'OnDelete'] as const;
/** Pod management policies, as a native StatefulSet. */
export const PodManagementPolicyValues = ['OrderedReady', 'Parallel'] as const;
/** PVC retention policy values. */
export const PvcRetentionPolicyValues = ['Retain', 'Delete'] as const;
/** `volumeClaimUpdateStrategy.type` values. */
export const VolumeClaimUpdateStrategyTypeValues = ['OnPodRollingUpdate', 'OnDelete'] as const;

/** TypeBox schema of {@link RollingUpdateStatefulSetStrategy}. */
export const RollingUpdateStatefulSetStrategySchema = Struct(
  {
    partition: Type.Optional(
      Int32({ minimum: 0, description: 'Pods with an ordinal index below this count keep the current revision (default 0: update all).' }),
    ),
    maxUnavailable: Type.Optional(
      IntOrPercent({
        description:
          'Max pods unavailable during the update (count or percentage of replicas, rounded down; default 1; above 1 only with Parallel).',
      }),
    ),
    podUpdatePolicy: Type.Optional(
      StringEnum(StatefulSetPodUpdatePolicyValues, {
        description:
          'ReCreate (default): delete and recreate; InPlaceIfPossible: in place when only images or metadata changed, else recreate; InPlaceOnly: in place or fail.',
      }),
    ),
    paused: Type.Optional(Type.Boolean({ description: 'Pause the update (scaling still happens).' })),
    unorderedUpdate: Type.Optional(
      Struct(
        { priorityStrategy: Type.Optional(UpdatePriorityStrategySchema) },
        { description: 'Update pods in priority order rather than by descending ordinal (Parallel only).' },
      ),
    ),
    inPlaceUpdateStrategy: Type.Optional(
      Struct(
        { gracePeriodSeconds: Type.Optional(Int32({ minimum: 0, description: 'Seconds between marking not-ready and updating.' })) },
        { description: 'In-place update tuning.' },
      ),
    ),
    minReadySeconds: Type.Optional(
      Int32({
        minimum: 0,
        maximum: STATEFULSET_MAX_MIN_READY_SECONDS,
        description: 'Seconds an updated pod must be ready to count as available (default 0, at most 300).',
      }),
    ),
  },
  { description: 'Parameters of the RollingUpdate strategy.' },
);
/** Parameters of the RollingUpdate strategy. */
export type RollingUpdateStatefulSetStrategy = Static<typeof RollingUpdateStatefulSetStrategySchema>;

/** TypeBox schema of {@link StatefulSetUpdateStrategy}. */
export const StatefulSetUpdateStrategySchema = Struct(
  {
    type: Type.Optional(
      StringEnum(StatefulSetUpdateStrategyTypeValues, {
        description: 'RollingUpdate (default): the controller updates pods; OnDelete: a pod is updated when you delete it.',
      }),
    ),
    rollingUpdate: Type.Optional(RollingUpdateStatefulSetStrategySchema),
  },
  { description: 'How pods are updated when the template changes.' },
);
/** How pods are updated when the template changes. */
export type StatefulSetUpdateStrategy = Static<typeof StatefulSetUpdateStrategySchema>;

/** TypeBox schema of {@link StatefulSetSpec}: Desired state of an Advanced StatefulSet. */
export const StatefulSetSpecSchema = Struct(
  {
    replicas: Type.Optional(Int32({ minimum: 0, description: 'Desired number of pods (default 1).' })),
    selector: LabelSelector('Label query over pods; must match the template labels.'),
    template: PodTemplateSpecSchema({ crd: 'preserve', description: 'Pod template; each pod gets its own identity (name, hostname).' }),
    volumeClaimTemplates: Type.Optional(
      Type.Array(PersistentVolumeClaimSchema(), {
        description:
          'Claims each pod gets (`<claim>-<set>-<ordinal>`), kept across its restarts. The CRD keeps these unpruned, as upstream.',
        'x-kruise-crd': 'preserve',
      }),
    ),
    volumeClaimUpdateStrategy: Type.Optional(
      servedIn(
        V1BETA1,
        Struct(
          {
            type: Type.Optional(
              StringEnum(VolumeClaimUpdateStrategyTypeValues, {
                description: 'OnPodRollingUpdate: resize claims as pods update; OnDelete: a claim changes when you delete it.',
              }),
            ),
          },
          { description: 'How volumeClaimTemplates changes reach existing claims.' },
        ),
      ),
    ),
    serviceName: Type.Optional(Type.String({ description: 'Headless Service governing the pods’ network identity (their subdomain).' })),
    podManagementPolicy: Type.Optional(
      StringEnum(PodManagementPolicyValues, {
        description: 'OrderedReady (default): create and delete one pod at a time, in ordinal order; Parallel: all at once.',
      }),
    ),
    updateStrategy: Type.Optional(StatefulSetUpdateStrategySchema),
    revisionHistoryLimit: Type.Optional(Int32({ minimum: 0, description: 'Revisions kept (default 10).' })),
    reserveOrdinals: Type.Optional(
      servedIn(
        V1BETA1,
        Type.Array(IntOrString({ description: 'An ordinal (`1`) or a range (`"3-5"`).' }), {
          description:
            'Ordinals never used: pods skip them, so replicas stay the number of running pods (e.g. [1] gives 0, 2, 3 for 3 replicas).',
        }),
      ),
    ),
    lifecycle: Type.Optional(servedIn(V1BETA1, LifecycleSchema)),
    scaleStrategy: Type.Optional(
      servedIn(
        V1BETA1,
        Struct(
          {
            maxUnavailable: Type.Optional(
              IntOrPercent({ description: 'Max pods unavailable while scaling (Parallel only; count or percentage, rounded down).' }),
            ),
          },
          { description: 'How pods are scaled.' },
        ),
      ),
    ),
    persistentVolumeClaimRetentionPolicy: Type.Optional(
      servedIn(
        V1BETA1,
        Struct(
          {
            whenDeleted: Type.Optional(
              StringEnum(PvcRetentionPolicyValues, { description: 'Retain (default) or Delete the claims when the set is deleted.' }),
            ),
            whenScaled: Type.Optional(
              StringEnum(PvcRetentionPolicyValues, { description: 'Retain (default) or Delete the claims of pods removed by a scale-in.' }),
            ),
          },
          { description: 'What happens to the claims of volumeClaimTemplates.' },
        ),
      ),
    ),
    ordinals: Type.Optional(
      servedIn(
        V1BETA1,
        Struct(
          { start: Type.Optional(Int32({ minimum: 0, description: 'The first ordinal (default 0).' })) },
          { description: 'Numbering of the pods.' },
        ),
      ),
    ),
  },
  { description: 'Desired state of an Advanced StatefulSet.' },
);
/** Desired state of an Advanced StatefulSet. */
export type StatefulSetSpec = Static<typeof StatefulSetSpecSchema>;

/** TypeBox schema of a StatefulSet condition (as a native StatefulSet's). */
export const StatefulSetConditionSchema = Struct(
  {
    type: Type.String({ description: 'Condition type (FailedCreatePod, FailedUpdatePod).' }),
    status: Type.String({ description: 'True, False or Unknown.' }),
    lastTransitionTime: Type.Optional(DateTime({ description: 'When the status last changed.' })),
    reason: Type.Optional(Type.String({ description: 'Machine-readable reason of the last transition.' })),
    message: Type.Optional(Type.String({ description: 'Human-readable details.' })),
  },
  { description: 'A StatefulSet condition.' },
);

/** TypeBox schema of {@link StatefulSetStatus}: Observed state of an Advanced StatefulSet. */
export const StatefulSetStatusSchema = Struct(
  {
    observedGeneration: Type.Optional(Int64({ description: 'Most recent generation observed.' })),
    replicas: Int32({ description: 'Pods created by the StatefulSet.' }),
    readyReplicas: Int32({ description: 'Pods with a Ready condition.' }),
    availableReplicas: Int32({ description: 'Pods ready for minReadySeconds.' }),
    currentReplicas: Int32({ description: 'Pods at the current revision.' }),
    updatedReplicas: Int32({ description: 'Pods at the update revision.' }),
    updatedReadyReplicas: Type.Optional(servedIn(V1BETA1, Int32({ description: 'Updated pods that are ready.' }))),
    updatedAvailableReplicas: Type.Optional(servedIn(V1BETA1, Int32({ description: 'Updated pods ready for minReadySeconds.' }))),
    currentRevision: Type.Optional(Type.String({ description: 'Revision of the pods in [0, currentReplicas).' })),
    updateRevision: Type.Optional(Type.String({ description: 'Revision of the current template.' })),
    collisionCount: Type.Optional(Int32({ description: 'Hash collision counter for revision names.' })),
    conditions: Type.Optional(Type.Array(StatefulSetConditionSchema, { description: 'Observations of the state.' })),
    labelSelector: Type.Optional(Type.String({ description: 'Serialized selector (for the scale subresource).' })),
    volumeClaims: Type.Optional(
      servedIn(
        V1BETA1,
        Type.Array(
          Struct(
            {
              volumeClaimName: Type.String({ description: 'Name of the volumeClaimTemplate.' }),
              compatibleReplicas: Int32({ description: 'Pods whose claim asks at least what the template asks.' }),
              compatibleReadyReplicas: Int32({ description: 'Of those, pods whose claim has that capacity.' }),
            },
            { description: 'Compatibility of one volumeClaimTemplate with the claims.' },
          ),
          { description: 'Per volumeClaimTemplate, how many claims match it.' },
        ),
      ),
    ),
  },
  { description: 'Observed state of an Advanced StatefulSet.' },
);
/** Observed state of an Advanced StatefulSet. */
export type StatefulSetStatus = Static<typeof StatefulSetStatusSchema>;

/** TypeBox schema of {@link AdvancedStatefulSet}. */
export const StatefulSetSchema = ServedKindObject(
  'StatefulSet',
  StatefulSetSpecSchema,
  StatefulSetStatusSchema,
  'Advanced StatefulSet: ordered, stable identities with in-place update, partition, maxUnavailable, reserved ordinals and lifecycle hooks.',
  KRUISE_KINDS.StatefulSet.alsoServed ?? [],
);
/** An Advanced StatefulSet object (apps.kruise.io StatefulSet). */
export type AdvancedStatefulSet = Static<typeof StatefulSetSchema>;

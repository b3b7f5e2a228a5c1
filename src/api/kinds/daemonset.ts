/**
 * Advanced DaemonSet (apps.kruise.io DaemonSet, namespaced): one pod per eligible node, as a native DaemonSet, with
 * in-place rolling updates, partition, a node selector for the rollout, pause, burst creation and lifecycle hooks.
 *
 * Upstream v1.9 serves it at v1alpha1 and v1beta1 and stores v1beta1. Their schemas differ in two fields only:
 * v1beta1 adds `spec.scaleStrategy` and names the revision hash `status.updateRevision` where v1alpha1 says
 * `status.daemonSetHash`. One schema here holds both, each marked with the versions that have it; the runtime reads
 * and writes v1alpha1 (`daemonSetHash`, and v1alpha1's annotation for partitioned scaling).
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type * as G from '../types/generated.js';
import { PodTemplateSpecSchema } from '../core.js';
import {
  DateTime,
  Int32,
  Int64,
  IntOrPercent,
  LabelSelector,
  LabelSelectorSchema,
  ServedKindObject,
  servedIn,
  StringEnum,
  Struct,
} from '../common.js';
import { LifecycleSchema } from './cloneset.js';
import { KRUISE_KINDS } from '../../contracts/resources.js';

/** DaemonSet update strategy types (as a native DaemonSet). */
export const DaemonSetUpdateStrategyTypeValues = ['RollingUpdate', 'OnDelete'] as const;
/** One of {@link DaemonSetUpdateStrategyTypeValues}. */
export type DaemonSetUpdateStrategyType = (typeof DaemonSetUpdateStrategyTypeValues)[number];

/** Rolling update types; `Surging` is v1alpha1's deprecated alias of `Standard` (defaulted to it). */
export const DaemonSetRollingUpdateTypeValues = ['Standard', 'InPlaceIfPossible', 'Surging'] as const;
/** One of {@link DaemonSetRollingUpdateTypeValues}. */
export type DaemonSetRollingUpdateType = (typeof DaemonSetRollingUpdateTypeValues)[number];

/** TypeBox schema of {@link RollingUpdateDaemonSet}: How a rolling update proceeds. */
export const RollingUpdateDaemonSetSchema = Struct(
  {
    rollingUpdateType: Type.Optional(
      StringEnum(DaemonSetRollingUpdateTypeValues, {
        description:
          'Standard (default): replace pods (delete then create, or create then delete with maxSurge); InPlaceIfPossible: update in place when only images or metadata changed, recreate otherwise.',
      }),
    ),
    maxUnavailable: Type.Optional(
      IntOrPercent({ description: 'Max pods unavailable during the update (count or percentage of desired pods; default 1).' }),
    ),
    maxSurge: Type.Optional(
      IntOrPercent({
        description:
          'Max nodes that run an updated pod beside the old one during the update (default 0; must be 0 with maxUnavailable non-zero and with InPlaceIfPossible).',
      }),
    ),
    selector: Type.Optional(
      Struct(LabelSelectorSchema.properties, { description: 'Only pods on nodes matching this node label selector are updated.' }),
    ),
    partition: Type.Optional(
      IntOrPercent({ description: 'Number or percentage of pods kept at the old revision (default 0: update all).' }),
    ),
    paused: Type.Optional(Type.Boolean({ description: 'Pause the update (new nodes still get pods).' })),
  },
  { description: 'How a rolling update proceeds.' },
);
/** How a rolling update proceeds. Every field is documented (generated from the schema descriptions). */
export type RollingUpdateDaemonSet = G.RollingUpdateDaemonSet;

/** TypeBox schema of {@link DaemonSetUpdateStrategy}: How pods are replaced when the template changes. */
export const DaemonSetUpdateStrategySchema = Struct(
  {
    type: Type.Optional(
      StringEnum(DaemonSetUpdateStrategyTypeValues, {
        description: 'RollingUpdate (default): update pods by the rolling update; OnDelete: new pods only when old ones are deleted.',
      }),
    ),
    rollingUpdate: Type.Optional(RollingUpdateDaemonSetSchema),
  },
  { description: 'How pods are replaced when the template changes.' },
);
/** How pods are replaced when the template changes. Every field is documented (generated from the schema descriptions). */
export type DaemonSetUpdateStrategy = G.DaemonSetUpdateStrategy;

/** TypeBox schema of {@link DaemonSetScaleStrategy}: How pods are created on nodes (upstream v1beta1). */
export const DaemonSetScaleStrategySchema = Struct(
  {
    partitionedScaling: Type.Optional(
      Type.Boolean({
        description:
          'With a partition, pods are created on only as many nodes as the partition leaves to the update revision (default false: every eligible node gets a pod).',
      }),
    ),
  },
  { description: 'How pods are created on nodes (upstream v1beta1).' },
);
/** How pods are created on nodes. Every field is documented (generated from the schema descriptions). */
export type DaemonSetScaleStrategy = G.DaemonSetScaleStrategy;

/** TypeBox schema of {@link DaemonSetSpec}: Desired state of an Advanced DaemonSet. */
export const DaemonSetSpecSchema = Struct(
  {
    selector: LabelSelector('Label query over pods; must match the template labels (immutable).'),
    template: PodTemplateSpecSchema({ crd: 'preserve', description: 'Pod template; restartPolicy must be Always.' }),
    updateStrategy: Type.Optional(DaemonSetUpdateStrategySchema),
    minReadySeconds: Type.Optional(Int32({ minimum: 0, description: 'Seconds a pod must be ready to count as available.' })),
    burstReplicas: Type.Optional(IntOrPercent({ description: 'Max pods created or deleted in one pass (default 250).' })),
    revisionHistoryLimit: Type.Optional(Int32({ minimum: 0, description: 'Revisions kept (default 10).' })),
    lifecycle: Type.Optional(LifecycleSchema),
    scaleStrategy: Type.Optional(servedIn(['v1beta1'], DaemonSetScaleStrategySchema)),
  },
  { description: 'Desired state of an Advanced DaemonSet.' },
);
/** Desired state of an Advanced DaemonSet. Every field is documented (generated from the schema descriptions). */
export type DaemonSetSpec = G.DaemonSetSpec;

/** TypeBox schema of {@link DaemonSetCondition}: A DaemonSet condition (as a native DaemonSet's). */
export const DaemonSetConditionSchema = Struct(
  {
    type: Type.String({ description: 'Condition type.' }),
    status: Type.String({ description: 'True, False or Unknown.' }),
    lastTransitionTime: Type.Optional(DateTime({ description: 'When the status last changed.' })),
    reason: Type.Optional(Type.String({ description: 'Machine-readable reason of the last transition.' })),
    message: Type.Optional(Type.String({ description: 'Human-readable details.' })),
  },
  { description: 'A DaemonSet condition (as a native DaemonSet’s).' },
);
/** See the generated interface for field docs. */
export type DaemonSetCondition = G.DaemonSetCondition;

/** TypeBox schema of {@link DaemonSetStatus}: Observed state of an Advanced DaemonSet. */
export const DaemonSetStatusSchema = Struct(
  {
    currentNumberScheduled: Int32({ description: 'Nodes running at least one daemon pod that should run it.' }),
    numberMisscheduled: Int32({ description: 'Nodes running a daemon pod that should not run it.' }),
    desiredNumberScheduled: Int32({ description: 'Nodes that should run the daemon pod.' }),
    numberReady: Int32({ description: 'Nodes that should run the daemon pod and have one ready.' }),
    observedGeneration: Type.Optional(Int64({ description: 'Most recent generation observed.' })),
    updatedNumberScheduled: Int32({ description: 'Nodes running a daemon pod at the update revision.' }),
    numberAvailable: Type.Optional(Int32({ description: 'Nodes with a daemon pod available (ready for minReadySeconds).' })),
    numberUnavailable: Type.Optional(Int32({ description: 'Nodes that should run the daemon pod and have none available.' })),
    collisionCount: Type.Optional(Int32({ description: 'Hash collision counter for revision names.' })),
    conditions: Type.Optional(Type.Array(DaemonSetConditionSchema, { description: 'Observations of the state.' })),
    daemonSetHash: Type.Optional(
      servedIn(['v1alpha1'], Type.String({ description: 'Revision hash of the current template (v1alpha1’s name).' })),
    ),
    updateRevision: Type.Optional(
      servedIn(['v1beta1'], Type.String({ description: 'Revision hash of the current template (v1beta1’s name).' })),
    ),
  },
  { description: 'Observed state of an Advanced DaemonSet.' },
);
/** Observed state of an Advanced DaemonSet. Every field is documented (generated from the schema descriptions). */
export type DaemonSetStatus = G.DaemonSetStatus;

/** TypeBox schema of {@link DaemonSet}: Advanced DaemonSet. */
export const DaemonSetSchema = ServedKindObject(
  'DaemonSet',
  DaemonSetSpecSchema,
  DaemonSetStatusSchema,
  'Advanced DaemonSet: one pod per eligible node, with in-place rolling update, partition, node-selected rollout, pause and lifecycle hooks.',
  KRUISE_KINDS.DaemonSet.alsoServed ?? [],
);
/** An Advanced DaemonSet object (apps.kruise.io DaemonSet). */
export type DaemonSet = G.DaemonSet;

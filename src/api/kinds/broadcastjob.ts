/**
 * BroadcastJob (apps.kruise.io/v1alpha1, also served as v1beta1 with the same schema, namespaced): runs one pod
 * of a template on every eligible node until it completes.
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type * as G from '../types/generated.js';
import { PodTemplateSpecSchema } from '../core.js';
import { DateTime, Int32, Int64, IntOrString, ServedKindObject, StringEnum, Struct } from '../common.js';
import { CompletionPolicyTypeValues } from './imagepulljob.js';
import { KRUISE_KINDS } from '../../contracts/resources.js';

/** What a failed pod does to the job. */
export const BroadcastJobFailurePolicyTypeValues = ['Continue', 'FailFast', 'Pause'] as const;
/** One of {@link BroadcastJobFailurePolicyTypeValues}. */
export type BroadcastJobFailurePolicyType = (typeof BroadcastJobFailurePolicyTypeValues)[number];

/** The phases the controller writes (lower case, as upstream). */
export const BroadcastJobPhaseValues = ['running', 'paused', 'completed', 'failed'] as const;
/** One of {@link BroadcastJobPhaseValues}. */
export type BroadcastJobPhase = (typeof BroadcastJobPhaseValues)[number];

/** TypeBox schema of {@link BroadcastJobCompletionPolicy}: When the job finishes and how long it is kept. */
export const BroadcastJobCompletionPolicySchema = Struct(
  {
    type: Type.Optional(
      StringEnum(CompletionPolicyTypeValues, {
        description: 'Always (default): finish once a pod ran on every eligible node; Never: keep running pods on new nodes.',
      }),
    ),
    activeDeadlineSeconds: Type.Optional(
      Int64({ minimum: 0, description: 'Always only: fail the job (and delete its active pods) after this many seconds.' }),
    ),
    ttlSecondsAfterFinished: Type.Optional(
      Int32({ minimum: 0, description: 'Always only: delete the job (and its pods) this many seconds after it finished.' }),
    ),
  },
  { description: 'When the job finishes and how long it is kept.' },
);
/** When the job finishes and how long it is kept. Every field is documented (generated from the schema descriptions). */
export type BroadcastJobCompletionPolicy = G.BroadcastJobCompletionPolicy;

/** TypeBox schema of {@link BroadcastJobFailurePolicy}: What a failed pod does to the job. */
export const BroadcastJobFailurePolicySchema = Struct(
  {
    type: Type.Optional(
      StringEnum(BroadcastJobFailurePolicyTypeValues, {
        description: 'FailFast (default): fail the job at the first failed pod; Continue: keep going; Pause: pause the job.',
      }),
    ),
    restartLimit: Type.Optional(
      Int32({
        minimum: 0,
        description: 'restartPolicy OnFailure: a pod whose containers restarted more often than this counts as failed.',
      }),
    ),
  },
  { description: 'What a failed pod does to the job.' },
);
/** What a failed pod does to the job. Every field is documented (generated from the schema descriptions). */
export type BroadcastJobFailurePolicy = G.BroadcastJobFailurePolicy;

/** TypeBox schema of {@link BroadcastJobSpec}: Desired state of a BroadcastJob. */
export const BroadcastJobSpecSchema = Struct(
  {
    parallelism: Type.Optional(
      IntOrString({ description: 'Pods running at once: an integer or a percentage of the eligible nodes (default: no limit).' }),
    ),
    template: PodTemplateSpecSchema({ crd: 'preserve', description: 'Pod template; one pod of it runs on each eligible node.' }),
    completionPolicy: Type.Optional(BroadcastJobCompletionPolicySchema),
    paused: Type.Optional(Type.Boolean({ description: 'Create no more pods while true (running pods go on).' })),
    failurePolicy: Type.Optional(BroadcastJobFailurePolicySchema),
  },
  { description: 'Desired state of a BroadcastJob.' },
);
/** Desired state of a BroadcastJob. Every field is documented (generated from the schema descriptions). */
export type BroadcastJobSpec = G.BroadcastJobSpec;

/** TypeBox schema of {@link BroadcastJobCondition}: A BroadcastJob condition (Complete or Failed). */
export const BroadcastJobConditionSchema = Struct(
  {
    type: Type.String({ description: 'Complete or Failed.' }),
    status: Type.String({ description: 'True, False or Unknown.' }),
    lastProbeTime: Type.Optional(DateTime({ description: 'When the condition was last probed.' })),
    lastTransitionTime: Type.Optional(DateTime({ description: 'When the status last changed.' })),
    reason: Type.Optional(Type.String({ description: 'Machine-readable reason of the last transition.' })),
    message: Type.Optional(Type.String({ description: 'Human-readable details.' })),
  },
  { description: 'A BroadcastJob condition (Complete or Failed).' },
);
/** A BroadcastJob condition. Every field is documented (generated from the schema descriptions). */
export type BroadcastJobCondition = G.BroadcastJobCondition;

/** TypeBox schema of {@link BroadcastJobStatus}: Observed state of a BroadcastJob. */
export const BroadcastJobStatusSchema = Struct(
  {
    conditions: Type.Optional(Type.Array(BroadcastJobConditionSchema, { description: 'Observations of the state.' })),
    startTime: Type.Optional(DateTime({ description: 'When the controller first acted on the job.' })),
    completionTime: Type.Optional(DateTime({ description: 'When the job completed or failed.' })),
    active: Type.Optional(Int32({ description: 'Pods running (not succeeded, not failed).' })),
    succeeded: Type.Optional(Int32({ description: 'Pods that succeeded.' })),
    failed: Type.Optional(Int32({ description: 'Pods that failed (or were deleted by the controller).' })),
    desired: Type.Optional(Int32({ description: 'Eligible nodes, each to run one pod.' })),
    // A Go client writes the empty phase of a new object, so the empty string is accepted too.
    phase: Type.Optional(Type.String({ description: 'running, paused, completed or failed (empty before the first reconcile).' })),
  },
  { description: 'Observed state of a BroadcastJob.' },
);
/** Observed state of a BroadcastJob. Every field is documented (generated from the schema descriptions). */
export type BroadcastJobStatus = G.BroadcastJobStatus;

/** TypeBox schema of {@link BroadcastJob}: BroadcastJob runs one pod of a template on every eligible node. */
export const BroadcastJobSchema = ServedKindObject(
  'BroadcastJob',
  BroadcastJobSpecSchema,
  BroadcastJobStatusSchema,
  'BroadcastJob runs one pod of a template on every eligible node.',
  KRUISE_KINDS.BroadcastJob.alsoServed ?? [],
);
/** A BroadcastJob object. */
export type BroadcastJob = G.BroadcastJob;

/**
 * ImagePullJob (apps.kruise.io/v1alpha1, namespaced): pre-pulls one image on a set of nodes through
 * kruise-daemon and the CRI.
 *
 * Upstream v1.9 serves it at v1alpha1 and v1beta1 with the same fields and stores v1beta1 (conversion None).
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type * as G from '../types/generated.js';
import { KRUISE_KINDS } from '../../contracts/resources.js';
import { DateTime, Int32, Int64, IntOrString, LabelSelectorSchema, ServedKindObject, StringEnum, StringMap, Struct } from '../common.js';

/** When a job is considered finished. */
export const CompletionPolicyTypeValues = ['Always', 'Never'] as const;
/** One of {@link CompletionPolicyTypeValues}. */
export type CompletionPolicyType = (typeof CompletionPolicyTypeValues)[number];

/** Whether to pull an image already present on the node. */
export const ImagePullPolicyValues = ['Always', 'IfNotPresent'] as const;
/** One of {@link ImagePullPolicyValues}. */
export type ImagePullJobImagePullPolicy = (typeof ImagePullPolicyValues)[number];

/** TypeBox schema of {@link ImagePullJobNodeSelector}: Nodes to pull on: names and/or a node label query. Absent = all nodes. */
export const ImagePullJobNodeSelectorSchema = Struct(
  {
    names: Type.Optional(Type.Array(Type.String(), { description: 'Node names.' })),
    ...LabelSelectorSchema.properties,
  },
  { description: 'Nodes to pull on: names and/or a node label query. Absent = all nodes.' },
);
/** Nodes to pull on: names and/or a node label query. Absent = all nodes. Every field is documented (generated from the schema descriptions). */
export type ImagePullJobNodeSelector = G.ImagePullJobNodeSelector;

/**
 * Upper bound of pullPolicy.backoffLimit. Retries back off up to 30 s each, so this is about half an hour
 * of retrying per node; an unbounded limit let one job keep a node retrying for ever.
 */
export const MAX_PULL_BACKOFF_LIMIT = 64;

/** TypeBox schema of {@link PullPolicy}: Per-node pull attempts. */
export const PullPolicySchema = Struct(
  {
    timeoutSeconds: Type.Optional(Int32({ minimum: 0, description: 'Timeout of one pull attempt in seconds (default 600).' })),
    backoffLimit: Type.Optional(
      Int32({
        minimum: 0,
        maximum: MAX_PULL_BACKOFF_LIMIT,
        description: `Retries per node before it counts as failed (default 3, at most ${MAX_PULL_BACKOFF_LIMIT}).`,
      }),
    ),
  },
  { description: 'Per-node pull attempts.' },
);
/** Per-node pull attempts. Every field is documented (generated from the schema descriptions). */
export type PullPolicy = G.PullPolicy;

/** TypeBox schema of {@link CompletionPolicy}: When the job finishes and how long it is kept. */
export const CompletionPolicySchema = Struct(
  {
    type: Type.Optional(
      StringEnum(CompletionPolicyTypeValues, {
        description: 'Always (default): finish once every node tried; Never: keep pulling on new nodes forever.',
      }),
    ),
    activeDeadlineSeconds: Type.Optional(
      Int64({ minimum: 1, description: 'Always only: fail the job after this many seconds (must be ≥ pullPolicy.timeoutSeconds).' }),
    ),
    ttlSecondsAfterFinished: Type.Optional(
      Int32({ minimum: 0, description: 'Always only: delete the job this many seconds after it finished.' }),
    ),
  },
  { description: 'When the job finishes and how long it is kept.' },
);
/** When the job finishes and how long it is kept. Every field is documented (generated from the schema descriptions). */
export type CompletionPolicy = G.CompletionPolicy;

/** TypeBox schema of {@link SandboxConfig}: Sandbox metadata some runtimes use for pull decisions and metrics. */
export const SandboxConfigSchema = Struct(
  {
    labels: Type.Optional(StringMap({ description: 'Labels passed to CRI PullImage as the pod sandbox config.' })),
    annotations: Type.Optional(StringMap({ description: 'Annotations passed to CRI PullImage as the pod sandbox config.' })),
  },
  { description: 'Sandbox metadata some runtimes use for pull decisions and metrics.' },
);
/** Sandbox metadata some runtimes use for pull decisions and metrics. Every field is documented (generated from the schema descriptions). */
export type SandboxConfig = G.SandboxConfig;

/** Fields shared with ImageListPullJob's template. */
export const ImagePullJobTemplateFields = {
  pullSecrets: Type.Optional(Type.Array(Type.String(), { description: "Secret names in the job's namespace (immutable)." })),
  selector: Type.Optional(ImagePullJobNodeSelectorSchema),
  podSelector: Type.Optional(
    Struct(LabelSelectorSchema.properties, {
      description: 'Pull on the nodes of active pods matching this query in the namespace. Exclusive with selector.',
    }),
  ),
  parallelism: Type.Optional(
    IntOrString({ minimum: 0, description: 'Nodes pulling at once (default 1; an integer, not a percentage; 0 pauses).' }),
  ),
  pullPolicy: Type.Optional(PullPolicySchema),
  completionPolicy: CompletionPolicySchema,
  sandboxConfig: Type.Optional(SandboxConfigSchema),
  imagePullPolicy: Type.Optional(
    StringEnum(ImagePullPolicyValues, { description: 'Always or IfNotPresent (default): skip nodes that have the image.' }),
  ),
};

/** TypeBox schema of {@link ImagePullJobSpec}: Desired state of an ImagePullJob. */
export const ImagePullJobSpecSchema = Struct(
  {
    image: Type.String({ minLength: 1, description: 'Image reference to pull, e.g. `nginx:1.9.1`.' }),
    ...ImagePullJobTemplateFields,
  },
  { description: 'Desired state of an ImagePullJob.' },
);
/** Desired state of an ImagePullJob. Every field is documented (generated from the schema descriptions). */
export type ImagePullJobSpec = G.ImagePullJobSpec;

/** TypeBox schema of {@link ImagePullJobStatus}: Observed state of an ImagePullJob. */
export const ImagePullJobStatusSchema = Struct(
  {
    startTime: Type.Optional(DateTime({ description: 'When the job started.' })),
    completionTime: Type.Optional(DateTime({ description: 'When the job finished.' })),
    desired: Int32({ description: 'Nodes the image should be pulled on.' }),
    active: Type.Optional(Int32({ description: 'Nodes pulling now.' })),
    succeeded: Type.Optional(Int32({ description: 'Nodes that pulled successfully.' })),
    failed: Type.Optional(Int32({ description: 'Nodes that failed.' })),
    message: Type.Optional(Type.String({ description: 'Summary, e.g. why the job failed.' })),
    failedNodes: Type.Optional(Type.Array(Type.String(), { description: 'Names of nodes that failed.' })),
  },
  { description: 'Observed state of an ImagePullJob.' },
);
/** Observed state of an ImagePullJob. Every field is documented (generated from the schema descriptions). */
export type ImagePullJobStatus = G.ImagePullJobStatus;

/** TypeBox schema of {@link ImagePullJob}: ImagePullJob pre-pulls an image on selected nodes. */
export const ImagePullJobSchema = ServedKindObject(
  'ImagePullJob',
  ImagePullJobSpecSchema,
  ImagePullJobStatusSchema,
  'ImagePullJob pre-pulls an image on selected nodes.',
  KRUISE_KINDS.ImagePullJob.alsoServed ?? [],
);
/** An ImagePullJob object. */
export type ImagePullJob = G.ImagePullJob;

/**
 * NodeImage (apps.kruise.io/v1alpha1, cluster-scoped, name = Node name): the images one node should
 * hold. The ImagePullJob controller writes spec tags; kruise-daemon pulls and writes the status.
 *
 * Upstream v1.9 serves it at v1alpha1 and v1beta1 and stores v1beta1. The two differ in one field, a pull secret's
 * `mode` (v1beta1 only); upstream's conversion drops it on the way to v1alpha1, which is what the API server's pruning
 * does with conversion None, so no conversion webhook is needed.
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type * as G from '../types/generated.js';
import { KRUISE_KINDS } from '../../contracts/resources.js';
import { DateTime, Int32, Int64, ObjectReferenceSchema, ServedKindObject, servedIn, StringEnum, Struct } from '../common.js';
import { PullPolicySchema, SandboxConfigSchema, ImagePullPolicyValues } from './imagepulljob.js';

/** Phase of one tag on one node. */
export const ImagePullPhaseValues = ['Waiting', 'Pulling', 'Succeeded', 'Failed'] as const;
/** One of {@link ImagePullPhaseValues}. */
export type ImagePullPhase = (typeof ImagePullPhaseValues)[number];

/** Upstream caps the number of images per NodeImage. */
export const NODE_IMAGE_MAX_IMAGES = 256;

/** TypeBox schema of {@link ReferenceObject}: A pull secret reference (copied into kruise-daemon-config). */
export const ReferenceObjectSchema = Struct(
  {
    namespace: Type.Optional(Type.String({ description: 'Namespace of the secret.' })),
    name: Type.Optional(Type.String({ description: 'Name of the secret.' })),
    mode: Type.Optional(
      servedIn(
        ['v1beta1'],
        Type.String({
          description: 'How the secret was synchronized: `batch` marks one cleaned up together with its image (v1beta1 only).',
        }),
      ),
    ),
  },
  { description: 'A pull secret reference (copied into kruise-daemon-config).' },
);

/** TypeBox schema of {@link ImageTagSpec}: A tag to pull. */
export const ImageTagSpecSchema = Struct(
  {
    tag: Type.String({ minLength: 1, description: 'Image tag (or digest).' }),
    createdAt: Type.Optional(DateTime({ description: 'When the tag was requested.' })),
    pullPolicy: Type.Optional(
      Struct(
        {
          ...PullPolicySchema.properties,
          ttlSecondsAfterFinished: Type.Optional(Int32({ minimum: 0, description: 'Drop the tag this long after the pull finished.' })),
          activeDeadlineSeconds: Type.Optional(
            // No minimum, as upstream's CRD: controllers write what is left of a job's deadline, which may be spent.
            Int64({ description: "Deadline of the pull, from the tag's createdAt (spent when not positive)." }),
          ),
        },
        { description: 'Pull attempts and lifetime of this tag.' },
      ),
    ),
    ownerReferences: Type.Optional(Type.Array(ObjectReferenceSchema, { description: 'Jobs that asked for this tag.' })),
    version: Type.Optional(Int64({ minimum: 0, description: 'Bumped to request a new pull.' })),
    imagePullPolicy: Type.Optional(StringEnum(ImagePullPolicyValues, { description: 'Always or IfNotPresent.' })),
  },
  { description: 'A tag to pull.' },
);
/** A tag to pull. Every field is documented (generated from the schema descriptions). */
export type ImageTagSpec = G.ImageTagSpec;

/** TypeBox schema of {@link ImageSpec}: An image (name without tag) and its tags. */
export const ImageSpecSchema = Struct(
  {
    pullSecrets: Type.Optional(Type.Array(ReferenceObjectSchema, { description: 'Secrets used for pulling.' })),
    tags: Type.Array(ImageTagSpecSchema, { description: 'Tags to pull.' }),
    sandboxConfig: Type.Optional(SandboxConfigSchema),
  },
  { description: 'An image (name without tag) and its tags.' },
);
/** An image (name without tag) and its tags. Every field is documented (generated from the schema descriptions). */
export type ImageSpec = G.ImageSpec;

/** TypeBox schema of {@link NodeImageSpec}: Desired state of a NodeImage: the images this node should have. */
export const NodeImageSpecSchema = Struct(
  {
    images: Type.Optional(
      Type.Record(Type.String(), ImageSpecSchema, {
        description: 'Images keyed by name without tag (e.g. `docker.io/library/nginx`).',
        maxProperties: NODE_IMAGE_MAX_IMAGES,
      }),
    ),
  },
  { description: 'Desired state of a NodeImage: the images this node should have.' },
);
/** Desired state of a NodeImage: the images this node should have. Every field is documented (generated from the schema descriptions). */
export type NodeImageSpec = G.NodeImageSpec;

/** TypeBox schema of {@link ImageTagStatus}: Pull state of one tag. */
export const ImageTagStatusSchema = Struct(
  {
    tag: Type.String({ description: 'Image tag.' }),
    phase: StringEnum(ImagePullPhaseValues, { description: 'Waiting, Pulling, Succeeded or Failed.' }),
    progress: Type.Optional(Int32({ minimum: 0, maximum: 100, description: 'Pull progress in percent.' })),
    startTime: Type.Optional(DateTime({ description: 'When pulling started.' })),
    completionTime: Type.Optional(DateTime({ description: 'When pulling finished.' })),
    version: Type.Optional(Int64({ description: 'The spec version this status answers.' })),
    imageID: Type.Optional(Type.String({ description: 'Image ID (digest) once pulled.' })),
    message: Type.Optional(Type.String({ description: 'Details, e.g. the pull error.' })),
  },
  { description: 'Pull state of one tag.' },
);
/** Pull state of one tag. Every field is documented (generated from the schema descriptions). */
export type ImageTagStatus = G.ImageTagStatus;

/** TypeBox schema of {@link NodeImageStatus}: Observed state of a NodeImage (written by kruise-daemon). */
export const NodeImageStatusSchema = Struct(
  {
    desired: Int32({ description: 'Tags requested.' }),
    pulling: Type.Optional(Int32({ description: 'Tags pulling.' })),
    waiting: Type.Optional(Int32({ description: 'Tags waiting.' })),
    succeeded: Type.Optional(Int32({ description: 'Tags pulled.' })),
    failed: Type.Optional(Int32({ description: 'Tags failed.' })),
    imageStatuses: Type.Optional(
      Type.Record(Type.String(), Struct({ tags: Type.Array(ImageTagStatusSchema, { description: 'States of the tags of this image.' }) }), {
        description: 'Per-image tag states.',
      }),
    ),
    firstSyncStatus: Type.Optional(
      Struct(
        {
          status: Type.Optional(Type.String({ description: 'Outcome of the first sync.' })),
          message: Type.Optional(Type.String({ description: 'Details.' })),
          syncAt: Type.Optional(DateTime({ description: 'When the first sync ran.' })),
        },
        { description: 'Result of the first sync of the images already on the node.' },
      ),
    ),
  },
  { description: 'Observed state of a NodeImage (written by kruise-daemon).' },
);
/** Observed state of a NodeImage (written by kruise-daemon). Every field is documented (generated from the schema descriptions). */
export type NodeImageStatus = G.NodeImageStatus;

/** TypeBox schema of {@link NodeImage}: NodeImage lists the images one node should hold and their pull states (cluster-scoped; name = node name). */
export const NodeImageSchema = ServedKindObject(
  'NodeImage',
  Type.Optional(NodeImageSpecSchema),
  NodeImageStatusSchema,
  'NodeImage lists the images one node should hold and their pull states (cluster-scoped; name = node name).',
  KRUISE_KINDS.NodeImage.alsoServed ?? [],
);
/** A NodeImage object. */
export type NodeImage = G.NodeImage;
/** See the generated interface for field docs. */
export type ReferenceObject = G.ReferenceObject;

/**
 * ImageListPullJob (apps.kruise.io/v1alpha1, also served as v1beta1 with the same schema, namespaced): pre-pulls a
 * list of images, one ImagePullJob per image sharing the list's node selection, parallelism and policies.
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type * as G from '../types/generated.js';
import { DateTime, Int32, ServedKindObject, Struct } from '../common.js';
import { ImagePullJobTemplateFields } from './imagepulljob.js';
import { KRUISE_KINDS } from '../../contracts/resources.js';

/** TypeBox schema of {@link ImageListPullJobSpec}: Desired state of an ImageListPullJob. */
export const ImageListPullJobSpecSchema = Struct(
  {
    images: Type.Array(Type.String(), {
      description: 'Images to pull, e.g. `nginx:1.25`; each gets an ImagePullJob of its own with the fields below.',
    }),
    ...ImagePullJobTemplateFields,
  },
  { description: 'Desired state of an ImageListPullJob.' },
);
/** Desired state of an ImageListPullJob. Every field is documented (generated from the schema descriptions). */
export type ImageListPullJobSpec = G.ImageListPullJobSpec;

/** TypeBox schema of {@link FailedImageStatus}: An image whose ImagePullJob failed on some node. */
export const FailedImageStatusSchema = Struct(
  {
    imagePullJob: Type.Optional(Type.String({ description: 'Name of the ImagePullJob of the image.' })),
    name: Type.Optional(Type.String({ description: 'The image.' })),
    message: Type.Optional(Type.String({ description: 'Where to look for the failed nodes.' })),
  },
  { description: 'An image whose ImagePullJob failed on some node.' },
);
/** An image whose ImagePullJob failed on some node. Every field is documented (generated from the schema descriptions). */
export type FailedImageStatus = G.FailedImageStatus;

/** TypeBox schema of {@link ImageListPullJobStatus}: Observed state of an ImageListPullJob. */
export const ImageListPullJobStatusSchema = Struct(
  {
    startTime: Type.Optional(DateTime({ description: 'When the controller first saw the job.' })),
    completionTime: Type.Optional(DateTime({ description: 'When every ImagePullJob of the list had finished.' })),
    desired: Int32({ description: 'ImagePullJobs wanted: the number of images.' }),
    active: Type.Optional(Int32({ description: 'ImagePullJobs pulling on some node now.' })),
    completed: Type.Optional(Int32({ description: 'ImagePullJobs finished (every node succeeded or failed).' })),
    succeeded: Type.Optional(Int32({ description: 'ImagePullJobs finished with every node succeeded.' })),
    failedImageStatuses: Type.Optional(
      Type.Array(FailedImageStatusSchema, { description: 'The images whose ImagePullJob has failed nodes.' }),
    ),
  },
  { description: 'Observed state of an ImageListPullJob.' },
);
/** Observed state of an ImageListPullJob. Every field is documented (generated from the schema descriptions). */
export type ImageListPullJobStatus = G.ImageListPullJobStatus;

/** TypeBox schema of {@link ImageListPullJob}: ImageListPullJob pre-pulls a list of images on selected nodes. */
export const ImageListPullJobSchema = ServedKindObject(
  'ImageListPullJob',
  ImageListPullJobSpecSchema,
  ImageListPullJobStatusSchema,
  'ImageListPullJob pre-pulls a list of images on selected nodes, one ImagePullJob per image.',
  KRUISE_KINDS.ImageListPullJob.alsoServed ?? [],
);
/** An ImageListPullJob object. */
export type ImageListPullJob = G.ImageListPullJob;

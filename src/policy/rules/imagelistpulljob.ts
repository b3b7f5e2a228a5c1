import { neverCompletionWithDeadline } from './completion-policy.js';
import { bothSelectors, deadlineShorterThanTimeout, imageReferenceFindings, parallelismPercent } from './imagepulljob.js';
import { specRuleFor } from './kind-rule.js';
import { quoteValue } from '../../api/quote.js';

/** Upstream's webhook refuses a list of more images than this. */
export const MAX_LIST_IMAGES = 255;

const rule = specRuleFor('apps.kruise.io', 'ImageListPullJob');

export const imageListPullJobNoImages = rule(
  'KRUISE-IMAGELISTPULLJOB-001',
  'ImageListPullJob has no images',
  'An ImageListPullJob pulls each image of spec.images through an ImagePullJob of its own; with no image there is ' +
    "nothing to pull, and upstream's webhook refuses the list.",
  (_m, spec) =>
    Array.isArray(spec.images) && spec.images.length === 0
      ? [
          {
            jsonPointer: '/spec/images',
            message: 'spec.images is empty',
            hint: 'List the images to pull, e.g. images: [nginx:1.25, redis:7.2], or remove the ImageListPullJob.',
          },
        ]
      : [],
);

export const imageListPullJobDuplicateImages = rule(
  'KRUISE-IMAGELISTPULLJOB-002',
  'ImageListPullJob lists an image twice',
  "Each image gets one ImagePullJob; upstream's webhook refuses a list that names an image twice.",
  (_m, spec) => {
    if (!Array.isArray(spec.images)) return [];
    const seen = new Map<unknown, number>();
    return spec.images.flatMap((image: unknown, i) => {
      const first = seen.get(image);
      if (first === undefined) {
        seen.set(image, i);
        return [];
      }
      return [
        {
          jsonPointer: `/spec/images/${i}`,
          message: `image ${quoteValue(image)} is listed again (first at /spec/images/${first})`,
          hint: 'Remove the repeated entry.',
        },
      ];
    });
  },
);

export const imageListPullJobImage = rule(
  'KRUISE-IMAGELISTPULLJOB-003',
  'ImageListPullJob image is not a valid image reference',
  'Each image is pulled through CRI on every selected node; a malformed reference fails on every node only at run ' +
    "time, and upstream's webhook refuses it. It must follow [registry/]repository[:tag][@digest] with a lowercase repository.",
  (_m, spec) =>
    Array.isArray(spec.images) ? spec.images.flatMap((image: unknown, i) => imageReferenceFindings(image, `/spec/images/${i}`)) : [],
);

export const imageListPullJobTooManyImages = rule(
  'KRUISE-IMAGELISTPULLJOB-004',
  `ImageListPullJob lists more than ${MAX_LIST_IMAGES} images`,
  `Upstream's webhook refuses a list of more than ${MAX_LIST_IMAGES} images (one ImagePullJob each).`,
  (_m, spec) =>
    Array.isArray(spec.images) && spec.images.length > MAX_LIST_IMAGES
      ? [
          {
            jsonPointer: `/spec/images/${MAX_LIST_IMAGES}`,
            message: `spec.images has ${spec.images.length} images; at most ${MAX_LIST_IMAGES} are allowed`,
            hint: 'Split the list into several ImageListPullJobs.',
          },
        ]
      : [],
);

export const imageListPullJobBothSelectors = rule(
  'KRUISE-IMAGELISTPULLJOB-005',
  'ImageListPullJob sets both selector and podSelector',
  'The list picks nodes for all its images either by node selector (names or labels) or by podSelector (the nodes ' +
    "running matching pods), never both; upstream's webhook rejects the combination.",
  bothSelectors,
);

export const imageListPullJobParallelismPercent = rule(
  'KRUISE-IMAGELISTPULLJOB-006',
  'ImageListPullJob parallelism is a percentage',
  'parallelism (nodes pulling each image at once; 0 pauses) goes to every ImagePullJob of the list, which accepts ' + 'only an integer.',
  parallelismPercent,
);

export const imageListPullJobNeverWithDeadline = rule(
  'KRUISE-IMAGELISTPULLJOB-007',
  'ImageListPullJob completionPolicy Never with activeDeadlineSeconds or ttlSecondsAfterFinished',
  'A list with completionPolicy.type Never never finishes, so it has no deadline and no TTL after finishing; ' +
    'upstream rejects activeDeadlineSeconds and ttlSecondsAfterFinished with Never.',
  (_m, spec) => neverCompletionWithDeadline(spec),
);

export const imageListPullJobDeadlineShorterThanTimeout = rule(
  'KRUISE-IMAGELISTPULLJOB-008',
  'ImageListPullJob activeDeadlineSeconds is shorter than one pull timeout',
  'Each ImagePullJob of the list carries the deadline, and their webhook refuses one shorter than ' +
    'pullPolicy.timeoutSeconds (default 600): the list would be admitted but none of its images pulled.',
  deadlineShorterThanTimeout,
);

export const IMAGELISTPULLJOB_RULES = [
  imageListPullJobNoImages,
  imageListPullJobDuplicateImages,
  imageListPullJobImage,
  imageListPullJobTooManyImages,
  imageListPullJobBothSelectors,
  imageListPullJobParallelismPercent,
  imageListPullJobNeverWithDeadline,
  imageListPullJobDeadlineShorterThanTimeout,
];

import { imageReferenceError, isObj, obj } from '../k8s.js';
import { neverCompletionWithDeadline } from './completion-policy.js';
import { specRuleFor, type SpecCheck } from './kind-rule.js';
import { quoteValue } from '../../api/quote.js';

// Upstream default of pullPolicy.timeoutSeconds.
const DEFAULT_TIMEOUT_SECONDS = 600;

// The checks of the fields an ImagePullJob shares with an ImageListPullJob (the list's template, which each of its
// ImagePullJobs gets as it is): the rules of both kinds apply them.

/** selector and podSelector are exclusive. */
export const bothSelectors: SpecCheck = (_m, spec) =>
  isObj(spec.selector) && isObj(spec.podSelector)
    ? [
        {
          jsonPointer: '/spec/podSelector',
          message: 'both spec.selector and spec.podSelector are set; they are mutually exclusive',
          hint: 'Keep only one of selector (nodes) or podSelector (nodes of matching pods).',
        },
      ]
    : [];

/** parallelism is a number of nodes, never a percentage. */
export const parallelismPercent: SpecCheck = (_m, spec) =>
  typeof spec.parallelism === 'string' && spec.parallelism.trim().endsWith('%')
    ? [
        {
          jsonPointer: '/spec/parallelism',
          message: `parallelism ${quoteValue(spec.parallelism)} is a percentage; only integers are supported`,
          hint: 'Give the number of nodes that pull at the same time, e.g. parallelism: 10.',
        },
      ]
    : [];

/** A deadline shorter than one pull attempt's timeout. */
export const deadlineShorterThanTimeout: SpecCheck = (_m, spec) => {
  const cp = obj(spec.completionPolicy);
  const deadline = cp.activeDeadlineSeconds;
  const timeout = obj(spec.pullPolicy).timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  if (typeof deadline !== 'number' || typeof timeout !== 'number' || deadline >= timeout) return [];
  return [
    {
      jsonPointer: '/spec/completionPolicy/activeDeadlineSeconds',
      message: `activeDeadlineSeconds ${deadline} is shorter than pullPolicy.timeoutSeconds ${timeout}${obj(spec.pullPolicy).timeoutSeconds === undefined ? ' (the default)' : ''}`,
      hint: `Raise activeDeadlineSeconds to at least ${timeout}, or lower pullPolicy.timeoutSeconds.`,
    },
  ];
};

/** Why `image` is not a valid image reference, as a finding at `pointer`. */
export function imageReferenceFindings(image: unknown, pointer: string) {
  if (image === undefined) return [];
  const err = imageReferenceError(image);
  return err
    ? [
        {
          jsonPointer: pointer,
          message: `image ${quoteValue(image)} is not a valid image reference: ${err}`,
          hint: 'Use a reference such as nginx:1.9.1 or registry.example.com/team/app@sha256:<digest>.',
        },
      ]
    : [];
}

const rule = specRuleFor('apps.kruise.io', 'ImagePullJob');

export const imagePullJobBothSelectors = rule(
  'KRUISE-IMAGEPULLJOB-001',
  'ImagePullJob sets both selector and podSelector',
  'An ImagePullJob picks nodes either by node selector (names or labels) or by podSelector (the nodes running ' +
    "matching pods), never both; upstream's webhook rejects the combination.",
  bothSelectors,
);

export const imagePullJobParallelismPercent = rule(
  'KRUISE-IMAGEPULLJOB-002',
  'ImagePullJob parallelism is a percentage',
  'parallelism is an IntOrString in the API but upstream only accepts an integer (the number of nodes pulling at ' +
    'once; 0 pauses the job). A percentage is rejected.',
  parallelismPercent,
);

export const imagePullJobNeverWithDeadline = rule(
  'KRUISE-IMAGEPULLJOB-003',
  'ImagePullJob completionPolicy Never with activeDeadlineSeconds or ttlSecondsAfterFinished',
  'A job with completionPolicy.type Never runs forever (it keeps the image present on new nodes), so it has no ' +
    'deadline and never finishes to start a TTL. Upstream rejects activeDeadlineSeconds and ttlSecondsAfterFinished with Never.',
  (_m, spec) => neverCompletionWithDeadline(spec),
);

export const imagePullJobDeadlineShorterThanTimeout = rule(
  'KRUISE-IMAGEPULLJOB-004',
  'ImagePullJob activeDeadlineSeconds is shorter than one pull timeout',
  'activeDeadlineSeconds bounds the whole job; a deadline shorter than pullPolicy.timeoutSeconds (default 600) ' +
    'can end the job before a single pull attempt may finish. Upstream requires the deadline to be at least the timeout.',
  deadlineShorterThanTimeout,
);

export const imagePullJobImage = rule(
  'KRUISE-IMAGEPULLJOB-005',
  'ImagePullJob image is not a valid image reference',
  'spec.image is pulled through CRI on every selected node; a malformed reference fails on every node only at run ' +
    'time. It must follow [registry/]repository[:tag][@digest] with a lowercase repository.',
  (_m, spec) => imageReferenceFindings(spec.image, '/spec/image'),
);

export const IMAGEPULLJOB_RULES = [
  imagePullJobBothSelectors,
  imagePullJobParallelismPercent,
  imagePullJobNeverWithDeadline,
  imagePullJobDeadlineShorterThanTimeout,
  imagePullJobImage,
];

/**
 * Image pre-download ahead of a rollout, pure: when a workload that versions its pod template gets a new revision, one
 * ImagePullJob per changed image pulls it, ahead of the rollout, on the nodes of the pods not yet at that revision.
 * CloneSet and Advanced StatefulSet do it for updates their pods can take in place (gate
 * PreDownloadImageForInPlaceUpdate); Advanced DaemonSet for any update (gate PreDownloadImageForDaemonSetUpdate).
 * The update revision's ControllerRevision is labelled once the jobs are created (or once pre-download is ruled out),
 * so each revision is looked at once; the jobs are deleted when the rollout is over.
 * Each workload kind supplies its own reading of its update strategy ({@link PreDownloadStrategy}); the rest is shared.
 * image-predownload-writes.ts carries the plan out.
 */
import type { ImagePullJob } from '../../api/kinds/imagepulljob.js';
import {
  ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS,
  ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM,
  ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS,
  KRUISE_API_VERSION,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_CONTROLLER_REVISION_HASH_KEY,
  LABEL_IMAGE_PREDOWNLOAD_CREATED,
  LABEL_IMAGE_PREDOWNLOAD_IGNORED,
} from '../../contracts/index.js';
import type { KubeObject, OwnerReference } from '../core/types.js';
import { templateOf, type Revision } from './controller-revision.js';

/** A workload of this many replicas or fewer is not worth pre-downloading for (upstream's threshold). */
export const PREDOWNLOAD_MIN_REPLICAS = 3;
/** Nodes pulling at once when the parallelism annotation is absent or unreadable (upstream's default). */
export const DEFAULT_PREDOWNLOAD_PARALLELISM = 1;
/** Per-pull timeout when the timeout annotation is absent or unreadable (upstream's default). */
export const DEFAULT_PREDOWNLOAD_TIMEOUT_SECONDS = 300;
/** How long a finished pre-download job is kept (upstream's value). */
export const PREDOWNLOAD_TTL_SECONDS_AFTER_FINISHED = 600;
/** Pull attempts per node before the node counts as failed (upstream's value). */
export const PREDOWNLOAD_BACKOFF_LIMIT = 1;

const INT32_MAX = 2 ** 31 - 1;

/** A decimal integer within [min, INT32_MAX], else undefined (a number that does not fit an int32 is refused). */
function boundedInt(raw: string | undefined, min: number): number | undefined {
  if (raw === undefined || !/^[+-]?\d+$/.test(raw.trim())) return undefined;
  const n = Number(raw.trim());
  return Number.isSafeInteger(n) && n >= min && n <= INT32_MAX ? n : undefined;
}

/**
 * `apps.kruise.io/image-predownload-min-updated-ready-pods`: an integer, or `N%` of `replicas` rounded up. Anything
 * else counts as 0 (upstream logs the parse error and goes on with 0): a bad value never blocks nor loops.
 */
export function minUpdatedReadyPods(raw: string | undefined, replicas: number): number {
  if (raw === undefined) return 0;
  const pct = /^(\d+)%$/.exec(raw.trim());
  if (pct) {
    const p = Number(pct[1]);
    return Number.isSafeInteger(p) && p <= INT32_MAX ? Math.ceil((p * replicas) / 100) : 0;
  }
  const n = /^[+-]?\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  return Number.isSafeInteger(n) && Math.abs(n) <= INT32_MAX ? n : 0;
}

/** `apps.kruise.io/image-predownload-parallelism`: a non-negative int32, else the default (as upstream, which ignores a value it cannot parse). */
export function preDownloadParallelism(annotations: Readonly<Record<string, string>> | undefined): number {
  return boundedInt(annotations?.[ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM], 0) ?? DEFAULT_PREDOWNLOAD_PARALLELISM;
}

/** `apps.kruise.io/image-predownload-timeout-seconds`: a positive int32, else the default. */
export function preDownloadTimeoutSeconds(annotations: Readonly<Record<string, string>> | undefined): number {
  return boundedInt(annotations?.[ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS], 1) ?? DEFAULT_PREDOWNLOAD_TIMEOUT_SECONDS;
}

interface TemplateLike {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { containers?: Array<{ name: string; image?: string }>; imagePullSecrets?: Array<{ name?: string }> };
}

/**
 * The containers of `to` whose image differs from the same-named container of `from`, or which `from` lacks, with
 * their new image, in `to`'s container order. Init containers are not pre-downloaded (upstream looks at containers only).
 */
export function changedImages(from: unknown, to: unknown): Array<{ container: string; image: string }> {
  return changedImagesSince([from], to);
}

/**
 * {@link changedImages} against several templates, as upstream's DaemonSet compares with every older revision: a
 * container's image counts when one of `from` runs another image in the same-named container, or none has it.
 */
export function changedImagesSince(from: readonly unknown[], to: unknown): Array<{ container: string; image: string }> {
  const olds = from.map((t) => new Map(((t as TemplateLike | undefined)?.spec?.containers ?? []).map((c) => [c.name, c.image])));
  const out: Array<{ container: string; image: string }> = [];
  for (const c of (to as TemplateLike | undefined)?.spec?.containers ?? []) {
    if (!c.image) continue;
    const differs = olds.some((old) => old.has(c.name) && old.get(c.name) !== c.image);
    if (differs || !olds.some((old) => old.has(c.name))) out.push({ container: c.name, image: c.image });
  }
  return out;
}

/** An ImagePullJob as the API returns it. */
export type PreDownloadJob = ImagePullJob & KubeObject;

/** A workload as pre-download reads it. */
export interface PreDownloadWorkload extends KubeObject {
  readonly spec: {
    readonly replicas?: number;
    readonly selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
    readonly template?: unknown;
  };
  readonly status?: { readonly updatedReadyReplicas?: number; readonly updateRevision?: string };
}

/**
 * The workload kind's reading of its update strategy, for the "is it worth it" checks. The optional fields are where
 * upstream's DaemonSet reads pre-download its own way; the in-place kinds (CloneSet, Advanced StatefulSet) leave them out.
 */
export interface PreDownloadStrategy {
  /** Pods are recreated, not updated in place (CloneSet ReCreate; StatefulSet OnDelete or podUpdatePolicy ReCreate). */
  readonly recreate: boolean;
  /** Pods held at the old revision, as the kind's update counts them. */
  readonly partition: number;
  /** Pods the update may take down at once, as the kind's update counts them. */
  readonly maxUnavailable: number;
  /** Whether the change from the current to the update revision can be made in place (asked only when needed). */
  readonly canUpdateInPlace: () => boolean;
  /** The pods the checks count; by default `spec.replicas` (a DaemonSet has none: the nodes that should run its pod). */
  readonly replicas?: number;
  /**
   * Whether the replica threshold ({@link PREDOWNLOAD_MIN_REPLICAS}) and the min-updated-ready-pods wait apply; by
   * default they do. Upstream's DaemonSet has neither: it reads the annotation and leaves it unused.
   */
  readonly replicaConditions?: boolean;
  /** Whether the rollout is over, so the jobs can go; by default, once the current and update revisions agree. */
  readonly rolloutDone?: boolean;
  /**
   * The revisions whose images the update revision's are compared with ({@link changedImagesSince}); by default the
   * current one. A DaemonSet names no current revision: it compares with every older revision it keeps. None at all
   * (a workload's first revision): nothing to pre-download ahead of, the revision is ignored.
   */
  readonly baseline?: readonly Revision[];
}

export interface PreDownloadInput {
  readonly workload: PreDownloadWorkload;
  /** The job's controller reference (the workload's kind and uid). */
  readonly ownerReference: OwnerReference;
  readonly current: Revision;
  readonly update: Revision;
  readonly strategy: PreDownloadStrategy;
}

/** Why a revision's images are not pre-downloaded. */
export type PreDownloadIgnoreReason = 'first-revision' | 'recreate' | 'few-replicas' | 'one-batch' | 'not-in-place';

export type PreDownloadPlan =
  /** The rollout is over: the workload's pre-download jobs can go. */
  | { readonly action: 'delete-jobs' }
  /** Too few pods of the new revision are ready yet (the min-updated-ready-pods annotation). */
  | { readonly action: 'wait'; readonly minUpdatedReady: number; readonly updatedReady: number }
  /** The update revision was already dealt with (labelled created or ignored). */
  | { readonly action: 'none' }
  /** Label the update revision ignored. */
  | { readonly action: 'ignore'; readonly reason: PreDownloadIgnoreReason; readonly message: string }
  /** Create these jobs (an existing one of the same name is fine), then label the update revision created. */
  | { readonly action: 'create'; readonly jobs: readonly PreDownloadJob[] };

/** Whether the workload's rollout is over (its pre-download jobs can go), as its kind reads it. */
export function rolloutDone(i: Pick<PreDownloadInput, 'current' | 'update' | 'strategy'>): boolean {
  return i.strategy.rolloutDone ?? i.current.metadata.name === i.update.metadata.name;
}

/** What to do this round for the workload's pre-download. */
export function planPreDownload(i: PreDownloadInput): PreDownloadPlan {
  const { workload: w, current, update, strategy: s } = i;
  if (rolloutDone(i)) return { action: 'delete-jobs' };
  const replicas = s.replicas ?? w.spec.replicas ?? 1;
  const replicaConditions = s.replicaConditions ?? true;
  if (replicaConditions) {
    const minReady = minUpdatedReadyPods(w.metadata.annotations?.[ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS], replicas);
    // The status counts the pods of the revision it names: a new revision has none ready yet.
    const updatedReady = w.status?.updateRevision === update.metadata.name ? (w.status?.updatedReadyReplicas ?? 0) : 0;
    if (minReady > updatedReady) return { action: 'wait', minUpdatedReady: minReady, updatedReady };
  }
  const labels = update.metadata.labels ?? {};
  if (LABEL_IMAGE_PREDOWNLOAD_CREATED in labels || LABEL_IMAGE_PREDOWNLOAD_IGNORED in labels) return { action: 'none' };
  // No pod can be at an older revision (one in use is never truncated): each starts at this one, pulling as it does.
  if (s.baseline?.length === 0) return { action: 'ignore', reason: 'first-revision', message: 'no older revision' };
  if (s.recreate) return { action: 'ignore', reason: 'recreate', message: 'pods are recreated, not updated in place' };
  if (replicaConditions && replicas <= PREDOWNLOAD_MIN_REPLICAS)
    return { action: 'ignore', reason: 'few-replicas', message: `replicas ${replicas} <= ${PREDOWNLOAD_MIN_REPLICAS}` };
  if (s.partition === 0 && s.maxUnavailable >= replicas)
    return {
      action: 'ignore',
      reason: 'one-batch',
      message: `every pod updates in one batch (partition 0, maxUnavailable ${s.maxUnavailable} >= replicas ${replicas})`,
    };
  if (!s.canUpdateInPlace()) return { action: 'ignore', reason: 'not-in-place', message: 'the revision change cannot be made in place' };
  const images = changedImagesSince((s.baseline ?? [current]).map(templateOf), templateOf(update));
  return { action: 'create', jobs: images.map((c) => preDownloadJob(i, c.container, c.image)) };
}

/** `<update revision>-<container>`: one job per revision and container, so a repeated create meets AlreadyExists. */
export function preDownloadJobName(update: Revision, container: string): string {
  return `${update.metadata.name}-${container}`;
}

/**
 * The ImagePullJob that pre-downloads `image` for container `container` of the update revision: owned by the
 * workload, labelled with the template's labels (what the workload owns matches its selector) and the revision hash,
 * aimed at the nodes of the workload's pods not yet at the update revision.
 */
export function preDownloadJob(i: PreDownloadInput, container: string, image: string): PreDownloadJob {
  const w = i.workload;
  const template = (w.spec.template ?? {}) as TemplateLike;
  const hash = i.update.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH_KEY] ?? '';
  const labels = { ...template.metadata?.labels, [LABEL_CONTROLLER_REVISION_HASH_KEY]: hash };
  const selector = w.spec.selector ?? {};
  const pullSecrets = (template.spec?.imagePullSecrets ?? []).map((s) => s.name).filter((n): n is string => !!n);
  return {
    apiVersion: KRUISE_API_VERSION,
    kind: 'ImagePullJob',
    metadata: {
      name: preDownloadJobName(i.update, container),
      namespace: w.metadata.namespace,
      labels,
      ownerReferences: [{ ...i.ownerReference, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      image,
      ...(pullSecrets.length > 0 ? { pullSecrets } : {}),
      podSelector: {
        ...(selector.matchLabels ? { matchLabels: { ...selector.matchLabels } } : {}),
        matchExpressions: [
          ...((selector.matchExpressions ?? []) as NonNullable<NonNullable<ImagePullJob['spec']['podSelector']>['matchExpressions']>),
          { key: LABEL_CONTROLLER_REVISION_HASH, operator: 'NotIn', values: [i.update.metadata.name!, hash] },
        ],
      },
      parallelism: preDownloadParallelism(w.metadata.annotations),
      pullPolicy: { backoffLimit: PREDOWNLOAD_BACKOFF_LIMIT, timeoutSeconds: preDownloadTimeoutSeconds(w.metadata.annotations) },
      completionPolicy: { type: 'Always', ttlSecondsAfterFinished: PREDOWNLOAD_TTL_SECONDS_AFTER_FINISHED },
      sandboxConfig: { labels, annotations: { ...template.metadata?.annotations } },
    },
  } as PreDownloadJob;
}

/** The label the plan writes on the update revision. */
export function preDownloadLabel(plan: PreDownloadPlan): string | undefined {
  return plan.action === 'create'
    ? LABEL_IMAGE_PREDOWNLOAD_CREATED
    : plan.action === 'ignore'
      ? LABEL_IMAGE_PREDOWNLOAD_IGNORED
      : undefined;
}

/**
 * ImageListPullJob: the pure decision (upstream's `imagelistpulljob-controller` semantics). A list job is carried out
 * as one ImagePullJob per image, each with the list's template (everything in its spec but `images`); the ImagePullJob
 * controller and the daemons do the pulling. Given the list job, the ImagePullJobs it controls and the clock, this
 * says which children to create and delete, what the list's status becomes and when the finished job is deleted.
 * Table-tested in test/unit/runtime/controllers/imagelistpulljob/decision.test.ts.
 *
 * - A child is current when its image is in the list and its template hash label is the list's template hash (a child
 *   without the label counts when its template is equal). A stale child is deleted and replaced; a child whose image
 *   left the list is deleted; a second current child of one image is deleted.
 * - Where it differs from upstream: the status counts the current children only. Upstream counts every child, so the
 *   reconcile that replaces a stale child, or removes an image, can count the old child finished and complete the list
 *   before the new child has pulled anything.
 */
import type { ImageListPullJob, ImageListPullJobStatus } from '../../../api/kinds/imagelistpulljob.js';
import type { ImagePullJob } from '../../../api/kinds/imagepulljob.js';
import { KRUISE_API_VERSION } from '../../../contracts/index.js';
import { kruiseOwnerReference, rfc3339 } from '../../core/meta.js';
import type { KubeObject } from '../../core/types.js';

/** An ImageListPullJob as read from the API. */
export type ImageListPullJobObject = ImageListPullJob & KubeObject;
/** An ImagePullJob as read from the API. */
export type ChildJob = ImagePullJob & KubeObject;

/** Label on each child: the hash of the template it was made from (upstream's key, as on controller revisions). */
export const LABEL_TEMPLATE_HASH = 'controller-revision-hash';

/** The list's template: its spec without `images`, which every child gets as it is. */
export function templateOf(list: ImageListPullJobObject): Omit<ImageListPullJob['spec'], 'images'> {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { images, ...template } = list.spec;
  return template;
}

/** JSON with object keys sorted, so equal templates hash alike whatever order their fields came in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The template hash: FNV-1a (32 bit) of the canonical template, in decimal as a label value. */
export function templateHash(list: ImageListPullJobObject): string {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(canonical(templateOf(list)), 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return String(h >>> 0);
}

/** The images of the list, each once, in their order. */
export function imagesOf(list: ImageListPullJobObject): string[] {
  return [...new Set(list.spec.images ?? [])];
}

/** Whether `child` was made from the list's current template. */
export function isCurrent(child: ChildJob, list: ImageListPullJobObject, hash: string): boolean {
  const label = child.metadata.labels?.[LABEL_TEMPLATE_HASH];
  if (label !== undefined) return label === hash;
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { image, ...childTemplate } = child.spec;
  return canonical(childTemplate) === canonical(templateOf(list));
}

/** The ImagePullJob the list makes for `image`: named after the list, controlled by it, labelled with the hash. */
export function childFor(list: ImageListPullJobObject, image: string, hash: string): ChildJob {
  return {
    apiVersion: KRUISE_API_VERSION,
    kind: 'ImagePullJob',
    metadata: {
      generateName: `${list.metadata.name}-`,
      namespace: list.metadata.namespace!,
      labels: { [LABEL_TEMPLATE_HASH]: hash },
      ownerReferences: [kruiseOwnerReference(list, 'ImageListPullJob', { controller: true, blockOwnerDeletion: true })],
    },
    spec: { image, ...structuredClone(templateOf(list)) },
  } as ChildJob;
}

/** A child to delete, and why (for the log and the event). */
export interface ChildDeletion {
  readonly name: string;
  readonly uid: string;
  readonly image: string;
  readonly reason: 'image removed' | 'template changed' | 'duplicate';
}

export interface ListDecision {
  /** Images to create a child for (their bodies by {@link childFor}). */
  readonly create: string[];
  readonly delete: ChildDeletion[];
  /** The status to write; undefined once the job has finished (upstream leaves a finished job's status alone). */
  readonly status?: ImageListPullJobStatus;
  /** Delete the finished list job: its ttlSecondsAfterFinished has passed. */
  readonly deleteJob: boolean;
  readonly requeueAfterMs?: number;
}

export interface ListInput {
  readonly list: ImageListPullJobObject;
  /** The ImagePullJobs this list controls (by owner uid), any order; ones being deleted are left out here. */
  readonly children: readonly ChildJob[];
  readonly nowMs: number;
}

const ms = (iso: string | null | undefined): number => (iso ? Date.parse(iso) : 0);

const older = (a: ChildJob, b: ChildJob): number =>
  ms(a.metadata.creationTimestamp) - ms(b.metadata.creationTimestamp) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

/** How one child stands, by upstream's reading of its status (a child not started yet counts nowhere). */
function childState(c: ChildJob): { started: boolean; active: boolean; failed: boolean; completed: boolean; succeeded: boolean } {
  const s = c.status;
  if (!s?.startTime) return { started: false, active: false, failed: false, completed: false, succeeded: false };
  const failed = s.failed ?? 0;
  const succeeded = s.succeeded ?? 0;
  return {
    started: true,
    active: (s.active ?? 0) > 0,
    failed: failed > 0,
    completed: s.desired === failed + succeeded,
    succeeded: s.desired === succeeded,
  };
}

export function decide(input: ListInput): ListDecision {
  const { list, nowMs } = input;
  const prev = list.status;

  // Finished: only the TTL is left to honour; later edits of the list change nothing, as upstream.
  if (prev?.completionTime) {
    const ttl = list.spec.completionPolicy?.ttlSecondsAfterFinished;
    if (ttl === undefined || ttl === null) return { create: [], delete: [], deleteJob: false };
    const dueMs = ms(prev.completionTime) + ttl * 1000;
    return dueMs <= nowMs
      ? { create: [], delete: [], deleteJob: true }
      : { create: [], delete: [], deleteJob: false, requeueAfterMs: dueMs - nowMs };
  }

  const hash = templateHash(list);
  const images = imagesOf(list);
  const wanted = new Set(images);
  const current = new Map<string, ChildJob>();
  const deletions: ChildDeletion[] = [];
  const del = (c: ChildJob, reason: ChildDeletion['reason']) =>
    deletions.push({ name: c.metadata.name!, uid: c.metadata.uid!, image: c.spec.image, reason });
  for (const c of [...input.children].sort(older)) {
    if (!wanted.has(c.spec.image)) del(c, 'image removed');
    else if (!isCurrent(c, list, hash)) del(c, 'template changed');
    else if (current.has(c.spec.image)) del(c, 'duplicate');
    else current.set(c.spec.image, c);
  }
  const create = images.filter((i) => !current.has(i));

  let active = 0;
  let completed = 0;
  let succeeded = 0;
  const failedImageStatuses: NonNullable<ImageListPullJobStatus['failedImageStatuses']> = [];
  for (const image of images) {
    const c = current.get(image);
    if (!c) continue;
    const st = childState(c);
    if (!st.started) continue;
    if (st.active) active++;
    if (st.completed) completed++;
    if (st.succeeded) succeeded++;
    if (st.failed)
      failedImageStatuses.push({
        imagePullJob: c.metadata.name!,
        name: image,
        message: `pull failed on ${c.status!.failed} of ${c.status!.desired} node(s); ImagePullJob ${c.metadata.name} lists them in status.failedNodes`,
      });
  }
  const status: ImageListPullJobStatus = {
    startTime: prev?.startTime ?? rfc3339(nowMs),
    desired: images.length,
    active,
    completed,
    succeeded,
    ...(failedImageStatuses.length ? { failedImageStatuses } : {}),
  };
  if ((list.spec.completionPolicy?.type ?? 'Always') !== 'Never' && status.desired === completed) {
    status.completionTime = rfc3339(nowMs);
    const ttl = list.spec.completionPolicy?.ttlSecondsAfterFinished;
    return { create: [], delete: deletions, status, deleteJob: false, ...(typeof ttl === 'number' ? { requeueAfterMs: ttl * 1000 } : {}) };
  }
  return { create, delete: deletions, status, deleteJob: false };
}

/** Whether the status to write differs from the stored one (absent counters read as zero, as the API returns them). */
export function statusChanged(prev: ImageListPullJobStatus | undefined, next: ImageListPullJobStatus): boolean {
  if (!prev) return true;
  const norm = (s: ImageListPullJobStatus | undefined) =>
    canonical({
      startTime: s?.startTime ?? null,
      completionTime: s?.completionTime ?? null,
      desired: s?.desired ?? 0,
      active: s?.active ?? 0,
      completed: s?.completed ?? 0,
      succeeded: s?.succeeded ?? 0,
      failedImageStatuses: s?.failedImageStatuses ?? [],
    });
  return norm(prev) !== norm(next);
}

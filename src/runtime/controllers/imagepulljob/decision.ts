/**
 * ImagePullJob, manager side (upstream `imagepulljob-controller`): a job becomes a tag on the
 * NodeImage of each target node, `parallelism` nodes at a time; each node's daemon pulls and writes
 * the tag's status; the job's status aggregates those. Pure: inputs are the job, its target
 * NodeImages and the clock; outputs are NodeImage tag writes, the job status and TTL deletion.
 */
import type { ImagePullJob } from '../../../api/kinds/imagepulljob.js';
import type { ImageTagSpec, NodeImage } from '../../../api/kinds/nodeimage.js';
import { DEFAULT_BACKOFF_LIMIT, DEFAULT_PULL_TIMEOUT_SECONDS, KRUISE_API_VERSION, splitImageRef } from '../../../contracts/index.js';
import { ownedBy, rfc3339 } from '../../core/meta.js';

/** Added to a tag's TTL under completion policy Always (upstream --default-ttlseconds-for-always-nodeimage). */
export const DEFAULT_TAG_TTL_EXTRA_SECONDS = 300;
/** Tag TTL under completion policy Never (about a day, as upstream). */
export const NEVER_TAG_TTL_SECONDS = 24 * 3600;

export type JobObject = ImagePullJob & {
  metadata: { name?: string; namespace?: string; uid?: string; creationTimestamp?: string; deletionTimestamp?: string };
};

/**
 * A finished job lets go of its pull-secret copies no sooner than this after it started. Upstream's daemons report
 * a tag on their NodeImage resync (every 3-5 s while one is in flight), so an upstream job runs for seconds even
 * when the image is on every node, and clients written against upstream (its own e2e suite among them) look for
 * the copy while the job runs; the bundled daemon reports within the second. A job that runs longer lets go of
 * its copies at completion, as upstream's does.
 */
export const SECRET_COPY_MIN_LIFETIME_MS = 5_000;

/** When a finished job's pull-secret copies are let go of (epoch ms): its completion, at the earliest the minimum lifetime after its start. */
export function secretCopiesReleaseAtMs(status: { startTime?: string | null; completionTime?: string | null }): number {
  return Math.max(ms(status.completionTime), ms(status.startTime) + SECRET_COPY_MIN_LIFETIME_MS);
}

/** A pull secret of the job as copied into the daemon-config namespace. */
export interface SecretCopyRef {
  readonly namespace: string;
  readonly name: string;
}

export type NodeState = 'none' | 'active' | 'succeeded' | 'failed';

export interface NodeResult {
  readonly node: string;
  readonly state: NodeState;
  readonly message?: string;
}

const ms = (iso: string | null | undefined): number => (iso ? Date.parse(iso) : 0);

/** Where this job stands on one node, from that node's NodeImage (spec tag vs status tag, same version). */
export function nodeResult(job: JobObject, ni: NodeImage & { metadata: { name?: string } }): NodeResult {
  const node = ni.metadata.name!;
  const { image, tag } = splitImageRef(job.spec.image);
  const spec = ni.spec?.images?.[image]?.tags.find((t) => t.tag === tag);
  if (!spec || !ownedBy(spec.ownerReferences, job.metadata.uid!)) return { node, state: 'none' };
  const status = ni.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag);
  if (!status || (status.version ?? 0) !== (spec.version ?? 0)) return { node, state: 'active' };
  if (status.phase === 'Succeeded') return { node, state: 'succeeded' };
  if (status.phase === 'Failed') return { node, state: 'failed', ...(status.message ? { message: status.message } : {}) };
  return { node, state: 'active' };
}

/** Integer parallelism (default 1; a percentage is refused by validation, treated as 1 here). */
export function parallelismOf(job: JobObject): number {
  const p = job.spec.parallelism;
  if (p === undefined) return 1;
  const n = typeof p === 'number' ? p : /^\d+$/.test(p) ? Number(p) : 1;
  return Math.max(0, n);
}

/** The tag this job asks a node for; version one above what the node has so it (re)pulls. */
export function tagFor(job: JobObject, existing: ImageTagSpec | undefined, nowMs: number): ImageTagSpec {
  const { tag } = splitImageRef(job.spec.image);
  const cp = job.spec.completionPolicy;
  const timeout = job.spec.pullPolicy?.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS;
  const backoff = job.spec.pullPolicy?.backoffLimit ?? DEFAULT_BACKOFF_LIMIT;
  const always = (cp?.type ?? 'Always') === 'Always';
  let activeDeadlineSeconds: number | undefined;
  if (always && cp?.activeDeadlineSeconds !== undefined) {
    const start = ms(job.status?.startTime) || nowMs;
    // +1 s: the daemon counts from createdAt, which has whole seconds, so its deadline must not come
    // before the job's own (the job reports "exceeds activeDeadlineSeconds" at its deadline).
    activeDeadlineSeconds = Math.max(1, Math.ceil((start + cp.activeDeadlineSeconds * 1000 - nowMs) / 1000)) + 1;
  }
  const ttl = always
    ? (cp?.ttlSecondsAfterFinished ?? cp?.activeDeadlineSeconds ?? timeout * (backoff + 1)) + DEFAULT_TAG_TTL_EXTRA_SECONDS
    : NEVER_TAG_TTL_SECONDS;
  const owner = {
    apiVersion: KRUISE_API_VERSION,
    kind: 'ImagePullJob',
    name: job.metadata.name!,
    namespace: job.metadata.namespace!,
    uid: job.metadata.uid!,
  };
  const owners = (existing?.ownerReferences ?? []).filter((o) => o.uid !== owner.uid);
  return {
    tag,
    createdAt: rfc3339(nowMs),
    version: (existing?.version ?? 0) + 1,
    imagePullPolicy: job.spec.imagePullPolicy ?? 'IfNotPresent',
    ownerReferences: [...owners, owner],
    pullPolicy: {
      timeoutSeconds: timeout,
      backoffLimit: backoff,
      ttlSecondsAfterFinished: ttl,
      ...(activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds } : {}),
    },
  };
}

/** A write to one NodeImage: the whole tag list of one image (plus its secrets and sandbox config). */
export interface TagWrite {
  readonly nodeImage: string;
  readonly resourceVersion?: string;
  readonly image: string;
  readonly tags: ImageTagSpec[];
  readonly pullSecrets: SecretCopyRef[];
  readonly sandboxConfig?: { labels?: Record<string, string>; annotations?: Record<string, string> };
}

export interface JobStatus {
  startTime: string;
  completionTime?: string;
  desired: number;
  active: number;
  succeeded: number;
  failed: number;
  message?: string;
  failedNodes?: string[];
}

export interface JobDecision {
  readonly writes: TagWrite[];
  readonly status: JobStatus;
  readonly deleteJob: boolean;
  readonly requeueAfterMs?: number;
}

export interface JobInput {
  readonly job: JobObject;
  /** NodeImages of the target nodes (selector / podSelector already applied), any order. */
  readonly targets: ReadonlyArray<NodeImage & { metadata: { name?: string; resourceVersion?: string } }>;
  readonly secretCopies: readonly SecretCopyRef[];
  readonly nowMs: number;
}

function failureMessage(results: readonly NodeResult[]): string {
  const failed = results.filter((r) => r.state === 'failed');
  const first = failed[0];
  return `image pull failed on ${failed.length} node(s) [${failed.map((f) => f.node).join(', ')}]${first?.message ? `: ${first.node}: ${first.message}` : ''}`;
}

export function decideJob(input: JobInput): JobDecision {
  const { job, nowMs } = input;
  const prev = job.status;
  const cp = job.spec.completionPolicy;
  const always = (cp?.type ?? 'Always') === 'Always';

  // Finished: only the TTL is left to honour.
  if (prev?.completionTime) {
    const ttl = always ? cp?.ttlSecondsAfterFinished : undefined;
    if (ttl === undefined) return { writes: [], status: prev as JobStatus, deleteJob: false };
    const dueMs = ms(prev.completionTime) + ttl * 1000;
    return dueMs <= nowMs
      ? { writes: [], status: prev as JobStatus, deleteJob: true }
      : { writes: [], status: prev as JobStatus, deleteJob: false, requeueAfterMs: dueMs - nowMs };
  }

  const startMs = ms(prev?.startTime) || nowMs;
  const targets = [...input.targets].sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
  const results = targets.map((t) => nodeResult(job, t));
  const count = (s: NodeState) => results.filter((r) => r.state === s).length;
  const status: JobStatus = {
    startTime: rfc3339(startMs),
    desired: targets.length,
    active: count('active'),
    succeeded: count('succeeded'),
    failed: count('failed'),
    failedNodes: results.filter((r) => r.state === 'failed').map((r) => r.node),
  };

  if (always && cp?.activeDeadlineSeconds !== undefined && nowMs >= startMs + cp.activeDeadlineSeconds * 1000) {
    const notDone = results.filter((r) => r.state !== 'succeeded');
    return {
      writes: [],
      status: {
        ...status,
        active: 0,
        failed: notDone.length,
        failedNodes: notDone.map((r) => r.node),
        completionTime: rfc3339(nowMs),
        message: `job exceeds activeDeadlineSeconds (${cp.activeDeadlineSeconds}s); ${status.succeeded}/${status.desired} node(s) pulled`,
      },
      deleteJob: false,
      ...(cp.ttlSecondsAfterFinished !== undefined ? { requeueAfterMs: cp.ttlSecondsAfterFinished * 1000 } : {}),
    };
  }

  if (always && targets.length > 0 && status.succeeded + status.failed === status.desired) {
    return {
      writes: [],
      status: { ...status, completionTime: rfc3339(nowMs), message: status.failed > 0 ? failureMessage(results) : 'job has completed' },
      deleteJob: false,
      ...(cp?.ttlSecondsAfterFinished !== undefined ? { requeueAfterMs: cp.ttlSecondsAfterFinished * 1000 } : {}),
    };
  }

  const { image } = splitImageRef(job.spec.image);
  const room = Math.max(0, parallelismOf(job) - status.active);
  const writes: TagWrite[] = [];
  for (const ni of targets) {
    if (writes.length >= room) break;
    if (results.find((r) => r.node === ni.metadata.name)!.state !== 'none') continue;
    const cur = ni.spec?.images?.[image];
    const { tag } = splitImageRef(job.spec.image);
    const existing = cur?.tags.find((t) => t.tag === tag);
    const tags = [...(cur?.tags ?? []).filter((t) => t.tag !== tag), tagFor(job, existing, nowMs)];
    // Secrets of other jobs on the same image stay; ours are added once.
    const secrets = [...(cur?.pullSecrets ?? []).map((s) => ({ namespace: s.namespace ?? '', name: s.name ?? '' }))];
    for (const s of input.secretCopies) if (!secrets.some((x) => x.namespace === s.namespace && x.name === s.name)) secrets.push(s);
    writes.push({
      nodeImage: ni.metadata.name!,
      ...(ni.metadata.resourceVersion ? { resourceVersion: ni.metadata.resourceVersion } : {}),
      image,
      tags,
      pullSecrets: secrets,
      ...(job.spec.sandboxConfig
        ? { sandboxConfig: job.spec.sandboxConfig }
        : cur?.sandboxConfig
          ? { sandboxConfig: cur.sandboxConfig }
          : {}),
    });
  }
  const added = writes.length;
  const message = status.desired === 0 ? 'no nodes match the job' : parallelismOf(job) === 0 ? 'paused (parallelism 0)' : undefined;
  return {
    writes,
    status: { ...status, active: status.active + added, ...(message ? { message } : {}) },
    deleteJob: false,
    ...(always && cp?.activeDeadlineSeconds !== undefined
      ? { requeueAfterMs: Math.max(0, startMs + cp.activeDeadlineSeconds * 1000 - nowMs) + 50 }
      : {}),
  };
}

/** `refs` (a references annotation: comma-separated job keys) with `job` in it (`present`) or out of it; sorted. */
export function pullSecretReferences(refs: string | undefined, job: string, present: boolean): string {
  const keys = new Set((refs ?? '').split(',').filter(Boolean));
  if (present) keys.add(job);
  else keys.delete(job);
  return [...keys].sort().join(',');
}

/** Name of a job's pull secret copy in the daemon-config namespace (namespace-qualified: no clashes). */
export function secretCopyName(jobNamespace: string, secret: string): string {
  return `${jobNamespace}.${secret}`.slice(0, 253);
}

/** The Secret types that hold registry credentials (what the kubelet reads for imagePullSecrets). */
export const PULL_SECRET_TYPES = ['kubernetes.io/dockerconfigjson', 'kubernetes.io/dockercfg'] as const;

/**
 * Why a Secret named in spec.pullSecrets must not be copied into the daemon-config namespace, or undefined.
 * Only registry credentials travel: naming a service-account token or a TLS key there would hand it to
 * every node's daemon.
 */
export function pullSecretCopyRefusal(secret: { type?: string; metadata?: { name?: string; namespace?: string } }): string | undefined {
  const type = secret.type ?? 'Opaque';
  if ((PULL_SECRET_TYPES as readonly string[]).includes(type)) return undefined;
  const name = `${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
  return `spec.pullSecrets: Secret ${name} has type ${JSON.stringify(type.slice(0, 80))}, not a registry credential; only ${PULL_SECRET_TYPES.join(' or ')} Secrets are copied for the daemons (create one with kubectl create secret docker-registry)`;
}

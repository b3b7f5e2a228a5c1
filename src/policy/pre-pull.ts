/**
 * Pre-pull from the diff, pure: compares the workloads of a synth's output with those of the previous output and,
 * for every opted-in workload whose container images changed, builds one ImagePullJob per new image, aimed at the
 * nodes that run the workload's pods (`podSelector`). The layout puts the jobs in a phase applied before the app, so
 * the rollout finds its images on the nodes.
 *
 * A synth must reproduce the output it is compared with (CI re-runs synth and checks that `dist/` did not change), so
 * the jobs of the previous output are kept while their workload's images stay as they are, and replaced at its next
 * image change: the result is a fixed point after one synth.
 */
import { createHash } from 'node:crypto';
import { ANNOTATION_PRE_PULL_CHANGED_IMAGES, ANNOTATION_PRE_PULL_FOR, KRUISE_API_VERSION, KRUISE_GROUP } from '../contracts/index.js';
import { groupOf } from '../contracts/groups.js';
import { podTemplates } from './k8s.js';

type Obj = Record<string, unknown>;

/** Nodes pulling at once: enough that a rollout over many nodes is not held long, few enough to spare the registry. */
export const PRE_PULL_PARALLELISM = 10;
/** Per-node pull timeout and attempts. */
export const PRE_PULL_TIMEOUT_SECONDS = 300;
export const PRE_PULL_BACKOFF_LIMIT = 3;
/** A pre-pull ends, pulled or not, within this long, so the app phase it holds back is never held for ever. */
export const PRE_PULL_ACTIVE_DEADLINE_SECONDS = 900;
/** How long a finished pre-pull job is kept by default when nothing else removes it. */
export const PRE_PULL_DEFAULT_TTL_SECONDS = 600;

export interface PrePullOptions {
  /** Every workload, whether or not it carries the opt-in annotation (`synth --pre-pull`). */
  readonly all?: boolean;
  /**
   * Seconds the runtime keeps a finished job (`completionPolicy.ttlSecondsAfterFinished`), or undefined for none:
   * under Flux, a job deleted by its TTL would be created again by the next reconciliation, so Git's pruning removes
   * it instead, at the workload's next image change.
   */
  readonly ttlSecondsAfterFinished?: number;
}

/** A workload as pre-pull reads it. */
export interface PrePullWorkload {
  /** `<Kind>.<group>/<name>` (kubectl's resource notation), the value of the jobs' pre-pull-for annotation. */
  readonly ref: string;
  readonly namespace: string | undefined;
  readonly name: string;
  /** Container and init container images, deduplicated, in template order. */
  readonly images: readonly string[];
  /** The selector of its pods, or undefined when none can be read (a Job without labels). */
  readonly podSelector: Obj | undefined;
  readonly pullSecrets: readonly string[];
  readonly optedIn: boolean;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function at(o: unknown, path: readonly string[]): unknown {
  let cur = o;
  for (const p of path) cur = isObj(cur) ? cur[p] : undefined;
  return cur;
}

/**
 * The workload `obj` is, as pre-pull reads it, or undefined for any other object. A workload is an object of a
 * named API group that owns pod templates (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob and the
 * Kruise workloads); a bare Pod has no rollout to prepare.
 */
export function prePullWorkloadOf(obj: Obj): PrePullWorkload | undefined {
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return undefined;
  const group = groupOf(obj.apiVersion);
  const metadata = isObj(obj.metadata) ? obj.metadata : {};
  const templates = group === '' ? [] : podTemplates({ object: obj });
  if (templates.length === 0 || typeof metadata.name !== 'string') return undefined;
  const images: string[] = [];
  for (const t of templates) {
    for (const list of ['initContainers', 'containers']) {
      const containers = t.spec[list];
      if (!Array.isArray(containers)) continue;
      for (const c of containers) {
        const image = isObj(c) ? c.image : undefined;
        if (typeof image === 'string' && image.trim() !== '' && !images.includes(image)) images.push(image);
      }
    }
  }
  const template = { metadata: templates[0]!.metadata };
  const secrets = templates[0]!.spec.imagePullSecrets;
  const annotations = isObj(metadata.annotations) ? metadata.annotations : {};
  return {
    ref: `${obj.kind}.${group}/${metadata.name}`,
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : undefined,
    name: metadata.name,
    images,
    podSelector: podSelectorOf(obj, template),
    pullSecrets: Array.isArray(secrets)
      ? [...new Set(secrets.flatMap((s) => (isObj(s) && typeof s.name === 'string' && s.name ? [s.name] : [])))]
      : [],
    optedIn: annotations[ANNOTATION_PRE_PULL_CHANGED_IMAGES] === 'true',
  };
}

/**
 * The selector of a workload's pods: its `spec.selector` where the kind has one, else (a Job without a manual
 * selector, a CronJob) the pod template's labels. Undefined when neither says anything.
 */
function podSelectorOf(obj: Obj, template: unknown): Obj | undefined {
  const selector = obj.kind === 'CronJob' ? undefined : at(obj, ['spec', 'selector']);
  if (isObj(selector) && (isObj(selector.matchLabels) || Array.isArray(selector.matchExpressions))) {
    const out: Obj = {};
    if (isObj(selector.matchLabels) && Object.keys(selector.matchLabels).length > 0) out.matchLabels = selector.matchLabels;
    if (Array.isArray(selector.matchExpressions) && selector.matchExpressions.length > 0) out.matchExpressions = selector.matchExpressions;
    if (Object.keys(out).length > 0) return out;
  }
  const labels = at(template, ['metadata', 'labels']);
  if (isObj(labels) && Object.keys(labels).length > 0) return { matchLabels: labels };
  return undefined;
}

const keyOf = (namespace: string | undefined, ref: string) => `${namespace ?? ''}\u0000${ref}`;

/** True for an ImagePullJob a synth emitted as a pre-pull (it names its workload). */
export function isPrePullJob(obj: Obj): boolean {
  return (
    typeof obj.apiVersion === 'string' &&
    groupOf(obj.apiVersion) === KRUISE_GROUP &&
    obj.kind === 'ImagePullJob' &&
    typeof at(obj, ['metadata', 'annotations', ANNOTATION_PRE_PULL_FOR]) === 'string'
  );
}

/**
 * The pre-pull ImagePullJobs for `current`, given the `previous` output (undefined: there is none, so nothing has
 * changed). A workload new in this output gets none: no pod of it runs yet, so no node is known.
 */
export function prePullJobs(current: readonly Obj[], previous: readonly Obj[] | undefined, opts: PrePullOptions = {}): Obj[] {
  if (previous === undefined) return [];
  const imagesBefore = new Map<string, readonly string[]>();
  const pulledBefore = new Map<string, string[]>();
  for (const obj of previous) {
    const w = prePullWorkloadOf(obj);
    if (w) imagesBefore.set(keyOf(w.namespace, w.ref), w.images);
    if (isPrePullJob(obj)) {
      const ns = at(obj, ['metadata', 'namespace']);
      const key = keyOf(typeof ns === 'string' ? ns : undefined, String(at(obj, ['metadata', 'annotations', ANNOTATION_PRE_PULL_FOR])));
      const image = at(obj, ['spec', 'image']);
      if (typeof image === 'string') pulledBefore.set(key, [...(pulledBefore.get(key) ?? []), image]);
    }
  }
  const jobs: Obj[] = [];
  const seen = new Set<string>();
  for (const obj of current) {
    const w = prePullWorkloadOf(obj);
    if (!w || !(w.optedIn || opts.all) || !w.podSelector) continue;
    const key = keyOf(w.namespace, w.ref);
    const before = imagesBefore.get(key);
    if (before === undefined || seen.has(key)) continue;
    seen.add(key);
    const fresh = w.images.filter((i) => !before.includes(i));
    const images = fresh.length > 0 ? fresh : w.images.filter((i) => pulledBefore.get(key)?.includes(i));
    for (const image of images) jobs.push(prePullJob(w, image, opts));
  }
  return jobs;
}

/** One pre-pull ImagePullJob: `image` on the nodes of `w`'s pods. Its name is stable for the pair. */
function prePullJob(w: PrePullWorkload, image: string, opts: PrePullOptions): Obj {
  const hash = createHash('sha256')
    .update(`${w.namespace ?? ''}/${w.ref}\n${image}`)
    .digest('hex')
    .slice(0, 10);
  const base = w.name.slice(0, 40).replace(/[-.]+$/, '');
  return {
    apiVersion: KRUISE_API_VERSION,
    kind: 'ImagePullJob',
    metadata: {
      name: `${base}-pre-pull-${hash}`,
      ...(w.namespace !== undefined ? { namespace: w.namespace } : {}),
      annotations: { [ANNOTATION_PRE_PULL_FOR]: w.ref },
    },
    spec: {
      image,
      podSelector: w.podSelector,
      ...(w.pullSecrets.length > 0 ? { pullSecrets: w.pullSecrets } : {}),
      parallelism: PRE_PULL_PARALLELISM,
      pullPolicy: { timeoutSeconds: PRE_PULL_TIMEOUT_SECONDS, backoffLimit: PRE_PULL_BACKOFF_LIMIT },
      completionPolicy: {
        type: 'Always',
        activeDeadlineSeconds: PRE_PULL_ACTIVE_DEADLINE_SECONDS,
        ...(opts.ttlSecondsAfterFinished !== undefined ? { ttlSecondsAfterFinished: opts.ttlSecondsAfterFinished } : {}),
      },
    },
  };
}

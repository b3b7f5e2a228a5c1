/**
 * The daemon's half of ImagePullJob (upstream kruise-daemon `imagepuller`): its own NodeImage lists
 * image tags to pull (each with a `version` the manager bumps to ask again); the daemon pulls what
 * has no finished status for the current version and writes per-tag phases plus counters.
 */
import type { ImageTagStatus, NodeImage } from '../../../api/kinds/nodeimage.js';

/** One tag of one image to pull, with what the pull needs. */
export interface PullTask {
  /** `name:tag` or `name@digest`, the reference given to CRI. */
  readonly ref: string;
  readonly image: string;
  readonly tag: string;
  readonly version: number;
  readonly imagePullPolicy: 'Always' | 'IfNotPresent';
  readonly timeoutSeconds: number;
  readonly backoffLimit: number;
  /** Epoch ms after which the pull gives up (tag createdAt + activeDeadlineSeconds), if any. */
  readonly deadlineMs?: number;
  readonly pullSecrets: ReadonlyArray<{ namespace?: string; name?: string }>;
  readonly sandboxConfig?: { labels?: Record<string, string>; annotations?: Record<string, string> };
}

export { DEFAULT_BACKOFF_LIMIT, DEFAULT_PULL_TIMEOUT_SECONDS, imageRef, splitImageRef } from '../../../contracts/index.js';
import { DEFAULT_BACKOFF_LIMIT, DEFAULT_PULL_TIMEOUT_SECONDS, imageRef } from '../../../contracts/index.js';

const taskKey = (image: string, tag: string): string => `${image}\u0000${tag}`;

function statusOf(ni: NodeImage, image: string, tag: string): ImageTagStatus | undefined {
  return ni.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag);
}

const finished = (s: ImageTagStatus | undefined, version: number): boolean =>
  !!s && (s.version ?? 0) === version && (s.phase === 'Succeeded' || s.phase === 'Failed');

/**
 * Tags that need a pull now: in the spec, without a finished status for the spec's version, and not
 * already being pulled (`inFlight` keys are `image\0tag\0version`).
 */
export function pendingPulls(ni: NodeImage, inFlight: ReadonlySet<string>): PullTask[] {
  const out: PullTask[] = [];
  for (const [image, spec] of Object.entries(ni.spec?.images ?? {})) {
    for (const t of spec.tags) {
      const version = t.version ?? 0;
      if (finished(statusOf(ni, image, t.tag), version)) continue;
      if (inFlight.has(`${taskKey(image, t.tag)}\u0000${version}`)) continue;
      const deadline = t.pullPolicy?.activeDeadlineSeconds;
      out.push({
        ref: imageRef(image, t.tag),
        image,
        tag: t.tag,
        version,
        imagePullPolicy: t.imagePullPolicy ?? 'IfNotPresent',
        timeoutSeconds: t.pullPolicy?.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS,
        backoffLimit: t.pullPolicy?.backoffLimit ?? DEFAULT_BACKOFF_LIMIT,
        ...(deadline !== undefined && t.createdAt ? { deadlineMs: Date.parse(t.createdAt) + deadline * 1000 } : {}),
        pullSecrets: spec.pullSecrets ?? [],
        ...(spec.sandboxConfig ? { sandboxConfig: spec.sandboxConfig } : {}),
      });
    }
  }
  return out;
}

export const inFlightKey = (t: Pick<PullTask, 'image' | 'tag' | 'version'>): string => `${taskKey(t.image, t.tag)}\u0000${t.version}`;

/** A pull's current result as the worker reports it. */
export interface TagResult {
  readonly image: string;
  readonly tag: string;
  readonly status: ImageTagStatus;
}

export type NodeImageStatusPatch = {
  desired: number;
  pulling: number;
  waiting: number;
  succeeded: number;
  failed: number;
  imageStatuses: Record<string, { tags: ImageTagStatus[] } | null>;
};

/**
 * The NodeImage status after applying `results`: tags no longer in the spec are dropped (their
 * image key set to null for the merge patch when none is left), counters recomputed over the spec.
 * A status answering an older version counts as Waiting.
 */
export function nextStatus(ni: NodeImage, results: readonly TagResult[]): NodeImageStatusPatch {
  const byKey = new Map(results.map((r) => [taskKey(r.image, r.tag), r.status]));
  const imageStatuses: NodeImageStatusPatch['imageStatuses'] = {};
  const counts = { desired: 0, pulling: 0, waiting: 0, succeeded: 0, failed: 0 };
  const specImages = ni.spec?.images ?? {};
  for (const [image, spec] of Object.entries(specImages)) {
    const tags: ImageTagStatus[] = [];
    for (const t of spec.tags) {
      counts.desired++;
      const version = t.version ?? 0;
      const s = byKey.get(taskKey(image, t.tag)) ?? statusOf(ni, image, t.tag);
      const current = s && (s.version ?? 0) === version ? s : undefined;
      if (s) tags.push(s);
      const phase = current?.phase ?? 'Waiting';
      if (phase === 'Succeeded') counts.succeeded++;
      else if (phase === 'Failed') counts.failed++;
      else if (phase === 'Pulling') counts.pulling++;
      else counts.waiting++;
    }
    imageStatuses[image] = tags.length ? { tags } : null;
  }
  for (const image of Object.keys(ni.status?.imageStatuses ?? {})) if (!(image in specImages)) imageStatuses[image] = null;
  return { ...counts, imageStatuses };
}

/** Delay before retry `attempt` (1-based) of a failed pull: 1 s doubling, capped at 30 s. */
export function pullBackoffMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, attempt - 1));
}

/** Registry host of a reference, as docker config.json keys it (docker.io for bare names). */
export function registryHost(ref: string): string {
  const first = ref.split('/')[0]!;
  if (!ref.includes('/') || (!first.includes('.') && !first.includes(':') && first !== 'localhost')) return 'docker.io';
  return first;
}

/**
 * A docker config.json `auths` entry reduced to CRI AuthConfig fields. No `serverAddress`: entries
 * are already matched to the image's registry here, and containerd 1.6 URL-parses that field, so a
 * bare `host:port` (the usual key for a private registry) makes every pull fail.
 */
export interface RegistryCredential {
  readonly username?: string;
  readonly password?: string;
  readonly auth?: string;
  readonly identityToken?: string;
  readonly registryToken?: string;
}

const normalizeHost = (key: string): string =>
  key
    .replace(/^https?:\/\//, '')
    .replace(/\/.*$/, '')
    .replace(/^(index\.)?docker\.io$/, 'docker.io')
    .replace(/^registry-1\.docker\.io$/, 'docker.io');

/**
 * Credentials for `ref` from the `.dockerconfigjson` (or legacy `.dockercfg`) of pull secrets, in
 * secret order, only entries whose registry matches the image's (kubelet's keyring matching,
 * reduced to exact host match).
 */
export function credentialsFor(
  ref: string,
  secrets: ReadonlyArray<{ type?: string; data?: Record<string, string> }>,
): RegistryCredential[] {
  const host = registryHost(ref);
  const out: RegistryCredential[] = [];
  for (const s of secrets) {
    const raw = s.data?.['.dockerconfigjson'] ?? s.data?.['.dockercfg'];
    if (!raw) continue;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as Record<string, unknown>;
    } catch {
      continue;
    }
    const auths = (s.data?.['.dockerconfigjson'] ? parsed.auths : parsed) as Record<string, Record<string, string>> | undefined;
    for (const [key, entry] of Object.entries(auths ?? {})) {
      if (normalizeHost(key) !== host) continue;
      let { username, password } = entry;
      if ((!username || !password) && entry.auth) {
        const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
        const i = decoded.indexOf(':');
        if (i > 0) {
          username = decoded.slice(0, i);
          password = decoded.slice(i + 1);
        }
      }
      out.push({
        ...(username ? { username } : {}),
        ...(password ? { password } : {}),
        ...(entry.identitytoken ? { identityToken: entry.identitytoken } : {}),
        ...(entry.registrytoken ? { registryToken: entry.registrytoken } : {}),
      });
    }
  }
  return out;
}

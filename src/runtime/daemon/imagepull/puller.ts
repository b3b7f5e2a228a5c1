import type { Logger } from 'pino';
import type { ImageTagStatus } from '../../../api/kinds/nodeimage.js';
import type { CriClient } from '../../cri/client.js';
import type { AuthConfig } from '../../cri/types.js';
import { clampTimerMs } from '../../core/timers.js';
import { rfc3339 as now } from '../../core/meta.js';
import { credentialsFor, inFlightKey, pullBackoffMs, type PullTask, type TagResult } from './decision.js';

/** Reads a pull secret (from the daemon-config namespace); null when it does not exist. */
export type SecretReader = (
  namespace: string | undefined,
  name: string,
) => Promise<{ type?: string; data?: Record<string, string> } | null>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs image pulls through CRI with at most `maxWorkers` at once. Each pull: IfNotPresent short-cut
 * via ImageStatus, credentials from the pull secrets, up to backoffLimit+1 attempts each bounded by
 * the per-attempt timeout (and the tag's deadline), exponential backoff between attempts. Every
 * phase change is reported through `onResult`.
 */
export class Puller {
  readonly inFlight = new Set<string>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private stopped = false;

  constructor(
    private readonly cri: CriClient,
    private readonly readSecret: SecretReader,
    private readonly maxWorkers: number,
    private readonly logger: Logger,
    private readonly onResult: (r: TagResult) => void,
  ) {}

  submit(task: PullTask): void {
    const key = inFlightKey(task);
    if (this.inFlight.has(key) || this.stopped) return;
    this.inFlight.add(key);
    this.report(task, { phase: 'Waiting' });
    const worker = { held: false };
    void (async () => {
      try {
        await this.acquire(worker);
        await this.pull(task, worker);
      } catch (err) {
        this.report(task, { phase: 'Failed', completionTime: now(), message: `pull error: ${(err as Error).message}` });
      } finally {
        this.inFlight.delete(key);
        this.releaseIfHeld(worker);
      }
    })();
  }

  stop(): void {
    this.stopped = true;
  }

  private slot(): Promise<void> {
    if (this.running < this.maxWorkers) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(() => resolve()));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private async acquire(worker: { held: boolean }): Promise<void> {
    await this.slot();
    worker.held = true;
  }

  private releaseIfHeld(worker: { held: boolean }): void {
    if (!worker.held) return;
    worker.held = false;
    this.release();
  }

  /** Number of pulls holding a worker now (tests). */
  get busyWorkers(): number {
    return this.running;
  }

  private report(task: PullTask, s: Omit<ImageTagStatus, 'tag' | 'version'>): void {
    this.onResult({ image: task.image, tag: task.tag, status: { tag: task.tag, version: task.version, ...s } });
  }

  private async auths(task: PullTask): Promise<Array<AuthConfig | undefined>> {
    const secrets = [];
    for (const ref of task.pullSecrets) {
      if (!ref.name) continue;
      const s = await this.readSecret(ref.namespace, ref.name);
      if (s) secrets.push(s);
      else this.logger.warn({ secret: `${ref.namespace}/${ref.name}`, image: task.ref }, 'pull secret not found; pulling without it');
    }
    const creds = credentialsFor(task.ref, secrets);
    return creds.length ? creds : [undefined];
  }

  private async pull(task: PullTask, worker: { held: boolean }): Promise<void> {
    if (this.stopped) return;
    const startTime = now();
    this.report(task, { phase: 'Pulling', progress: 0, startTime });
    if (task.imagePullPolicy === 'IfNotPresent') {
      const present = await this.cri.imageStatus(task.ref).catch(() => null);
      if (present) {
        this.report(task, {
          phase: 'Succeeded',
          progress: 100,
          startTime,
          completionTime: now(),
          imageID: present.repoDigests[0] ?? present.id,
          message: 'image already present',
        });
        return;
      }
    }
    const auths = await this.auths(task);
    const attempts = task.backoffLimit + 1;
    let lastError = '';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      for (const auth of auths) {
        const leftMs = task.deadlineMs !== undefined ? task.deadlineMs - Date.now() : Infinity;
        if (leftMs <= 0) {
          this.report(task, {
            phase: 'Failed',
            startTime,
            completionTime: now(),
            message: `pull of ${task.ref} exceeded activeDeadlineSeconds${lastError ? `; last error: ${lastError}` : ''}`,
          });
          return;
        }
        const began = Date.now();
        try {
          const imageRef = await this.cri.pullImage(task.ref, {
            ...(auth ? { auth } : {}),
            sandboxConfig: { labels: task.sandboxConfig?.labels ?? {}, annotations: task.sandboxConfig?.annotations ?? {} },
            timeoutMs: clampTimerMs(Math.min(task.timeoutSeconds * 1000, leftMs)),
          });
          this.logger.info({ image: task.ref, attempt, ms: Date.now() - began }, 'image pulled');
          this.report(task, { phase: 'Succeeded', progress: 100, startTime, completionTime: now(), imageID: imageRef });
          return;
        } catch (err) {
          lastError = (err as Error).message;
          this.logger.warn({ image: task.ref, attempt, of: attempts, err: lastError }, 'image pull attempt failed');
        }
      }
      if (attempt < attempts && !this.stopped) {
        const wait = pullBackoffMs(attempt);
        const leftMs = task.deadlineMs !== undefined ? task.deadlineMs - Date.now() : Infinity;
        // Backing off holds no worker: other images pull meanwhile, and a job with a huge backoffLimit
        // cannot starve the node's pulls.
        this.releaseIfHeld(worker);
        await sleep(clampTimerMs(Math.min(wait, leftMs)));
        if (this.stopped) return;
        await this.acquire(worker);
      }
    }
    this.report(task, {
      phase: 'Failed',
      startTime,
      completionTime: now(),
      message: `failed to pull ${task.ref} after ${attempts} attempt(s) (backoffLimit ${task.backoffLimit}): ${lastError}`,
    });
  }
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exitLevelDeadlineMs, parseExitPriorityHookPath } from '../../../api/pod-contracts.js';
import { PODS, isNotFound, type Informer, type Pod, type ProcessResult, type Reconciler } from '../../core/index.js';
import { objectUid, UID_INDEX } from '../../core/indexes.js';
import { KubeletLabels } from '../../cri/types.js';
import type { DaemonContext } from '../context.js';
import { SAFETY_POLL_MS, type ContainerChange, type CriContainerEvents } from '../cri-events.js';
import { runPreStop } from '../prestop.js';
import {
  decideHook,
  findHookPod,
  ownPreStopBudgetMs,
  podExitPlan,
  runtimeSignalsOnce,
  stopTimeoutAfterHookSeconds,
  EXIT_POLL_MS,
  type PodExitPlan,
} from './decision.js';
import { parseHostPort } from './options.js';
import type { Logger } from 'pino';

/** How long a hook waits for this node's cache to show the deletion the kubelet acts on, before asking the API server. */
export const DELETION_SEEN_MS = 1000;

interface Wait {
  readonly container: string;
  readonly plan: PodExitPlan;
  readonly arrivedMs: number;
  /** The container's running instance when its lower levels were seen exited (from the pod's last CRI look). */
  containerId?: string;
  done(reason: string): void;
}

/**
 * The daemon's exit-priority endpoint: an HTTP server on the node's loopback that holds the kubelet's preStop
 * requests, and a reconciler (key: pod UID) that looks at the pod's containers over CRI and releases the
 * requests whose lower levels have exited. While a request is held it listens to the node's container changes
 * (containerd's exit events, else the CRI event stream, else a tight CRI poll: `cri-events.ts`). An exit releases the
 * hooks it unblocks in its own event handler, from the pod's last CRI look less the exits learnt since: no CRI call
 * and no queue turn between the exit and the answer. The reconciler's own look is the safety net for a missed change:
 * every EXIT_POLL_MS, or SAFETY_POLL_MS while containerd pushes exits. Bounded: at most `maxWaits` requests held; anything that is not a
 * hook of a pod on this node is answered at once.
 */
export class ExitPriorityEndpoint implements Reconciler {
  private readonly waits = new Map<string, Set<Wait>>();
  /**
   * Per pod with held hooks (uid): its running containers (id → name) at the last CRI look, less the exits learnt
   * since. An exit then releases the hooks it unblocks at once, without a CRI call or a turn of the work queue.
   */
  private readonly looks = new Map<string, Map<string, string>>();
  private held = 0;
  private server?: Server;
  /** Whether the runtime signals a container once however often it is stopped (asked once, at the first use). */
  private signalsOnce?: boolean;
  private askingRuntime?: Promise<void>;
  private unsubscribe?: () => void;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly pods: Informer<Pod>,
    private readonly enqueue: (key: string) => void,
    private readonly maxWaits: number,
    private readonly events: CriContainerEvents,
  ) {
    pods.addIndex(UID_INDEX, objectUid);
  }

  /** A container of a pod with held hooks stopped: look at that pod now. */
  private readonly onChange = (c: ContainerChange): void => {
    if (c.type !== 'stopped' && c.type !== 'deleted') return;
    if (c.podUid) {
      if (!this.waits.has(c.podUid)) return;
      const look = this.looks.get(c.podUid);
      if (look?.delete(c.containerId)) this.decide(c.podUid, look);
      // The CRI look confirms (and catches what the last look did not know).
      if (this.waits.has(c.podUid)) this.enqueue(c.podUid);
    } else for (const uid of this.waits.keys()) this.enqueue(uid);
  };

  /** Starts listening; returns the bound port. */
  async listen(addr: string): Promise<number> {
    const { host, port } = parseHostPort(addr);
    // Slow or idle clients cost a socket only; headers must arrive quickly, the answer may take the grace period.
    const server = createServer({ requestTimeout: 0, headersTimeout: 5_000, maxHeaderSize: 16 * 1024 }, (req, res) => {
      void this.handle(req, res).catch((err: unknown) => {
        this.ctx.logger.warn({ err: (err as Error).message }, 'exit-priority hook failed');
        if (!res.headersSent) answer(res, 500, `exit-priority hook failed: ${(err as Error).message}`);
      });
    });
    server.maxConnections = this.maxWaits + 64;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    const bound = (server.address() as AddressInfo).port;
    this.ctx.logger.info({ addr: `${host}:${bound}` }, 'exit-priority endpoint listening');
    return bound;
  }

  async close(): Promise<void> {
    for (const set of this.waits.values()) for (const w of set) w.done('daemon stopping');
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivedMs = Date.now();
    if (req.method !== 'GET') return answer(res, 405, 'only GET');
    const path = (req.url ?? '').split('?')[0]!;
    const target = parseExitPriorityHookPath(path);
    if (!target) return answer(res, 404, 'not an exit-priority hook path');
    const found = findHookPod(this.pods.list(), target);
    if (!found) return answer(res, 404, 'no pod on this node declares this hook');
    if (this.held >= this.maxWaits) return answer(res, 503, 'too many exit-priority hooks held on this node');
    this.held++;
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    try {
      const pod = found.pod.metadata.deletionTimestamp ? found.pod : await this.deletionOf(found.pod, aborted.signal);
      const plan = podExitPlan(pod);
      const log = this.ctx.logger.child({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, container: target.container });
      // Outside a deletion (a liveness restart, a CRR) ordering means nothing: run the own hook at once.
      const { reason, containerId: released } = plan.deleting
        ? await this.wait(pod.metadata.uid ?? '', target.container, plan, arrivedMs, aborted.signal)
        : { reason: 'pod is not being deleted', containerId: undefined };
      if (aborted.signal.aborted) return;
      const waitedMs = Date.now() - arrivedMs;
      log.info({ waitedMs, reason }, 'exit-priority hook released');
      if (found.hook.own) {
        const budgetMs = plan.deleting ? ownPreStopBudgetMs(plan, waitedMs) : plan.graceSeconds * 1000;
        if (budgetMs < 1000) return answer(res, 200, `${reason}; no time left for the container's own preStop`);
        const containerId = await this.runningContainerId(pod.metadata.uid ?? '', target.container);
        if (!containerId) return answer(res, 200, `${reason}; container not running, own preStop skipped`);
        try {
          await runPreStop(
            this.ctx.cri,
            {
              containerId,
              podContainer: { ...found.container, lifecycle: { preStop: found.hook.own } },
              podIP: pod.status?.podIP as string | undefined,
            },
            Math.floor(budgetMs / 1000),
          );
        } catch (err) {
          // The kubelet reports a failing hook (event FailedPreStopHook) and stops the container anyway, as for its own hooks.
          return answer(res, 500, `${reason}; the container's own preStop failed: ${(err as Error).message}`);
        }
      }
      if (released) this.stopReleased(released, plan, arrivedMs, log);
      answer(res, 200, reason);
    } finally {
      this.held--;
    }
  }

  /**
   * Stops a released container of a deleted pod at once, as the kubelet does after the hook's answer (its StopContainer
   * with the grace period left): the kubelet's own call then comes second and, on a runtime that signals once, only
   * waits. This takes the kubelet's turn (reading the answer, its CRI call) out of the time between the lower level's
   * exit and this container's SIGTERM. Never awaited: the call lasts until the container exits; a failure leaves the
   * stop to the kubelet, as without it.
   */
  private stopReleased(containerId: string, plan: PodExitPlan, arrivedMs: number, log: Logger): void {
    const stop = () => {
      if (!this.signalsOnce) return;
      const stopSentAt = Date.now();
      this.ctx.cri
        .stopContainer(containerId, stopTimeoutAfterHookSeconds(plan.graceSeconds, stopSentAt - arrivedMs))
        // When the stop was sent (epoch ms, read by bench/real-node-exit-priority.bench.ts) and how long it took.
        .then(() => log.info({ stopSentAt, stopMs: Date.now() - stopSentAt }, 'released container stopped by the daemon'))
        .catch((err: unknown) =>
          log.debug({ err: (err as Error).message }, "stop of a released container failed; the kubelet's stop follows the answer"),
        );
    };
    // Known after the first release: the call then goes out before the answer.
    if (this.signalsOnce !== undefined) return stop();
    this.askingRuntime ??= this.ctx.cri.version().then(
      (v) => void (this.signalsOnce = runtimeSignalsOnce(v.runtimeName, v.runtimeVersion)),
      () => void (this.askingRuntime = undefined),
    );
    void this.askingRuntime.then(stop);
  }

  /** The pod once this node's cache shows its deletion, else as the API server has it (a restart, not a deletion). */
  private async deletionOf(pod: Pod, signal: AbortSignal): Promise<Pod> {
    const until = Date.now() + DELETION_SEEN_MS;
    while (Date.now() < until && !signal.aborted) {
      const cached = this.pods.byIndex(UID_INDEX, pod.metadata.uid ?? '')[0];
      if (cached?.metadata.deletionTimestamp) return cached;
      await sleep(EXIT_POLL_MS);
    }
    try {
      const live = await this.ctx.client.get<Pod>(PODS, pod.metadata.name!, pod.metadata.namespace);
      return live.metadata.uid === pod.metadata.uid ? live : pod;
    } catch (err) {
      // Gone already: the kubelet is stopping it for a deletion.
      if (isNotFound(err)) return { ...pod, metadata: { ...pod.metadata, deletionTimestamp: new Date().toISOString() } };
      throw err;
    }
  }

  private wait(
    uid: string,
    container: string,
    plan: PodExitPlan,
    arrivedMs: number,
    signal: AbortSignal,
  ): Promise<{ reason: string; containerId?: string }> {
    return new Promise((resolve) => {
      const set = this.waits.get(uid) ?? new Set<Wait>();
      this.waits.set(uid, set);
      // Set below, once the first look has not released the hook already.
      const deadline: { timer?: NodeJS.Timeout } = {};
      const w: Wait = {
        container,
        plan,
        arrivedMs,
        done: (reason) => {
          clearTimeout(deadline.timer);
          set.delete(w);
          if (set.size === 0 && this.waits.get(uid) === set) {
            this.waits.delete(uid);
            this.looks.delete(uid);
          }
          if (this.waits.size === 0 && this.unsubscribe) {
            this.unsubscribe();
            this.unsubscribe = undefined;
          }
          resolve({ reason, containerId: w.containerId });
        },
      };
      set.add(w);
      signal.addEventListener('abort', () => w.done('kubelet gave up the hook'), { once: true });
      // The deadline holds even when CRI does not answer: the level never waits past its share.
      const first = decideHook({ container, plan, waitedMs: 0, running: new Set(plan.levels.flatMap((l) => l.containers)) });
      if (first.release) return w.done(first.reason);
      const deadlineMs = plan.levels.length > 0 ? deadlineOf(plan, container) : 0;
      deadline.timer = setTimeout(
        () => w.done("level's share of the grace period spent (CRI did not tell otherwise)"),
        Math.max(0, deadlineMs + 20),
      );
      this.unsubscribe ??= this.events.subscribe(this.onChange);
      this.enqueue(uid);
    });
  }

  /** Releases the waiting hooks of one pod whose lower levels have exited. */
  async reconcile(uid: string): Promise<ProcessResult> {
    if (!this.waits.get(uid)?.size) return;
    const look = await this.runningContainers(uid);
    // Hooks released meanwhile (an exit, a deadline) leave nothing to look for.
    if (!this.waits.get(uid)?.size) return;
    this.looks.set(uid, look);
    const next = this.decide(uid, look);
    return Number.isFinite(next) ? { requeueAfterMs: next } : undefined;
  }

  /** Releases the pod's hooks that `look` (running id → name) unblocks; returns when to look again for the others (Infinity: none left). */
  private decide(uid: string, look: ReadonlyMap<string, string>): number {
    const set = this.waits.get(uid);
    if (!set) return Infinity;
    const running = new Set(look.values());
    // With containerd's exits pushed the look is a safety net; a CRI poll alone must look often.
    const pollMs = this.events.exitSource === 'containerd' ? SAFETY_POLL_MS : undefined;
    let next = Infinity;
    const now = Date.now();
    for (const w of [...set]) {
      const d = decideHook({ container: w.container, plan: w.plan, waitedMs: now - w.arrivedMs, running, pollMs });
      if (d.release) {
        w.containerId = [...look].find(([, name]) => name === w.container)?.[0];
        w.done(d.reason);
      } else next = Math.min(next, d.checkAgainMs);
    }
    return next;
  }

  /** The pod's running containers on this node (id → name). */
  private async runningContainers(uid: string): Promise<Map<string, string>> {
    const list = await this.ctx.cri.listContainers({
      labelSelector: { [KubeletLabels.podUid]: uid },
      state: { state: 'CONTAINER_RUNNING' },
    });
    // containerd's published exits count at once: CRI shows them running until the task is deleted.
    const out = new Map<string, string>();
    for (const c of list) {
      const name = c.labels[KubeletLabels.containerName] ?? c.metadata?.name;
      if (name && !this.events.exitOf(c.id)) out.set(c.id, name);
    }
    return out;
  }

  private async runningContainerId(uid: string, container: string): Promise<string | undefined> {
    const list = await this.ctx.cri.listContainers({
      labelSelector: { [KubeletLabels.podUid]: uid, [KubeletLabels.containerName]: container },
      state: { state: 'CONTAINER_RUNNING' },
    });
    return list[0]?.id;
  }
}

function deadlineOf(plan: PodExitPlan, container: string): number {
  const index = plan.levels.findIndex((l) => l.containers.includes(container));
  return exitLevelDeadline(index, plan);
}

function exitLevelDeadline(index: number, plan: PodExitPlan): number {
  // Same arithmetic as decideHook's deadline (one source: the API model).
  return exitLevelDeadlineMs(index, plan.levels.length, plan.graceSeconds);
}

function answer(res: ServerResponse, code: number, message: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  res.end(message + '\n');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs the probes of this node: one worker per probe (a timer, no thread), a node-wide bound on probes running at
 * once, the container looked up through CRI (one ListContainers of the node shared by every probe due in the same
 * second), exec through CRI ExecSync, httpGet and tcpSocket from the node to the pod IP, each bounded by its
 * timeoutSeconds.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { Logger } from 'pino';
import type { V1Probe } from '../../../api/core/k8s-core-types.js';
import type { ProbeState } from '../../../api/kinds/podprobemarker.js';
import type { CriClient } from '../../cri/client.js';
import { KubeletLabels, type Container } from '../../cri/types.js';
import { nonRunningMessage } from '../../control/pod-probe.js';
import {
  applyThreshold,
  handlerChanged,
  httpOutcome,
  httpProbeRequest,
  probeTiming,
  truncateMessage,
  type ProbeTask,
  type RunState,
} from './decision.js';

/** How long one look at the node's containers serves the probes that need it. */
const CONTAINER_LIST_TTL_MS = 1_000;
/** Bytes of an HTTP answer kept as the probe's message. */
const HTTP_BODY_LIMIT = 10 * 1024;

type Outcome = { state: 'Succeeded' | 'Failed'; message: string };

/** A counting semaphore: at most `max` holders; the others wait in order. */
export class Slots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly max: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.used >= this.max) await new Promise<void>((r) => this.waiting.push(r));
    else this.used++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.used--;
    }
  }

  get inUse(): number {
    return this.used;
  }
}

/** The node's containers, listed at most once per TTL however many probes ask (one call in flight at a time). */
export class NodeContainers {
  private at = 0;
  private list: Container[] = [];
  private inFlight?: Promise<Container[]>;
  /** startedAt (ns) per container id: it never changes for an id, so one ContainerStatus each. */
  private readonly started = new Map<string, number>();

  constructor(private readonly cri: CriClient) {}

  private async containers(): Promise<Container[]> {
    if (Date.now() - this.at < CONTAINER_LIST_TTL_MS) return this.list;
    this.inFlight ??= this.cri
      .listContainers({})
      .then((l) => {
        this.list = l;
        this.at = Date.now();
        const ids = new Set(l.map((c) => c.id));
        for (const id of this.started.keys()) if (!ids.has(id)) this.started.delete(id);
        return l;
      })
      .finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  /** The newest container of that name in the pod, as upstream picks it. */
  async latest(podUid: string, name: string): Promise<Container | undefined> {
    let found: Container | undefined;
    for (const c of await this.containers()) {
      if (c.labels?.[KubeletLabels.podUid] !== podUid || (c.labels?.[KubeletLabels.containerName] ?? c.metadata?.name) !== name) continue;
      if (!found || BigInt(c.createdAt || '0') > BigInt(found.createdAt || '0')) found = c;
    }
    return found;
  }

  /** When the container started, in ms since the epoch (0 when it has not). */
  async startedAtMs(id: string): Promise<number> {
    let ns = this.started.get(id);
    if (ns === undefined) {
      const st = await this.cri.containerStatus(id);
      ns = Number(BigInt(st.startedAt || '0') / 1_000_000n);
      if (ns > 0) this.started.set(id, ns);
    }
    return ns;
  }
}

export interface ProbeReport {
  readonly task: ProbeTask;
  readonly state: ProbeState;
  readonly message: string;
  readonly probedAt: number;
}

/** Runs one probe once: exec in the container, or http/tcp to the pod from the node. */
export async function runProbe(cri: CriClient, probe: V1Probe, podIP: string, containerId: string, timeoutMs: number): Promise<Outcome> {
  if (probe.exec) {
    try {
      const r = await cri.execSync(containerId, probe.exec.command ?? [], Math.ceil(timeoutMs / 1000));
      const out = Buffer.concat([r.stdout ?? Buffer.alloc(0), r.stderr ?? Buffer.alloc(0)]).toString('utf8');
      return { state: r.exitCode === 0 ? 'Succeeded' : 'Failed', message: truncateMessage(out) };
    } catch (err) {
      return { state: 'Failed', message: truncateMessage(`exec: ${(err as Error).message}`) };
    }
  }
  if (probe.httpGet) {
    const req = httpProbeRequest(probe.httpGet, podIP);
    if ('error' in req) return { state: 'Failed', message: req.error };
    return httpProbe(req.url, req.headers, timeoutMs);
  }
  if (probe.tcpSocket) {
    const port = Number(probe.tcpSocket.port);
    const host = probe.tcpSocket.host || podIP;
    if (!Number.isInteger(port) || port <= 0 || port >= 65536)
      return { state: 'Failed', message: `invalid port number: ${String(probe.tcpSocket.port)}` };
    return tcpProbe(host, port, timeoutMs);
  }
  return { state: 'Failed', message: 'the probe has no exec, httpGet or tcpSocket handler this runtime runs' };
}

function httpProbe(url: URL, headers: Record<string, string>, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let done = false;
    const finish = (o: Outcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(o);
    };
    // The kubelet does not verify a probed pod's certificate either.
    const req = send(url, { method: 'GET', headers, agent: false, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < HTTP_BODY_LIMIT) chunks.push(c);
        size += c.length;
      });
      res.on('end', () =>
        finish({ state: httpOutcome(res.statusCode ?? 0), message: truncateMessage(Buffer.concat(chunks).toString('utf8')) }),
      );
      res.on('error', (err) => finish({ state: 'Failed', message: `http: ${err.message}` }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ state: 'Failed', message: `http: no answer from ${url.host} within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (err) => finish({ state: 'Failed', message: truncateMessage(`http: ${err.message}`) }));
    req.end();
  });
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ state: 'Failed', message: `tcp: ${host}:${port} did not accept within ${timeoutMs} ms` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ state: 'Succeeded', message: '' });
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ state: 'Failed', message: `tcp: ${err.message}` });
    });
  });
}

/** One probe's loop: every periodSeconds, through the thresholds, reporting each result past them. */
class ProbeWorker {
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private containerId = '';
  private runState: RunState = { run: 0 };

  constructor(
    public task: ProbeTask,
    private readonly prober: Prober,
    firstDelayMs: number,
  ) {
    this.schedule(firstDelayMs);
  }

  update(task: ProbeTask): void {
    if (handlerChanged(this.task.probe, task.probe) && this.containerId) {
      this.runState = { run: 0 };
      this.prober.report(task, 'Unknown', '');
    }
    this.task = task;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    const task = this.task;
    const timing = probeTiming(task.probe);
    try {
      await this.once(task, timing);
    } catch (err) {
      this.prober.logger.debug(
        { pod: `${task.podNamespace}/${task.podName}`, probe: task.probeName, err: (err as Error).message },
        'probe not run',
      );
    }
    this.schedule(timing.periodMs);
  }

  private async once(task: ProbeTask, timing: ReturnType<typeof probeTiming>): Promise<void> {
    const c = await this.prober.containers.latest(task.podUid, task.containerName);
    if (!c) return;
    if (c.id !== this.containerId) {
      this.containerId = c.id;
      this.runState = { run: 0 };
      this.prober.report(task, 'Unknown', '');
    }
    if (c.state !== 'CONTAINER_RUNNING') {
      this.prober.report(task, 'Failed', nonRunningMessage(task.containerName));
      return;
    }
    const started = await this.prober.containers.startedAtMs(c.id);
    if (!started || Date.now() - started < timing.initialDelayMs) return;
    const outcome = await this.prober.slots.run(() => runProbe(this.prober.cri, task.probe, task.podIP, c.id, timing.timeoutMs));
    this.prober.probesRun++;
    if (this.stopped) return;
    const { run, report } = applyThreshold(this.runState, outcome.state, timing);
    this.runState = run;
    if (report) this.prober.report(task, report, outcome.message);
  }
}

/** The workers of this node's probes, kept equal to the NodePodProbe's spec by `sync`. */
export class Prober {
  readonly slots: Slots;
  readonly containers: NodeContainers;
  private readonly workers = new Map<string, ProbeWorker>();
  private readonly startedAt = Date.now();
  /** Probes run since start (for the benchmark and the log). */
  probesRun = 0;

  constructor(
    readonly cri: CriClient,
    maxConcurrent: number,
    readonly logger: Logger,
    private readonly onReport: (r: ProbeReport) => void,
  ) {
    this.slots = new Slots(maxConcurrent);
    this.containers = new NodeContainers(cri);
  }

  report(task: ProbeTask, state: ProbeState, message: string): void {
    this.onReport({ task, state, message, probedAt: Date.now() });
  }

  /** Starts, updates and stops workers so that exactly `tasks` run. */
  sync(tasks: readonly ProbeTask[]): void {
    const want = new Map(tasks.map((t) => [t.key, t]));
    for (const [key, w] of this.workers) {
      if (!want.has(key)) {
        w.stop();
        this.workers.delete(key);
      }
    }
    for (const [key, t] of want) {
      const w = this.workers.get(key);
      if (w) w.update(t);
      else {
        // Spread the first probes of a daemon that just started over one period, as upstream does, so a restart
        // does not probe every container at the same instant.
        const period = probeTiming(t.probe).periodMs;
        const first = Date.now() - this.startedAt < period ? Math.floor(Math.random() * period) : 0;
        this.workers.set(key, new ProbeWorker(t, this, first));
      }
    }
  }

  get workerCount(): number {
    return this.workers.size;
  }

  stop(): void {
    for (const w of this.workers.values()) w.stop();
    this.workers.clear();
  }
}

import type { Logger } from 'pino';
import type { CriClient, CriError } from '../cri/client.js';
import { KubeletLabels, type Container } from '../cri/types.js';

/**
 * Container exits on this node, as soon as the runtime knows them. Two sources, picked at start:
 *
 * - `events`: the CRI container-event stream (GetContainerEvents, containerd >= 1.7, CRI-O >= 1.27), the
 *   stream the kubelet's evented PLEG reads. No cost while nothing happens.
 * - `poll`: runtimes without the stream (containerd 1.6 answers UNIMPLEMENTED) are polled with one CRI
 *   ListContainers of the running containers every `pollIntervalMs`, and only while `wanted()` says some pod
 *   on the node waits for an exit; a container that left the running set has exited.
 *
 * A stream that breaks for another reason (runtime restart) falls back to polling and is tried again after
 * `retryStreamMs`. Consumers treat an exit as a hint to look at the pod over CRI, never as the state itself,
 * so a duplicate or a missed event costs a look, not a wrong action (pod watch events are the safety net).
 */
export interface ContainerExit {
  readonly containerId: string;
  readonly podUid: string;
  readonly podName: string;
  readonly podNamespace: string;
  readonly container: string;
}

export interface ContainerExitWatcherOptions {
  readonly pollIntervalMs: number;
  /** Whether any pod on the node currently waits for a container exit (gates the poll). */
  readonly wanted: () => boolean;
  readonly logger: Logger;
  readonly retryStreamMs?: number;
}

export type ExitSource = 'events' | 'poll' | 'stopped';

export class ContainerExitWatcher {
  private readonly listeners: Array<(e: ContainerExit) => void> = [];
  private source: ExitSource = 'stopped';
  private cancelStream?: () => void;
  private pollTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  /** Running containers at the last poll, by id; `baselined` is false after an idle tick (the next one only records). */
  private running = new Map<string, Container>();
  private baselined = false;
  private polling = false;
  private streamCheck?: NodeJS.Timeout;

  constructor(
    private readonly cri: CriClient,
    private readonly opts: ContainerExitWatcherOptions,
  ) {}

  get mode(): ExitSource {
    return this.source;
  }

  onExit(cb: (e: ContainerExit) => void): void {
    this.listeners.push(cb);
  }

  start(): void {
    this.openStream();
  }

  stop(): void {
    this.source = 'stopped';
    this.cancelStream?.();
    this.cancelStream = undefined;
    clearTimeout(this.pollTimer);
    clearTimeout(this.retryTimer);
    clearTimeout(this.streamCheck);
  }

  private emit(e: ContainerExit): void {
    for (const cb of this.listeners) cb(e);
  }

  private openStream(): void {
    this.cancelStream = this.cri.containerEvents(
      (e) => {
        if (this.source !== 'events') this.useEvents();
        if (e.containerEventType === 'CONTAINER_STOPPED_EVENT') void this.resolveStopped(e.containerId);
      },
      (err) => this.streamEnded(err),
    );
    // The stream says nothing until a container changes: until it fails it is assumed to work, and the poll
    // covers the time in which an UNIMPLEMENTED answer is still on its way.
    if (this.source === 'stopped') this.usePoll();
    this.streamCheck = setTimeout(() => {
      if (this.cancelStream && this.source === 'poll') this.useEvents();
    }, 1_000);
    this.streamCheck.unref();
  }

  private useEvents(): void {
    if (this.source === 'events') return;
    this.source = 'events';
    clearTimeout(this.pollTimer);
    this.running.clear();
    this.baselined = false;
    this.opts.logger.info('container exits from the CRI container-event stream');
  }

  private usePoll(): void {
    this.source = 'poll';
    this.schedulePoll();
  }

  private streamEnded(err: CriError | undefined): void {
    clearTimeout(this.streamCheck);
    this.cancelStream = undefined;
    if (this.source === 'stopped') return;
    const unimplemented = err?.unimplemented ?? false;
    this.opts.logger.info(
      { err: err?.message, pollIntervalMs: this.opts.pollIntervalMs },
      unimplemented
        ? 'the CRI runtime offers no container-event stream; polling running containers while a pod waits for an exit'
        : 'CRI container-event stream ended; polling until it can be opened again',
    );
    if (this.source !== 'poll') this.usePoll();
    if (unimplemented) return;
    this.retryTimer = setTimeout(() => {
      if (this.source !== 'stopped') this.openStream();
    }, this.opts.retryStreamMs ?? 5_000);
    this.retryTimer.unref();
  }

  private async resolveStopped(containerId: string): Promise<void> {
    try {
      const st = await this.cri.containerStatus(containerId);
      const exit = exitOf(containerId, st.labels);
      if (exit) this.emit(exit);
    } catch (err) {
      this.opts.logger.debug({ containerId, err: (err as Error).message }, 'container status after a stop event failed');
    }
  }

  private schedulePoll(): void {
    clearTimeout(this.pollTimer);
    if (this.source !== 'poll') return;
    this.pollTimer = setTimeout(() => void this.poll(), this.opts.pollIntervalMs);
    this.pollTimer.unref();
  }

  private async poll(): Promise<void> {
    if (this.source !== 'poll' || this.polling) return;
    this.polling = true;
    try {
      if (!this.opts.wanted()) {
        this.running.clear();
        this.baselined = false;
        return;
      }
      const list = await this.cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } });
      const now = new Map(list.map((c) => [c.id, c]));
      if (this.baselined) {
        for (const [id, c] of this.running) {
          if (now.has(id)) continue;
          const exit = exitOf(id, c.labels);
          if (exit) this.emit(exit);
        }
      }
      this.running = now;
      this.baselined = true;
    } catch (err) {
      this.opts.logger.debug({ err: (err as Error).message }, 'CRI poll for container exits failed');
    } finally {
      this.polling = false;
      this.schedulePoll();
    }
  }
}

function exitOf(containerId: string, labels: Readonly<Record<string, string>> | undefined): ContainerExit | undefined {
  const podUid = labels?.[KubeletLabels.podUid];
  const podName = labels?.[KubeletLabels.podName];
  const podNamespace = labels?.[KubeletLabels.podNamespace];
  const container = labels?.[KubeletLabels.containerName];
  if (!podUid || !podName || !podNamespace || !container) return undefined;
  return { containerId, podUid, podName, podNamespace, container };
}

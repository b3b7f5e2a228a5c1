/**
 * Container state changes on this node as soon as the runtime knows them, for daemon controllers that act on a
 * container's exit (exit priority, node-local sidecar termination). Sources, one interface:
 *
 * - exits: containerd's own event stream (`/tasks/exit`, `cri/containerd-events.ts`) on the CRI socket when the
 *   runtime is containerd (1.6 included). It is published when the shim reaps the process, before containerd's CRI
 *   plugin has deleted the task and reports the container exited; the exit code and time come with it and are kept
 *   (`exitOf`) so listeners can act before CRI catches up;
 * - every change: the runtime's CRI `GetContainerEvents` stream (containerd 1.7+, CRI-O 1.26+), pushed;
 * - else a `ListContainers` of the whole node, diffed against the previous answer: every `pollMs` when no exit
 *   stream is open, every `SAFETY_POLL_MS` beside containerd's exit stream (which says nothing of creations).
 *   Runtimes without the CRI stream (containerd 1.6) end it at once with UNIMPLEMENTED/UNKNOWN.
 *
 * Everything runs only while someone listens, so an idle node costs nothing. No source promises every change:
 * some runtimes hand each CRI stream event to one reader only (the kubelet's evented PLEG may take it), and a poll
 * misses a create+delete between two looks. Listeners therefore treat a change as "look now" (a change may come
 * twice: containerd's exit, then CRI's) and keep a slower check of their own.
 *
 * Table-tested (the diff, the task exit decoding) in test/unit/runtime/daemon/cri-events.test.ts; the sources against a
 * real containerd in test/e2e/daemon-cri-events.test.ts.
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { CriClient } from '../cri/client.js';
import { ContainerdEvents, taskExitOf, type ContainerdEnvelope, type TaskExit } from '../cri/containerd-events.js';
import { KubeletLabels, type Container, type ContainerEventResponse, type ContainerState, type ContainerStatus } from '../cri/types.js';

/** Poll interval when the runtime has no event stream: the detection latency is about half of it plus one call. */
export const DEFAULT_CRI_EVENT_POLL_MS = 20;
/** Poll interval beside containerd's exit stream: a safety net for what that stream does not carry. */
export const SAFETY_POLL_MS = 500;
/** Task exits remembered for `exitOf` (the newest; a node runs far fewer containers at once). */
const MAX_REMEMBERED_EXITS = 4096;
/** Wait before reopening a stream that ended for another reason than "not implemented" (polling meanwhile). */
const STREAM_RETRY_MS = 2_000;

export type ContainerChangeType = 'created' | 'started' | 'stopped' | 'deleted';

export interface ContainerChange {
  readonly containerId: string;
  readonly type: ContainerChangeType;
  /** From the kubelet's labels on the container, when the runtime said them. */
  readonly podUid?: string;
  readonly containerName?: string;
  /** Set on a stop seen in containerd's exit stream (before CRI reports it). */
  readonly exit?: TaskExit;
}

export type ContainerChangeListener = (change: ContainerChange) => void;

/** What the poll remembers of one container. */
export interface ContainerSnapshot {
  readonly state: ContainerState;
  readonly podUid?: string;
  readonly containerName?: string;
}

export function snapshotOf(containers: readonly Container[]): Map<string, ContainerSnapshot> {
  const out = new Map<string, ContainerSnapshot>();
  for (const c of containers) {
    out.set(c.id, {
      state: c.state,
      podUid: c.labels?.[KubeletLabels.podUid],
      containerName: c.labels?.[KubeletLabels.containerName] ?? c.metadata?.name,
    });
  }
  return out;
}

/** The changes between two looks at the node's containers (pure). */
export function containerChanges(
  prev: ReadonlyMap<string, ContainerSnapshot>,
  next: ReadonlyMap<string, ContainerSnapshot>,
): ContainerChange[] {
  const out: ContainerChange[] = [];
  const change = (containerId: string, type: ContainerChangeType, s: ContainerSnapshot) =>
    out.push({ containerId, type, podUid: s.podUid, containerName: s.containerName });
  for (const [id, now] of next) {
    const before = prev.get(id);
    if (!before) {
      // A container first seen already past "created" went through the earlier states between two looks.
      change(id, 'created', now);
      if (now.state === 'CONTAINER_RUNNING' || now.state === 'CONTAINER_EXITED') change(id, 'started', now);
      if (now.state === 'CONTAINER_EXITED') change(id, 'stopped', now);
      continue;
    }
    if (before.state === now.state) continue;
    if (now.state === 'CONTAINER_RUNNING') change(id, 'started', now);
    else if (now.state === 'CONTAINER_EXITED') {
      if (before.state === 'CONTAINER_CREATED') change(id, 'started', now);
      change(id, 'stopped', now);
    }
  }
  for (const [id, before] of prev) {
    if (next.has(id)) continue;
    if (before.state === 'CONTAINER_RUNNING') change(id, 'stopped', before);
    change(id, 'deleted', before);
  }
  return out;
}

const EVENT_TYPES: Record<ContainerEventResponse['containerEventType'], ContainerChangeType> = {
  CONTAINER_CREATED_EVENT: 'created',
  CONTAINER_STARTED_EVENT: 'started',
  CONTAINER_STOPPED_EVENT: 'stopped',
  CONTAINER_DELETED_EVENT: 'deleted',
};

/** A stream message as a change; the pod and container names come from the event's container statuses. */
export function changeOfEvent(e: ContainerEventResponse): ContainerChange | undefined {
  const type = EVENT_TYPES[e.containerEventType];
  if (!type || !e.containerId) return undefined;
  const own: ContainerStatus | undefined = e.containersStatuses?.find((s) => s.id === e.containerId);
  const anyStatus = e.containersStatuses?.[0];
  return {
    containerId: e.containerId,
    type,
    podUid: own?.labels?.[KubeletLabels.podUid] ?? anyStatus?.labels?.[KubeletLabels.podUid],
    containerName: own?.labels?.[KubeletLabels.containerName] ?? own?.metadata?.name,
  };
}

/** Whether a stream error means the runtime does not have the call (containerd 1.6 answers UNKNOWN "not implemented"). */
export function streamUnsupported(err: { code?: number; details?: string; message?: string }): boolean {
  if (err.code === grpc.status.UNIMPLEMENTED) return true;
  return err.code === grpc.status.UNKNOWN && /not implemented/i.test(err.details ?? err.message ?? '');
}

export type CriEventSource = 'idle' | 'stream' | 'poll';
/** Where exits are learnt first: containerd's task exits, or the CRI source (`mode`). */
export type ExitSource = 'idle' | 'containerd' | 'cri';

/** The node's container changes; subscribe to start, the last unsubscribe stops. */
export class CriContainerEvents {
  private readonly listeners = new Set<ContainerChangeListener>();
  private source: CriEventSource = 'idle';
  private noStream = false;
  private stream?: grpc.ClientReadableStream<ContainerEventResponse>;
  private pollTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private snapshot?: Map<string, ContainerSnapshot>;
  private polling = false;
  private noExitStream = false;
  private containerd?: ContainerdEvents;
  private exitStream?: grpc.ClientReadableStream<ContainerdEnvelope>;
  private exitStreamLive = false;
  private exitRetryTimer?: NodeJS.Timeout;
  private readonly exits = new Map<string, TaskExit>();

  constructor(
    private readonly cri: CriClient,
    private readonly logger: Logger,
    readonly pollMs: number = DEFAULT_CRI_EVENT_POLL_MS,
  ) {}

  /** Where changes come from now. */
  get mode(): CriEventSource {
    return this.source;
  }

  /** Where exits are learnt first now. */
  get exitSource(): ExitSource {
    if (this.listeners.size === 0) return 'idle';
    return this.exitStreamLive ? 'containerd' : 'cri';
  }

  /** The exit of a container's process containerd published while someone listened (CRI may not show it yet). */
  exitOf(containerId: string): TaskExit | undefined {
    return this.exits.get(containerId);
  }

  /** Calls `listener` for each change until the returned function is called. */
  subscribe(listener: ContainerChangeListener): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.start();
    return () => {
      if (this.listeners.delete(listener) && this.listeners.size === 0) this.stop();
    };
  }

  close(): void {
    this.listeners.clear();
    this.stop();
  }

  private start(): void {
    this.openExitStream();
    if (this.noStream) this.startPoll();
    else this.openStream();
  }

  private stop(): void {
    this.source = 'idle';
    clearTimeout(this.pollTimer);
    clearTimeout(this.retryTimer);
    this.pollTimer = this.retryTimer = undefined;
    this.snapshot = undefined;
    const s = this.stream;
    this.stream = undefined;
    s?.cancel();
    clearTimeout(this.exitRetryTimer);
    this.exitRetryTimer = undefined;
    const e = this.exitStream;
    this.exitStream = undefined;
    this.exitStreamLive = false;
    e?.cancel();
    this.exits.clear();
  }

  /** containerd's task exits, when the runtime is containerd; CRI alone otherwise. */
  private openExitStream(): void {
    if (this.noExitStream || this.exitStream) return;
    let stream: grpc.ClientReadableStream<ContainerdEnvelope>;
    try {
      this.containerd ??= new ContainerdEvents(this.cri.target);
      stream = this.containerd.taskExits();
    } catch (err) {
      this.logger.info({ err: (err as Error).message }, 'containerd event stream unavailable; exits are learnt from CRI');
      this.noExitStream = true;
      return;
    }
    this.exitStream = stream;
    // containerd sends no header before its first event, so the stream counts as live until it ends: a runtime
    // without the service (CRI-O) ends it at once with UNIMPLEMENTED.
    this.exitStreamLive = true;
    stream.on('data', (e: ContainerdEnvelope) => {
      const exit = taskExitOf(e);
      if (exit) void this.onTaskExit(exit);
    });
    const ended = (err?: grpc.ServiceError) => {
      if (this.exitStream !== stream) return;
      this.exitStream = undefined;
      this.exitStreamLive = false;
      this.reschedulePoll();
      if (err && (err.code === grpc.status.UNIMPLEMENTED || streamUnsupported(err))) {
        this.noExitStream = true;
        this.logger.info({ details: err.details }, 'the runtime has no containerd event service; exits are learnt from CRI');
        return;
      }
      this.logger.warn({ err: err?.message ?? 'stream ended' }, 'containerd event stream ended; reopening');
      this.exitRetryTimer = setTimeout(() => {
        this.exitRetryTimer = undefined;
        if (this.listeners.size > 0) this.openExitStream();
      }, STREAM_RETRY_MS);
      this.exitRetryTimer.unref();
    };
    stream.on('error', (err: grpc.ServiceError) => ended(err));
    stream.on('end', () => ended());
  }

  private async onTaskExit(exit: TaskExit): Promise<void> {
    this.exits.delete(exit.containerId);
    this.exits.set(exit.containerId, exit);
    if (this.exits.size > MAX_REMEMBERED_EXITS) this.exits.delete(this.exits.keys().next().value!);
    // The pod and container come from the kubelet's labels: the last poll knows them, else one CRI look by id.
    let known = this.snapshot?.get(exit.containerId);
    if (!known) {
      try {
        known = snapshotOf(await this.cri.listContainers({ id: exit.containerId })).get(exit.containerId);
        // Not a CRI container: a pod sandbox's pause process (its pod's containers exit on their own).
        if (!known) return;
      } catch (err) {
        this.logger.debug({ err: (err as Error).message }, 'CRI look-up of an exited container failed');
      }
    }
    if (this.listeners.size === 0) return;
    this.emit({ containerId: exit.containerId, type: 'stopped', podUid: known?.podUid, containerName: known?.containerName, exit });
  }

  /** The poll's pace follows the exit stream: tight without it, a safety net beside it. */
  private reschedulePoll(): void {
    if (this.source !== 'poll' || !this.pollTimer) return;
    clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(() => void this.tick(), this.currentPollMs());
    this.pollTimer.unref();
  }

  private currentPollMs(): number {
    return this.exitStreamLive ? Math.max(this.pollMs, SAFETY_POLL_MS) : this.pollMs;
  }

  private openStream(): void {
    let stream: grpc.ClientReadableStream<ContainerEventResponse>;
    try {
      stream = this.cri.containerEvents();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'CRI event stream unavailable; polling containers');
      this.noStream = true;
      return this.startPoll();
    }
    this.stream = stream;
    this.source = 'stream';
    this.stopPoll();
    stream.on('data', (e: ContainerEventResponse) => {
      const change = changeOfEvent(e);
      if (change) this.emit(change);
    });
    const ended = (err?: grpc.ServiceError) => {
      if (this.stream !== stream) return; // cancelled by us, or already replaced
      this.stream = undefined;
      if (err && streamUnsupported(err)) {
        this.noStream = true;
        this.logger.info({ details: err.details }, 'the CRI runtime has no container event stream; polling containers while needed');
        return this.startPoll();
      }
      this.logger.warn({ err: err?.message ?? 'stream ended' }, 'CRI event stream ended; polling until it reopens');
      this.startPoll();
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        if (this.listeners.size > 0 && !this.stream) this.openStream();
      }, STREAM_RETRY_MS);
      this.retryTimer.unref();
    };
    stream.on('error', (err: grpc.ServiceError) => ended(err));
    stream.on('end', () => ended());
  }

  private startPoll(): void {
    if (this.listeners.size === 0) return;
    this.source = 'poll';
    if (this.pollTimer || this.polling) return;
    this.snapshot = undefined;
    void this.tick();
  }

  private stopPoll(): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    this.snapshot = undefined;
  }

  private async tick(): Promise<void> {
    this.pollTimer = undefined;
    if (this.source !== 'poll') return;
    this.polling = true;
    try {
      const next = snapshotOf(await this.cri.listContainers({}));
      // The first look is the baseline; a stream that opened meanwhile owns the changes.
      if (this.snapshot && this.source === 'poll') for (const c of containerChanges(this.snapshot, next)) this.emit(c);
      if (this.source === 'poll') this.snapshot = next;
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'CRI container poll failed');
    } finally {
      this.polling = false;
    }
    if (this.source === 'poll' && !this.pollTimer) {
      this.pollTimer = setTimeout(() => void this.tick(), this.currentPollMs());
      this.pollTimer.unref();
    }
  }

  private emit(change: ContainerChange): void {
    for (const l of [...this.listeners]) {
      try {
        l(change);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'CRI container change listener failed');
      }
    }
  }
}

const shared = new WeakMap<CriClient, CriContainerEvents>();

/** The one change source per CRI client, so the daemon's controllers share one stream or one poll. */
export function criContainerEvents(cri: CriClient, logger: Logger): CriContainerEvents {
  let events = shared.get(cri);
  if (!events) {
    events = new CriContainerEvents(cri, logger);
    shared.set(cri, events);
  }
  return events;
}

import {
  ANNOTATION_SIDECARS_STOPPED_ON_NODE,
  CONTAINER_RECREATE_REQUESTS,
  EVENT_REASON_SIDECAR_TERMINATOR,
  LABEL_CRR_NODE_NAME,
  LABEL_CRR_POD_UID,
  PODS,
  sidecarTerminationCrrName,
} from '../../../contracts/index.js';
import { isAlreadyExists } from '../../core/client.js';
import { objectUid, UID_INDEX } from '../../core/indexes.js';
import type { Informer } from '../../core/informer.js';
import { ignoresSidecarExitCode, isCandidate, sidecarShutdownOf, sidecarTerminationCrr } from '../../control/sidecar-termination.js';
import type { KubeObject, Pod } from '../../core/types.js';
import type { DaemonContext } from '../context.js';
import { criContainerEvents, type CriContainerEvents } from '../cri-events.js';
import type { ContainerRecreateState } from './decision.js';
import { killContainer } from './kill.js';
import { decideNodeLocal, withPublishedExits } from './node-local-decision.js';
import { observeInstances } from './observe.js';

/** What the node-local terminator needs of the CRR reconciler it runs inside (same queue, same key). */
export interface CrrWrites {
  /** Remembers the resource version of our own write, so the CRR execution never decides from an older cache. */
  record(obj: KubeObject): void;
  patchStatus(name: string, namespace: string, status: Record<string, unknown>): Promise<void>;
  patchMetadata(name: string, namespace: string, metadata: Record<string, unknown>): Promise<void>;
  /** Runs `fn` in the pod key's turn (no CRR execution of that pod meanwhile), without waiting for a free worker. */
  exclusive(key: string, fn: () => Promise<void>): Promise<void>;
}

const terminal = (pod: Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/**
 * The node-local sidecar terminator (gate SidecarTerminator, option --node-local-sidecar-terminator): when a Job pod
 * on this node has its main containers finished (CRI, by `decide`'s Never/OnFailure rules), it stops the marked
 * sidecars at once with the CRR kill step (`killContainer`: the pod's own preStop within the grace period, then CRI
 * StopContainer), and records the stop in the pod's `sidecar-termination-<uid>` CRR. The protocol that keeps it and the
 * manager's CRR path from acting twice is in node-local-decision.ts.
 */
export class NodeLocalSidecarTerminator {
  /** Pods whose sidecars this daemon stopped (pod uid), until the pod leaves the node's cache. */
  private readonly stopped = new Set<string>();
  /** Stops whose record was refused (pod uid → CRR name and kill states): the first CRR of the pod to appear records them. */
  private readonly unrecorded = new Map<string, { crr: string; names: string; states: ContainerRecreateState[] }>();
  /** When a container exit of a waiting pod was first learnt (epoch ms, pod uid), for the stop's trace log. */
  private readonly learnt = new Map<string, number>();
  /** Pod keys with a look started by a container exit, not yet begun (a second exit meanwhile needs no second look). */
  private readonly pending = new Set<string>();
  /** The node's container changes (CRI event stream, else a CRI poll), shared with the daemon's other users. */
  readonly events: CriContainerEvents;
  private unsubscribe?: () => void;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly pods: Informer<Pod>,
    private readonly crrs: Informer<KubeObject>,
    private readonly writes: CrrWrites,
    private readonly enqueue: (key: string) => void,
  ) {
    this.events = criContainerEvents(ctx.cri, ctx.logger);
    // A container change names its pod by uid: found through the index, not by walking the node's pods.
    pods.addIndex(UID_INDEX, objectUid);
    const onPod = (p: Pod) => {
      if (this.waiting(p)) enqueue(`${p.metadata.namespace}/${p.metadata.name}`);
      this.listenWhileWaiting();
    };
    pods.addHandlers({
      add: onPod,
      update: onPod,
      delete: (p) => {
        this.stopped.delete(p.metadata.uid ?? '');
        this.unrecorded.delete(p.metadata.uid ?? '');
        this.learnt.delete(p.metadata.uid ?? '');
        this.listenWhileWaiting();
      },
    });
  }

  /**
   * Listens to container changes only while a Job pod on this node waits for its main containers: a runtime
   * without the event stream is then polled only while it matters.
   */
  listenWhileWaiting(): void {
    const wanted = this.pods.list().some((p) => this.waiting(p));
    if (wanted && !this.unsubscribe) {
      this.unsubscribe = this.events.subscribe((change) => {
        if (change.type !== 'stopped' || !change.podUid) return;
        const pod = this.pods.byIndex(UID_INDEX, change.podUid)[0];
        if (pod && this.waiting(pod)) {
          if (!this.learnt.has(change.podUid)) this.learnt.set(change.podUid, Date.now());
          this.actNow(pod);
        }
      });
    } else if (!wanted && this.unsubscribe) {
      this.unsubscribe();
      this.unsubscribe = undefined;
    }
  }

  /**
   * Looks at a pod whose container just exited at once, in the pod key's turn, instead of through the work queue:
   * the queue's workers may all be busy with other pods' stops and CRR writes (each waits for StopContainer to return
   * and for API requests), which put seconds between learning an exit and acting on it on a loaded node. The lock
   * keeps the one-actor rule: this look and a CRR execution of the same pod never run at once. A failure goes to the
   * queue, which retries with its backoff.
   */
  private actNow(pod: Pod): void {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (this.pending.has(key)) return;
    this.pending.add(key);
    this.writes
      .exclusive(key, () => {
        this.pending.delete(key);
        return this.reconcile(pod.metadata.namespace!, pod.metadata.name!, 'exit');
      })
      .catch((err: unknown) => {
        this.pending.delete(key);
        this.ctx.logger.debug({ pod: key, err: (err as Error).message }, 'node-local look on a container exit failed; queued');
        this.enqueue(key);
      });
  }

  /** Stops listening (the daemon stops). */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** A Job pod with marked sidecars that is not finished, whose sidecars nobody has stopped yet. */
  private waiting(pod: Pod): boolean {
    const uid = pod.metadata.uid ?? '';
    return (
      isCandidate(pod) &&
      // A sidecar whose exit code is to be ignored needs the manager's pod status handling around its stop (else the
      // kubelet fails the pod on its SIGTERM exit code): such pods stay with the CRR path.
      !(pod.spec?.containers ?? []).some((c) => ignoresSidecarExitCode(pod, c)) &&
      !terminal(pod) &&
      !pod.metadata.deletionTimestamp &&
      !this.stopped.has(uid) &&
      this.crrs.get(`${pod.metadata.namespace}/${sidecarTerminationCrrName(uid)}`) === undefined
    );
  }

  /** `via`: what started this look (a container exit acted on at once, or the work queue), for the stop's trace log. */
  async reconcile(namespace: string, podName: string, via: 'exit' | 'queue' = 'queue'): Promise<void> {
    const reconcileAt = Date.now();
    const pod = this.pods.get(`${namespace}/${podName}`);
    if (pod) await this.recordLate(pod);
    if (!pod || !this.waiting(pod)) return;
    const uid = pod.metadata.uid ?? '';
    const observed = await observeInstances(this.ctx.cri, uid);
    const step = decideNodeLocal({
      pod,
      // containerd's published exits first: CRI reports them only once the task is deleted.
      instances: withPublishedExits(observed, (id) => this.events.exitOf(id)),
      scheme: await this.ctx.runtimeScheme(),
      crrCached: false,
      stoppedHere: false,
    });
    if (step.action !== 'stop') {
      this.ctx.logger.debug({ pod: `${namespace}/${podName}`, reason: step.reason }, 'node-local sidecar terminator');
      return;
    }
    // Read before listenWhileWaiting, which may stop the event source (and forget its exits).
    const exitedAt = Object.fromEntries(
      observed.flatMap((i) => {
        const e = this.events.exitOf(i.id);
        return e ? [[i.name, e.exitedAtMs]] : [];
      }),
    );
    this.stopped.add(uid);
    const learntAt = this.learnt.get(uid);
    this.learnt.delete(uid);
    this.listenWhileWaiting();
    const log = this.ctx.logger.child({ pod: `${namespace}/${podName}`, crr: step.crr });
    const states: ContainerRecreateState[] = [];
    let failed: string | undefined;
    // Act first, record after: the first StopContainer is sent before the record's API request is even built (the
    // kill's first steps run to their first wait before the deferred record starts), and the record is written
    // while the sidecars stop. The one-CRR rule does not need the record first: this pod is in `stopped` already.
    const recorded = new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
      this.createRecord(
        pod,
        step.crr,
        step.containers.map((c) => c.name),
      ),
    );
    const stopSentAt = Date.now();
    // One after another in the decision's order (lowest exit priority first), each waited for, as a CRR does.
    for (const c of step.containers) {
      try {
        const out = await killContainer(this.ctx.cri, {
          containerId: c.id,
          podContainer: pod.spec?.containers.find((x) => x.name === c.name),
          gracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds as number | undefined,
          podIP: pod.status?.podIP as string | undefined,
          ...(shutdownFor(pod, c.name) ?? {}),
        });
        if (out.shutdownError)
          log.warn({ container: c.name, err: out.shutdownError }, 'declared shutdown did not stop the sidecar; SIGTERM');
        if (out.preStopError) log.warn({ container: c.name, err: out.preStopError }, 'preStop hook failed; stopped anyway');
        states.push({ name: c.name, phase: 'Recreating', isKilled: true });
      } catch (err) {
        failed = (err as Error).message;
        log.warn({ container: c.name, err: failed }, 'node-local sidecar stop failed; the CRR path takes over');
        break;
      }
    }
    const record = await recorded;
    if (failed !== undefined) {
      // Nothing claims what is left: a CRR without kill states is executed as any CRR; without one, the manager's
      // CRR comes (or this pod is looked at again).
      if (record === 'refused') this.stopped.delete(uid);
      throw new Error(`node-local stop of ${step.crr} failed: ${failed}`);
    }
    const names = step.containers.map((c) => c.name).join(', ');
    // The path's timestamps (epoch ms, this node's clock), read by bench/real-node-terminator.bench.ts: the exits
    // containerd published, when one reached us, when the stop's reconcile started, when the first stop was sent.
    log.info(
      { containers: names, record, trace: { via, exitedAt, learntAt, reconcileAt, stopSentAt, stoppedAt: Date.now() } },
      'sidecars stopped on the node after the main containers finished',
    );
    if (record === 'refused') {
      this.unrecorded.set(uid, { crr: step.crr, names, states });
      // The manager's CRR may have reached the cache while this stop ran: it is executed right after this step.
      await this.recordLate(pod);
    } else {
      // The manager's CRR came first (created while our stop was on its way): it records our stop too, so its
      // execution, the next step under this key, finds the kill done.
      if (record === 'exists')
        await this.writes.patchMetadata(step.crr, namespace, { annotations: { [ANNOTATION_SIDECARS_STOPPED_ON_NODE]: this.ctx.nodeName } });
      await this.writes.patchStatus(step.crr, namespace, { phase: 'Recreating', containerRecreateStates: states });
    }
    this.ctx.events.emit(
      PODS,
      pod,
      'Normal',
      EVENT_REASON_SIDECAR_TERMINATOR,
      `Stopped sidecar(s) ${names} on node ${this.ctx.nodeName} once the main containers had finished` +
        (record !== 'refused' ? ` (recorded in ContainerRecreateRequest ${step.crr})` : ''),
    );
  }

  /**
   * A stop whose record was refused (e.g. the CRR webhook wanted the sidecar's container ID before the kubelet had
   * reported it) is recorded in the pod's CRR once the manager's appears, before that CRR is executed under this key:
   * its execution then finds the kill done instead of a container that exited for no reason it knows.
   */
  private async recordLate(pod: Pod): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const late = this.unrecorded.get(uid);
    const namespace = pod.metadata.namespace!;
    if (!late || this.crrs.get(`${namespace}/${late.crr}`) === undefined) return;
    this.unrecorded.delete(uid);
    await this.writes.patchMetadata(late.crr, namespace, { annotations: { [ANNOTATION_SIDECARS_STOPPED_ON_NODE]: this.ctx.nodeName } });
    await this.writes.patchStatus(late.crr, namespace, { phase: 'Recreating', containerRecreateStates: late.states });
    this.ctx.events.emit(
      PODS,
      pod,
      'Normal',
      EVENT_REASON_SIDECAR_TERMINATOR,
      `Recorded the stop of sidecar(s) ${late.names} on node ${this.ctx.nodeName} in ContainerRecreateRequest ${late.crr}`,
    );
  }

  /** Creates the pod's CRR as the record of this stop: `exists` when the manager's came first, `refused` when it cannot be written. */
  private async createRecord(pod: Pod, name: string, containers: readonly string[]): Promise<'created' | 'exists' | 'refused'> {
    const crr = sidecarTerminationCrr(pod, name, containers);
    crr.metadata.annotations = { [ANNOTATION_SIDECARS_STOPPED_ON_NODE]: this.ctx.nodeName };
    // The CRR webhook sets these too; set here so this node's CRR cache sees the record even without it.
    crr.metadata.labels = { [LABEL_CRR_POD_UID]: pod.metadata.uid!, [LABEL_CRR_NODE_NAME]: this.ctx.nodeName };
    try {
      this.writes.record(await this.ctx.client.create<KubeObject>(CONTAINER_RECREATE_REQUESTS, crr, pod.metadata.namespace));
      return 'created';
    } catch (err) {
      if (isAlreadyExists(err)) return 'exists';
      // E.g. the CRR webhook unavailable while the manager is down: the stop stands, recorded by the pod event only;
      // the manager, back, reads the sidecars terminated and creates nothing.
      this.ctx.logger.info(
        { crr: `${pod.metadata.namespace}/${name}`, err: (err as Error).message },
        'could not record the node-local stop',
      );
      return 'refused';
    }
  }
}

function shutdownFor(pod: Pod, container: string) {
  const shutdown = sidecarShutdownOf(pod, container);
  return shutdown ? { shutdown } : undefined;
}

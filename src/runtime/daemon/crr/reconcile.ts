import type { ContainerRecreateRequest as ApiCrr } from '../../../api/kinds/containerrecreaterequest.js';
import {
  CONTAINER_RECREATE_REQUESTS,
  PODS,
  PatchStrategy,
  isNotFound,
  splitKey,
  type Informer,
  type Pod,
  type ProcessResult,
} from '../../core/index.js';
import type { KubeObject } from '../../core/index.js';
import type { PodCondition } from '../../core/types.js';
import { ResourceVersionExpectations } from '../../core/expectations.js';
import { rfc3339 as now } from '../../core/meta.js';
import { kruisePodReadyWithKeys, notReadyKeysOf } from '../../control/pod-readiness.js';
import type { DaemonContext } from '../context.js';
import {
  CrrKeys,
  KRUISE_POD_READY,
  afterKill,
  deadlineLeftMs,
  DEADLINE_EXCEEDED,
  decidePodCrrs,
  type ContainerRecreateState,
  type CrrAction,
  type PodView,
} from './decision.js';
import { killContainer } from './kill.js';
import { sidecarShutdownOf } from '../../control/sidecar-termination.js';
import { sidecarTerminationCrrName } from '../../../contracts/index.js';
import type { SidecarShutdown } from '../../../api/container-patterns.js';
import type { CrrWrites, NodeLocalSidecarTerminator } from './node-local.js';
import { KeyedLock } from './keyed-lock.js';
import { bareContainerId, observePod } from './observe.js';

/** The API type, as the cache holds it (plain JSON with the KubeObject shape). */
type ContainerRecreateRequest = ApiCrr & KubeObject;

/** The user agent of a CRR's reason in KruisePodReady's message (upstream's). */
export const CRR_READINESS_USER_AGENT = 'ContainerRecreateRequest';

/** How soon a reconcile that found the cache behind its own last write looks again (the write's event usually comes first). */
export const STALE_CACHE_REQUEUE_MS = 100;

export function podView(pod: Pod): PodView {
  const containers = new Map((pod.status?.containerStatuses ?? []).map((c) => [c.name, { containerID: c.containerID, ready: !!c.ready }]));
  const gates = (pod.spec?.readinessGates as { conditionType?: string }[] | undefined) ?? [];
  return {
    uid: pod.metadata.uid ?? '',
    phase: pod.status?.phase,
    deleting: !!pod.metadata.deletionTimestamp,
    containers,
    hasKruiseReadinessGate: gates.some((g) => g.conditionType === KRUISE_POD_READY),
    kruiseReadyCondition: pod.status?.conditions?.find((c) => c.type === KRUISE_POD_READY)?.status,
  };
}

/** I/O of CRR execution: reads the CRR cache, the pod and CRI; applies decidePodCrrs' actions. Key: `namespace/podName`. */
export class CrrReconciler {
  constructor(
    private readonly ctx: DaemonContext,
    private readonly crrs: Informer<ContainerRecreateRequest>,
  ) {}

  /**
   * Resource versions of our own last writes, by `namespace/name`. A reconcile must not decide from a cache older
   * than what it wrote: a stale copy still showing a container as not yet killed would kill its new instance again.
   */
  private readonly written = new ResourceVersionExpectations();

  /** The node-local sidecar terminator, when on: it runs first in each reconcile of a pod, under the same key. */
  nodeLocal?: NodeLocalSidecarTerminator;

  /** The writes the node-local terminator makes through this reconciler (so their expectations are shared). */
  writes(): CrrWrites {
    return {
      record: (obj) => this.written.record(obj),
      patchStatus: (name, namespace, status) => this.patchStatus(name, namespace, status),
      patchMetadata: (name, namespace, metadata) => this.patchMetadata(name, namespace, metadata),
      exclusive: (key, fn) => this.exclusive(key, fn),
    };
  }

  /** A CRR is gone: its expectation goes with it. */
  forget(crr: ContainerRecreateRequest): void {
    this.written.forget(crr);
  }

  /** One pod's work at a time: the queue's workers and the node-local stop acting on a container exit. */
  private readonly lock = new KeyedLock();

  /** Runs `fn` in `key`'s turn (`namespace/podName`), as a reconcile of that key would run, without waiting for a worker. */
  exclusive(key: string, fn: () => Promise<void>): Promise<void> {
    return this.lock.run(key, fn);
  }

  reconcile(key: string): Promise<ProcessResult> {
    return this.lock.run(key, () => this.reconcileNow(key));
  }

  private async reconcileNow(key: string): Promise<ProcessResult> {
    const { namespace, name: podName } = splitKey(key);
    if (this.nodeLocal) await this.nodeLocal.reconcile(namespace!, podName);
    const crrs = this.crrs.list().filter((c) => c.metadata.namespace === namespace && c.spec.podName === podName);
    if (crrs.length === 0) return;
    // Our write's watch event requeues the key; the timed requeue only covers a lost event.
    if (!crrs.every((c) => this.written.satisfiedBy(c))) return { requeueAfterMs: STALE_CACHE_REQUEUE_MS };
    let pod: Pod | null = null;
    try {
      pod = await this.ctx.client.get<Pod>(PODS, podName, namespace);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const view = pod ? podView(pod) : null;
    const needsRuntime = view && crrs.some((c) => !c.status?.completionTime);
    const observed = needsRuntime ? await observePod(this.ctx.cri, view.uid, await this.ctx.runtimeScheme()) : new Map();
    const decision = decidePodCrrs({ crrs, pod: view, observed, nowMs: Date.now() });
    for (const action of decision.actions) await this.apply(action, namespace!, crrs, pod);
    return decision.requeueAfterMs !== undefined ? { requeueAfterMs: decision.requeueAfterMs } : undefined;
  }

  private async patchStatus(name: string, namespace: string, status: Record<string, unknown>): Promise<void> {
    const written = await this.ctx.client.patch<ContainerRecreateRequest>(
      CONTAINER_RECREATE_REQUESTS,
      name,
      namespace,
      { status },
      PatchStrategy.MergePatch,
      {
        subresource: 'status',
      },
    );
    this.written.record(written);
  }

  private async patchMetadata(name: string, namespace: string, metadata: Record<string, unknown>): Promise<void> {
    const written = await this.ctx.client.patch<ContainerRecreateRequest>(
      CONTAINER_RECREATE_REQUESTS,
      name,
      namespace,
      { metadata },
      PatchStrategy.MergePatch,
    );
    this.written.record(written);
  }

  /**
   * Sets the CRRs' reasons for holding the pod not ready (`<namespace>/<crr>` keys of KruisePodReady, as upstream's),
   * leaving other writers' reasons alone; a pod held not ready is marked not Ready at once, as upstream does.
   */
  private async setCrrNotReadyKeys(pod: Pod, keys: readonly string[]): Promise<void> {
    const condition = kruisePodReadyWithKeys(pod, CRR_READINESS_USER_AGENT, keys, now());
    if (!condition) return;
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
    const conditions: PodCondition[] = [condition];
    if (condition.status === 'False' && ready?.status === 'True')
      conditions.push({ type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', lastTransitionTime: now() });
    await this.ctx.client.patch(
      PODS,
      pod.metadata.name!,
      pod.metadata.namespace,
      { status: { conditions } },
      PatchStrategy.StrategicMergePatch,
      { subresource: 'status' },
    );
  }

  /**
   * Completes `crr` when its activeDeadlineSeconds pass before `settle()` is called. `settle()` cancels the timer
   * and tells, once any completion in flight has been written, whether the deadline completed the CRR.
   */
  private completeAtDeadline(crr: ApiCrr, namespace: string): { settle(): Promise<boolean> } {
    const leftMs = deadlineLeftMs(crr, Date.now());
    if (leftMs === undefined) return { settle: async () => false };
    let completion: Promise<void> | undefined;
    const timer = setTimeout(
      () => {
        completion = this.apply({ type: 'complete', crr: crr.metadata.name!, message: DEADLINE_EXCEEDED }, namespace, [], null).catch(
          (err: unknown) =>
            this.ctx.logger.warn(
              { crr: `${namespace}/${crr.metadata.name}`, err: (err as Error).message },
              'completing at the deadline failed',
            ),
        );
      },
      Math.max(0, leftMs),
    );
    return {
      settle: async () => {
        clearTimeout(timer);
        if (!completion) return false;
        await completion;
        return true;
      },
    };
  }

  private async apply(action: CrrAction, namespace: string, crrs: readonly ContainerRecreateRequest[], pod: Pod | null): Promise<void> {
    const log = this.ctx.logger;
    const client = this.ctx.client;
    switch (action.type) {
      case 'delete':
        log.info({ crr: `${namespace}/${action.crr}` }, 'deleting finished ContainerRecreateRequest after its TTL');
        await client.delete(CONTAINER_RECREATE_REQUESTS, action.crr, namespace).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
        return;
      case 'setPhase':
        await this.patchStatus(action.crr, namespace, { phase: action.phase });
        return;
      case 'acquireUnready':
        if (action.setPodCondition && pod)
          await this.setCrrNotReadyKeys(pod, [...notReadyKeysOf(pod, CRR_READINESS_USER_AGENT), `${namespace}/${action.crr}`]);
        await this.patchMetadata(action.crr, namespace, { annotations: { [CrrKeys.unreadyAcquired]: now() } });
        return;
      case 'releaseUnready':
        // No CRR of the pod is in progress: none holds it any more.
        if (pod) await this.setCrrNotReadyKeys(pod, []);
        return;
      case 'patchStates':
        await this.patchStatus(action.crr, namespace, { containerRecreateStates: action.states });
        return;
      case 'kill': {
        const crr = crrs.find((c) => c.metadata.name === action.crr)!;
        const container = crr.spec.containers[action.index]!;
        let error: string | undefined;
        // A stop can take the whole grace period (preStop hooks). The deadline does not wait for it: the CRR is
        // completed when it passes, as upstream's manager does, and the stop goes on.
        const deadline = this.completeAtDeadline(crr, namespace);
        try {
          // The hook that runs is the pod's own (read from the API server in this reconcile), never the CRR's.
          const podContainer = pod?.spec?.containers.find((c) => c.name === container.name);
          if (
            container.preStop !== undefined &&
            JSON.stringify(container.preStop) !== JSON.stringify((podContainer?.lifecycle as { preStop?: unknown } | undefined)?.preStop)
          ) {
            log.warn(
              { crr: `${namespace}/${action.crr}`, container: container.name },
              "CRR preStop differs from the pod's; running the pod's own hook only",
            );
          }
          const out = await killContainer(this.ctx.cri, {
            containerId: bareContainerId(action.containerID),
            podContainer,
            // A CRR made while no webhook served has no grace period of its own: the pod's applies, as the kubelet's would.
            gracePeriodSeconds:
              crr.spec.strategy?.terminationGracePeriodSeconds ?? (pod?.spec?.terminationGracePeriodSeconds as number | undefined),
            podIP: (pod?.status?.podIP as string | undefined) ?? undefined,
            // The pod's declared clean shutdown, for the sidecars of its sidecar-termination CRR only.
            ...(pod && action.crr === sidecarTerminationCrrName(pod.metadata.uid ?? '') ? shutdownOf(pod, container.name) : {}),
          });
          if (out.shutdownError)
            log.warn(
              { crr: `${namespace}/${action.crr}`, container: container.name, err: out.shutdownError },
              'declared shutdown did not stop the container; stopped with SIGTERM',
            );
          if (out.preStopError)
            log.warn(
              { crr: `${namespace}/${action.crr}`, container: container.name, err: out.preStopError },
              'preStop hook failed; stopped anyway',
            );
          log.info(
            {
              crr: `${namespace}/${action.crr}`,
              container: container.name,
              containerID: action.containerID,
              via: out.via,
              preStopMs: out.preStopMs,
            },
            'container stopped',
          );
          this.ctx.events.emit(
            CONTAINER_RECREATE_REQUESTS,
            crr,
            'Normal',
            'Stopped',
            `Stopped container ${container.name} (${action.containerID})`,
          );
        } catch (err) {
          error = (err as Error).message;
          log.warn({ crr: `${namespace}/${action.crr}`, container: container.name, err: error }, 'stopping container failed');
        }
        // Written also when the deadline completed the CRR meanwhile, as upstream's daemon does: the states then
        // record the kill that went on after completion (the container is being recreated), nothing later does.
        await deadline.settle();
        const states: ContainerRecreateState[] = afterKill(action.states, action.index, error);
        await this.patchStatus(action.crr, namespace, { containerRecreateStates: states });
        return;
      }
      case 'complete':
        log.info({ crr: `${namespace}/${action.crr}`, message: action.message }, 'ContainerRecreateRequest completed');
        await this.patchStatus(action.crr, namespace, { phase: 'Completed', completionTime: now(), message: action.message });
        // Upstream drops the active label on completion so daemons stop caring about it.
        await this.patchMetadata(action.crr, namespace, { labels: { [CrrKeys.active]: null } });
        return;
    }
  }
}

/** The declared clean shutdown of one of the pod's sidecars, as a kill request field. */
function shutdownOf(pod: Pod, container: string): { shutdown?: SidecarShutdown } {
  const shutdown = sidecarShutdownOf(pod, container);
  return shutdown ? { shutdown } : {};
}

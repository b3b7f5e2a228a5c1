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
import type { DaemonContext } from '../context.js';
import {
  CrrKeys,
  KRUISE_POD_READY,
  afterKill,
  decidePodCrrs,
  type ContainerRecreateState,
  type CrrAction,
  type PodView,
} from './decide.js';
import { killContainer } from './kill.js';
import { bareContainerId, observePod } from './observe.js';

/** The API type, as the cache holds it (plain JSON with the KubeObject shape). */
type ContainerRecreateRequest = ApiCrr & KubeObject;

/** RFC 3339 without fractions, the form metav1.Time writes. */
const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

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

  async reconcile(key: string): Promise<ProcessResult> {
    const { namespace, name: podName } = splitKey(key);
    const crrs = this.crrs.list().filter((c) => c.metadata.namespace === namespace && c.spec.podName === podName);
    if (crrs.length === 0) return;
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

  private patchStatus(name: string, namespace: string, status: Record<string, unknown>): Promise<unknown> {
    return this.ctx.client.patch(CONTAINER_RECREATE_REQUESTS, name, namespace, { status }, PatchStrategy.MergePatch, {
      subresource: 'status',
    });
  }

  private setPodCondition(pod: Pod, status: 'True' | 'False', message: string): Promise<unknown> {
    const condition = { type: KRUISE_POD_READY, status, lastTransitionTime: now(), message };
    return this.ctx.client.patch(
      PODS,
      pod.metadata.name!,
      pod.metadata.namespace,
      { status: { conditions: [condition] } },
      PatchStrategy.StrategicMergePatch,
      { subresource: 'status' },
    );
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
          await this.setPodCondition(pod, 'False', `ContainerRecreateRequest ${action.crr} is recreating containers`);
        await client.patch(
          CONTAINER_RECREATE_REQUESTS,
          action.crr,
          namespace,
          { metadata: { annotations: { [CrrKeys.unreadyAcquired]: now() } } },
          PatchStrategy.MergePatch,
        );
        return;
      case 'releaseUnready':
        if (pod) await this.setPodCondition(pod, 'True', '');
        return;
      case 'patchStates':
        await this.patchStatus(action.crr, namespace, { containerRecreateStates: action.states });
        return;
      case 'kill': {
        const crr = crrs.find((c) => c.metadata.name === action.crr)!;
        const container = crr.spec.containers[action.index]!;
        let error: string | undefined;
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
            gracePeriodSeconds: crr.spec.strategy?.terminationGracePeriodSeconds,
            podIP: (pod?.status?.podIP as string | undefined) ?? undefined,
          });
          if (out.preStopError)
            log.warn(
              { crr: `${namespace}/${action.crr}`, container: container.name, err: out.preStopError },
              'preStop hook failed; stopped anyway',
            );
          log.info(
            { crr: `${namespace}/${action.crr}`, container: container.name, containerID: action.containerID, preStopMs: out.preStopMs },
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
        const states: ContainerRecreateState[] = afterKill(action.states, action.index, error);
        await this.patchStatus(action.crr, namespace, { containerRecreateStates: states });
        return;
      }
      case 'complete':
        log.info({ crr: `${namespace}/${action.crr}`, message: action.message }, 'ContainerRecreateRequest completed');
        await this.patchStatus(action.crr, namespace, { phase: 'Completed', completionTime: now(), message: action.message });
        // Upstream drops the active label on completion so daemons stop caring about it.
        await client.patch(
          CONTAINER_RECREATE_REQUESTS,
          action.crr,
          namespace,
          { metadata: { labels: { [CrrKeys.active]: null } } },
          PatchStrategy.MergePatch,
        );
        return;
    }
  }
}

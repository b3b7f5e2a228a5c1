import {
  ANNOTATION_RELATED_PUB,
  CLONESETS,
  DEPLOYMENTS,
  PODS,
  POD_UNAVAILABLE_BUDGETS,
  REPLICA_SETS,
  STATEFUL_SETS,
  groupOf,
  selectorMatches,
  type ResourceType,
} from '../../../contracts/index.js';
import { isPodActive, type PubObject } from '../../control/pod-unavailable-budget.js';
import { PatchStrategy, isNotFound, type ControllerContext, type Informer, type ProcessResult, type Reconciler } from '../../core/index.js';
import { NAMESPACE_INDEX } from '../../core/indexes.js';
import { controllerOf } from '../../core/meta.js';
import type { KubeObject, Pod } from '../../core/types.js';
import { decideStatus, expectedReplicas, selectedPods, type WorkloadScale } from './decision.js';

/** The workload kinds whose scale a budget counts (upstream's controller finder, without ReplicationController). */
const WORKLOADS: readonly { group: string; kind: string; type: ResourceType }[] = [
  { group: 'apps', kind: 'Deployment', type: DEPLOYMENTS },
  { group: 'apps', kind: 'ReplicaSet', type: REPLICA_SETS },
  { group: 'apps', kind: 'StatefulSet', type: STATEFUL_SETS },
  { group: CLONESETS.group, kind: 'CloneSet', type: CLONESETS },
];

interface Workload extends KubeObject {
  spec?: { replicas?: number; selector?: NonNullable<PubObject['spec']>['selector'] };
}

/** I/O half of the PodUnavailableBudget controller. Key: `namespace/name` of the budget. */
export class PodUnavailableBudgetReconciler implements Reconciler {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly budgets: Informer<PubObject & KubeObject>,
    private readonly pods: Informer<Pod>,
  ) {}

  /** A workload by apiVersion/kind/name, or undefined when it is not a kind we count or is gone. */
  private async workload(apiVersion: string | undefined, kind: string | undefined, name: string | undefined, ns: string) {
    const w = WORKLOADS.find((x) => x.kind === kind && x.group === groupOf(apiVersion ?? ''));
    if (!w || !name) return undefined;
    try {
      const obj = await this.ctx.client.get<Workload>(w.type, name, ns);
      return obj.metadata.deletionTimestamp ? undefined : obj;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The scale a pod's controller expects: a ReplicaSet of a Deployment counts as the Deployment (upstream's finder). */
  private async scaleOf(pod: Pod, ns: string): Promise<WorkloadScale | undefined> {
    const ref = controllerOf(pod);
    if (!ref) return undefined;
    let w = await this.workload(ref.apiVersion, ref.kind, ref.name, ns);
    if (w && ref.kind === 'ReplicaSet') {
      const up = controllerOf(w);
      if (up?.kind === 'Deployment') w = await this.workload(up.apiVersion, up.kind, up.name, ns);
    }
    return w ? { uid: w.metadata.uid ?? `${w.kind}/${w.metadata.name}`, replicas: w.spec?.replicas ?? 1 } : undefined;
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const pub = this.budgets.get(key);
    if (!pub || pub.metadata.deletionTimestamp) return;
    const ns = pub.metadata.namespace ?? '';
    const inNs = this.pods.byIndex(NAMESPACE_INDEX, ns);
    let pods: Pod[];
    let expected: number;
    const ref = pub.spec?.targetRef;
    if (ref) {
      // targetRef wins over selector: the workload's pods (its selector) and its replicas.
      const w = await this.workload(ref.apiVersion, ref.kind, ref.name, ns);
      const sel = w?.spec?.selector;
      pods = sel ? inNs.filter((p) => isPodActive(p) && selectorMatches(sel, p.metadata.labels ?? {})) : [];
      expected = expectedReplicas(pub, [w ? { uid: w.metadata.uid ?? '', replicas: w.spec?.replicas ?? 1 } : undefined]);
    } else {
      pods = selectedPods(pub, inNs);
      const scales: (WorkloadScale | undefined)[] = [];
      const seen = new Set<string>();
      for (const p of pods) {
        const r = controllerOf(p);
        if (!r?.uid || seen.has(r.uid)) continue;
        seen.add(r.uid);
        scales.push(await this.scaleOf(p, ns));
      }
      expected = expectedReplicas(pub, scales);
    }
    let d;
    try {
      d = decideStatus({ pub, pods, expected, nowMs: Date.now() });
    } catch (err) {
      this.ctx.events.emit(POD_UNAVAILABLE_BUDGETS, pub, 'Warning', 'CalculateExpectedPodCountFailed', (err as Error).message);
      return;
    }
    const { client } = this.ctx;
    if (!pods.length) this.ctx.events.emit(POD_UNAVAILABLE_BUDGETS, pub, 'Normal', 'NoPods', 'No matching pods found');
    for (const name of d.annotate) {
      await client
        .patch(PODS, name, ns, { metadata: { annotations: { [ANNOTATION_RELATED_PUB]: pub.metadata.name! } } }, PatchStrategy.MergePatch)
        .catch((err) => {
          if (!isNotFound(err)) throw err;
        });
    }
    for (const name of d.notDeleted) {
      const p = pods.find((x) => x.metadata.name === name);
      if (p)
        this.ctx.events.emit(
          PODS,
          p,
          'Warning',
          'NotDeleted',
          `Pod was expected by PUB ${ns}/${pub.metadata.name} to be deleted but it wasn't`,
        );
    }
    if (d.status) {
      // An update (not a merge patch: the pod records are maps whose gone keys must go) conditional on the budget's
      // resourceVersion: the webhook spends from the same status, and a write from a stale cache must not hand its
      // spending back. A conflict fails this reconcile, which runs again on the fresh cache.
      await client.update(POD_UNAVAILABLE_BUDGETS, { ...pub, status: d.status } as KubeObject, 'status');
    }
    if (d.recheckAtMs !== undefined) return { requeueAfterMs: Math.max(100, d.recheckAtMs - Date.now()) };
  }
}

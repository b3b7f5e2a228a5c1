import {
  ANNOTATION_RELATED_PUB,
  CLONESETS,
  CONTAINER_RECREATE_REQUESTS,
  DEPLOYMENTS,
  NODE_POD_PROBES,
  PODS,
  POD_DISRUPTION_BUDGETS,
  POD_UNAVAILABLE_BUDGETS,
  REPLICA_SETS,
  selectorMatches,
  type LabelSelectorLike,
  type ResourceType,
} from '../../../contracts/index.js';
import { admitLivenessRestarts, budgetMaxUnavailable, scaledCount, type RestartBudget } from '../../control/enhanced-liveness.js';
import type { PubObject } from '../../control/pod-unavailable-budget.js';
import { isAlreadyExists, isConflict, isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext, Reconciler } from '../../core/controller.js';
import type { Informer } from '../../core/informer.js';
import { NAMESPACE_INDEX } from '../../core/indexes.js';
import { controllerOf, rfc3339 } from '../../core/meta.js';
import type { ProcessResult } from '../../core/queue.js';
import type { KubeObject, Pod } from '../../core/types.js';
import {
  budgetMember,
  EVENT_CLUSTER_WIDE_LIVENESS_FAILURE,
  EVENT_LIVENESS_RESTART,
  EVENT_LIVENESS_RESTART_WAITING,
  livenessCrr,
  livenessCrrView,
  nodeLivenessProbes,
  unprotected,
  waitingCondition,
  type LivenessCrrView,
  type NodePodProbeObject,
} from './decision.js';

/** Work-queue keys: a node's NodePodProbe entries, or a namespace's restart decisions. */
export const nodeKey = (name: string) => `node:${name}`;
export const namespaceKey = (ns: string) => `ns:${ns}`;

/** Pods opted in (probe context annotation present), by namespace. */
export const LIVENESS_NAMESPACE_INDEX = 'enhanced-liveness.namespace';
/** Pods opted in, by node. */
export const LIVENESS_NODE_INDEX = 'enhanced-liveness.node';

/** How long a request this process created counts without its cache showing it. */
const CREATED_UNSEEN_MS = 30_000;

/** While a restart is under way or waits, the namespace is looked at again this often (besides its events). */
const RECHECK_MS = 2_000;

type Workload = KubeObject & {
  spec?: {
    replicas?: number;
    updateStrategy?: { maxUnavailable?: number | string };
    strategy?: { rollingUpdate?: { maxUnavailable?: number | string } };
  };
};
type Pdb = KubeObject & {
  spec?: { selector?: LabelSelectorLike; maxUnavailable?: number | string; minAvailable?: number | string };
  status?: { expectedPods?: number; desiredHealthy?: number };
};

/** A budget group being built: its subject (for the cluster-wide event) and the pods it covers. */
interface Group {
  readonly budget: Omit<RestartBudget, 'members'>;
  readonly subject: { readonly type: ResourceType; readonly obj: KubeObject };
  readonly pods: readonly Pod[];
}

/** I/O of enhanced liveness: NodePodProbe entries per node, restart admission per namespace. */
export class EnhancedLivenessReconciler implements Reconciler {
  /** Budgets whose cluster-wide failure was announced, until it ends (one event per episode). */
  private readonly announced = new Set<string>();
  /**
   * Requests this process created that its cache may not show yet (`namespace/name` → the request, when): counted as
   * restarts under way until the cache has them, so a reconcile right after a create cannot admit more than the budget.
   */
  private readonly created = new Map<string, { readonly view: LivenessCrrView; readonly at: number }>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly pods: Informer<Pod>,
    private readonly nodePodProbes: Informer<NodePodProbeObject>,
    private readonly crrs: Informer<KubeObject>,
    private readonly pubs: Informer<PubObject & KubeObject>,
    private readonly pdbs: Informer<Pdb>,
    private readonly cloneSets: Informer<Workload>,
  ) {}

  async reconcile(key: string): Promise<ProcessResult> {
    if (key.startsWith('node:')) return this.syncNode(key.slice('node:'.length));
    if (key.startsWith('ns:')) return this.syncNamespace(key.slice('ns:'.length));
  }

  private async syncNode(node: string): Promise<ProcessResult> {
    const npp = this.nodePodProbes.get(node);
    // The NodePodProbe controller creates it for a Ready node; its add event brings this key back.
    if (!npp) return;
    const next = nodeLivenessProbes(npp, this.pods.byIndex(LIVENESS_NODE_INDEX, node));
    if (!next) return;
    try {
      await this.ctx.client.patch(
        NODE_POD_PROBES,
        node,
        undefined,
        { metadata: { resourceVersion: npp.metadata.resourceVersion }, spec: { podProbes: next } },
        PatchStrategy.MergePatch,
      );
    } catch (err) {
      if (isNotFound(err)) return;
      // A PodProbeMarker wrote the same NodePodProbe first: its update event brings this key back with the new list.
      if (isConflict(err)) return { requeueAfterMs: 200 };
      throw err;
    }
  }

  private async syncNamespace(ns: string): Promise<ProcessResult> {
    const opted = this.pods.byIndex(LIVENESS_NAMESPACE_INDEX, ns);
    if (opted.length === 0) return;
    const nsPods = this.pods.byIndex(NAMESPACE_INDEX, ns);
    const cached = this.crrs.byIndex(NAMESPACE_INDEX, ns);
    const crrs = cached.flatMap((c) => livenessCrrView(c) ?? []);
    const seen = new Set(cached.map((c) => `${ns}/${c.metadata.name}`));
    for (const [key, c] of this.created) {
      // Seen by the cache, or never seen within the bound (deleted meanwhile): the cache is right from now on.
      if (seen.has(key) || Date.now() - c.at > CREATED_UNSEEN_MS) this.created.delete(key);
      else if (key.startsWith(`${ns}/`)) crrs.push(c.view);
    }
    const groups = new Map<string, Group>();
    const groupOf = new Map<string, string>();
    const rsOwners = new Map<string, Promise<KubeObject | undefined>>();
    for (const pod of opted) {
      const g = await this.groupFor(pod, nsPods, rsOwners);
      groupOf.set(pod.metadata.uid!, g.budget.source);
      if (!groups.has(g.budget.source)) groups.set(g.budget.source, g);
    }
    const now = rfc3339();
    let busy = false;
    const waitingByUid = new Map<string, { readonly condition: string; readonly event: string }>();
    for (const [source, g] of groups) {
      const members = g.pods.map((p) => {
        const npp = p.spec?.nodeName ? this.nodePodProbes.get(p.spec.nodeName) : undefined;
        const status = npp?.status?.podProbeStatuses?.find((s) => s.uid === p.metadata.uid);
        const m = budgetMember(p, status, crrs);
        // Only opted-in pods of this namespace restart through here; the others count for the budget only.
        return groupOf.get(m.uid) === source ? m : { ...m, failing: [] };
      });
      const admission = admitLivenessRestarts({ ...g.budget, members });
      if (members.some((m) => m.restarting) || admission.wait.length) busy = true;
      for (const w of admission.wait) {
        const condition = `restart of container ${w.container} waits: ${w.reason}`;
        waitingByUid.set(w.uid, { condition, event: `${condition}; ${w.detail}` });
      }
      for (const r of admission.restart) {
        const pod = g.pods.find((p) => p.metadata.uid === r.uid)!;
        await this.restart(pod, r.container, g.budget.source);
        busy = true;
      }
      if (admission.clusterWide) {
        if (!this.announced.has(source)) {
          this.announced.add(source);
          this.ctx.events.emit(
            g.subject.type,
            g.subject.obj,
            'Warning',
            EVENT_CLUSTER_WIDE_LIVENESS_FAILURE,
            admission.clusterWide.message,
          );
          this.ctx.logger.warn({ budget: source, ...admission.clusterWide }, 'cluster-wide liveness failure');
        }
      } else this.announced.delete(source);
    }
    for (const pod of opted) {
      const waiting = waitingByUid.get(pod.metadata.uid!);
      const cond = waitingCondition(pod, waiting?.condition, now);
      if (!cond) continue;
      try {
        await this.ctx.client.patch(PODS, pod.metadata.name!, ns, { status: { conditions: [cond] } }, PatchStrategy.StrategicMergePatch, {
          subresource: 'status',
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      // The condition says why and stays put while the reason does; the event, once per change, gives the counts.
      if (cond.status === 'True' && waiting) this.ctx.events.emit(PODS, pod, 'Warning', EVENT_LIVENESS_RESTART_WAITING, waiting.event);
    }
    return busy ? { requeueAfterMs: RECHECK_MS } : undefined;
  }

  private async restart(pod: Pod, container: string, source: string): Promise<void> {
    const crr = livenessCrr(pod, container);
    const key = `${pod.metadata.namespace}/${crr.metadata.name}`;
    try {
      await this.ctx.client.create(CONTAINER_RECREATE_REQUESTS, crr, pod.metadata.namespace);
    } catch (err) {
      if (isNotFound(err)) return;
      if (isAlreadyExists(err)) {
        this.created.set(key, { view: livenessCrrView(crr)!, at: Date.now() });
        return;
      }
      throw err;
    }
    this.created.set(key, { view: livenessCrrView(crr)!, at: Date.now() });
    this.ctx.events.emit(
      PODS,
      pod,
      'Normal',
      EVENT_LIVENESS_RESTART,
      `Liveness probe of container ${container} failed: restarting it through ContainerRecreateRequest ${crr.metadata.name} (within ${source})`,
    );
  }

  /**
   * The budget covering `pod`: its PodUnavailableBudget (the kruise.io/related-pub its controller writes), else the
   * first PodDisruptionBudget selecting it (by name), else its CloneSet's or Deployment's maxUnavailable, else 1.
   */
  private async groupFor(pod: Pod, nsPods: readonly Pod[], rsOwners: Map<string, Promise<KubeObject | undefined>>): Promise<Group> {
    const ns = pod.metadata.namespace!;
    const alone = (source: string): Group => ({
      budget: { source, maxUnavailable: 1 },
      subject: { type: PODS, obj: pod },
      pods: [pod],
    });
    if (unprotected(pod)) return alone(`pod ${ns}/${pod.metadata.name} (pub.kruise.io/no-protect: one restart at a time)`);

    const pubName = pod.metadata.annotations?.[ANNOTATION_RELATED_PUB];
    const pub = pubName ? this.pubs.get(`${ns}/${pubName}`) : undefined;
    if (pub && !pub.metadata.deletionTimestamp) {
      const pods = nsPods.filter((p) => p.metadata.annotations?.[ANNOTATION_RELATED_PUB] === pubName);
      const st = pub.status;
      const total = st?.totalReplicas ?? pods.length;
      // The controller's counts (expected replicas from the workloads) when it has written them, else the spec over the pods.
      const max = st && st.totalReplicas > 0 ? st.totalReplicas - st.desiredAvailable : budgetMaxUnavailable(pub.spec ?? {}, total);
      return {
        budget: { source: `PodUnavailableBudget ${ns}/${pubName}`, maxUnavailable: max },
        subject: { type: POD_UNAVAILABLE_BUDGETS, obj: pub },
        pods,
      };
    }

    const labels = pod.metadata.labels ?? {};
    const pdb = this.pdbs
      .byIndex(NAMESPACE_INDEX, ns)
      .filter((b) => !b.metadata.deletionTimestamp && selectorMatches(b.spec?.selector ?? {}, labels))
      .sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!))[0];
    if (pdb) {
      const pods = nsPods.filter((p) => selectorMatches(pdb.spec?.selector ?? {}, p.metadata.labels ?? {}));
      const st = pdb.status;
      // The disruption controller's counts when it runs, else the spec over the selected pods.
      const max =
        st?.expectedPods && st.desiredHealthy !== undefined
          ? st.expectedPods - st.desiredHealthy
          : budgetMaxUnavailable(pdb.spec ?? {}, pods.length);
      return {
        budget: { source: `PodDisruptionBudget ${ns}/${pdb.metadata.name}`, maxUnavailable: max },
        subject: { type: POD_DISRUPTION_BUDGETS, obj: pdb },
        pods,
      };
    }

    const owner = controllerOf(pod);
    if (owner?.kind === 'CloneSet') {
      const cs = this.cloneSets.get(`${ns}/${owner.name}`);
      if (cs) {
        const replicas = cs.spec?.replicas ?? 1;
        const max = Math.max(1, scaledCount(cs.spec?.updateStrategy?.maxUnavailable ?? '20%', replicas) ?? 1);
        return {
          budget: { source: `CloneSet ${ns}/${owner.name} (maxUnavailable ${max})`, maxUnavailable: max },
          subject: { type: CLONESETS, obj: cs },
          pods: nsPods.filter((p) => controllerOf(p)?.uid === owner.uid),
        };
      }
    }
    if (owner?.kind === 'ReplicaSet') {
      const deployment = await this.deploymentOf(ns, owner.name, rsOwners);
      if (deployment) {
        const d = deployment as Workload;
        const replicas = d.spec?.replicas ?? 1;
        const max = Math.max(1, scaledCount(d.spec?.strategy?.rollingUpdate?.maxUnavailable ?? '25%', replicas) ?? 1);
        const pods: Pod[] = [];
        for (const p of nsPods) {
          const o = controllerOf(p);
          if (o?.kind !== 'ReplicaSet') continue;
          if ((await this.deploymentOf(ns, o.name, rsOwners))?.metadata.uid === deployment.metadata.uid) pods.push(p);
        }
        return {
          budget: { source: `Deployment ${ns}/${deployment.metadata.name} (maxUnavailable ${max})`, maxUnavailable: max },
          subject: { type: DEPLOYMENTS, obj: deployment },
          pods,
        };
      }
    }
    if (owner) {
      return {
        budget: { source: `${owner.kind} ${ns}/${owner.name} (no budget: one restart at a time)`, maxUnavailable: 1 },
        subject: { type: PODS, obj: pod },
        pods: nsPods.filter((p) => controllerOf(p)?.uid === owner.uid),
      };
    }
    return alone(`pod ${ns}/${pod.metadata.name} (no budget and no owner: one restart at a time)`);
  }

  /** The Deployment owning a ReplicaSet, read once per reconcile. */
  private deploymentOf(ns: string, rs: string, memo: Map<string, Promise<KubeObject | undefined>>): Promise<KubeObject | undefined> {
    let p = memo.get(rs);
    if (!p) {
      p = (async () => {
        try {
          const set = await this.ctx.client.get<KubeObject>(REPLICA_SETS, rs, ns);
          const o = controllerOf(set);
          if (o?.kind !== 'Deployment') return undefined;
          return await this.ctx.client.get<KubeObject>(DEPLOYMENTS, o.name, ns);
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      })();
      memo.set(rs, p);
    }
    return p;
  }
}

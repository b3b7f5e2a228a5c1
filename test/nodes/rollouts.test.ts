// Rollouts and faults that only mean something on several nodes, on the real three-node cluster with the runtime
// from its image: an Advanced DaemonSet's in-place rollout steered by a node selector and a partition, one node at a
// time, and its surge rollout; one node's daemon restarted, or frozen, while the others go on serving their own nodes.
import { Watch, type V1Pod } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminKubeConfig, kubectl } from '../harness/index.js';
import {
  advancedDaemonSetStatus,
  apply,
  containerStatus,
  core,
  containerRecreateRequest,
  ctrOn,
  expectAppRecreatedInPlace,
  installRuntime,
  namespace,
  node,
  patchAdvancedDaemonSet,
  recreateContainer,
  requestContainerRecreate,
  setAdvancedDaemonSetImage,
  sleepingContainer,
  twoContainerPod,
  waitFor,
} from '../node/support.js';

const REVISION = 'controller-revision-hash';
const CANARY = 'e2e.cdk8s-kruise.io/canary';

const nodes = () => node().nodes;
const sorted = (values: readonly (string | undefined)[]) => [...values].sort();

async function livePods(ns: string, selector: string): Promise<V1Pod[]> {
  return (await core().listNamespacedPod({ namespace: ns, labelSelector: selector })).items.filter((p) => !p.metadata!.deletionTimestamp);
}

/** Our daemon's pods (not being deleted), by node name. */
async function daemonsByNode(): Promise<Map<string, V1Pod>> {
  return new Map((await livePods('kruise-system', 'control-plane=daemon')).map((p) => [p.spec!.nodeName!, p] as const));
}

const ready = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

/** Advanced DaemonSet `agent` of sleeping containers with these names, rolled out by `rollingUpdate`. */
function agentDaemonSet(containers: readonly string[], rollingUpdate: Record<string, unknown>) {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'DaemonSet',
    metadata: { name: 'agent' },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: { terminationGracePeriodSeconds: 2, containers: containers.map((c) => sleepingContainer(c)) },
      },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate },
    },
  };
}

beforeAll(async () => {
  await installRuntime();
}, 900_000);

describe('an Advanced DaemonSet rollout across three nodes', () => {
  it('a node selector picks the canary node, a partition holds the rest, one node at a time, every pod updated in place', async () => {
    const ns = await namespace('ads-rollout');
    const canary = nodes()[2]!.name;
    await kubectl(['label', 'node', canary, `${CANARY}=true`, '--overwrite']);
    try {
      await apply(ns, [
        agentDaemonSet(['agent', 'side'], {
          rollingUpdateType: 'InPlaceIfPossible',
          maxUnavailable: 1,
          selector: { matchLabels: { [CANARY]: 'true' } },
        }),
      ]);
      await waitFor(
        'agent available on 3 nodes',
        async () => (await advancedDaemonSetStatus(ns, 'agent')).numberAvailable === 3,
        120_000,
        300,
      );
      const before = new Map((await livePods(ns, 'app=agent')).map((p) => [p.spec!.nodeName!, p]));
      expect(sorted([...before.keys()])).toEqual(sorted(nodes().map((n) => n.name)));
      const oldRevision = before.get(canary)!.metadata!.labels![REVISION];

      // Watches the rollout (asserted at the end: a wait retries what throws): never more than maxUnavailable (1)
      // pod not Ready, never a pod replaced.
      let mostUnready = 0;
      const replaced = new Set<string>();
      const watch = async () => {
        const pods = await livePods(ns, 'app=agent');
        mostUnready = Math.max(mostUnready, pods.filter((p) => !ready(p)).length);
        for (const p of pods) if (p.metadata!.uid !== before.get(p.spec!.nodeName!)?.metadata!.uid) replaced.add(p.metadata!.name!);
        return pods;
      };
      const updatedNodes = (pods: V1Pod[], rev: string) =>
        sorted(
          pods
            .filter((p) => p.metadata!.labels![REVISION] === rev && containerStatus(p, 'agent').restartCount === 1 && ready(p))
            .map((p) => p.spec!.nodeName),
        );

      await setAdvancedDaemonSetImage(ns, 'agent', node().images.busybox2);
      let newRevision = '';
      await waitFor(
        'the canary node updated',
        async () => {
          const pods = await watch();
          newRevision = (await advancedDaemonSetStatus(ns, 'agent')).updateRevision ?? '';
          return newRevision !== '' && newRevision !== oldRevision && updatedNodes(pods, newRevision).length === 1;
        },
        120_000,
        300,
      );
      expect(updatedNodes(await watch(), newRevision)).toEqual([canary]);
      // The selector holds the other nodes: still at the old revision a few seconds later.
      for (let i = 0; i < 10; i++) {
        const pods = await watch();
        expect(
          pods
            .filter((p) => p.metadata!.labels![REVISION] === oldRevision)
            .map((p) => p.spec!.nodeName)
            .sort(),
        ).toEqual(
          nodes()
            .map((n) => n.name)
            .filter((n) => n !== canary)
            .sort(),
        );
        await new Promise((r) => setTimeout(r, 500));
      }

      // Without the selector, partition 1 keeps one pod at the old revision.
      await patchAdvancedDaemonSet(ns, 'agent', { spec: { updateStrategy: { rollingUpdate: { selector: null, partition: 1 } } } });
      await waitFor('2 of 3 updated (partition 1)', async () => updatedNodes(await watch(), newRevision).length === 2, 120_000, 300);
      for (let i = 0; i < 6; i++) {
        expect(updatedNodes(await watch(), newRevision)).toHaveLength(2);
        await new Promise((r) => setTimeout(r, 500));
      }

      await patchAdvancedDaemonSet(ns, 'agent', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
      await waitFor('all 3 updated', async () => updatedNodes(await watch(), newRevision).length === 3, 120_000, 300);
      const after = await watch();
      expect(mostUnready).toBeLessThanOrEqual(1);
      expect([...replaced]).toEqual([]);
      for (const p of after) {
        const was = before.get(p.spec!.nodeName!)!;
        expect(p.spec!.containers.map((c) => c.image)).toEqual([node().images.busybox2, node().images.busybox]);
        expect(containerStatus(p, 'agent').containerID).not.toBe(containerStatus(was, 'agent').containerID);
        expect(containerStatus(p, 'side').containerID).toBe(containerStatus(was, 'side').containerID);
      }
      const st = await advancedDaemonSetStatus(ns, 'agent');
      expect(st).toMatchObject({ desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3, updateRevision: newRevision });
    } finally {
      await kubectl(['label', 'node', canary, `${CANARY}-`]);
    }
  });

  it('maxSurge 1, maxUnavailable 0: each node gets its new pod beside the old one, one node at a time, never fewer than three serving', async () => {
    const ns = await namespace('ads-surge');
    // Every pod change in the API server's order (one resource's watch is ordered): a sampled list can miss the
    // moment an old pod goes.
    const events: Array<{ uid: string; node: string; ready: boolean; gone: boolean }> = [];
    const watch = await new Watch(adminKubeConfig()).watch(
      `/api/v1/namespaces/${ns}/pods`,
      {},
      (type: string, p: V1Pod) =>
        void events.push({
          uid: p.metadata!.uid!,
          node: p.spec?.nodeName ?? '',
          ready: ready(p),
          gone: type === 'DELETED' || p.metadata?.deletionTimestamp !== undefined,
        }),
      () => undefined,
    );
    try {
      await apply(ns, [agentDaemonSet(['agent'], { rollingUpdateType: 'Standard', maxSurge: 1, maxUnavailable: 0 })]);
      const status = () => advancedDaemonSetStatus(ns, 'agent');
      await waitFor('agent available on 3 nodes', async () => (await status()).numberAvailable === 3, 120_000, 300);
      const before = new Map((await livePods(ns, 'app=agent')).map((p) => [p.spec!.nodeName!, p.metadata!.uid!]));
      const from = events.length;
      await setAdvancedDaemonSetImage(ns, 'agent', node().images.busybox2);
      await waitFor(
        'every agent replaced',
        async () => {
          const st = await status();
          return st.updatedNumberScheduled === 3 && st.numberAvailable === 3 && (await livePods(ns, 'app=agent')).length === 3;
        },
        120_000,
        300,
      );
      await new Promise((r) => setTimeout(r, 3_000)); // a late extra pod or deletion would show by now
      const after = await livePods(ns, 'app=agent');
      expect(sorted(after.map((p) => p.spec!.nodeName))).toEqual(sorted(nodes().map((n) => n.name)));
      for (const p of after) {
        expect(p.spec!.containers[0]!.image).toBe(node().images.busybox2);
        expect(p.metadata!.uid).not.toBe(before.get(p.spec!.nodeName!));
      }
      // Replayed from the image change on: at every change, ready pods and pods in all (not going).
      const live = new Map<string, { node: string; ready: boolean }>();
      const step = (e: (typeof events)[number]) => (e.gone ? live.delete(e.uid) : live.set(e.uid, { node: e.node, ready: e.ready }));
      events.slice(0, from).forEach(step);
      let fewestReady = Infinity;
      let mostPods = 0;
      const surged = new Set<string>();
      for (const e of events.slice(from)) {
        step(e);
        const pods = [...live.values()];
        fewestReady = Math.min(fewestReady, pods.filter((p) => p.ready).length);
        mostPods = Math.max(mostPods, pods.length);
        for (const n of nodes()) if (pods.filter((p) => p.node === n.name).length === 2) surged.add(n.name);
      }
      expect(fewestReady).toBe(3);
      expect(mostPods).toBe(4);
      expect(sorted([...surged])).toEqual(sorted(nodes().map((n) => n.name)));
    } finally {
      watch.abort();
    }
  });
});

describe("one node's daemon restarted or frozen", () => {
  it('the other nodes keep their daemons and go on serving; the restarted one serves its node again', async () => {
    const [, nodeB, nodeC] = nodes();
    const first = await daemonsByNode();
    const onB = first.get(nodeB!.name)!;
    const nsC = await namespace('crr-c');
    const nsB = await namespace('crr-b');
    const podC = await twoContainerPod(nsC, nodeC!.name);
    const podB = await twoContainerPod(nsB, nodeB!.name);

    // Node B's daemon goes away (its DaemonSet makes a new one); meanwhile node C's carries out a request at once.
    await core().deleteNamespacedPod({ name: onB.metadata!.name!, namespace: 'kruise-system', gracePeriodSeconds: 0 });
    await recreateContainer(nsC, 'app', 'app');
    await expectAppRecreatedInPlace(nsC, podC);

    let second = await daemonsByNode();
    await waitFor(
      "node B's new daemon Ready",
      async () => {
        second = await daemonsByNode();
        const b = second.get(nodeB!.name);
        return b !== undefined && b.metadata!.uid !== onB.metadata!.uid && ready(b);
      },
      120_000,
      500,
    );
    // The daemons of A and C were not touched: same pods, no restart.
    for (const member of nodes().filter((n) => n !== nodeB)) {
      const was = first.get(member.name)!;
      const now = second.get(member.name)!;
      expect({ node: member.name, uid: now.metadata!.uid, restarts: containerStatus(now, 'daemon').restartCount }).toEqual({
        node: member.name,
        uid: was.metadata!.uid,
        restarts: containerStatus(was, 'daemon').restartCount,
      });
    }
    // The new daemon on node B serves its node.
    await recreateContainer(nsB, 'app', 'app');
    await expectAppRecreatedInPlace(nsB, podB);
  });

  it("a frozen daemon holds its own node's work only: node C's CRR completes meanwhile, node B's once it is thawed", async () => {
    const [, nodeB, nodeC] = nodes();
    const nsB = await namespace('frozen-b');
    const nsC = await namespace('frozen-c');
    const [podB, podC] = await Promise.all([twoContainerPod(nsB, nodeB!.name), twoContainerPod(nsC, nodeC!.name)]);
    const before = await daemonsByNode();
    const idB = containerStatus(before.get(nodeB!.name)!, 'daemon').containerID!.replace(/^containerd:\/\//, '');
    const phase = async (ns: string) => (await containerRecreateRequest(ns, 'restart-app')).status?.phase;
    // The cgroup freezer through node B's containerd: every process of the daemon stops at once, as SIGSTOP would.
    ctrOn(nodeB!, 'tasks', 'pause', idB);
    const frozenAt = Date.now();
    let thawedAt: number;
    try {
      for (const ns of [nsB, nsC]) await requestContainerRecreate(ns, 'app', 'app');
      await waitFor("node C's CRR Completed while node B's daemon is frozen", async () => (await phase(nsC)) === 'Completed', 60_000, 250);
      await expectAppRecreatedInPlace(nsC, podC);
      // Held for a while longer: node B's request is not carried out by anyone else.
      await new Promise((r) => setTimeout(r, Math.max(0, frozenAt + 12_000 - Date.now())));
      expect(await phase(nsB)).not.toBe('Completed');
      const stillB = await core().readNamespacedPod({ namespace: nsB, name: 'app' });
      expect(containerStatus(stillB, 'app').containerID).toBe(containerStatus(podB, 'app').containerID);
    } finally {
      ctrOn(nodeB!, 'tasks', 'resume', idB);
      thawedAt = Date.now();
    }
    await waitFor("node B's CRR Completed after the thaw", async () => (await phase(nsB)) === 'Completed', 60_000, 250);
    await expectAppRecreatedInPlace(nsB, podB);
    const completedBAfterThawMs = Date.now() - thawedAt;
    // No daemon restarted: the freeze (12 s) stayed within the liveness probe's budget, and the others never noticed.
    const after = await daemonsByNode();
    for (const member of nodes()) {
      const was = containerStatus(before.get(member.name)!, 'daemon');
      const now = containerStatus(after.get(member.name)!, 'daemon');
      expect({ node: member.name, restarts: now.restartCount, id: now.containerID }).toEqual({
        node: member.name,
        restarts: was.restartCount,
        id: was.containerID,
      });
    }
    console.log(`[nodes] frozen daemon: node B's CRR completed ${completedBAfterThawMs} ms after the thaw`);
  });
});

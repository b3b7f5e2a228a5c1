// Rollouts and faults that only mean something on several nodes, on the real three-node cluster with the runtime
// from its image: an Advanced DaemonSet's in-place rollout steered by a node selector and a partition, one node at a
// time; and one node's daemon restarted while the others go on serving their own nodes.
import type { V1Pod } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../harness/index.js';
import {
  advancedDaemonSetStatus,
  apply,
  containerStatus,
  core,
  expectAppRecreatedInPlace,
  installRuntime,
  namespace,
  node,
  patchAdvancedDaemonSet,
  recreateContainer,
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

const ready = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

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
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'DaemonSet',
          metadata: { name: 'agent' },
          spec: {
            selector: { matchLabels: { app: 'agent' } },
            template: {
              metadata: { labels: { app: 'agent' } },
              spec: { terminationGracePeriodSeconds: 2, containers: [sleepingContainer('agent'), sleepingContainer('side')] },
            },
            updateStrategy: {
              type: 'RollingUpdate',
              rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 1, selector: { matchLabels: { [CANARY]: 'true' } } },
            },
          },
        },
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
});

describe("one node's daemon restarted", () => {
  it('the other nodes keep their daemons and go on serving; the restarted one serves its node again', async () => {
    const [, nodeB, nodeC] = nodes();
    const daemons = async () =>
      new Map((await livePods('kruise-system', 'control-plane=daemon')).map((p) => [p.spec!.nodeName!, p] as const));
    const first = await daemons();
    const onB = first.get(nodeB!.name)!;
    const nsC = await namespace('crr-c');
    const nsB = await namespace('crr-b');
    const podC = await twoContainerPod(nsC, nodeC!.name);
    const podB = await twoContainerPod(nsB, nodeB!.name);

    // Node B's daemon goes away (its DaemonSet makes a new one); meanwhile node C's carries out a request at once.
    await core().deleteNamespacedPod({ name: onB.metadata!.name!, namespace: 'kruise-system', gracePeriodSeconds: 0 });
    await recreateContainer(nsC, 'app', 'app');
    await expectAppRecreatedInPlace(nsC, podC);

    let second = await daemons();
    await waitFor(
      "node B's new daemon Ready",
      async () => {
        second = await daemons();
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
});

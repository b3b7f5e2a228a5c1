// The runtime on a real three-node cluster (node A as in the single-node stories, nodes B and C in network
// namespaces of their own), installed the way users install it: image built by `npm run image` and imported into
// every node's containerd, manifests from dist/. Every node runs its own kubelet and its own copy of our daemon;
// the test only creates objects and reads state (the API, each node's containerd, each node's pod-log files).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Watch, type V1Pod } from '@kubernetes/client-node';
import { splitImageRef } from '../../src/contracts/index.js';
import { adminKubeConfig, kubectl } from '../harness/index.js';
import type { RealClusterNode } from '../harness/real-node.js';
import {
  apply,
  apps,
  containerStatus,
  core,
  expectAppRecreatedInPlace,
  getJson,
  installRuntime,
  namespace,
  node,
  advancedDaemonSetStatus,
  patchAdvancedDaemonSet,
  recreateContainer,
  setAdvancedDaemonSetImage,
  sleepingContainer,
  twoContainerPod,
  waitFor,
} from '../node/support.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `ctr` against one node's own containerd, in the kubelet's namespace. */
function ctrOn(member: RealClusterNode, ...args: string[]): string {
  return execFileSync('ctr', ['--address', member.containerdSocket, '-n', 'k8s.io', ...args], { encoding: 'utf8' });
}

/** Every line a container of a pod wrote, across restarts, read from its node's pod-log files (kubelet's CRI format). */
function podLogLines(member: RealClusterNode, pod: V1Pod, container: string): string[] {
  const dir = path.join(member.podLogsDir, `${pod.metadata!.namespace}_${pod.metadata!.name}_${pod.metadata!.uid}`, container);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^\d+\.log$/.test(f))
    .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean));
}

const nodes = () => node().nodes;
const names = () => nodes().map((n) => n.name);
const sorted = (values: readonly (string | undefined)[]) => [...values].sort();

describe('a three-node cluster', () => {
  it('has every node Ready, each with its own InternalIP', async () => {
    expect(nodes()).toHaveLength(3);
    const listed = (await core().listNode()).items;
    expect(sorted(listed.map((n) => n.metadata?.name))).toEqual(sorted(names()));
    for (const member of nodes()) {
      const n = listed.find((x) => x.metadata?.name === member.name)!;
      expect(n.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      expect(n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address).toBe(member.ip);
    }
  });

  it('runs a DaemonSet as exactly one pod per node', async () => {
    const ns = await namespace('ds');
    await apply(ns, [
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'everywhere' },
        spec: {
          selector: { matchLabels: { app: 'everywhere' } },
          template: {
            metadata: { labels: { app: 'everywhere' } },
            spec: { containers: [{ name: 'main', image: node().images.busybox, imagePullPolicy: 'IfNotPresent' }] },
          },
        },
      },
    ]);
    await waitFor(
      'DaemonSet everywhere ready on every node',
      async () => (await apps().readNamespacedDaemonSet({ name: 'everywhere', namespace: ns })).status?.numberReady === 3,
      120_000,
      250,
    );
    const pods = (await core().listNamespacedPod({ namespace: ns, labelSelector: 'app=everywhere' })).items;
    expect(pods).toHaveLength(3);
    expect(sorted(pods.map((p) => p.spec?.nodeName))).toEqual(sorted(names()));
    expect(pods.every((p) => p.status?.phase === 'Running')).toBe(true);
  });
});

describe('the runtime installed from dist/ and its image on three nodes', () => {
  beforeAll(async () => {
    await installRuntime();
  }, 900_000);

  it('runs one daemon per node, each from the image imported into that node', async () => {
    const daemons = (await core().listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=daemon' })).items;
    expect(sorted(daemons.map((p) => p.spec?.nodeName))).toEqual(sorted(names()));
    expect(daemons.every((p) => p.status?.phase === 'Running')).toBe(true);
    const image = daemons[0]!.spec!.containers[0]!.image!;
    for (const member of nodes()) expect(ctrOn(member, 'images', 'ls', '-q', `name==${image}`).trim()).toBe(image);
  });

  it('an ImagePullJob without a node selector pulls onto every node: one NodeImage per node reports it Succeeded', async () => {
    const ns = await namespace('pull');
    const image = node().images.pullOnly;
    const repo = image.slice(0, image.lastIndexOf(':'));
    const tag = image.slice(image.lastIndexOf(':') + 1);
    for (const member of nodes()) expect(ctrOn(member, 'images', 'ls', '-q', `name==${image}`).trim()).toBe('');
    await apply(ns, [
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ImagePullJob',
        metadata: { name: 'pull-everywhere' },
        spec: {
          image,
          parallelism: 3,
          completionPolicy: { type: 'Always', activeDeadlineSeconds: 120 },
          pullPolicy: { backoffLimit: 1, timeoutSeconds: 60 },
        },
      },
    ]);
    let job: any;
    await waitFor(
      'ImagePullJob pull-everywhere completed on 3 nodes',
      async () => {
        job = await getJson(['get', 'imagepulljobs.apps.kruise.io', '-n', ns, 'pull-everywhere']);
        return job.status?.completionTime !== undefined;
      },
      150_000,
      500,
    );
    expect(job.status).toMatchObject({ desired: 3, succeeded: 3, failed: 0 });
    const nodeImages = (await getJson(['get', 'nodeimages.apps.kruise.io'])).items as any[];
    expect(sorted(nodeImages.map((ni) => ni.metadata.name))).toEqual(sorted(names()));
    for (const ni of nodeImages) {
      const tags = (ni.status?.imageStatuses?.[repo]?.tags ?? []) as { tag: string; phase: string }[];
      expect({ node: ni.metadata.name, phase: tags.find((t) => t.tag === tag)?.phase }).toEqual({
        node: ni.metadata.name,
        phase: 'Succeeded',
      });
    }
    // The pulls reached each node's own containerd (through that node's daemon), not only the status.
    for (const member of nodes()) expect(ctrOn(member, 'images', 'ls', '-q', `name==${image}`).trim()).toBe(image);
  });

  it('an ImagePullJob with a node selector and parallelism 1 pulls on the selected nodes only, one node at a time', async () => {
    const ns = await namespace('pull-some');
    const image = node().images.pullOnly;
    const [nodeA, nodeB, nodeC] = nodes();
    // Order-independent start: the image is on no node (the story above pulled it everywhere).
    for (const member of nodes()) ctrOn(member, 'images', 'rm', image);
    const label = 'e2e.cdk8s-kruise.io/pull-here';
    for (const member of [nodeB!, nodeC!]) await kubectl(['label', 'node', member.name, `${label}=yes`, '--overwrite']);
    // Every NodeImage as the API server changed it, in order (one resource's watch is ordered by resourceVersion).
    const watched: any[] = [];
    const watch = await new Watch(adminKubeConfig()).watch(
      '/apis/apps.kruise.io/v1alpha1/nodeimages',
      {},
      (_type: string, obj: any) => void watched.push(structuredClone(obj)),
      () => undefined,
    );
    try {
      await apply(ns, [
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'ImagePullJob',
          metadata: { name: 'pull-some' },
          spec: {
            image,
            selector: { matchLabels: { [label]: 'yes' } },
            parallelism: 1,
            completionPolicy: { type: 'Always', activeDeadlineSeconds: 120 },
            pullPolicy: { backoffLimit: 1, timeoutSeconds: 60 },
          },
        },
      ]);
      let job: any;
      await waitFor(
        'ImagePullJob pull-some completed on the 2 selected nodes',
        async () => {
          job = await getJson(['get', 'imagepulljobs.apps.kruise.io', '-n', ns, 'pull-some']);
          return job.status?.completionTime !== undefined;
        },
        150_000,
        200,
      );
      expect(job.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0 });
      // One node at a time, from every NodeImage change in the order the API server made them (a sampled job
      // status can miss a pull that takes milliseconds): a node is pulling for the job from the change that puts the
      // job's tag in its spec until the one that reports that tag's version finished in its status.
      const uid = job.metadata.uid as string;
      const pulling = new Set<string>();
      const assigned: string[] = [];
      let most = 0;
      const { image: repo, tag } = splitImageRef(image);
      for (const ni of watched) {
        const name = ni.metadata.name as string;
        const spec = ni.spec?.images?.[repo]?.tags?.find((t: any) => t.tag === tag && t.ownerReferences?.some((o: any) => o.uid === uid));
        const status = ni.status?.imageStatuses?.[repo]?.tags?.find((t: any) => t.tag === tag);
        const finished = spec && status && (status.version ?? 0) === (spec.version ?? 0) && /^(Succeeded|Failed)$/.test(status.phase);
        if (spec && !finished) {
          if (!assigned.includes(name)) assigned.push(name);
          pulling.add(name);
        } else pulling.delete(name);
        most = Math.max(most, pulling.size);
      }
      expect(sorted(assigned)).toEqual(sorted([nodeB!.name, nodeC!.name]));
      expect(most).toBe(1);
      // On the selected nodes' own containerd, and not on node A's.
      for (const member of [nodeB!, nodeC!]) expect(ctrOn(member, 'images', 'ls', '-q', `name==${image}`).trim()).toBe(image);
      expect(ctrOn(nodeA!, 'images', 'ls', '-q', `name==${image}`).trim()).toBe('');
    } finally {
      watch.abort();
      for (const member of [nodeB!, nodeC!]) await kubectl(['label', 'node', member.name, `${label}-`]);
    }
  });

  it('an Advanced DaemonSet rolls out node by node: the selector picks the nodes, partition holds the rest, maxSurge keeps every node served', async () => {
    const ns = await namespace('ads-roll');
    const [, nodeB] = nodes();
    const label = 'e2e.cdk8s-kruise.io/upgrade-first';
    await kubectl(['label', 'node', nodeB!.name, `${label}=yes`, '--overwrite']);
    // Every pod change in the API server's order, for the surge step's "never fewer than three serving".
    const events: Array<{ uid: string; node: string; image: string; ready: boolean; gone: boolean }> = [];
    const watch = await new Watch(adminKubeConfig()).watch(
      `/api/v1/namespaces/${ns}/pods`,
      {},
      (type: string, p: V1Pod) =>
        void events.push({
          uid: p.metadata!.uid!,
          node: p.spec?.nodeName ?? '',
          image: p.spec!.containers[0]!.image!,
          ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
          gone: type === 'DELETED' || p.metadata?.deletionTimestamp !== undefined,
        }),
      () => undefined,
    );
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
              spec: { terminationGracePeriodSeconds: 2, containers: [sleepingContainer('agent')] },
            },
            updateStrategy: {
              type: 'RollingUpdate',
              rollingUpdate: { rollingUpdateType: 'Standard', maxUnavailable: 1, selector: { matchLabels: { [label]: 'yes' } } },
            },
          },
        },
      ]);
      const status = () => advancedDaemonSetStatus(ns, 'agent');
      await waitFor('3 agents available', async () => (await status()).numberAvailable === 3, 120_000, 300);
      const podsByNode = async () =>
        new Map(
          (await core().listNamespacedPod({ namespace: ns, labelSelector: 'app=agent' })).items
            .filter((p) => !p.metadata!.deletionTimestamp)
            .map((p) => [p.spec!.nodeName!, { uid: p.metadata!.uid!, image: p.spec!.containers[0]!.image! }] as const),
        );
      const first = await podsByNode();
      expect(sorted([...first.keys()])).toEqual(sorted(names()));
      const oldImage = node().images.busybox;
      const newImage = node().images.busybox2;

      // 1. The selector: only node B's pod is replaced; the other two keep their pods.
      await setAdvancedDaemonSetImage(ns, 'agent', newImage);
      await waitFor(
        "node B's agent updated",
        async () => (await status()).updatedNumberScheduled === 1 && (await status()).numberAvailable === 3,
        120_000,
        300,
      );
      await sleep(3_000); // a rollout that went on past the selector would show by now
      const second = await podsByNode();
      expect(second.get(nodeB!.name)!.image).toBe(newImage);
      for (const n of names().filter((n) => n !== nodeB!.name)) expect({ n, pod: second.get(n) }).toEqual({ n, pod: first.get(n) });

      // 2. No selector, partition 1: one more node, the first of the rest in the rollout's order (last name first).
      await patchAdvancedDaemonSet(ns, 'agent', { spec: { updateStrategy: { rollingUpdate: { selector: null, partition: 1 } } } });
      const rest = names()
        .filter((n) => n !== nodeB!.name)
        .sort()
        .reverse();
      await waitFor(
        'two agents updated',
        async () => (await status()).updatedNumberScheduled === 2 && (await status()).numberAvailable === 3,
        120_000,
        300,
      );
      await sleep(3_000);
      const third = await podsByNode();
      expect(third.get(rest[0]!)!.image).toBe(newImage);
      expect({ held: rest[1], pod: third.get(rest[1]!) }).toEqual({ held: rest[1], pod: first.get(rest[1]!) });
      expect(third.get(rest[1]!)!.image).toBe(oldImage);

      // 3. Partition 0 with maxSurge 1, maxUnavailable 0: the last node gets its new pod beside the old one, and
      // the old one goes only once the new one is ready.
      const surgeFrom = events.length;
      await patchAdvancedDaemonSet(ns, 'agent', {
        spec: { updateStrategy: { rollingUpdate: { partition: 0, maxSurge: 1, maxUnavailable: 0 } } },
      });
      await waitFor(
        'every agent updated',
        async () => {
          const st = await status();
          return st.updatedNumberScheduled === 3 && st.numberAvailable === 3 && st.currentNumberScheduled === 3;
        },
        120_000,
        300,
      );
      await sleep(3_000);
      const last = await podsByNode();
      for (const n of names()) expect({ n, image: last.get(n)!.image }).toEqual({ n, image: newImage });
      expect(last.get(rest[0]!)).toEqual(third.get(rest[0]!));
      // Replayed in order from the patch on: pods ready and not going, at every change.
      const live = new Map<string, { node: string; ready: boolean }>();
      for (const e of events.slice(0, surgeFrom))
        if (e.gone) live.delete(e.uid);
        else live.set(e.uid, { node: e.node, ready: e.ready });
      let fewestServing = Infinity;
      let mostOnHeldNode = 0;
      for (const e of events.slice(surgeFrom)) {
        if (e.gone) live.delete(e.uid);
        else live.set(e.uid, { node: e.node, ready: e.ready });
        const all = [...live.values()];
        fewestServing = Math.min(fewestServing, all.filter((p) => p.ready).length);
        mostOnHeldNode = Math.max(mostOnHeldNode, all.filter((p) => p.node === rest[1]).length);
      }
      expect(fewestServing).toBe(3);
      expect(mostOnHeldNode).toBe(2);
    } finally {
      watch.abort();
      await kubectl(['label', 'node', nodeB!.name, `${label}-`]);
    }
  });

  it("a frozen daemon holds its own node's work only: node C's CRR completes meanwhile, node B's once it is thawed", async () => {
    const [, nodeB, nodeC] = nodes();
    const nsB = await namespace('frozen-b');
    const nsC = await namespace('frozen-c');
    const [podB, podC] = await Promise.all([twoContainerPod(nsB, nodeB!.name), twoContainerPod(nsC, nodeC!.name)]);
    const daemons = async () =>
      (await core().listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=daemon' })).items;
    const before = await daemons();
    const daemonOf = (member: RealClusterNode) => before.find((p) => p.spec?.nodeName === member.name)!;
    const idB = containerStatus(daemonOf(nodeB!), 'daemon').containerID!.replace(/^containerd:\/\//, '');
    const crr = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name: 'restart-app' },
      spec: { podName: 'app', containers: [{ name: 'app' }], strategy: { forceRecreate: true } },
    };
    const phase = async (ns: string) =>
      (await getJson(['get', 'containerrecreaterequests.apps.kruise.io', '-n', ns, 'restart-app'])).status?.phase;
    // The cgroup freezer through node B's containerd: every process of the daemon stops at once, as SIGSTOP would.
    ctrOn(nodeB!, 'tasks', 'pause', idB);
    const frozenAt = Date.now();
    let thawedAt: number;
    try {
      for (const ns of [nsB, nsC]) await apply(ns, [crr]);
      await waitFor("node C's CRR Completed while node B's daemon is frozen", async () => (await phase(nsC)) === 'Completed', 60_000, 250);
      await expectAppRecreatedInPlace(nsC, podC);
      // Held for a while longer: node B's request is not carried out by anyone else.
      await new Promise((r) => setTimeout(r, Math.max(0, frozenAt + 12_000 - Date.now())));
      expect(await phase(nsB)).not.toBe('Completed');
      const stillB = (await core().readNamespacedPod({ namespace: nsB, name: 'app' })) as V1Pod;
      expect(containerStatus(stillB, 'app').containerID).toBe(containerStatus(podB, 'app').containerID);
    } finally {
      ctrOn(nodeB!, 'tasks', 'resume', idB);
      thawedAt = Date.now();
    }
    await waitFor("node B's CRR Completed after the thaw", async () => (await phase(nsB)) === 'Completed', 60_000, 250);
    await expectAppRecreatedInPlace(nsB, podB);
    const completedBAfterThawMs = Date.now() - thawedAt;
    // No daemon restarted: the freeze (12 s) stayed within the liveness probe's budget, and the others never noticed.
    const after = await daemons();
    for (const member of nodes()) {
      const was = containerStatus(daemonOf(member), 'daemon');
      const now = containerStatus(
        after.find((p) => p.spec?.nodeName === member.name)!,
        'daemon',
      );
      expect({ node: member.name, restarts: now.restartCount, id: now.containerID }).toEqual({
        node: member.name,
        restarts: was.restartCount,
        id: was.containerID,
      });
    }
    console.log(`[nodes] frozen daemon: node B's CRR completed ${completedBAfterThawMs} ms after the thaw`);
  });

  it("a ContainerRecreateRequest on a pod of node B is carried out by node B's daemon: container restarted, same pod", async () => {
    const nodeB = nodes()[1]!;
    const ns = await namespace('crr');
    const before = await twoContainerPod(ns, nodeB.name);
    const oldId = containerStatus(before, 'app').containerID!.replace(/^containerd:\/\//, '');
    // The container is node B's: its containerd has it, node A's does not.
    expect(ctrOn(nodeB, 'containers', 'ls', '-q')).toContain(oldId);
    expect(ctrOn(nodes()[0]!, 'containers', 'ls', '-q')).not.toContain(oldId);
    const crr = await recreateContainer(ns, 'app', 'app');
    expect(crr.metadata.labels).toMatchObject({
      'crr.apps.kruise.io/node-name': nodeB.name,
      'crr.apps.kruise.io/pod-uid': before.metadata!.uid,
    });
    await expectAppRecreatedInPlace(ns, before);
    // Which daemon stopped it: each daemon's own log, read from its node's pod-log files. Node B's logged the stop
    // of this container for this CRR; the daemons of A and C never mention the CRR.
    const daemons = (await core().listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=daemon' })).items;
    const mentions = (member: RealClusterNode) => {
      const pod = daemons.find((p) => p.spec?.nodeName === member.name)!;
      return podLogLines(member, pod, 'daemon').filter((l) => l.includes(`${ns}/restart-app`));
    };
    expect(mentions(nodeB).some((l) => l.includes('container stopped') && l.includes(oldId))).toBe(true);
    for (const member of nodes().filter((n) => n !== nodeB))
      expect({ node: member.name, lines: mentions(member) }).toEqual({ node: member.name, lines: [] });
  });
});

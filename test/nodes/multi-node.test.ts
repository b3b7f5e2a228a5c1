// The runtime on a real three-node cluster (node A as in the single-node stories, nodes B and C in network
// namespaces of their own), installed the way users install it: image built by `npm run image` and imported into
// every node's containerd, manifests from dist/. Every node runs its own kubelet and its own copy of our daemon;
// the test only creates objects and reads state (the API, each node's containerd, each node's pod-log files).
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
  ctrOn,
  expectAppRecreatedInPlace,
  getJson,
  installRuntime,
  namespace,
  node,
  recreateContainer,
  twoContainerPod,
  waitFor,
} from '../node/support.js';

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

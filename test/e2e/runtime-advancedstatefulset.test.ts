// The Advanced StatefulSet controller on the real kube-apiserver: `cdk8s-kruise controller` runs as a child process
// (strict permissions, access log checked against src/contracts/permissions.ts); the test plays the scheduler and the
// kubelet (binds pods, reports containers with the spec's images, computes Ready from readiness gates as the kubelet
// does). Real-node behaviour (container restarts, UIDs kept by a real kubelet) is proven in test/node.
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SidecarSetDefinition, StatefulSetDefinition } from '../../src/api/registry.js';
import { kubectl, mergePatch } from '../harness/index.js';
import { reportRunning } from './runtime/kubelet.js';
import { eventually, startController, type ControllerProcess } from './runtime/support.js';
import { setUpWorkloadSuite, tearDownWorkloadSuite } from './runtime/workload-suite.js';

let core: CoreV1Api;
let apps: AppsV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
const node = `node-asts-${process.pid}`;
const procs: ControllerProcess[] = [];
// Written at v1beta1 as upstream's clients do; the runtime reads the same objects at v1alpha1.
const G = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'statefulsets' } as const;

function sts(name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name, namespace: ns },
    spec: {
      replicas: 3,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, ...labels } },
        spec: {
          readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
          containers: [{ name: 'main', image: 'example.io/app:1' }],
        },
      },
      ...spec,
    },
  };
}

async function getSts(
  name: string,
): Promise<{ spec: Record<string, any>; status?: Record<string, any>; metadata: { uid: string; generation: number } }> {
  return (await custom.getNamespacedCustomObject({ ...G, namespace: ns, name })) as never;
}

async function patchSpec(name: string, spec: Record<string, unknown>) {
  await custom.patchNamespacedCustomObject({ ...G, namespace: ns, name, body: { spec } }, mergePatch);
}

async function podsOf(name: string, includeDeleting = false): Promise<V1Pod[]> {
  const list = await core.listNamespacedPod({ namespace: ns, labelSelector: `app=${name}` });
  return list.items
    .filter((p) => includeDeleting || !p.metadata!.deletionTimestamp)
    .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
}

/** Plays the kubelet for the pods of `name` (or only those `only` names): binds, reports containers running the spec's images, Ready from the gates. */
async function kubelet(name: string, only?: (p: V1Pod) => boolean): Promise<void> {
  for (const p of await podsOf(name)) if (!only || only(p)) await reportRunning(p, node);
}

async function settle<T>(name: string, pred: () => Promise<T | undefined | false>, what: string, timeoutMs = 30_000): Promise<T> {
  return eventually(
    async () => {
      await kubelet(name);
      return pred();
    },
    timeoutMs,
    what,
  );
}

const names = async (name: string) => (await podsOf(name)).map((p) => p.metadata!.name);
const revisionOf = (p: V1Pod) => p.metadata!.labels!['controller-revision-hash'];

beforeAll(async () => {
  ({ core, apps, custom, runtimeNs, ns } = await setUpWorkloadSuite([StatefulSetDefinition, SidecarSetDefinition], 'asts', node));
});

afterAll(async () => {
  await tearDownWorkloadSuite(procs, runtimeNs);
});

describe('Advanced StatefulSet controller on the real API server', () => {
  it('OrderedReady with reserveOrdinals [1]: pods 0, 2, 3 one after another, with identity, owner, revision and status', async () => {
    const p = await startController(runtimeNs, ['--webhook-port', '0']);
    procs.push(p);
    await p.waitReady();
    await custom.createNamespacedCustomObject({ ...G, namespace: ns, body: sts('db', { reserveOrdinals: [1] }) });
    // Ordered: without a kubelet only the first pod exists.
    await eventually(async () => ((await names('db')).length === 1 ? true : undefined), 20_000, 'first pod');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await names('db')).toEqual(['db-0']);
    await settle('db', async () => (await getSts('db')).status?.readyReplicas === 3, 'readyReplicas 3');
    expect(await names('db')).toEqual(['db-0', 'db-2', 'db-3']);
    const set = await getSts('db');
    const revs = (await apps.listNamespacedControllerRevision({ namespace: ns })).items.filter((r) =>
      r.metadata!.ownerReferences?.some((o) => o.uid === set.metadata.uid),
    );
    expect(revs).toHaveLength(1);
    for (const pod of await podsOf('db')) {
      expect(pod.spec!.hostname).toBe(pod.metadata!.name);
      expect(pod.spec!.subdomain).toBe('db');
      expect(pod.metadata!.labels).toMatchObject({
        'statefulset.kubernetes.io/pod-name': pod.metadata!.name,
        'apps.kubernetes.io/pod-index': pod.metadata!.name!.slice(3),
        'controller-revision-hash': revs[0]!.metadata!.name,
        'lifecycle.apps.kruise.io/state': 'Normal',
      });
      expect(pod.metadata!.ownerReferences).toEqual([
        expect.objectContaining({ apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'db', controller: true }),
      ]);
    }
    expect(set.status).toMatchObject({
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      updatedReadyReplicas: 3,
      currentRevision: revs[0]!.metadata!.name,
      updateRevision: revs[0]!.metadata!.name,
      observedGeneration: set.metadata.generation,
      labelSelector: 'app=db',
    });
  });

  it('InPlaceIfPossible image change: reverse ordinal order, one at a time, partition kept, UIDs kept', async () => {
    const uids = Object.fromEntries((await podsOf('db')).map((p) => [p.metadata!.name, p.metadata!.uid]));
    const before = revisionOf((await podsOf('db'))[0]!);
    await patchSpec('db', {
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', partition: 1, maxUnavailable: 1 } },
      template: {
        metadata: { labels: { app: 'db' } },
        spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }], containers: [{ name: 'main', image: 'example.io/app:2' }] },
      },
    });
    // Without the kubelet reporting the new image, only the highest ordinal is updated (maxUnavailable 1).
    const first = await eventually(
      async () => {
        const pods = await podsOf('db');
        return pods.find((p) => p.spec!.containers[0]!.image === 'example.io/app:2') ? pods : undefined;
      },
      20_000,
      'first in-place update',
    );
    await new Promise((r) => setTimeout(r, 1500));
    const pods = await podsOf('db');
    expect(pods.filter((p) => p.spec!.containers[0]!.image === 'example.io/app:2').map((p) => p.metadata!.name)).toEqual(['db-3']);
    expect(first.find((p) => p.metadata!.name === 'db-3')!.metadata!.labels!['lifecycle.apps.kruise.io/state']).toBe('Updating');
    // The kubelet reports db-3's new container; then db-2 follows; db-0 stays below the partition.
    const st = await settle(
      'db',
      async () => {
        const s = (await getSts('db')).status;
        return s?.updatedReplicas === 2 && s.readyReplicas === 3 && s.updatedReadyReplicas === 2 ? s : undefined;
      },
      'two pods updated',
    );
    const after = await podsOf('db');
    expect(after.map((p) => [p.metadata!.name, p.spec!.containers[0]!.image])).toEqual([
      ['db-0', 'example.io/app:1'],
      ['db-2', 'example.io/app:2'],
      ['db-3', 'example.io/app:2'],
    ]);
    for (const p of after) expect(p.metadata!.uid).toBe(uids[p.metadata!.name!]);
    expect(revisionOf(after[0]!)).toBe(before);
    expect(st).toMatchObject({ replicas: 3, currentReplicas: 1, updatedReplicas: 2, currentRevision: before });
    expect(st.updateRevision).not.toBe(before);
    // Partition 0 finishes the rollout, and the update revision becomes current.
    await patchSpec('db', { updateStrategy: { rollingUpdate: { partition: 0 } } });
    const done = await settle(
      'db',
      async () => {
        const s = (await getSts('db')).status;
        return s?.updatedReplicas === 3 && s.currentRevision === s.updateRevision && s.readyReplicas === 3 ? s : undefined;
      },
      'rollout complete',
    );
    expect(done.currentReplicas).toBe(3);
    expect((await podsOf('db')).every((p) => p.metadata!.uid === uids[p.metadata!.name!])).toBe(true);
  });

  it('a preDelete hook holds the scale-in of the highest ordinal until its label is removed', async () => {
    await custom.createNamespacedCustomObject({
      ...G,
      namespace: ns,
      body: sts('hooked', { replicas: 2, lifecycle: { preDelete: { labelsHandler: { hold: 'true' } } } }, { hold: 'true' }),
    });
    await settle('hooked', async () => (await getSts('hooked')).status?.readyReplicas === 2, 'two ready');
    await patchSpec('hooked', { replicas: 1 });
    await eventually(
      async () => {
        const p = (await podsOf('hooked')).find((x) => x.metadata!.name === 'hooked-1');
        return p?.metadata!.labels!['lifecycle.apps.kruise.io/state'] === 'PreparingDelete' ? p : undefined;
      },
      20_000,
      'hooked-1 PreparingDelete',
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(await names('hooked')).toEqual(['hooked-0', 'hooked-1']);
    await core.patchNamespacedPod({ name: 'hooked-1', namespace: ns, body: { metadata: { labels: { hold: null } } } }, mergePatch);
    await eventually(async () => ((await names('hooked')).length === 1 ? true : undefined), 20_000, 'hooked-1 deleted');
    expect(await names('hooked')).toEqual(['hooked-0']);
  });

  it('Parallel with claims: pods and claims at once; whenScaled Delete hands a condemned pod its claims; the scale subresource works', async () => {
    await custom.createNamespacedCustomObject({
      ...G,
      namespace: ns,
      body: sts('par', {
        podManagementPolicy: 'Parallel',
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
        ],
      }),
    });
    // Parallel: every pod exists before any is ready.
    await eventually(async () => ((await names('par')).length === 3 ? true : undefined), 20_000, 'three pods at once');
    for (const o of [0, 1, 2]) {
      const claim = await core.readNamespacedPersistentVolumeClaim({ name: `data-par-${o}`, namespace: ns });
      expect(claim.metadata!.labels).toMatchObject({ app: 'par' });
      const pod = await core.readNamespacedPod({ name: `par-${o}`, namespace: ns });
      expect(pod.spec!.volumes).toContainEqual(
        expect.objectContaining({ name: 'data', persistentVolumeClaim: { claimName: `data-par-${o}` } }),
      );
    }
    await settle('par', async () => (await getSts('par')).status?.readyReplicas === 3, 'three ready');
    const victimUid = (await core.readNamespacedPod({ name: 'par-2', namespace: ns })).metadata!.uid;
    await kubectl(['scale', '-n', ns, 'statefulsets.apps.kruise.io/par', '--replicas=2']);
    await eventually(async () => ((await names('par')).length === 2 ? true : undefined), 20_000, 'scaled to 2');
    const claim = await core.readNamespacedPersistentVolumeClaim({ name: 'data-par-2', namespace: ns });
    expect(claim.metadata!.ownerReferences).toContainEqual(expect.objectContaining({ kind: 'Pod', name: 'par-2', uid: victimUid }));
    const scale = JSON.parse(
      await kubectl(['get', '-n', ns, '--raw', `/apis/apps.kruise.io/v1beta1/namespaces/${ns}/statefulsets/par/scale`]),
    ) as {
      spec: { replicas: number };
      status: { selector: string };
    };
    expect(scale.spec.replicas).toBe(2);
    expect(scale.status.selector).toBe('app=par');
  });

  it('adopts a matching orphan again and releases a pod whose labels stop matching', async () => {
    await custom.createNamespacedCustomObject({ ...G, namespace: ns, body: sts('own', { replicas: 1 }) });
    await settle('own', async () => (await getSts('own')).status?.readyReplicas === 1, 'one ready');
    const uid = (await getSts('own')).metadata.uid;
    const controllerUid = async () =>
      (await core.readNamespacedPod({ name: 'own-0', namespace: ns })).metadata!.ownerReferences?.find((o) => o.controller)?.uid ?? 'none';
    const becomes = (want: string, what: string) =>
      eventually(async () => ((await controllerUid()) === want ? true : undefined), 20_000, what);
    await core.patchNamespacedPod({ name: 'own-0', namespace: ns, body: { metadata: { ownerReferences: null } } }, mergePatch);
    await becomes(uid, 'the orphaned own-0 adopted again');
    await core.patchNamespacedPod({ name: 'own-0', namespace: ns, body: { metadata: { labels: null } } }, mergePatch);
    await becomes('none', 'own-0 released once its labels no longer match');
    await core.patchNamespacedPod({ name: 'own-0', namespace: ns, body: { metadata: { labels: { app: 'own' } } } }, mergePatch);
    await becomes(uid, 'own-0 adopted once it matches again');
  });

  it("gives a pending pod back a claim deleted while it waited, as upstream's processReplica", async () => {
    await custom.createNamespacedCustomObject({
      ...G,
      namespace: ns,
      body: sts('pend', {
        replicas: 1,
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
        ],
      }),
    });
    // Nobody plays the kubelet here: the pod stays Pending.
    await eventually(async () => ((await names('pend')).length === 1 ? true : undefined), 20_000, 'pod pend-0');
    const first = await core.readNamespacedPersistentVolumeClaim({ name: 'data-pend-0', namespace: ns });
    await core.deleteNamespacedPersistentVolumeClaim({ name: 'data-pend-0', namespace: ns });
    // No kube-controller-manager runs here to lift the pvc-protection finalizer the apiserver adds.
    await core
      .patchNamespacedPersistentVolumeClaim({ name: 'data-pend-0', namespace: ns, body: { metadata: { finalizers: null } } }, mergePatch)
      .catch(() => undefined);
    const again = await eventually(
      async () => {
        const c = await core.readNamespacedPersistentVolumeClaim({ name: 'data-pend-0', namespace: ns }).catch(() => undefined);
        return c && c.metadata!.uid !== first.metadata!.uid && !c.metadata!.deletionTimestamp ? c : undefined;
      },
      20_000,
      'data-pend-0 created again',
    );
    expect(again.metadata!.labels).toMatchObject({ app: 'pend' });
    expect((await core.readNamespacedPod({ name: 'pend-0', namespace: ns })).status!.phase).toBe('Pending');
  });
});

// The CloneSet controller on the real kube-apiserver: `cdk8s-kruise controller` runs as a child process
// (strict permissions, access log checked against src/contracts/permissions.ts); the test plays the
// scheduler and the kubelet (binds pods, reports containers, computes Ready from readiness gates as the
// kubelet does). Real-node behaviour (restarts, IPs, images) is proven in test/node.
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloneSetDefinition, SidecarSetDefinition } from '../../src/api/registry.js';
import { createNamespace, kubectl, mergePatch } from '../harness/index.js';
import { reportRunning } from './runtime/kubelet.js';
import { eventually, startController, type ControllerProcess } from './runtime/support.js';
import { setUpWorkloadSuite, tearDownWorkloadSuite } from './runtime/workload-suite.js';

let core: CoreV1Api;
let apps: AppsV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
const node = `node-cloneset-${process.pid}`;
const procs: ControllerProcess[] = [];
const G = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'clonesets' } as const;

async function start(): Promise<ControllerProcess> {
  const p = await startController(runtimeNs, [
    '--leader-elect',
    '--leader-election-lease-duration',
    '4000ms',
    '--leader-election-renew-deadline',
    '3000ms',
    '--leader-election-retry-period',
    '1000ms',
    '--webhook-port',
    '0',
  ]);
  procs.push(p);
  await p.waitReady();
  return p;
}

interface CloneSetSpec {
  replicas?: number;
  image?: string;
  extra?: Record<string, unknown>;
  vct?: boolean;
}

function cloneSet(name: string, o: CloneSetSpec = {}) {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name, namespace: ns },
    spec: {
      replicas: o.replicas ?? 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'main', image: o.image ?? 'example.io/app:1' }] },
      },
      ...(o.vct
        ? {
            volumeClaimTemplates: [
              {
                metadata: { name: 'data', labels: { tier: 'cache' } },
                spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
              },
            ],
          }
        : {}),
      ...o.extra,
    },
  };
}

async function create(obj: ReturnType<typeof cloneSet>) {
  await custom.createNamespacedCustomObject({ ...G, namespace: ns, body: obj });
}

async function patchSpec(name: string, spec: Record<string, unknown>) {
  await custom.patchNamespacedCustomObject({ ...G, namespace: ns, name, body: { spec } }, mergePatch);
}

async function getCs(
  name: string,
): Promise<{ spec: Record<string, any>; status?: Record<string, any>; metadata: { uid: string; generation: number } }> {
  return (await custom.getNamespacedCustomObject({ ...G, namespace: ns, name })) as never;
}

async function podsOf(name: string, includeDeleting = false): Promise<V1Pod[]> {
  const list = await core.listNamespacedPod({ namespace: ns, labelSelector: `app=${name}` });
  return list.items.filter((p) => includeDeleting || !p.metadata!.deletionTimestamp);
}

/**
 * Plays the kubelet for every pod of `name`: binds unbound pods, reports the containers running with
 * their spec images, and computes Ready from container readiness AND every readiness gate (as the
 * kubelet does), keeping the conditions other writers set.
 */
async function kubelet(name: string): Promise<void> {
  for (const p of await podsOf(name)) await reportRunning(p, node);
}

/** Runs the kubelet until `pred` holds for the CloneSet (status and pods). */
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

beforeAll(async () => {
  // The manager also watches SidecarSets (pod webhook injection, SidecarSet controller): it is ready once that cache syncs.
  ({ core, apps, custom, runtimeNs, ns } = await setUpWorkloadSuite([CloneSetDefinition, SidecarSetDefinition], 'cloneset', node));
});

afterAll(async () => {
  const report = await tearDownWorkloadSuite(
    procs,
    runtimeNs,
    (l) => l.level >= 40 || (process.env.DEBUG_CLONESET !== undefined && l.msg === 'cloneset update'),
  );
  console.log(`[runtime permissions] ${report.calls} API calls recorded; declared but unused here: ${report.unused.join(', ') || 'none'}`);
});

describe('CloneSet controller on the real API server', () => {
  let ctl: ControllerProcess;

  it('creates pods with upstream names, labels, owner, readiness gates, PVCs and a ControllerRevision', async () => {
    ctl = await start();
    await create(cloneSet('web', { vct: true }));
    const pods = await eventually(async () => ((await podsOf('web')).length === 3 ? podsOf('web') : undefined), 20_000, '3 pods');
    const cs = await getCs('web');
    const revs = (await apps.listNamespacedControllerRevision({ namespace: ns })).items.filter((r) =>
      r.metadata!.ownerReferences?.some((o) => o.uid === cs.metadata.uid),
    );
    expect(revs).toHaveLength(1);
    const rev = revs[0]!;
    const hash = rev.metadata!.labels!['controller.kubernetes.io/hash']!;
    expect(rev.metadata!.name).toBe(`web-${hash}`);
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rev.metadata!.ownerReferences).toEqual([expect.objectContaining({ kind: 'CloneSet', uid: cs.metadata.uid, controller: true })]);
    for (const p of pods) {
      const id = p.metadata!.labels!['apps.kruise.io/cloneset-instance-id']!;
      expect(id).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(p.metadata!.name).toBe(`web-${id}`);
      expect(p.metadata!.generateName).toBe('web-');
      expect(p.metadata!.labels).toMatchObject({
        app: 'web',
        'controller-revision-hash': rev.metadata!.name,
        'pod-template-hash': hash,
        'lifecycle.apps.kruise.io/state': 'PreparingNormal',
      });
      expect(p.metadata!.annotations!['lifecycle.apps.kruise.io/timestamp']).toBeTruthy();
      expect(p.metadata!.ownerReferences).toEqual([
        expect.objectContaining({
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'CloneSet',
          name: 'web',
          controller: true,
          blockOwnerDeletion: true,
        }),
      ]);
      expect(p.spec!.readinessGates!.map((g) => g.conditionType).sort()).toEqual(['InPlaceUpdateReady', 'KruisePodReady']);
      const pvc = await core.readNamespacedPersistentVolumeClaim({ name: `data-${p.metadata!.name}`, namespace: ns });
      expect(pvc.metadata!.labels).toMatchObject({ tier: 'cache', app: 'web', 'apps.kruise.io/cloneset-instance-id': id });
      expect(pvc.metadata!.ownerReferences).toEqual([expect.objectContaining({ kind: 'CloneSet', uid: cs.metadata.uid })]);
      expect(p.spec!.volumes).toContainEqual(
        expect.objectContaining({ name: 'data', persistentVolumeClaim: { claimName: `data-${p.metadata!.name}` } }),
      );
    }
  });

  it('pods become Normal once scheduled, the gates turn True, and status counts them', async () => {
    const st = await settle(
      'web',
      async () => {
        const cs = await getCs('web');
        return cs.status?.availableReplicas === 3 ? cs.status : undefined;
      },
      'availableReplicas 3',
    );
    const cs = await getCs('web');
    expect(st).toMatchObject({
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      updatedReplicas: 3,
      updatedReadyReplicas: 3,
      expectedUpdatedReplicas: 3,
      observedGeneration: cs.metadata.generation,
      labelSelector: 'app=web',
      collisionCount: 0,
    });
    expect(st.updateRevision).toBe(st.currentRevision);
    for (const p of await podsOf('web')) {
      expect(p.metadata!.labels!['lifecycle.apps.kruise.io/state']).toBe('Normal');
      const types = Object.fromEntries((p.status!.conditions ?? []).map((c) => [c.type, c.status]));
      expect(types).toMatchObject({ InPlaceUpdateReady: 'True', KruisePodReady: 'True', Ready: 'True' });
    }
  });

  it('the scale subresource and kubectl scale work; podsToDelete deletes the named pod first', async () => {
    await kubectl(['scale', '-n', ns, 'clonesets.apps.kruise.io/web', '--replicas=5']);
    await settle('web', async () => (await getCs('web')).status?.availableReplicas === 5, 'scaled to 5');
    const scale = JSON.parse(
      await kubectl(['get', '-n', ns, '--raw', `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/clonesets/web/scale`]),
    ) as {
      spec: { replicas: number };
      status: { replicas: number; selector: string };
    };
    expect(scale.spec.replicas).toBe(5);
    expect(scale.status).toMatchObject({ replicas: 5, selector: 'app=web' });

    const victim = (await podsOf('web'))[2]!.metadata!.name!;
    await patchSpec('web', { replicas: 4, scaleStrategy: { podsToDelete: [victim] } });
    await settle(
      'web',
      async () => (await podsOf('web')).length === 4 && (await getCs('web')).status?.availableReplicas === 4,
      'scaled to 4',
    );
    expect((await podsOf('web')).map((p) => p.metadata!.name)).not.toContain(victim);
    // Housekeeping drops the name of the gone pod from podsToDelete.
    await eventually(
      async () => ((await getCs('web')).spec.scaleStrategy?.podsToDelete ?? []).length === 0,
      10_000,
      'podsToDelete emptied',
    );
  });

  it('a restarted controller (SIGKILL) creates no duplicate pods and keeps reconciling', async () => {
    await patchSpec('web', { replicas: 6 });
    // Kill right after the scale-up started, before the status caught up.
    await eventually(async () => (await podsOf('web')).length > 4, 10_000, 'scale-up started');
    await ctl.stop('SIGKILL');
    ctl = await start();
    await settle('web', async () => (await getCs('web')).status?.availableReplicas === 6, 'scaled to 6 after restart', 40_000);
    await new Promise((r) => setTimeout(r, 1500));
    const pods = await podsOf('web');
    expect(pods).toHaveLength(6);
    expect(new Set(pods.map((p) => p.metadata!.labels!['apps.kruise.io/cloneset-instance-id'])).size).toBe(6);
  });

  it('in-place image update with partition: InPlaceUpdateReady goes False, state Updating → Normal, UID kept', async () => {
    const before = new Map((await podsOf('web')).map((p) => [p.metadata!.name!, p.metadata!.uid!]));
    await patchSpec('web', {
      updateStrategy: { type: 'InPlaceIfPossible', partition: 4, maxUnavailable: 1 },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'example.io/app:2' }] } },
    });
    // Catch one pod mid-update before the fake kubelet reports the new image.
    const updating = await eventually(
      async () => (await podsOf('web')).find((p) => p.metadata!.labels!['lifecycle.apps.kruise.io/state'] === 'Updating'),
      20_000,
      'a pod in Updating',
    );
    expect(updating.spec!.containers[0]!.image).toBe('example.io/app:2');
    expect(updating.status!.conditions!.find((c) => c.type === 'InPlaceUpdateReady')?.status).toBe('False');
    const state = JSON.parse(updating.metadata!.annotations!['apps.kruise.io/inplace-update-state']!) as Record<string, any>;
    expect(state.revision).toBe(updating.metadata!.labels!['controller-revision-hash']);
    expect(Object.keys(state.lastContainerStatuses)).toEqual(['main']);

    const st = await settle(
      'web',
      async () => {
        const s = (await getCs('web')).status;
        return s?.updatedReplicas === 2 && s.updatedReadyReplicas === 2 && s.availableReplicas === 6 ? s : undefined;
      },
      '2 pods updated in place (partition 4 of 6)',
      60_000,
    );
    expect(st.expectedUpdatedReplicas).toBe(2);
    expect(st.updateRevision).not.toBe(st.currentRevision);
    const pods = await podsOf('web');
    for (const p of pods) expect(before.get(p.metadata!.name!)).toBe(p.metadata!.uid);
    const updated = pods.filter((p) => p.spec!.containers[0]!.image === 'example.io/app:2');
    expect(updated).toHaveLength(2);
    for (const p of updated) {
      expect(p.metadata!.labels!['lifecycle.apps.kruise.io/state']).toBe('Normal');
      expect(p.metadata!.labels!['controller-revision-hash']).toBe(st.updateRevision);
    }
    // One event per pod updated, on the CloneSet as upstream's (none on the pods).
    const inPlaceEvents = await eventually(
      async () => {
        const items = (await core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.reason === 'SuccessfulUpdatePodInPlace');
        return items.length >= 2 ? items : undefined;
      },
      10_000,
      'SuccessfulUpdatePodInPlace events',
    );
    expect(inPlaceEvents.map((e) => `${e.involvedObject.kind}/${e.involvedObject.name}`)).toEqual(['CloneSet/web', 'CloneSet/web']);
    expect(inPlaceEvents.map((e) => e.message).sort()).toEqual(
      updated.map((p) => `successfully update pod ${p.metadata!.name} in-place(revision ${st.updateRevision})`).sort(),
    );
  });

  it('ReCreate update replaces pods; a rollback reuses the previous revision (bumped) and recreates again', async () => {
    // A shell command with `&` (as real pods have): the revision's stored data must survive the API
    // server's re-encoding when the rollback renumbers it.
    const command = ['sh', '-c', 'sleep 1 & wait $!'];
    const rec = cloneSet('rec', { replicas: 2, extra: { updateStrategy: { type: 'ReCreate', maxUnavailable: 2 } } });
    Object.assign(rec.spec.template.spec.containers[0]!, { command });
    await create(rec);
    const first = await settle(
      'rec',
      async () => {
        const s = (await getCs('rec')).status;
        return s?.availableReplicas === 2 ? s : undefined;
      },
      'rec available',
    );
    const uids1 = (await podsOf('rec')).map((p) => p.metadata!.uid);
    await patchSpec('rec', {
      template: { metadata: { labels: { app: 'rec' } }, spec: { containers: [{ name: 'main', image: 'example.io/app:2', command }] } },
    });
    const second = await settle(
      'rec',
      async () => {
        const s = (await getCs('rec')).status;
        return s && s.updateRevision !== first.updateRevision && s.updatedReplicas === 2 && s.availableReplicas === 2 && s.replicas === 2
          ? s
          : undefined;
      },
      'recreated at revision 2',
      40_000,
    );
    const pods2 = await podsOf('rec');
    expect(pods2.every((p) => !uids1.includes(p.metadata!.uid))).toBe(true);
    expect(pods2.every((p) => p.spec!.containers[0]!.image === 'example.io/app:2')).toBe(true);
    expect(second.currentRevision).toBe(second.updateRevision);

    await patchSpec('rec', {
      template: { metadata: { labels: { app: 'rec' } }, spec: { containers: [{ name: 'main', image: 'example.io/app:1', command }] } },
    });
    const third = await settle(
      'rec',
      async () => {
        const s = (await getCs('rec')).status;
        return s && s.updateRevision === first.updateRevision && s.updatedReplicas === 2 && s.availableReplicas === 2 ? s : undefined;
      },
      'rolled back to revision 1',
      40_000,
    );
    expect(third.updateRevision).toBe(first.updateRevision);
    const rev = await apps.readNamespacedControllerRevision({ name: first.updateRevision, namespace: ns });
    expect(rev.revision).toBe(3);
    expect((await podsOf('rec')).every((p) => p.spec!.containers[0]!.image === 'example.io/app:1')).toBe(true);
  });

  it('preDelete hook: scale-in holds the pod in PreparingDelete until the hook label goes', async () => {
    await create(
      cloneSet('hook', {
        replicas: 2,
        extra: { lifecycle: { preDelete: { labelsHandler: { 'example.io/hold': 'true' } } } },
      }),
    );
    await settle('hook', async () => (await getCs('hook')).status?.availableReplicas === 2, 'hook available');
    for (const p of await podsOf('hook')) {
      await core.patchNamespacedPod(
        { name: p.metadata!.name!, namespace: ns, body: { metadata: { labels: { 'example.io/hold': 'true' } } } },
        mergePatch,
      );
    }
    await patchSpec('hook', { replicas: 1 });
    const held = await settle(
      'hook',
      async () => (await podsOf('hook')).find((p) => p.metadata!.labels!['lifecycle.apps.kruise.io/state'] === 'PreparingDelete'),
      'a pod in PreparingDelete',
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect(await podsOf('hook')).toHaveLength(2);
    expect((await getCs('hook')).status).toMatchObject({ replicas: 2, availableReplicas: 1 });
    await core.patchNamespacedPod(
      { name: held.metadata!.name!, namespace: ns, body: { metadata: { labels: { 'example.io/hold': null } } } },
      mergePatch,
    );
    await eventually(async () => (await podsOf('hook')).length === 1, 20_000, 'the released pod deleted');
    expect((await podsOf('hook')).map((p) => p.metadata!.name)).not.toContain(held.metadata!.name);
  });

  it('FailedScale is set while pods cannot be created and cleared once they can', async () => {
    await core.createNamespacedResourceQuota({ namespace: ns, body: { metadata: { name: 'pods' }, spec: { hard: { pods: '0' } } } });
    // The quota controller is not running here: a quota's status must be filled in for admission to enforce it.
    await core.replaceNamespacedResourceQuotaStatus({
      name: 'pods',
      namespace: ns,
      body: {
        metadata: { name: 'pods', namespace: ns },
        spec: { hard: { pods: '0' } },
        status: { hard: { pods: '0' }, used: { pods: '0' } },
      },
    });
    await create(cloneSet('quota', { replicas: 1 }));
    const cond = await eventually(
      async () =>
        ((await getCs('quota')).status?.conditions as Array<Record<string, string>> | undefined)?.find((c) => c.type === 'FailedScale'),
      20_000,
      'FailedScale',
    );
    expect(cond).toMatchObject({ status: 'True', message: expect.stringMatching(/forbidden|quota/i) });
    await core.deleteNamespacedResourceQuota({ name: 'pods', namespace: ns });
    await eventually(
      async () => {
        const s = (await getCs('quota')).status;
        return s?.replicas === 1 && !(s.conditions ?? []).some((c: { type: string }) => c.type === 'FailedScale');
      },
      30_000,
      'FailedScale cleared',
    );
  });

  it('progressDeadlineSeconds: Progressing is updated, exceeded at the deadline, available, paused, partition available, removed', async () => {
    type Cond = { type: string; status: string; reason?: string; message?: string; lastUpdateTime?: string };
    const progressing = async () => ((await getCs('pds')).status?.conditions as Cond[] | undefined)?.find((c) => c.type === 'Progressing');
    /** Waits for the reason, playing the kubelet or not (unscheduled pods never become ready). */
    const waitFor = async (reason: string, withKubelet: boolean, timeoutMs = 30_000): Promise<Cond> => {
      const pred = async () => {
        const c = await progressing();
        return c?.reason === reason ? c : undefined;
      };
      return withKubelet ? settle('pds', pred, reason, timeoutMs) : eventually(pred, timeoutMs, reason);
    };

    // No kubelet yet: the pods stay unscheduled, so nothing but the deadline can move the condition.
    await create(cloneSet('pds', { replicas: 2, extra: { progressDeadlineSeconds: 8 } }));
    const updated = await waitFor('CloneSetUpdated', false);
    expect(updated).toMatchObject({ status: 'True', message: 'CloneSet is progressing' });

    const exceeded = await waitFor('ProgressDeadlineExceeded', false);
    const rev = (await getCs('pds')).status!.updateRevision as string;
    expect(exceeded).toMatchObject({ status: 'False', message: `CloneSet revision ${rev} has timed out progressing` });
    // Reported by the requeue at the deadline, measured from when the rollout was first seen progressing.
    expect(Date.parse(exceeded.lastUpdateTime!) - Date.parse(updated.lastUpdateTime!)).toBeGreaterThanOrEqual(8_000);

    expect(await waitFor('CloneSetAvailable', true)).toMatchObject({ status: 'True', message: 'CloneSet is available' });

    // A paused rollout of a new template is reported as paused, and its pods keep the old image.
    await patchSpec('pds', {
      progressDeadlineSeconds: 600,
      updateStrategy: { paused: true },
      template: cloneSet('pds', { image: 'example.io/app:2' }).spec.template,
    });
    expect(await waitFor('CloneSetPaused', true)).toMatchObject({ status: 'True', message: 'CloneSet is paused' });
    expect((await podsOf('pds')).map((p) => p.spec!.containers[0]!.image)).toEqual(['example.io/app:1', 'example.io/app:1']);

    // Resumed with a partition keeping one pod back: once the other is updated and available, partition available.
    await patchSpec('pds', { updateStrategy: { paused: false, partition: 1 } });
    expect(await waitFor('ProgressPartitionAvailable', true)).toMatchObject({
      status: 'True',
      message: 'CloneSet has been paused due to partition ready',
    });
    expect((await podsOf('pds')).map((p) => p.spec!.containers[0]!.image).sort()).toEqual(['example.io/app:1', 'example.io/app:2']);

    // MaxInt32 means no deadline: the condition goes.
    await patchSpec('pds', { progressDeadlineSeconds: 2147483647 });
    await eventually(async () => (await getCs('pds')).status && !(await progressing()), 20_000, 'Progressing removed');
  });
  it('adopts an orphan pod its selector matches and releases a pod relabelled out of it, reading only its namespace', async () => {
    const otherNs = await createNamespace('cloneset-other');
    const bare = (name: string, namespace: string) => ({
      metadata: { name, namespace, labels: { app: 'adopt' } },
      spec: { containers: [{ name: 'main', image: 'example.io/app:1' }] },
    });
    // An orphan in the CloneSet's namespace, and a pod with the same labels in another namespace, exist first.
    await core.createNamespacedPod({ namespace: ns, body: bare('adopt-orphan', ns) });
    await core.createNamespacedPod({ namespace: otherNs, body: bare('adopt-elsewhere', otherNs) });
    // Paused: the adopted pod, of no revision of the CloneSet, is not recreated by the update meanwhile.
    await create(cloneSet('adopt', { replicas: 1, extra: { updateStrategy: { paused: true } } }));
    const uid = (await getCs('adopt')).metadata.uid;
    const ownedBy = (p: V1Pod) => !!p.metadata!.ownerReferences?.some((o) => o.uid === uid && o.controller);
    // The orphan is adopted and fills the one replica: no pod is created.
    await eventually(async () => ownedBy(await core.readNamespacedPod({ name: 'adopt-orphan', namespace: ns })), 20_000, 'orphan adopted');
    await settle('adopt', async () => (await getCs('adopt')).status?.availableReplicas === 1, 'the adopted pod available');
    expect((await podsOf('adopt')).map((p) => p.metadata!.name)).toEqual(['adopt-orphan']);
    // Relabelled out of the selector, it loses its owner reference and a new pod takes its place.
    await core.patchNamespacedPod({ name: 'adopt-orphan', namespace: ns, body: { metadata: { labels: { app: 'released' } } } }, mergePatch);
    await eventually(async () => !ownedBy(await core.readNamespacedPod({ name: 'adopt-orphan', namespace: ns })), 20_000, 'pod released');
    const pods = await settle(
      'adopt',
      async () => {
        const ps = await podsOf('adopt');
        const replaced = ps.length === 1 && ps[0]!.metadata!.name !== 'adopt-orphan';
        return replaced && (await getCs('adopt')).status?.availableReplicas === 1 ? ps : undefined;
      },
      'the released pod replaced',
    );
    expect(pods).toHaveLength(1);
    expect(pods.every(ownedBy)).toBe(true);
    expect((await core.readNamespacedPod({ name: 'adopt-elsewhere', namespace: otherNs })).metadata!.ownerReferences ?? []).toEqual([]);
  });
});

describe('CloneSet in-place update of prioritised containers', () => {
  it('updates the container of the highest launch priority first and the next batch once it is ready', async () => {
    await start();
    // The barrier env is what the pod webhook gives containers with KRUISE_CONTAINER_PRIORITY (no webhook runs here).
    const barrier = (p: number) => ({
      name: 'KRUISE_CONTAINER_BARRIER',
      valueFrom: { configMapKeyRef: { name: 'prio-barrier', key: `p_${p}` } },
    });
    const template = (nginx: string, redis: string) => ({
      metadata: { labels: { app: 'prio' } },
      spec: {
        containers: [
          { name: 'nginx', image: nginx, env: [barrier(0)] },
          { name: 'redis', image: redis, env: [barrier(10)] },
        ],
      },
    });
    const cs = cloneSet('prio', { replicas: 1 });
    cs.spec.template = template('example.io/nginx:1', 'example.io/redis:1') as never;
    (cs.spec as Record<string, unknown>).updateStrategy = { type: 'InPlaceIfPossible' };
    await create(cs);
    await settle('prio', async () => (await getCs('prio')).status?.availableReplicas === 1, 'the pod available');
    const uid = (await podsOf('prio'))[0]!.metadata!.uid;
    await patchSpec('prio', { template: template('example.io/nginx:2', 'example.io/redis:2') });
    // First batch: redis only; nginx waits in the state. No kubelet runs yet, so the pod stays there.
    const first = await eventually(
      async () => {
        const p = (await podsOf('prio'))[0];
        return p?.metadata!.annotations?.['apps.kruise.io/inplace-update-state'] ? p : undefined;
      },
      20_000,
      'the first batch patched',
    );
    const images = (p: V1Pod) => Object.fromEntries(p.spec!.containers.map((c) => [c.name, c.image]));
    expect(images(first)).toEqual({ nginx: 'example.io/nginx:1', redis: 'example.io/redis:2' });
    const s1 = JSON.parse(first.metadata!.annotations!['apps.kruise.io/inplace-update-state']!) as Record<string, any>;
    expect(s1.containerBatchesRecord.map((b: { containers: string[] }) => b.containers)).toEqual([['redis']]);
    expect(s1.nextContainerImages).toEqual({ nginx: 'example.io/nginx:2' });
    expect(s1.preCheckBeforeNext).toEqual({ containersRequiredReady: ['redis'] });
    // Held while redis is not running its new image.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(images((await podsOf('prio'))[0]!)).toEqual({ nginx: 'example.io/nginx:1', redis: 'example.io/redis:2' });
    // The kubelet reports redis running and ready on its new image: the second batch follows, then the update completes.
    const done = await settle(
      'prio',
      async () => {
        const p = (await podsOf('prio'))[0];
        const st = (await getCs('prio')).status;
        return p &&
          p.metadata!.labels!['lifecycle.apps.kruise.io/state'] === 'Normal' &&
          st?.updatedReadyReplicas === 1 &&
          images(p).nginx === 'example.io/nginx:2'
          ? p
          : undefined;
      },
      'the second batch patched and the update complete',
      60_000,
    );
    expect(done.metadata!.uid).toBe(uid);
    const s2 = JSON.parse(done.metadata!.annotations!['apps.kruise.io/inplace-update-state']!) as Record<string, any>;
    expect(s2.containerBatchesRecord.map((b: { containers: string[] }) => b.containers)).toEqual([['redis'], ['nginx']]);
    expect(s2.nextContainerImages).toBeUndefined();
    expect(done.status!.conditions!.find((c) => c.type === 'InPlaceUpdateReady')?.status).toBe('True');
  });
});

describe('CloneSet controller across a leader change', () => {
  it('the standby that takes over acts on later changes (scale and template)', async () => {
    // The managers of the cases above share the lease: stop them, so one of the two started here leads.
    await Promise.all(procs.map((p) => p.stop('SIGTERM')));
    const a = await start();
    const b = await start();
    await create(cloneSet('lead', { replicas: 2 }));
    await settle('lead', async () => (await getCs('lead')).status?.availableReplicas === 2, 'lead available');
    // Stop whichever leads; the other takes over the lease.
    const leader = await eventually(
      async () =>
        (await a.metric('leader_election_master_status')) === 1
          ? a
          : (await b.metric('leader_election_master_status')) === 1
            ? b
            : undefined,
      20_000,
      'one of the two leads',
    );
    const standby = leader === a ? b : a;
    await leader.stop('SIGTERM');
    await eventually(async () => (await standby.metric('leader_election_master_status')) === 1, 20_000, 'standby leads');
    await patchSpec('lead', { replicas: 3 });
    await settle('lead', async () => (await getCs('lead')).status?.availableReplicas === 3, 'scaled by the new leader', 30_000);
    const gen = (await getCs('lead')).metadata.generation;
    await patchSpec('lead', {
      template: { metadata: { labels: { app: 'lead' } }, spec: { containers: [{ name: 'main', image: 'example.io/app:2' }] } },
    });
    await settle(
      'lead',
      async () => {
        const s = (await getCs('lead')).status;
        return s && s.observedGeneration > gen && s.updatedReplicas === 3 && s.availableReplicas === 3 ? s : undefined;
      },
      'template rolled out by the new leader',
      40_000,
    );
  });
});

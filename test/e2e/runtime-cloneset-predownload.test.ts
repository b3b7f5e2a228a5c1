// Image pre-download for CloneSet in-place updates (gate PreDownloadImageForInPlaceUpdate) on the real kube-apiserver:
// `cdk8s-kruise controller` runs as a child process with the gate on (strict permissions, access log checked against
// src/contracts/permissions.ts); the test plays the scheduler and the kubelet. The pulls themselves are the daemon's
// (test/node); here: which ImagePullJobs the CloneSet controller writes, their fields, the revision labels, their
// deletion after the rollout, and a manager killed mid-way; and one Advanced StatefulSet, whose controller shares the rules.
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1ControllerRevision, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CloneSetDefinition,
  ImagePullJobDefinition,
  NodeImageDefinition,
  SidecarSetDefinition,
  StatefulSetDefinition,
} from '../../src/api/registry.js';
import { mergePatch } from '../harness/index.js';
import { reportRunning } from './runtime/kubelet.js';
import { eventually, startController, type ControllerProcess } from './runtime/support.js';
import { setUpWorkloadSuite, tearDownWorkloadSuite } from './runtime/workload-suite.js';

let core: CoreV1Api;
let apps: AppsV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
const node = `node-predownload-${process.pid}`;
const procs: ControllerProcess[] = [];
const CS = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'clonesets' } as const;
const JOBS = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'imagepulljobs' } as const;
const CREATED = 'apps.kruise.io/pre-predownload-created';
const IGNORED = 'apps.kruise.io/image-predownload-ignored';

type Obj = Record<string, any>;

async function start(): Promise<ControllerProcess> {
  const p = await startController(runtimeNs, ['--webhook-port', '0', '--feature-gates', 'PreDownloadImageForInPlaceUpdate=true']);
  procs.push(p);
  await p.waitReady();
  return p;
}

function cloneSet(name: string, replicas: number, updateStrategy: Obj, annotations: Record<string, string> = {}) {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name, namespace: ns, annotations },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: { team: 'web' } },
        spec: { imagePullSecrets: [{ name: 'registry' }], containers: [{ name: 'main', image: 'example.io/app:1' }] },
      },
      updateStrategy,
    },
  };
}

const setImage = (name: string, image: string) =>
  custom.patchNamespacedCustomObject(
    {
      ...CS,
      namespace: ns,
      name,
      body: { spec: { template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } } } },
    },
    mergePatch,
  );
const getCs = async (name: string): Promise<Obj> => (await custom.getNamespacedCustomObject({ ...CS, namespace: ns, name })) as Obj;

async function podsOf(name: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: `app=${name}` })).items.filter(
    (p) => !p.metadata!.deletionTimestamp,
  );
}

/** Plays the kubelet for the CloneSet's pods until `pred` holds. */
async function settle<T>(name: string, pred: () => Promise<T | undefined | false>, what: string, timeoutMs = 30_000): Promise<T> {
  return eventually(
    async () => {
      for (const p of await podsOf(name)) await reportRunning(p, node);
      return pred();
    },
    timeoutMs,
    what,
  );
}

async function jobsOf(uid: string): Promise<Obj[]> {
  const list = (await custom.listNamespacedCustomObject({ ...JOBS, namespace: ns })) as { items: Obj[] };
  return list.items.filter((j) => (j.metadata.ownerReferences ?? []).some((o: Obj) => o.uid === uid && o.controller));
}

async function revision(name: string): Promise<V1ControllerRevision> {
  return apps.readNamespacedControllerRevision({ name, namespace: ns });
}

/** The CloneSet's update revision once its status names one other than `notName` (the kubelet is not played). */
async function newUpdateRevision(name: string, notName: string): Promise<string> {
  return eventually(
    async () => {
      const r = (await getCs(name)).status?.updateRevision as string | undefined;
      return r && r !== notName ? r : undefined;
    },
    20_000,
    `${name}: a new update revision`,
  );
}

async function createdEvents(jobName: string): Promise<number> {
  const events = (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=CreatedImagePullJob' })).items;
  return events.filter((e) => e.message?.includes(`ImagePullJob ${jobName} `)).reduce((n, e) => n + (e.count ?? 1), 0);
}

beforeAll(async () => {
  ({ core, apps, custom, runtimeNs, ns } = await setUpWorkloadSuite(
    [CloneSetDefinition, ImagePullJobDefinition, NodeImageDefinition, SidecarSetDefinition, StatefulSetDefinition],
    'predownload',
    node,
  ));
});

afterAll(async () => {
  const report = await tearDownWorkloadSuite(procs, runtimeNs);
  console.log(`[runtime permissions] ${report.calls} API calls recorded; declared but unused here: ${report.unused.join(', ') || 'none'}`);
});

describe('CloneSet image pre-download (gate PreDownloadImageForInPlaceUpdate)', { timeout: 120_000 }, () => {
  let ctl: ControllerProcess;
  let uid: string;
  let v1: string;
  let v2: string;

  it('5 replicas, partition 1, InPlaceIfPossible: an image update makes exactly one ImagePullJob with upstream fields', async () => {
    ctl = await start();
    await custom.createNamespacedCustomObject({
      ...CS,
      namespace: ns,
      body: cloneSet(
        'web',
        5,
        { type: 'InPlaceIfPossible', partition: 1, maxUnavailable: 1 },
        {
          'apps.kruise.io/image-predownload-parallelism': '2',
        },
      ),
    });
    await settle('web', async () => (await getCs('web')).status?.readyReplicas === 5, 'web: 5 ready');
    const cs = await getCs('web');
    uid = cs.metadata.uid;
    v1 = cs.status.updateRevision;
    // No job for the first revision: current and update agree.
    expect(await jobsOf(uid)).toEqual([]);

    await setImage('web', 'example.io/app:2');
    v2 = await newUpdateRevision('web', v1);
    const hash = (await revision(v2)).metadata!.labels!['controller.kubernetes.io/hash']!;
    const jobs = await eventually(
      async () => {
        const j = await jobsOf(uid);
        return j.length > 0 ? j : undefined;
      },
      20_000,
      'a pre-download job',
    );
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect(job.metadata.name).toBe(`${v2}-main`);
    expect(job.metadata.labels).toEqual({ app: 'web', 'controller.kubernetes.io/hash': hash });
    expect(job.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(job.spec).toMatchObject({
      image: 'example.io/app:2',
      pullSecrets: ['registry'],
      podSelector: {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'controller-revision-hash', operator: 'NotIn', values: [v2, hash] }],
      },
      parallelism: 2,
      pullPolicy: { backoffLimit: 1, timeoutSeconds: 300 },
      completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 600 },
      sandboxConfig: { labels: { app: 'web', 'controller.kubernetes.io/hash': hash }, annotations: { team: 'web' } },
    });
    await eventually(async () => (await revision(v2)).metadata!.labels?.[CREATED] === 'true', 10_000, 'revision labelled created');
    expect((await revision(v2)).metadata!.labels?.[IGNORED]).toBeUndefined();
    await eventually(async () => (await createdEvents(job.metadata.name)) === 1, 10_000, 'one CreatedImagePullJob event');
  });

  it('later reconciles create no second job', async () => {
    const before = (await jobsOf(uid)).map((j) => j.metadata.uid);
    // Each of these makes the controller look at the CloneSet again (annotation edits, then the in-place rollout).
    for (let i = 0; i < 3; i++) {
      await custom.patchNamespacedCustomObject(
        { ...CS, namespace: ns, name: 'web', body: { metadata: { annotations: { 'example.io/touch': String(i) } } } },
        mergePatch,
      );
    }
    await settle('web', async () => (await getCs('web')).status?.updatedReadyReplicas === 4, 'web: 4 updated and ready (partition 1)');
    expect((await jobsOf(uid)).map((j) => j.metadata.uid)).toEqual(before);
    expect(await createdEvents(`${v2}-main`)).toBe(1);
  });

  it('a manager killed right after the next image change: after restart one job for the new revision, revision labelled created', async () => {
    await setImage('web', 'example.io/app:3');
    // Killed within the first moments of the new revision: before, during or after its job's create.
    await new Promise((r) => setTimeout(r, 150));
    await ctl.stop('SIGKILL');
    ctl = await start();
    const v3 = await newUpdateRevision('web', v2);
    await eventually(async () => (await revision(v3)).metadata!.labels?.[CREATED] === 'true', 20_000, 'v3 labelled created');
    const jobs = await jobsOf(uid);
    expect(jobs.filter((j) => j.metadata.name.startsWith(v3)).map((j) => [j.metadata.name, j.spec.image])).toEqual([
      [`${v3}-main`, 'example.io/app:3'],
    ]);
    expect(await createdEvents(`${v3}-main`)).toBeLessThanOrEqual(1);
    expect((await revision(v3)).metadata!.labels?.[IGNORED]).toBeUndefined();
  });

  it('when the rollout completes, the jobs the CloneSet controls are deleted', async () => {
    expect((await jobsOf(uid)).length).toBeGreaterThan(0);
    await custom.patchNamespacedCustomObject(
      { ...CS, namespace: ns, name: 'web', body: { spec: { updateStrategy: { partition: 0 } } } },
      mergePatch,
    );
    await settle(
      'web',
      async () => {
        const st = (await getCs('web')).status;
        return st?.currentRevision === st?.updateRevision && st?.updatedReadyReplicas === 5;
      },
      'web: rollout complete',
      60_000,
    );
    await eventually(async () => (await jobsOf(uid)).length === 0, 20_000, 'pre-download jobs deleted');
  });

  it.each([
    ['3 replicas (at or below the threshold)', 'small', 3, { type: 'InPlaceIfPossible', partition: 1, maxUnavailable: 1 }],
    ['ReCreate', 'recreate', 5, { type: 'ReCreate', partition: 1, maxUnavailable: 1 }],
    ['every pod in one batch (partition 0, maxUnavailable 100%)', 'onebatch', 5, { type: 'InPlaceIfPossible', maxUnavailable: '100%' }],
  ])('%s: the revision is labelled ignored and no job is made', async (_name, name, replicas, strategy) => {
    await custom.createNamespacedCustomObject({ ...CS, namespace: ns, body: cloneSet(name, replicas, strategy) });
    await settle(name, async () => (await getCs(name)).status?.readyReplicas === replicas, `${name}: ready`);
    const cs = await getCs(name);
    await setImage(name, 'example.io/app:2');
    const next = await newUpdateRevision(name, cs.status.updateRevision);
    await eventually(async () => (await revision(next)).metadata!.labels?.[IGNORED] === 'true', 10_000, `${name}: labelled ignored`);
    expect((await revision(next)).metadata!.labels?.[CREATED]).toBeUndefined();
    expect(await jobsOf(cs.metadata.uid)).toEqual([]);
  });

  it('an Advanced StatefulSet (InPlaceIfPossible, partition 1) gets its job the same way, and loses it after the rollout', async () => {
    // A manager is already running unless this case runs alone (-t).
    ctl ??= await start();
    const STS = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'statefulsets' } as const;
    const getSts = async (): Promise<Obj> => (await custom.getNamespacedCustomObject({ ...STS, namespace: ns, name: 'db' })) as Obj;
    const template = (image: string) => ({
      metadata: { labels: { app: 'db' } },
      spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }], containers: [{ name: 'main', image }] },
    });
    await custom.createNamespacedCustomObject({
      ...STS,
      namespace: ns,
      body: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'StatefulSet',
        metadata: { name: 'db', namespace: ns, annotations: { 'apps.kruise.io/image-predownload-parallelism': '3' } },
        spec: {
          replicas: 5,
          serviceName: 'db',
          podManagementPolicy: 'Parallel',
          selector: { matchLabels: { app: 'db' } },
          template: template('example.io/db:1'),
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', partition: 1 } },
        },
      },
    });
    await settle('db', async () => (await getSts()).status?.readyReplicas === 5, 'db: 5 ready');
    const set = await getSts();
    await custom.patchNamespacedCustomObject(
      { ...STS, namespace: ns, name: 'db', body: { spec: { template: template('example.io/db:2') } } },
      mergePatch,
    );
    const next = await eventually(
      async () => {
        const r = (await getSts()).status?.updateRevision as string | undefined;
        return r && r !== set.status.updateRevision ? r : undefined;
      },
      20_000,
      'db: a new update revision',
    );
    const jobs = await eventually(
      async () => {
        const j = await jobsOf(set.metadata.uid);
        return j.length > 0 ? j : undefined;
      },
      20_000,
      'db: a pre-download job',
    );
    expect(jobs.map((j) => [j.metadata.name, j.spec.image, j.spec.parallelism])).toEqual([[`${next}-main`, 'example.io/db:2', 3]]);
    expect(jobs[0]!.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', name: 'db', controller: true })]);
    await eventually(async () => (await revision(next)).metadata!.labels?.[CREATED] === 'true', 10_000, 'db: labelled created');
    await custom.patchNamespacedCustomObject(
      { ...STS, namespace: ns, name: 'db', body: { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } } },
      mergePatch,
    );
    await settle(
      'db',
      async () => {
        const st = (await getSts()).status;
        return st?.currentRevision === st?.updateRevision && st?.updatedReadyReplicas === 5;
      },
      'db: rollout complete',
      60_000,
    );
    await eventually(async () => (await jobsOf(set.metadata.uid)).length === 0, 20_000, 'db: jobs deleted');
  });

  it('min-updated-ready-pods 2: no job until two pods of the new revision are ready', async () => {
    await custom.createNamespacedCustomObject({
      ...CS,
      namespace: ns,
      body: cloneSet(
        'gated',
        5,
        { type: 'InPlaceIfPossible', partition: 1, maxUnavailable: 1 },
        {
          'apps.kruise.io/image-predownload-min-updated-ready-pods': '2',
        },
      ),
    });
    await settle('gated', async () => (await getCs('gated')).status?.readyReplicas === 5, 'gated: ready');
    const cs = await getCs('gated');
    await setImage('gated', 'example.io/app:2');
    const next = await newUpdateRevision('gated', cs.status.updateRevision);
    // Not played by the kubelet yet: no pod of the new revision is ready, so nothing is sent for.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await jobsOf(cs.metadata.uid)).toEqual([]);
    expect((await revision(next)).metadata!.labels?.[CREATED]).toBeUndefined();
    const jobs = await settle(
      'gated',
      async () => {
        const j = await jobsOf(cs.metadata.uid);
        return j.length > 0 ? j : undefined;
      },
      'gated: a job once two updated pods are ready',
    );
    expect(jobs.map((j) => j.metadata.name)).toEqual([`${next}-main`]);
    const st = (await getCs('gated')).status;
    expect(st.updatedReadyReplicas).toBeGreaterThanOrEqual(2);
  });
});

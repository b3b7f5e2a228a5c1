// Image pre-download for Advanced DaemonSet updates (gate PreDownloadImageForDaemonSetUpdate) on the real
// kube-apiserver: `cdk8s-kruise controller` runs as a child process (strict permissions, access log checked against
// src/contracts/permissions.ts); the test plays the scheduler and the kubelet on four node objects. The pulls
// themselves are the daemon's (test/node); here: which ImagePullJobs the DaemonSet controller writes, their fields and
// the pods they aim at, the revision labels, their deletion when the rollout completes, and nothing when the gate is
// off or the update goes in one batch.
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1ControllerRevision, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CloneSetDefinition,
  DaemonSetDefinition,
  ImagePullJobDefinition,
  NodeImageDefinition,
  SidecarSetDefinition,
  StatefulSetDefinition,
} from '../../src/api/registry.js';
import { createNode, forceDelete, mergePatch } from '../harness/index.js';
import { reportRunning } from './runtime/kubelet.js';
import { eventually, startController, type ControllerProcess } from './runtime/support.js';
import { setUpWorkloadSuite, tearDownWorkloadSuite } from './runtime/workload-suite.js';

let core: CoreV1Api;
let apps: AppsV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
const procs: ControllerProcess[] = [];
/** Other test files add nodes to the shared control plane: the sets here select only the nodes of this file. */
const LABEL = 'e2e.cdk8s-kruise.io/ds-predownload';
const MARK = String(process.pid);
const nodes = ['a', 'b', 'c', 'd'].map((n) => `node-dspd-${process.pid}-${n}`);
const DS = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'daemonsets' } as const;
const DS_V1BETA1 = { ...DS, version: 'v1beta1' } as const;
const JOBS = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'imagepulljobs' } as const;
const NODE_IMAGES = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'nodeimages' } as const;
const OTHER_NODE = `node-dspd-${process.pid}-other`;
const CREATED = 'apps.kruise.io/pre-predownload-created';
const IGNORED = 'apps.kruise.io/image-predownload-ignored';

type Obj = Record<string, any>;
type Container = { name: string; image: string };

async function start(gate: boolean): Promise<ControllerProcess> {
  const p = await startController(runtimeNs, [
    '--webhook-port',
    '0',
    ...(gate ? ['--feature-gates', 'PreDownloadImageForDaemonSetUpdate=true'] : []),
  ]);
  procs.push(p);
  await p.waitReady();
  return p;
}

const containers = (agent: string, metrics = 'example.io/metrics:1'): Container[] => [
  { name: 'agent', image: agent },
  { name: 'log', image: 'example.io/log:1' },
  { name: 'metrics', image: metrics },
];

function daemonSet(name: string, rollingUpdate: Obj, annotations: Record<string, string> = {}) {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'DaemonSet',
    metadata: { name, namespace: ns, annotations },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: { team: 'infra' } },
        spec: {
          nodeSelector: { [LABEL]: MARK },
          imagePullSecrets: [{ name: 'registry' }],
          containers: containers('example.io/agent:1'),
        },
      },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate },
    },
  };
}

const setImages = (name: string, cs: Container[]) =>
  custom.patchNamespacedCustomObject(
    { ...DS, namespace: ns, name, body: { spec: { template: { spec: { containers: cs } } } } },
    mergePatch,
  );
const patchDs = (name: string, body: Obj) => custom.patchNamespacedCustomObject({ ...DS, namespace: ns, name, body }, mergePatch);
const getDs = async (name: string): Promise<Obj> => (await custom.getNamespacedCustomObject({ ...DS, namespace: ns, name })) as Obj;
/** The revision hash the status names: v1beta1's updateRevision (v1alpha1 reads do not show it). */
const statusHash = async (name: string): Promise<string | undefined> =>
  ((await custom.getNamespacedCustomObject({ ...DS_V1BETA1, namespace: ns, name })) as Obj).status?.updateRevision;

/** The node a daemon pod's required node affinity binds it to. */
const boundNode = (p: V1Pod) =>
  p.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0]!.matchFields![0]!.values![0]!;

async function podsOf(selector: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: selector })).items.filter((p) => !p.metadata!.deletionTimestamp);
}

/** The scheduler and the kubelet: binds the set's pods where their affinity says, runs them, confirms deletions. */
async function kubelet(name: string): Promise<void> {
  for (const p of (await core.listNamespacedPod({ namespace: ns, labelSelector: `app=${name}` })).items) {
    if (p.metadata!.deletionTimestamp) await forceDelete({ apiVersion: 'v1', kind: 'Pod', metadata: p.metadata });
    else await reportRunning(p, boundNode(p));
  }
}

/** Plays the kubelet for the set's pods until `pred` holds. */
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

async function jobsOf(uid: string): Promise<Obj[]> {
  const list = (await custom.listNamespacedCustomObject({ ...JOBS, namespace: ns })) as { items: Obj[] };
  return list.items
    .filter((j) => (j.metadata.ownerReferences ?? []).some((o: Obj) => o.uid === uid && o.controller))
    .sort((a, b) => String(a.metadata.name).localeCompare(b.metadata.name));
}

async function revision(name: string): Promise<V1ControllerRevision> {
  return apps.readNamespacedControllerRevision({ name, namespace: ns });
}

/** The set's update revision once its status names a hash other than `notHash`. */
async function newUpdateRevision(name: string, notHash: string | undefined): Promise<{ revision: string; hash: string }> {
  const hash = await eventually(
    async () => {
      const h = await statusHash(name);
      return h && h !== notHash ? h : undefined;
    },
    20_000,
    `${name}: a new update revision`,
  );
  return { revision: `${name}-${hash}`, hash };
}

/** A set of four ready pods, one per node, and its first revision. */
async function createReady(name: string, rollingUpdate: Obj, annotations: Record<string, string> = {}) {
  await custom.createNamespacedCustomObject({ ...DS, namespace: ns, body: daemonSet(name, rollingUpdate, annotations) });
  await settle(
    name,
    async () => {
      const st = (await getDs(name)).status;
      return st?.numberReady === 4 && st.updatedNumberScheduled === 4;
    },
    `${name}: 4 ready`,
  );
  const ds = await getDs(name);
  return { uid: ds.metadata.uid as string, hash: (await statusHash(name))! };
}

async function createdEvents(jobName: string): Promise<number> {
  const events = (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=CreatedImagePullJob' })).items;
  return events.filter((e) => e.message?.includes(`ImagePullJob ${jobName} `)).reduce((n, e) => n + (e.count ?? 1), 0);
}

/** The tags of `image` the NodeImage of `node` asks its daemon to pull (the ImagePullJob controller writes them). */
async function nodeImageTags(node: string, image: string): Promise<string[]> {
  const ni = (await custom.getClusterCustomObject({ ...NODE_IMAGES, name: node }).catch(() => undefined)) as Obj | undefined;
  return ((ni?.spec?.images?.[image]?.tags ?? []) as Obj[]).map((t) => t.tag as string);
}

/** A job's podSelector as a label selector string, for the API server to evaluate against the pods. */
function selectorString(sel: Obj): string {
  const parts = Object.entries((sel.matchLabels ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) parts.push(`${e.key} ${e.operator.toLowerCase()} (${e.values.join(',')})`);
  return parts.join(',');
}

beforeAll(async () => {
  ({ core, apps, custom, runtimeNs, ns } = await setUpWorkloadSuite(
    [DaemonSetDefinition, ImagePullJobDefinition, NodeImageDefinition, CloneSetDefinition, SidecarSetDefinition, StatefulSetDefinition],
    'ds-predownload',
    OTHER_NODE,
  ));
  // Not a registry credential: the ImagePullJob controller pulls without it (copying one needs the daemon's namespace).
  await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'registry' }, type: 'Opaque', data: {} } });
  for (const n of nodes) await createNode(n, { labels: { [LABEL]: MARK } });
  // The API server taints a new node not-ready and no node lifecycle controller lifts it here: the nodes get none.
  for (const n of nodes) await core.patchNode({ name: n, body: { spec: { taints: [] } } }, mergePatch);
});

afterAll(async () => {
  const report = await tearDownWorkloadSuite(procs, runtimeNs);
  console.log(`[runtime permissions] ${report.calls} API calls recorded; declared but unused here: ${report.unused.join(', ') || 'none'}`);
});

describe('Advanced DaemonSet image pre-download (gate PreDownloadImageForDaemonSetUpdate)', { timeout: 120_000 }, () => {
  let ctl: ControllerProcess | undefined;
  let uid: string;
  let v2: { revision: string; hash: string };

  it('4 nodes, Standard, partition 2: two changed images make one ImagePullJob each, with upstream fields', async () => {
    ctl = await start(true);
    const first = await createReady('agent', { maxUnavailable: 1, partition: 2 }, { 'apps.kruise.io/image-predownload-parallelism': '2' });
    uid = first.uid;
    // A new DaemonSet's first revision gets no job (its pods start at it): ignored if looked at while pods were missing.
    expect((await revision(`agent-${first.hash}`)).metadata!.labels?.[CREATED]).toBeUndefined();
    expect(await jobsOf(uid)).toEqual([]);

    await setImages('agent', containers('example.io/agent:2', 'example.io/metrics:2'));
    v2 = await newUpdateRevision('agent', first.hash);
    const jobs = await eventually(
      async () => {
        const j = await jobsOf(uid);
        return j.length === 2 ? j : undefined;
      },
      20_000,
      'two pre-download jobs',
    );
    const labels = { app: 'agent', 'controller.kubernetes.io/hash': v2.hash };
    expect(jobs.map((j) => [j.metadata.name, j.spec.image])).toEqual([
      [`${v2.revision}-agent`, 'example.io/agent:2'],
      [`${v2.revision}-metrics`, 'example.io/metrics:2'],
    ]);
    for (const job of jobs) {
      expect(job.metadata.labels).toEqual(labels);
      expect(job.metadata.ownerReferences).toEqual([
        { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'DaemonSet', name: 'agent', uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(job.spec).toMatchObject({
        pullSecrets: ['registry'],
        podSelector: {
          matchLabels: { app: 'agent' },
          matchExpressions: [{ key: 'controller-revision-hash', operator: 'NotIn', values: [v2.revision, v2.hash] }],
        },
        parallelism: 2,
        pullPolicy: { backoffLimit: 1, timeoutSeconds: 300 },
        completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 600 },
        sandboxConfig: { labels, annotations: { team: 'infra' } },
      });
    }
    await eventually(async () => (await revision(v2.revision)).metadata!.labels?.[CREATED] === 'true', 10_000, 'revision labelled created');
    expect((await revision(v2.revision)).metadata!.labels?.[IGNORED]).toBeUndefined();
    for (const job of jobs)
      await eventually(async () => (await createdEvents(job.metadata.name)) === 1, 10_000, `one event for ${job.metadata.name}`);
    // The ImagePullJob controller hands each pull to the NodeImages of nodes running the set's pods (none updated
    // yet), two at a time (parallelism 2; no daemon reports a pull done here), never to a node without such a pod.
    const asked = async (image: string) =>
      (await Promise.all([...nodes, OTHER_NODE].map(async (n) => ((await nodeImageTags(n, image)).includes('2') ? [n] : [])))).flat();
    for (const image of ['example.io/agent', 'example.io/metrics']) {
      const got = await eventually(
        async () => ((await asked(image)).length === 2 ? asked(image) : undefined),
        20_000,
        `${image}:2 asked of two nodes`,
      );
      expect(nodes).toEqual(expect.arrayContaining(got));
    }
    expect(await nodeImageTags(OTHER_NODE, 'example.io/agent')).toEqual([]);
    expect(await nodeImageTags(nodes[0]!, 'example.io/log')).toEqual([]);
  });

  it('the jobs aim at the nodes whose pod is not updated yet: after the partitioned rollout, the two held back', async () => {
    const updated = await settle(
      'agent',
      async () => {
        const pods = await podsOf('app=agent');
        const at = pods.filter((p) => p.metadata!.labels!['controller-revision-hash'] === v2.hash);
        return pods.length === 4 && at.length === 2 && (await getDs('agent')).status?.updatedNumberScheduled === 2 ? at : undefined;
      },
      'agent: 2 of 4 nodes updated (partition 2)',
    );
    const [job] = await jobsOf(uid);
    const aimed = await podsOf(selectorString(job!.spec.podSelector));
    const heldBack = nodes.filter((n) => !updated.map(boundNode).includes(n));
    expect(aimed.map(boundNode).sort()).toEqual(heldBack.sort());
  });

  it('later reconciles create no second job', async () => {
    const before = (await jobsOf(uid)).map((j) => j.metadata.uid);
    for (let i = 0; i < 3; i++) await patchDs('agent', { metadata: { annotations: { 'example.io/touch': String(i) } } });
    await kubelet('agent');
    await new Promise((r) => setTimeout(r, 1000));
    expect((await jobsOf(uid)).map((j) => j.metadata.uid)).toEqual(before);
    expect(await createdEvents(`${v2.revision}-agent`)).toBe(1);
  });

  it('when the rollout completes, the jobs the DaemonSet controls are deleted', async () => {
    expect(await jobsOf(uid)).toHaveLength(2);
    await patchDs('agent', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
    await settle(
      'agent',
      async () => {
        const st = (await getDs('agent')).status;
        return st?.updatedNumberScheduled === 4 && st.numberReady === 4;
      },
      'agent: rollout complete',
      60_000,
    );
    await eventually(async () => (await jobsOf(uid)).length === 0, 20_000, 'pre-download jobs deleted');
  });

  it('every pod in one batch (maxUnavailable 100%, no partition): the revision is labelled ignored and no job is made', async () => {
    ctl ??= await start(true);
    const first = await createReady('onebatch', { maxUnavailable: '100%' });
    await setImages('onebatch', containers('example.io/agent:2'));
    const next = await newUpdateRevision('onebatch', first.hash);
    await eventually(async () => (await revision(next.revision)).metadata!.labels?.[IGNORED] === 'true', 10_000, 'labelled ignored');
    expect((await revision(next.revision)).metadata!.labels?.[CREATED]).toBeUndefined();
    expect(await jobsOf(first.uid)).toEqual([]);
  });

  it('gate off: an image update makes no job and leaves the revision unlabelled', async () => {
    await ctl?.stop();
    ctl = await start(false);
    const first = await createReady('plain', { maxUnavailable: 1, partition: 2 });
    await setImages('plain', containers('example.io/agent:2'));
    const next = await newUpdateRevision('plain', first.hash);
    await settle(
      'plain',
      async () => (await getDs('plain')).status?.updatedNumberScheduled === 2,
      'plain: 2 of 4 nodes updated (partition 2)',
    );
    expect(await jobsOf(first.uid)).toEqual([]);
    const labels = (await revision(next.revision)).metadata!.labels ?? {};
    expect([labels[CREATED], labels[IGNORED]]).toEqual([undefined, undefined]);
  });
});

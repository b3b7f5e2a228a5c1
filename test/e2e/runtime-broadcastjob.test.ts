// The BroadcastJob controller on the real kube-apiserver: `cdk8s-kruise controller` runs as a child process (strict
// permissions, access log checked against src/contracts/permissions.ts); the test plays the scheduler and the kubelet
// (binds each pod to the node its affinity names, reports it finished). Jobs are written as apps.kruise.io/v1beta1, as
// upstream's typed clients do, and read back as v1alpha1. Real-node behaviour (the sidecar terminator on BroadcastJob
// pods) is proven by upstream's sidecarterminator spec in the conformance tier.
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKubeConfig, bindPod, createNamespace, createNode, mergePatch, setPodStatus } from '../harness/index.js';
import { accessCoverage, accessLogs, eventually, startController, type ControllerProcess } from './runtime/support.js';

let core: CoreV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
const procs: ControllerProcess[] = [];
/** Other test files add nodes to the shared control plane: the jobs here select only the nodes of this file. */
const LABEL = 'e2e.cdk8s-kruise.io/broadcastjob';
const MARK = String(process.pid);
const nodes = ['a', 'b', 'c'].map((n) => `node-bcj-${process.pid}-${n}`);
const V1BETA1 = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'broadcastjobs' } as const;
const V1ALPHA1 = { ...V1BETA1, version: 'v1alpha1' } as const;

type Job = { metadata: { uid: string }; status?: Record<string, any> };

function broadcastJob(name: string, spec: Record<string, unknown>, podSpec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'BroadcastJob',
    metadata: { name, namespace: ns },
    spec: {
      template: {
        metadata: { labels: { app: name } },
        spec: {
          restartPolicy: 'Never',
          nodeSelector: { [LABEL]: MARK },
          containers: [{ name: 'main', image: 'example.io/job:1' }],
          ...podSpec,
        },
      },
      ...spec,
    },
  };
}

async function getJob(name: string): Promise<Job> {
  return (await custom.getNamespacedCustomObject({ ...V1ALPHA1, namespace: ns, name })) as never;
}

async function podsOf(name: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: `broadcastjob-name=${name}` })).items.filter(
    (p) => !p.metadata!.deletionTimestamp,
  );
}

/** The node a pod's required node affinity binds it to. */
const boundNode = (p: V1Pod) =>
  p.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0]!.matchFields![0]!.values![0]!;

/** The scheduler: binds the job's unbound pods where their affinity says. */
async function schedule(name: string): Promise<V1Pod[]> {
  const pods = await podsOf(name);
  for (const p of pods) if (!p.spec!.nodeName) await bindPod(p, boundNode(p));
  return pods;
}

async function finish(p: V1Pod, exitCode: number): Promise<void> {
  await setPodStatus(p, {
    phase: exitCode === 0 ? 'Succeeded' : 'Failed',
    containerStatuses: [{ name: 'main', state: { terminated: { exitCode } } }],
  });
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('broadcastjob');
  for (const n of nodes) await createNode(n, { labels: { [LABEL]: MARK } });
  // The API server taints a new node not-ready, and no node lifecycle controller runs here to lift it once the node
  // reports Ready: the nodes get the taints of the test instead. The third is tainted: no pod of a job that does not
  // tolerate the taint runs there.
  for (const [i, n] of nodes.entries()) {
    const taints = i === 2 ? [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] : [];
    await core.patchNode({ name: n, body: { spec: { taints } } }, mergePatch);
  }
  const p = await startController(runtimeNs, ['--webhook-port', '0', ...(process.env.DEBUG_BROADCASTJOB ? ['--log-level', 'debug'] : [])]);
  procs.push(p);
  await p.waitReady();
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  for (const p of procs)
    for (const l of p.logs.filter((x) => x.level >= 40 || process.env.DEBUG_BROADCASTJOB).slice(-40))
      console.log('[controller]', JSON.stringify(l));
  if (process.env.DEBUG_BROADCASTJOB)
    console.log(JSON.stringify((await core.listNamespacedPod({ namespace: ns })).items.map((p) => p.metadata)));
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  console.log(`[runtime permissions] ${report.calls} API calls recorded; declared but unused here: ${report.unused.join(', ') || 'none'}`);
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('BroadcastJob controller on the real API server', () => {
  it('parallelism 1: one pod at a time on the eligible nodes, bound by node affinity; completion; TTL deletes the job', async () => {
    await custom.createNamespacedCustomObject({
      ...V1BETA1,
      namespace: ns,
      body: broadcastJob('warm', { parallelism: 1, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 2 } }),
    });
    const first = await eventually(async () => ((await podsOf('warm')).length === 1 ? podsOf('warm') : undefined), 20_000, 'first pod');
    const job = await getJob('warm');
    const p1 = first[0]!;
    expect(p1.metadata!.generateName).toBe('warm-');
    expect(p1.metadata!.labels).toEqual({ app: 'warm', 'broadcastjob-name': 'warm', 'broadcastjob-controller-uid': job.metadata.uid });
    expect(p1.metadata!.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'BroadcastJob', name: 'warm', uid: job.metadata.uid, controller: true, blockOwnerDeletion: true }),
    ]);
    expect(p1.spec!.nodeName).toBeUndefined();
    expect(nodes.slice(0, 2)).toContain(boundNode(p1));
    const running = await eventually(async () => {
      const s = (await getJob('warm')).status;
      return s?.desired === 2 && s.active === 1 ? s : undefined;
    });
    expect(running).toMatchObject({ phase: 'running', succeeded: 0, failed: 0 });
    expect(running.startTime).toBeTruthy();

    // Parallelism holds the second pod back until the first finishes.
    await schedule('warm');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await podsOf('warm')).toHaveLength(1);
    await finish((await podsOf('warm'))[0]!, 0);
    const both = await eventually(async () => ((await podsOf('warm')).length === 2 ? podsOf('warm') : undefined), 20_000, 'second pod');
    expect(new Set(both.map(boundNode))).toEqual(new Set(nodes.slice(0, 2)));
    await schedule('warm');
    const second = both.find((p) => p.metadata!.uid !== p1.metadata!.uid)!;
    await finish(second, 0);

    const done = await eventually(async () => {
      const s = (await getJob('warm')).status;
      return s?.phase === 'completed' ? s : undefined;
    });
    expect(done).toMatchObject({ desired: 2, active: 0, succeeded: 2, failed: 0 });
    expect(done.completionTime).toBeTruthy();
    expect(done.conditions).toEqual([
      expect.objectContaining({
        type: 'Complete',
        status: 'True',
        reason: 'Complete',
        message: 'Job completed, 2 pods succeeded, 0 pods failed',
      }),
    ]);
    // ttlSecondsAfterFinished 2: the job goes, and its pods with it (owner references).
    const doneAt = Date.parse(done.completionTime);
    await eventually(
      async () => {
        try {
          await getJob('warm');
          return undefined;
        } catch {
          return true;
        }
      },
      20_000,
      'job deleted after its TTL',
    );
    expect(Date.now() - doneAt).toBeGreaterThanOrEqual(2000);
  });

  it('a toleration makes the tainted node eligible; FailFast fails the job at the first failed pod and deletes the others', async () => {
    await custom.createNamespacedCustomObject({
      ...V1BETA1,
      namespace: ns,
      body: broadcastJob('fast', { completionPolicy: { type: 'Always' } }, { tolerations: [{ key: 'dedicated', operator: 'Exists' }] }),
    });
    const pods = await eventually(async () => ((await podsOf('fast')).length === 3 ? podsOf('fast') : undefined), 20_000, '3 pods');
    expect(new Set(pods.map(boundNode))).toEqual(new Set(nodes));
    await schedule('fast');
    await finish(pods[0]!, 1);
    const failed = await eventually(async () => {
      const s = (await getJob('fast')).status;
      return s?.phase === 'failed' ? s : undefined;
    });
    expect(failed).toMatchObject({ desired: 3, active: 0, failed: 3, succeeded: 0 });
    expect(failed.conditions).toEqual([
      expect.objectContaining({
        type: 'Failed',
        status: 'True',
        message: 'failure policy is FailurePolicyTypeFailFast and failed pod is found',
      }),
    ]);
    // The two active pods are deleted; the failed one stays for its logs.
    await eventually(async () => ((await podsOf('fast')).length === 1 ? true : undefined), 20_000, 'active pods deleted');
  });

  it('activeDeadlineSeconds fails a job whose pods are still running', async () => {
    await custom.createNamespacedCustomObject({
      ...V1BETA1,
      namespace: ns,
      body: broadcastJob('slow', { completionPolicy: { type: 'Always', activeDeadlineSeconds: 2 } }),
    });
    await eventually(async () => ((await podsOf('slow')).length === 2 ? true : undefined), 20_000, '2 pods');
    const failed = await eventually(async () => {
      const s = (await getJob('slow')).status;
      return s?.phase === 'failed' ? s : undefined;
    }, 20_000);
    expect(failed.conditions?.[0]).toMatchObject({ type: 'Failed', message: `Job ${ns}/slow was active longer than specified deadline` });
    expect(Date.parse(failed.completionTime) - Date.parse(failed.startTime)).toBeGreaterThanOrEqual(2000);
  });
});

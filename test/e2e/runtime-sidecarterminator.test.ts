// Job Sidecar Terminator on the real kube-apiserver: the test plays the kubelet (binds pods, writes
// container statuses), `cdk8s-kruise controller` runs as child processes with Lease leader election.
import { CoreV1Api, CoordinationV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerRecreateRequestDefinition } from '../../src/api/registry.js';
import {
  ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
} from '../../src/api/pod-contracts.js';
import { adminKubeConfig, bindPod, createNamespace, createNode, restartApiServer, setPodStatus } from '../harness/index.js';
import { accessCoverage, accessLogs, startController, type ControllerProcess, eventually, installCrds } from './runtime/support.js';

const LEASE = { duration: 4_000, renew: 3_000, retry: 1_000 };
const QUICK_EXIT = 'example.io/quick-exit:1';

let core: CoreV1Api;
let leases: CoordinationV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
const normalNode = `node-normal-${process.pid}`;
const virtualNode = `node-vk-${process.pid}`;
const procs: ControllerProcess[] = [];

function leaderArgs(extra: string[] = []): string[] {
  return [
    '--feature-gates=SidecarTerminator=true',
    '--leader-elect',
    '--leader-election-lease-duration',
    `${LEASE.duration}ms`,
    '--leader-election-renew-deadline',
    `${LEASE.renew}ms`,
    '--leader-election-retry-period',
    `${LEASE.retry}ms`,
    '--webhook-port',
    '0',
    ...extra,
  ];
}

async function start(args = leaderArgs(), namespace = runtimeNs): Promise<ControllerProcess> {
  const p = await startController(namespace, args);
  procs.push(p);
  return p;
}

async function holder(namespace = runtimeNs): Promise<string | undefined> {
  try {
    const l = await leases.readNamespacedLease({ name: 'kruise-manager', namespace });
    return l.spec?.holderIdentity ?? undefined;
  } catch {
    return undefined;
  }
}

async function crrs(namespace = ns): Promise<
  Array<{
    metadata: { name: string; ownerReferences?: Array<{ uid: string; kind: string; controller?: boolean }> };
    spec: Record<string, unknown>;
  }>
> {
  const list = (await custom.listNamespacedCustomObject({
    group: 'apps.kruise.io',
    version: 'v1alpha1',
    namespace,
    plural: 'containerrecreaterequests',
  })) as { items: never[] };
  return list.items;
}

interface JobPodOptions {
  restartPolicy?: 'Never' | 'OnFailure';
  sidecarEnv?: Array<{ name: string; value: string }>;
}

/** Creates a pod (main `app` + sidecar `envoy`), binds it and reports both containers running. */
async function runningJobPod(name: string, node: string, o: JobPodOptions = {}): Promise<V1Pod> {
  const pod = await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name },
      spec: {
        restartPolicy: o.restartPolicy ?? 'Never',
        containers: [
          { name: 'app', image: 'example.io/app:1' },
          {
            name: 'envoy',
            image: 'example.io/envoy:1',
            env: o.sidecarEnv ?? [{ name: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: 'true' }],
          },
        ],
      },
    },
  });
  await bindPod(pod, node);
  await setPodStatus(pod, {
    phase: 'Running',
    containerStatuses: [
      { name: 'app', state: { running: {} } },
      { name: 'envoy', state: { running: {} } },
    ],
  });
  return pod;
}

async function finishMain(pod: V1Pod, exitCode: number): Promise<number> {
  await setPodStatus(pod, {
    phase: 'Running',
    containerStatuses: [
      { name: 'app', state: { terminated: { exitCode } } },
      { name: 'envoy', state: { running: {} } },
    ],
  });
  return Date.now();
}

async function waitForCrr(pod: V1Pod, timeoutMs = 20_000) {
  const name = `sidecar-termination-${pod.metadata!.uid}`;
  return eventually(async () => (await crrs()).find((c) => c.metadata.name === name), timeoutMs, `CRR ${name}`);
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  leases = kc.makeApiClient(CoordinationV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  await installCrds([ContainerRecreateRequestDefinition]);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('jobs');
  await createNode(normalNode);
  await createNode(virtualNode, { virtual: true });
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  console.log(`[runtime permissions] ${report.calls} API calls recorded; declared but unused here: ${report.unused.join(', ') || 'none'}`);
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('sidecar terminator on the real API server', () => {
  let a: ControllerProcess;

  it('starts, syncs caches, elects itself and reports ready', async () => {
    a = await start();
    await a.waitReady();
    await eventually(async () => (await holder()) === a.identity, 10_000, 'lease held by the first replica');
    expect(await a.metric('leader_election_master_status')).toBe(1);
  });

  it('normal node: creates exactly one CRR owned by the pod, with forceRecreate and failurePolicy Ignore, and an Event', async () => {
    const pod = await runningJobPod('job-normal', normalNode);
    await new Promise((r) => setTimeout(r, 300));
    expect(await crrs(), 'nothing while the main container runs').toEqual([]);
    await finishMain(pod, 0);
    const crr = await waitForCrr(pod);
    expect(crr.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Pod', uid: pod.metadata!.uid, controller: true })]);
    expect(crr.spec).toMatchObject({
      podName: 'job-normal',
      containers: [{ name: 'envoy' }],
      strategy: { forceRecreate: true, failurePolicy: 'Ignore' },
    });
    // The Event is written after the CRR (events are best-effort and asynchronous), so wait for it.
    const reasons = await eventually(
      async () => {
        const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=job-normal` });
        const seen = events.items.map((e) => e.reason);
        return seen.includes('SidecarTerminator') ? seen : undefined;
      },
      10_000,
      'a SidecarTerminator Event on the pod',
    );
    expect(reasons).toContain('SidecarTerminator');
    // More status writes (the kubelet keeps reporting) do not create a second one.
    await finishMain(pod, 0);
    await new Promise((r) => setTimeout(r, 500));
    expect((await crrs()).filter((c) => c.metadata.name.endsWith(pod.metadata!.uid!))).toHaveLength(1);
  });

  it('Never + non-zero exit also terminates; OnFailure + non-zero exit does not', async () => {
    const never = await runningJobPod('job-never-fail', normalNode);
    const onFailure = await runningJobPod('job-onfailure-fail', normalNode, { restartPolicy: 'OnFailure' });
    await finishMain(never, 1);
    await finishMain(onFailure, 1);
    await waitForCrr(never);
    await a.waitForLog((l) => l.pod === `${ns}/job-onfailure-fail` && l.decision === 'wait', 10_000);
    expect((await crrs()).some((c) => c.metadata.name.endsWith(onFailure.metadata!.uid!))).toBe(false);
  });

  it('virtual-kubelet node: replaces only the sidecar image with the quick-exit image, no CRR', async () => {
    const pod = await runningJobPod('job-vk', virtualNode, {
      sidecarEnv: [{ name: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE, value: QUICK_EXIT }],
    });
    await finishMain(pod, 0);
    const updated = await eventually(
      async () => {
        const p = await core.readNamespacedPod({ name: 'job-vk', namespace: ns });
        return p.spec!.containers.find((c) => c.name === 'envoy')!.image === QUICK_EXIT ? p : undefined;
      },
      20_000,
      'quick-exit image',
    );
    expect(updated.spec!.containers.find((c) => c.name === 'app')!.image).toBe('example.io/app:1');
    expect((await crrs()).some((c) => c.metadata.name.endsWith(pod.metadata!.uid!))).toBe(false);
  });

  it('ignore-exit-code: sets SidecarTerminated and the phase from the main containers, and creates the CRR', async () => {
    const pod = await runningJobPod('job-ignore', normalNode, {
      sidecarEnv: [
        { name: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: 'true' },
        { name: ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE, value: 'true' },
      ],
    });
    await finishMain(pod, 0);
    const p = await eventually(
      async () => {
        const x = await core.readNamespacedPodStatus({ name: 'job-ignore', namespace: ns });
        return x.status?.conditions?.some((c) => c.type === 'SidecarTerminated' && c.status === 'True') ? x : undefined;
      },
      20_000,
      'SidecarTerminated condition',
    );
    expect(p.status!.phase).toBe('Succeeded');
    expect(p.status!.conditions!.find((c) => c.type === 'SidecarTerminated')!.message).toBe('Terminated by Sidecar Terminator');
    expect(
      p.status!.conditions!.some((c) => c.type === 'PodScheduled'),
      'other conditions kept',
    ).toBe(true);
    await waitForCrr(pod);
  });

  let handled: V1Pod[] = [];

  it('restarting the controller does not create a second CRR', async () => {
    handled = (await core.listNamespacedPod({ namespace: ns })).items.filter(
      (p) => p.metadata!.name !== 'job-onfailure-fail' && p.metadata!.name !== 'job-vk',
    );
    const before = await crrs();
    expect(await a.stop('SIGTERM')).toBe(0);
    // A clean stop releases the lease: the next replica leads at once.
    expect(await holder()).toBeFalsy();
    a = await start();
    await a.waitReady();
    await eventually(async () => (await holder()) === a.identity, 10_000, 'lease re-acquired');
    const key = `${ns}/job-normal`;
    await a.waitForLog((l) => l.pod === key && l.decision === 'skip' && String(l.reason).includes('exists'), 15_000);
    expect((await crrs()).map((c) => c.metadata.name).sort()).toEqual(before.map((c) => c.metadata.name).sort());
  });

  it('two replicas: the standby takes over within the lease time after the leader is killed; nothing is duplicated', async () => {
    const b = await start();
    await b.waitReady();
    expect(await holder()).toBe(a.identity);
    expect(await b.metric('leader_election_master_status')).toBe(0);
    const killedAt = Date.now();
    await a.stop('SIGKILL');
    await eventually(async () => (await holder()) === b.identity, LEASE.duration + 5_000, 'standby takes the lease');
    const takeoverMs = Date.now() - killedAt;
    console.log(`[leader election] standby took over ${takeoverMs} ms after the leader was killed (lease ${LEASE.duration} ms)`);
    expect(takeoverMs).toBeLessThanOrEqual(LEASE.duration + 2 * LEASE.retry + 500);
    const pod = await runningJobPod('job-after-failover', normalNode);
    await finishMain(pod, 0);
    await waitForCrr(pod);
    await b.waitForLog((l) => l.pod === `${ns}/job-normal` && l.decision === 'skip', 15_000);
    const names = (await crrs()).map((c) => c.metadata.name);
    expect(new Set(names).size).toBe(names.length);
    for (const p of [...handled, pod]) expect(names.filter((n) => n.endsWith(p.metadata!.uid!))).toHaveLength(1);
    a = b;
  });

  it('the API server restarts mid-run: the controller recovers without a process restart', async () => {
    const pid = a.pid;
    const pod = await runningJobPod('job-across-restart', normalNode);
    const t0 = Date.now();
    await restartApiServer();
    const restartedMs = Date.now() - t0;
    await finishMain(pod, 0);
    await waitForCrr(pod, 45_000).catch((err: Error) => {
      throw new Error(`${err.message}\ncontroller log tail:\n${a.tail(40)}`);
    });
    console.log(
      `[apiserver restart] restart took ${restartedMs} ms; CRR created ${Date.now() - t0 - restartedMs} ms after the apiserver was back`,
    );
    expect(a.pid).toBe(pid);
    expect(a.exitCode).toBeUndefined();
    expect(await holder()).toBe(a.identity);
    // The informers went through a failed watch and resumed.
    expect(a.logs.some((l) => l.msg === 'informer retry')).toBe(true);
    await a.waitReady(10_000);
  });

  it('with the SidecarTerminator gate off nothing is done', async () => {
    await a.stop('SIGTERM');
    const otherNs = await createNamespace('kruise-gate-off');
    const off = await start(['--webhook-port', '0'], otherNs);
    await off.waitReady();
    expect(off.logs.some((l) => l.msg === 'controller disabled by feature gate')).toBe(true);
    const pod = await runningJobPod('job-gate-off', normalNode);
    await finishMain(pod, 0);
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await crrs()).some((c) => c.metadata.name.endsWith(pod.metadata!.uid!))).toBe(false);
  });
});

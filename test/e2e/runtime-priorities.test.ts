// Exit and launch priority on the real kube-apiserver: the runtime's pod webhook (registered as the install
// renders it) wires the exit-priority hooks and refuses bad input with the `validate` messages, and the launch
// priority step plus the barrier controller create `<pod>-barrier` (owned by the pod) and release its keys
// highest priority first as containers become ready (the test writes the kubelet's status).
import { AdmissionregistrationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MUTATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { readExitPriorityHook } from '../../src/api/pod-contracts.js';
import { adminKubeConfig, createNamespace } from '../harness/index.js';
import { accessCoverage, accessLogs, eventually, startWithPodWebhook, type ControllerProcess } from './runtime/support.js';

let core: CoreV1Api;
let adm: AdmissionregistrationV1Api;
let runtimeNs: string;
let ns: string;
let ctl: ControllerProcess;

const containers = (...names: string[]) => names.map((name) => ({ name, image: 'busybox:1' }));

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  adm = kc.makeApiClient(AdmissionregistrationV1Api);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('priorities');
  ctl = await startWithPodWebhook(runtimeNs);
  const probe: V1Pod = {
    metadata: { name: 'probe', annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' } },
    spec: { containers: containers('a', 'b') },
  };
  await eventually(
    async () => (await core.createNamespacedPod({ namespace: ns, body: probe, dryRun: 'All' })).spec!.containers[0]!.env?.length,
    30_000,
    'pod webhook live',
  );
});

afterAll(async () => {
  await adm.deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await ctl?.stop('SIGTERM');
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('exit priority through the pod webhook', () => {
  it('a Deployment-style pod (generateName) gets the daemon hook on its prioritised containers, keeping their own preStop', async () => {
    const own = { exec: { command: ['sh', '-c', 'sleep 1'] } };
    const created = await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { generateName: 'web-', annotations: { 'kruise.io/container-exit-priority': '{"log-agent":1,"envoy":2}' } },
        spec: {
          containers: [
            { name: 'app', image: 'a' },
            { name: 'log-agent', image: 'b', lifecycle: { preStop: own } },
            { name: 'envoy', image: 'c' },
          ],
        },
      },
    });
    const preStop = (name: string) => created.spec!.containers.find((c) => c.name === name)!.lifecycle?.preStop;
    expect(preStop('app')).toBeUndefined();
    expect(preStop('envoy')?.httpGet).toMatchObject({ host: '127.0.0.1', port: 10222 });
    const hook = readExitPriorityHook(preStop('log-agent'));
    expect(hook).toMatchObject({ namespace: ns, container: 'log-agent', own });
    // One token per pod: both hooks name the same pod.
    expect(readExitPriorityHook(preStop('envoy'))!.token).toBe(hook!.token);
  });

  it.each([
    ['a container the pod lacks', '{"envoi":2}', 30, /names container "envoi", which is not in the pod/],
    ['a negative priority', '{"envoy":-1}', 30, /priority of "envoy" must be a non-negative integer, got -1/],
    ['a non-integer priority', '{"envoy":1.5}', 30, /non-negative integer, got 1.5/],
    [
      'a grace period that cannot fit the levels',
      '{"log-agent":1,"envoy":2}',
      5,
      /terminationGracePeriodSeconds 5 cannot fit the 3 exit levels/,
    ],
  ])('refuses %s with the validate message', async (_n, annotation, grace, message) => {
    const body: V1Pod = {
      metadata: { name: 'bad', annotations: { 'kruise.io/container-exit-priority': annotation } },
      spec: { terminationGracePeriodSeconds: grace, containers: containers('app', 'log-agent', 'envoy') },
    };
    const error = await core.createNamespacedPod({ namespace: ns, body }).then(
      () => undefined,
      (e: { body?: string; message?: string }) => {
        // The API server's Status, whose message carries the webhook's refusal.
        try {
          return String((JSON.parse(String(e.body)) as { message?: string }).message);
        } catch {
          return String(e.message);
        }
      },
    );
    expect(error).toMatch(message);
  });
});

describe('launch priority: webhook and barrier controller', () => {
  it('Ordered: names the pod, adds the barrier env, creates <pod>-barrier owned by the pod, releases keys as containers become ready', async () => {
    const created = await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { generateName: 'ordered-', annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' } },
        spec: { containers: containers('first', 'second', 'third') },
      },
    });
    const name = created.metadata!.name!;
    expect(name).toMatch(/^ordered-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(
      created.spec!.containers.map((c) => c.env?.find((e) => e.name === 'KRUISE_CONTAINER_BARRIER')?.valueFrom?.configMapKeyRef),
    ).toEqual(['p_0', 'p_-1', 'p_-2'].map((key) => ({ name: `${name}-barrier`, key })));
    const barrier = await eventually(
      () => core.readNamespacedConfigMap({ name: `${name}-barrier`, namespace: ns }).catch(() => undefined),
      20_000,
      'barrier ConfigMap',
    );
    expect(barrier.metadata!.ownerReferences).toEqual([
      expect.objectContaining({ apiVersion: 'v1', kind: 'Pod', name, uid: created.metadata!.uid }),
    ]);

    // The kubelet's part: ContainersReady False, then one container ready after another.
    const status = async (ready: boolean[]) => {
      await core.replaceNamespacedPodStatus({
        name,
        namespace: ns,
        body: {
          ...(await core.readNamespacedPod({ name, namespace: ns })),
          status: {
            phase: 'Pending',
            conditions: [{ type: 'ContainersReady', status: ready.every(Boolean) ? 'True' : 'False' }],
            containerStatuses: ['first', 'second', 'third'].map((n, i) => ({
              name: n,
              ready: ready[i]!,
              restartCount: 0,
              image: 'busybox:1',
              imageID: '',
            })),
          },
        },
      });
    };
    const keys = async (want: string[]) =>
      eventually(
        async () => {
          const data = (await core.readNamespacedConfigMap({ name: `${name}-barrier`, namespace: ns })).data ?? {};
          return JSON.stringify(Object.keys(data).sort()) === JSON.stringify([...want].sort()) ? data : undefined;
        },
        20_000,
        `barrier keys ${want.join(',')}`,
      );
    await status([false, false, false]);
    expect(await keys(['p_0'])).toEqual({ p_0: 'true' });
    await status([true, false, false]);
    await keys(['p_0', 'p_-1']);
    await status([true, true, false]);
    await keys(['p_0', 'p_-1', 'p_-2']);
  });

  it('KRUISE_CONTAINER_PRIORITY: a non-integer value is refused', async () => {
    const body: V1Pod = {
      metadata: { name: 'badprio' },
      spec: {
        containers: [
          { name: 'a', image: 'a', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: 'high' }] },
          { name: 'b', image: 'b' },
        ],
      },
    };
    await expect(core.createNamespacedPod({ namespace: ns, body })).rejects.toThrow(/KRUISE_CONTAINER_PRIORITY must be an integer/);
  });
});

// Sidecars another webhook injects, on the real kube-apiserver: a second, independent mutating webhook served by this
// test (configuration `test-webhook-<id>`, called after `kruise-mutating-webhook-configuration` by name order) adds a
// long-running `mesh-proxy` container to the pods labelled for it, as a mesh injector does. The runtime's pod webhook,
// registered as the install renders it (reinvocationPolicy IfNeeded), is called again after it and wires the injected
// container's exit priority from kruise.cdk8s.io/container-exit-priority-patterns; the manager's sidecar terminator
// stops the injected container of a Job pod declared in kruise.cdk8s.io/terminate-sidecars once the main container is
// done, and leaves an undeclared one alone. The test plays the kubelet (binds pods, writes container statuses).
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerRecreateRequestDefinition } from '../../src/api/registry.js';
import { readExitPriorityHook } from '../../src/api/pod-contracts.js';
import { MUTATING_WEBHOOK_CONFIGURATION, POD_MUTATING_PATH } from '../../src/contracts/index.js';
import { mutatingWebhookConfiguration } from '../../src/install/webhooks.js';
import {
  adminKubeConfig,
  bindPod,
  createNamespace,
  createNode,
  registerWebhook,
  setPodStatus,
  type RegisteredWebhook,
} from '../harness/index.js';
import {
  accessCoverage,
  accessLogs,
  eventually,
  freePort,
  installCrds,
  loopbackWebhookArgs,
  podWebhookInstallSpec,
  startController,
  type ControllerProcess,
} from './runtime/support.js';

const INJECT_LABEL = 'mesh.example.io/inject';
const PROXY = { name: 'mesh-proxy', image: 'example.io/mesh/proxy:1.0' };

let core: CoreV1Api;
let adm: AdmissionregistrationV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
let ctl: ControllerProcess;
let injector: RegisteredWebhook;
const node = `node-injected-${process.pid}`;

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  adm = kc.makeApiClient(AdmissionregistrationV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  await installCrds([ContainerRecreateRequestDefinition]);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('injected');
  await createNode(node);

  // The runtime's pod webhook entry as the install renders it (IfNeeded), served by the controller on loopback.
  const port = await freePort();
  const rendered = mutatingWebhookConfiguration(podWebhookInstallSpec(runtimeNs));
  const podHook = (rendered.webhooks as Array<Record<string, unknown>>).find((w) => w.name === 'mpod.kb.io')!;
  expect(podHook.reinvocationPolicy).toBe('IfNeeded');
  podHook.clientConfig = { url: `https://127.0.0.1:${port}${POD_MUTATING_PATH}` };
  await adm.deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await adm.createMutatingWebhookConfiguration({
    body: { metadata: { name: MUTATING_WEBHOOK_CONFIGURATION }, webhooks: [podHook as never] },
  });
  ctl = await startController(runtimeNs, [
    ...loopbackWebhookArgs(port),
    '--feature-gates=SidecarTerminator=true,ContainerExitPriority=true',
  ]);
  await ctl.waitReady();

  // The second injector: adds mesh-proxy once to the pods labelled for it.
  injector = await registerWebhook({
    type: 'mutating',
    rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] }],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
    handler: (req) => {
      const pod = req.object as V1Pod;
      const wanted = pod.metadata?.labels?.[INJECT_LABEL] === 'true';
      if (!wanted || pod.spec!.containers.some((c) => c.name === PROXY.name)) return { allowed: true };
      return { allowed: true, patch: [{ op: 'add', path: '/spec/containers/-', value: PROXY }] };
    },
  });
  expect(injector.configurationName > MUTATING_WEBHOOK_CONFIGURATION).toBe(true);
  // The runtime's webhook answers (an exit-priority pod gets its hook).
  await eventually(
    async () => {
      const p = await core.createNamespacedPod({
        namespace: ns,
        dryRun: 'All',
        body: {
          metadata: { name: 'probe', annotations: { 'kruise.io/container-exit-priority': '{"b":1}' } },
          spec: {
            containers: [
              { name: 'a', image: 'a' },
              { name: 'b', image: 'b' },
            ],
          },
        },
      });
      return p.spec!.containers[1]!.lifecycle?.preStop;
    },
    30_000,
    'pod webhook live',
  );
}, 120_000);

afterAll(async () => {
  await injector?.close();
  await adm.deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await ctl?.stop('SIGTERM');
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

async function createJobPod(name: string, annotations: Record<string, string>): Promise<V1Pod> {
  return core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name, labels: { [INJECT_LABEL]: 'true' }, annotations },
      spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 30, containers: [{ name: 'app', image: 'example.io/app:1' }] },
    },
  });
}

async function crrOf(pod: V1Pod): Promise<{ spec: { containers: Array<{ name: string }> } } | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({
      group: 'apps.kruise.io',
      version: 'v1alpha1',
      namespace: ns,
      plural: 'containerrecreaterequests',
      name: `sidecar-termination-${pod.metadata!.uid}`,
    })) as never;
  } catch {
    return undefined;
  }
}

/** Binds the pod and reports: app exited `exitCode`, the injected proxy running. */
async function mainFinished(pod: V1Pod, exitCode: number): Promise<void> {
  await bindPod(pod, node);
  await setPodStatus(pod, {
    phase: 'Running',
    containerStatuses: [
      { name: 'app', state: { terminated: { exitCode } } },
      { name: PROXY.name, state: { running: {} } },
    ],
  });
}

describe('containers injected by another webhook', () => {
  it('exit priority by pattern: the pod webhook, called again after the injector, wires the injected proxy', async () => {
    const pod = await createJobPod('prio', {
      'kruise.cdk8s.io/container-exit-priority-patterns': JSON.stringify([{ imagePattern: '^example\\.io/mesh/', priority: 1 }]),
    });
    const names = pod.spec!.containers.map((c) => c.name);
    expect(names).toEqual(['app', PROXY.name]);
    expect(pod.metadata!.annotations!['kruise.io/container-exit-priority']).toBe('{"mesh-proxy":1}');
    const hook = readExitPriorityHook(pod.spec!.containers[1]!.lifecycle?.preStop);
    expect(hook).toMatchObject({ namespace: ns, container: PROXY.name });
    expect(pod.spec!.containers[0]!.lifecycle?.preStop).toBeUndefined();
    // The injector saw the pod once, before it had the proxy.
    expect(injector.requests.filter((r) => (r.object as V1Pod)?.metadata?.name === 'prio').length).toBeGreaterThanOrEqual(1);
  });

  it('declared in terminate-sidecars: the injected proxy is stopped once the main container is done, and the Job pod Succeeds', async () => {
    const pod = await createJobPod('declared', {
      'kruise.cdk8s.io/terminate-sidecars': JSON.stringify([{ name: PROXY.name, ignoreExitCode: true }]),
    });
    expect(pod.spec!.containers.map((c) => c.name)).toEqual(['app', PROXY.name]);
    await mainFinished(pod, 0);
    const crr = await eventually(() => crrOf(pod), 20_000, 'sidecar-termination CRR');
    expect(crr.spec.containers.map((c) => c.name)).toEqual([PROXY.name]);
    // ignoreExitCode: the manager decides the phase from the main container alone.
    const done = await eventually(
      async () => {
        const p = await core.readNamespacedPod({ name: 'declared', namespace: ns });
        return p.status?.phase === 'Succeeded' ? p : undefined;
      },
      20_000,
      'pod Succeeded',
    );
    expect(done.status!.conditions!.find((c) => c.type === 'SidecarTerminated')?.status).toBe('True');
  });

  it('not declared: the injected proxy is left running (the Job would run until its deadline)', async () => {
    const declared = await createJobPod('declared-control', {
      'kruise.cdk8s.io/terminate-sidecars': JSON.stringify([{ name: PROXY.name }]),
    });
    const undeclared = await createJobPod('undeclared', {});
    await mainFinished(undeclared, 0);
    await mainFinished(declared, 0);
    // The declared pod, finished after the undeclared one, is acted on: by then the undeclared one was looked at too.
    await eventually(() => crrOf(declared), 20_000, 'CRR of the declared pod');
    await sleep(1_000);
    expect(await crrOf(undeclared)).toBeUndefined();
    const p = await core.readNamespacedPod({ name: 'undeclared', namespace: ns });
    expect(p.status?.phase).toBe('Running');
  });
});

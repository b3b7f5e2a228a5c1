// The Job sidecar terminator end to end on real parts: the main container of a restartPolicy=Never
// pod exits in a real containerd -> the (fake) kubelet reports it -> the controller-manager (in-process,
// gate SidecarTerminator on, webhooks registered with the API server) creates the CRR, its webhook
// fills labels and statusContext -> the daemon stops the sidecar through CRI -> both containers exited
// and the pod ends Succeeded.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerRecreateRequestDefinition } from '../../src/api/registry.js';
import { ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, sidecarTerminationCrrName } from '../../src/api/pod-contracts.js';
import { kindWebhookPath } from '../../src/install/webhooks.js';
import { CONTAINER_RECREATE_REQUESTS, PODS, type KubeObject, type Pod } from '../../src/runtime/core/index.js';
import type { Daemon } from '../../src/runtime/daemon/daemon.js';
import { MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { startCriEnvironment, waitFor, type CriEnvironment } from '../cri-harness/index.js';
import { adminKubeConfig, createNamespace, createNode, kubeconfigPath } from '../harness/index.js';
import { DEFAULT_MANAGER_OPTIONS, Manager } from '../../src/runtime/manager/manager.js';
import { freePort } from '../cri-harness/index.js';
import { FakeKubelet, adminClient, installCrds, startDaemon } from './daemon-support.js';

const id = randomBytes(3).toString('hex');
const NODE = `node-sidecar-${id}`;
// The runtime's RBAC names these configurations (resourceNames), so the test uses the real names
// (test files run one at a time; each deletes them when done).
const mutatingName = MUTATING_WEBHOOK_CONFIGURATION;
const validatingName = VALIDATING_WEBHOOK_CONFIGURATION;
let env: CriEnvironment;
let daemon: Daemon;
let manager: Manager;
let ns: string;
let kubelet: FakeKubelet | undefined;

beforeAll(async () => {
  env = await startCriEnvironment();
  await installCrds();
  const runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('sidecar-job');
  await createNode(NODE);
  const port = await freePort();
  const nsSelector = { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [ns] }] };
  const crrRule = {
    apiGroups: ['apps.kruise.io'],
    apiVersions: ['v1alpha1'],
    resources: ['containerrecreaterequests'],
    scope: 'Namespaced' as const,
  };
  const adm = adminKubeConfig().makeApiClient(AdmissionregistrationV1Api);
  // Left over by an aborted run of another file: replace.
  await adm.deleteMutatingWebhookConfiguration({ name: mutatingName }).catch(() => undefined);
  await adm.deleteValidatingWebhookConfiguration({ name: validatingName }).catch(() => undefined);
  await adm.createMutatingWebhookConfiguration({
    body: {
      metadata: { name: mutatingName },
      webhooks: [
        {
          name: 'mcontainerrecreaterequest.kb.io',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          namespaceSelector: nsSelector,
          // As the install registers it: this webhook also validates CRR updates (there is no validating one).
          rules: [{ ...crrRule, operations: ['CREATE', 'UPDATE'] }],
          clientConfig: { url: `https://127.0.0.1:${port}${kindWebhookPath('mutate', ContainerRecreateRequestDefinition)}` },
        },
      ],
    },
  });
  manager = new Manager({
    ...DEFAULT_MANAGER_OPTIONS,
    kubeconfig: kubeconfigPath(),
    namespace: runtimeNs,
    featureGates: 'SidecarTerminator=true',
    webhookPort: port,
    webhookHost: '127.0.0.1',
    webhookCertHosts: ['127.0.0.1'],
    healthProbeAddr: '127.0.0.1:0',
    metricsAddr: '0',
    strictPermissions: true,
    logLevel: process.env.DAEMON_LOG_LEVEL ?? 'warn',
  });
  await manager.start();
  // The manager's CRR path, the fallback: the daemon's node-local stop (which would act first) is off here; it is
  // proven on the real node (test/node/node-local-terminator.test.ts).
  daemon = await startDaemon(NODE, env.containerd.socket, {
    controllerOptions: { exitPriorityAddr: '127.0.0.1:0', nodeLocalSidecarTerminator: false },
  });
});

afterAll(async () => {
  await kubelet?.stop().catch(() => undefined);
  const adm = adminKubeConfig().makeApiClient(AdmissionregistrationV1Api);
  await adm.deleteMutatingWebhookConfiguration({ name: mutatingName }).catch(() => undefined);
  await adm.deleteValidatingWebhookConfiguration({ name: validatingName }).catch(() => undefined);
  await manager?.stop();
  await daemon?.stop();
  await env?.stop();
});

describe('Job sidecar terminator on a normal node', () => {
  it('main container exits -> CRR created -> daemon stops the sidecar -> both exited, pod Succeeded', async () => {
    const pod = (await adminClient().create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'job-pod', namespace: ns },
      spec: {
        nodeName: NODE,
        restartPolicy: 'Never',
        containers: [
          { name: 'main', image: env.images.busybox, command: ['/bin/sh', '-c', 'sleep 2; exit 0'] },
          { name: 'sidecar', image: env.images.busybox, env: [{ name: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: 'true' }] },
        ],
      },
    } as KubeObject)) as unknown as V1Pod;
    kubelet = await FakeKubelet.start(env.cri, pod, join(env.dir, 'logs'));
    const sidecarId = kubelet.cri.containerIds.get('sidecar')!;
    const mainId = kubelet.cri.containerIds.get('main')!;

    // Main exits by itself; the sidecar (a sleep loop) would run forever.
    await waitFor(
      'main container exited in containerd',
      async () => (await env.cri.containerStatus(mainId)).state === 'CONTAINER_EXITED',
      20_000,
      100,
    );

    const crrName = sidecarTerminationCrrName(pod.metadata!.uid!);
    let crr: KubeObject | undefined;
    await waitFor(
      `CRR ${crrName} created by the controller`,
      async () => {
        crr = await adminClient()
          .get(CONTAINER_RECREATE_REQUESTS, crrName, ns)
          .catch(() => undefined);
        return !!crr;
      },
      30_000,
      200,
    );
    // The webhook routed it to this node's daemon.
    expect(crr!.metadata.labels).toMatchObject({ 'crr.apps.kruise.io/node-name': NODE, 'crr.apps.kruise.io/pod-uid': pod.metadata!.uid });

    await waitFor(
      'sidecar stopped through CRI',
      async () => (await env.cri.containerStatus(sidecarId)).state === 'CONTAINER_EXITED',
      30_000,
      100,
    );
    const side = await env.cri.containerStatus(sidecarId);
    const main = await env.cri.containerStatus(mainId);
    expect(main).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 0 });
    // SIGTERM was trapped: the sidecar exited cleanly, after main.
    expect(side).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 0 });
    expect(BigInt(side.finishedAt)).toBeGreaterThan(BigInt(main.finishedAt));

    // No restart under restartPolicy Never: the kubelet reports the pod finished.
    await waitFor(
      'pod Succeeded',
      async () => (await adminClient().get<Pod>(PODS, 'job-pod', ns)).status?.phase === 'Succeeded',
      20_000,
      200,
    );
    await waitFor(
      'CRR completed',
      async () => {
        const c = await adminClient().get<KubeObject & { status?: { phase?: string } }>(CONTAINER_RECREATE_REQUESTS, crrName, ns);
        return c.status?.phase === 'Completed';
      },
      20_000,
      200,
    );
    const list = await adminClient().list(CONTAINER_RECREATE_REQUESTS, { namespace: ns });
    expect(list.items.map((c) => c.metadata.name)).toEqual([crrName]);
    expect(kubelet.errors).toEqual([]);
  });
});

// The pod webhook (/mutate-pod) served by the runtime and registered as the install renders it, on the
// real kube-apiserver: a pod CREATE owned by a Kruise workload is mutated by the composed pod mutators;
// kube-system, the runtime's namespace and namespaces labelled to opt out are never sent to it.
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_POD_WEBHOOK_OPT_OUT, MUTATING_WEBHOOK_CONFIGURATION, POD_WEBHOOK_OPT_OUT_VALUE } from '../../src/contracts/index.js';
import { adminKubeConfig, createNamespace } from '../harness/index.js';
import { accessCoverage, accessLogs, eventually, startWithPodWebhook, type ControllerProcess } from './runtime/support.js';

let core: CoreV1Api;
let adm: AdmissionregistrationV1Api;
let custom: CustomObjectsApi;
const setName = `logtail-${process.pid}`;
let runtimeNs: string;
let ns: string;
let optedOut: string;
let ctl: ControllerProcess;

function podBody(name: string, labels?: Record<string, string>): V1Pod {
  return {
    metadata: {
      name,
      ...(labels ? { labels } : {}),
      // A CloneSet's pod as its controller creates it (owner references to absent objects are accepted).
      ownerReferences: [
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'CloneSet',
          name: 'web',
          uid: '00000000-0000-0000-0000-000000000001',
          controller: true,
        },
      ],
    },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
  };
}

async function createPod(namespace: string, name: string, labels?: Record<string, string>): Promise<V1Pod> {
  // Dry run: admission runs in full (sideEffects None) and nothing is left behind in kube-system.
  return core.createNamespacedPod({ namespace, body: podBody(name, labels), dryRun: 'All' });
}

const gates = (p: V1Pod) => (p.spec?.readinessGates ?? []).map((g) => g.conditionType);

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  adm = kc.makeApiClient(AdmissionregistrationV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('podwebhook');
  optedOut = await createNamespace('podwebhook-optout', { [LABEL_POD_WEBHOOK_OPT_OUT]: POD_WEBHOOK_OPT_OUT_VALUE });
  ctl = await startWithPodWebhook(runtimeNs);
  // The logtail SidecarSet of the seed scenario, selecting app=webserver in every namespace.
  await custom.createClusterCustomObject({
    group: 'apps.kruise.io',
    version: 'v1alpha1',
    plural: 'sidecarsets',
    body: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: setName },
      spec: {
        selector: { matchLabels: { app: 'webserver' } },
        containers: [
          {
            name: 'logtail',
            image: 'example.io/logtail:1.0.0',
            shareVolumePolicy: { type: 'enabled' },
            volumeMounts: [{ name: 'log-volume', mountPath: '/var/log/app' }],
          },
        ],
        volumes: [{ name: 'log-volume', emptyDir: {} }],
        imagePullSecrets: [{ name: 'logtail-cred' }],
      },
    },
  });
});

afterAll(async () => {
  await custom
    .deleteClusterCustomObject({ group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets', name: setName })
    .catch(() => undefined);
  // failurePolicy Fail on every pod: never leave the configuration behind for later test files.
  await adm.deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await ctl?.stop('SIGTERM');
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('pod webhook on the real API server', () => {
  it('adds KruisePodReady and InPlaceUpdateReady to a Kruise workload pod on CREATE', async () => {
    // The API server picks the configuration (and the caBundle the runtime patches in) up asynchronously.
    await eventually(async () => gates(await createPod(ns, 'probe')).length > 0, 30_000, 'pod webhook live');
    const created = await core.createNamespacedPod({ namespace: ns, body: podBody('web-0') });
    expect(gates(created)).toEqual(['KruisePodReady', 'InPlaceUpdateReady']);
    // The podreadiness controller sets both conditions True, so the pod is Ready once its containers are.
    await eventually(
      async () => {
        const conds = (await core.readNamespacedPodStatus({ name: 'web-0', namespace: ns })).status?.conditions ?? [];
        return ['KruisePodReady', 'InPlaceUpdateReady'].every((t) => conds.some((c) => c.type === t && c.status === 'True'));
      },
      20_000,
      'readiness gates initialised True',
    );
    // A pod of a non-Kruise owner passes unchanged.
    const plain = await core.createNamespacedPod({ namespace: ns, body: { ...podBody('plain'), metadata: { name: 'plain' } } });
    expect(plain.spec?.readinessGates).toBeUndefined();
  });

  it('injects the logtail SidecarSet (container, volume, pull secret, annotations) before the readiness gates see the pod', async () => {
    // The informer sees the new SidecarSet asynchronously.
    const pod = await eventually(
      async () => {
        const p = await createPod(ns, 'logged', { app: 'webserver' });
        return p.spec!.containers.some((c) => c.name === 'logtail') ? p : undefined;
      },
      20_000,
      'SidecarSet injected',
    );
    expect(pod.spec!.containers.map((c) => c.name)).toEqual(['logtail', 'app']);
    expect(pod.spec!.containers[0]!.env).toContainEqual({ name: 'IS_INJECTED', value: 'true' });
    expect(pod.spec!.volumes!.map((v) => v.name)).toContain('log-volume');
    expect(pod.spec!.imagePullSecrets).toEqual([{ name: 'logtail-cred' }]);
    const a = pod.metadata!.annotations!;
    expect(a['kruise.io/sidecarset-injected-list']).toBe(setName);
    expect(JSON.parse(a['kruise.io/sidecarset-hash']!)[setName]).toMatchObject({ sidecarSetName: setName, sidecarList: ['logtail'] });
    expect(JSON.parse(a['kruise.io/sidecarset-hash-without-image']!)[setName].hash).toMatch(/^[a-z0-9]+$/);
    expect(gates(pod)).toEqual(['KruisePodReady', 'InPlaceUpdateReady']);
  });

  it('is CREATE only: an update of the pod is not mutated', async () => {
    const updated = await core.patchNamespacedPod({
      name: 'plain',
      namespace: ns,
      body: [{ op: 'add', path: '/metadata/ownerReferences', value: podBody('plain').metadata!.ownerReferences }],
    });
    expect(updated.spec?.readinessGates).toBeUndefined();
  });

  it('never reaches kube-system, the runtime namespace or an opted-out namespace', async () => {
    for (const namespace of ['kube-system', runtimeNs, optedOut]) {
      const p = await createPod(namespace, 'web-x', { app: 'webserver' });
      expect(gates(p), namespace).toEqual([]);
      expect(
        p.spec!.containers.map((c) => c.name),
        namespace,
      ).toEqual(['app']);
    }
  });

  it('fails closed elsewhere when the runtime is down, but kube-system and its own namespace still admit pods', async () => {
    await ctl.stop('SIGTERM');
    await expect(createPod(ns, 'while-down')).rejects.toThrow(/mpod\.kb\.io|failed calling webhook/);
    for (const namespace of ['kube-system', runtimeNs, optedOut]) await expect(createPod(namespace, 'while-down')).resolves.toBeDefined();
  });
});

// Enhanced liveness on the real kube-apiserver: `cdk8s-kruise controller` as a child process (strict permissions,
// access log checked) with gates EnhancedLivenessProbe and PodProbeMarkerGate, the install's own pod webhook entry
// dialled at it. The pod webhook step moves a pod's liveness probe into upstream's annotation; the controller lists
// the moved probes in the node's NodePodProbe; the test plays the node daemon (writes Failed results, as the daemon's
// prober does) and the kubelet (a restarted container comes back with a new id), and the budget decides how many
// ContainerRecreateRequests exist at once. The daemon's own probing and restart are proven on the real node
// (test/node/enhanced-liveness.test.ts).
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type V1MutatingWebhookConfiguration,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MUTATING_WEBHOOK_CONFIGURATION, POD_MUTATING_PATH } from '../../src/contracts/index.js';
import { mutatingWebhookConfiguration } from '../../src/install/webhooks.js';
import { adminKubeConfig, bindPod, createNamespace, createNode, mergePatch } from '../harness/index.js';
import {
  accessCoverage,
  accessLogs,
  eventually,
  freePort,
  loopbackWebhookArgs,
  podWebhookInstallSpec,
  startController,
  type ControllerProcess,
} from './runtime/support.js';

type Obj = Record<string, any>;

let core: CoreV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
let ctl: ControllerProcess;
const node = `node-liveness-${process.pid}`;
const NPP = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'nodepodprobes' } as const;
const CRR = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'containerrecreaterequests' } as const;
const probe = { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 1, failureThreshold: 1 };
const PENDING = 'kruise.cdk8s.io/LivenessRestartPending';

const rfc3339 = (d = new Date()) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Plays the kubelet: the pod Running and Ready on the test's node, its container `id` started at `startedAt`. */
async function running(name: string, id: string, startedAt: string, ready = true): Promise<void> {
  const status = {
    phase: 'Running',
    podIP: '10.2.0.1',
    conditions: [
      { type: 'ContainersReady', status: ready ? 'True' : 'False' },
      { type: 'Ready', status: ready ? 'True' : 'False' },
    ],
    containerStatuses: [
      {
        name: 'app',
        image: 'example.io/app:1',
        imageID: 'sha256:1',
        containerID: `containerd://${id}`,
        ready,
        restartCount: 0,
        started: true,
        state: { running: { startedAt } },
      },
    ],
  };
  await core.patchNamespacedPodStatus({ name, namespace: ns, body: { status } }, mergePatch);
}

/** Plays the node daemon: every listed liveness probe of `pods` reported Failed now. */
async function reportFailed(pods: readonly V1Pod[]): Promise<void> {
  const now = rfc3339();
  await custom.patchClusterCustomObjectStatus(
    {
      ...NPP,
      name: node,
      body: {
        status: {
          podProbeStatuses: pods.map((p) => ({
            name: p.metadata!.name,
            namespace: ns,
            uid: p.metadata!.uid,
            probeStates: [
              {
                name: 'enhanced-liveness:app',
                state: 'Failed',
                message: 'cat: /tmp/healthy: No such file',
                lastProbeTime: now,
                lastTransitionTime: now,
              },
            ],
          })),
        },
      },
    },
    mergePatch,
  );
}

async function crrs(): Promise<Obj[]> {
  const list = (await custom.listNamespacedCustomObject({
    ...CRR,
    namespace: ns,
    labelSelector: 'kruise.cdk8s.io/liveness-restart',
  })) as Obj;
  return list.items as Obj[];
}

async function pods(): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items.sort((a, b) =>
    a.metadata!.name!.localeCompare(b.metadata!.name!),
  );
}

const pending = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === PENDING);

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('liveness');
  await createNode(node);
  await core.patchNode({ name: node, body: { spec: { taints: [] } } }, mergePatch);
  const port = await freePort();
  const rendered = mutatingWebhookConfiguration(podWebhookInstallSpec(runtimeNs)) as unknown as V1MutatingWebhookConfiguration;
  const podHook = rendered.webhooks!.find((w) => w.name === 'mpod.kb.io')!;
  podHook.clientConfig = { url: `https://127.0.0.1:${port}${POD_MUTATING_PATH}` };
  // Only this test's namespace: other files' pods never meet this manager.
  podHook.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': ns } };
  const adm = kc.makeApiClient(AdmissionregistrationV1Api);
  // The install's name: the manager's permission to keep its CA bundle names it.
  const name = MUTATING_WEBHOOK_CONFIGURATION;
  await adm.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
  await adm.createMutatingWebhookConfiguration({ body: { metadata: { name }, webhooks: [podHook] } });
  ctl = await startController(runtimeNs, [
    ...loopbackWebhookArgs(port, name),
    '--feature-gates=EnhancedLivenessProbe=true,PodProbeMarkerGate=true',
  ]);
  await ctl.waitReady();
}, 120_000);

afterAll(async () => {
  await adminKubeConfig()
    .makeApiClient(AdmissionregistrationV1Api)
    .deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION })
    .catch(() => undefined);
  await ctl?.stop('SIGKILL');
  for (const l of ctl?.logs.filter((x) => x.level >= 40).slice(-30) ?? []) console.log('[controller]', JSON.stringify(l));
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('enhanced liveness on the real API server', () => {
  it("the pod webhook moves an opted-in pod's liveness probe into upstream's annotation, and leaves other pods alone", async () => {
    const created = await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'opted', annotations: { 'apps.kruise.io/using-enhanced-liveness': 'true' } },
        spec: { containers: [{ name: 'app', image: 'example.io/app:1', livenessProbe: probe }] },
      },
    });
    expect(created.spec!.containers[0]!.livenessProbe).toBeUndefined();
    const ctx = JSON.parse(created.metadata!.annotations!['apps.kruise.io/container-probe-context']!);
    // The API server's defaults are in the moved probe (the webhook sees the defaulted pod), as under upstream.
    expect(ctx).toEqual([
      { name: 'app', livenessProbe: expect.objectContaining({ exec: probe.exec, periodSeconds: 1, failureThreshold: 1 }) },
    ]);

    const plain = await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'plain' }, spec: { containers: [{ name: 'app', image: 'example.io/app:1', livenessProbe: probe }] } },
    });
    expect(plain.spec!.containers[0]!.livenessProbe).toMatchObject(probe);
    expect(plain.metadata!.annotations?.['apps.kruise.io/container-probe-context']).toBeUndefined();
    await core.deleteCollectionNamespacedPod({ namespace: ns, gracePeriodSeconds: 0 });
  });

  it('five failing pods under a PodDisruptionBudget of maxUnavailable 2: two restart at a time, the others wait with a condition, one cluster-wide event', async () => {
    const started = rfc3339(new Date(Date.now() - 60_000));
    for (let i = 0; i < 5; i++) {
      const p = await core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: `web-${i}`, labels: { app: 'web' }, annotations: { 'apps.kruise.io/using-enhanced-liveness': 'true' } },
          spec: { containers: [{ name: 'app', image: 'example.io/app:1', livenessProbe: probe }] },
        },
      });
      await bindPod(p, node);
      await running(`web-${i}`, `web-${i}-a`, started);
    }
    await kubectlApplyPdb();
    // The controller lists every moved probe in the node's NodePodProbe, for the daemon to run.
    await eventually(async () => {
      const npp = (await custom.getClusterCustomObject({ ...NPP, name: node })) as Obj;
      const listed = ((npp.spec?.podProbes ?? []) as Obj[]).filter((e) => e.namespace === ns);
      return listed.length === 5 && listed.every((e) => e.probes.some((x: Obj) => x.name === 'enhanced-liveness:app' && x.probe.exec))
        ? true
        : undefined;
    }, 30_000);

    await reportFailed(await pods());
    const first = await eventually(async () => {
      const c = await crrs();
      return c.length === 2
        ? c
        : c.length > 2
          ? (() => {
              throw new Error(`${c.length} restarts at once`);
            })()
          : undefined;
    }, 30_000);
    expect(first.map((c) => c.spec.containers)).toEqual([[{ name: 'app' }], [{ name: 'app' }]]);
    const waiting = await eventually(async () => {
      const w = (await pods()).filter((p) => pending(p)?.status === 'True');
      return w.length === 3 ? w : undefined;
    }, 20_000);
    expect(pending(waiting[0]!)!.message).toMatch(
      /^restart of container app waits: PodDisruptionBudget .*\/web allows 2 pod\(s\) unavailable/,
    );
    const events = await eventually(async () => {
      const e = (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=ClusterWideLivenessFailure' })).items;
      return e.length ? e : undefined;
    }, 20_000);
    expect(events).toHaveLength(1);
    expect(events[0]!.involvedObject.kind).toBe('PodDisruptionBudget');
    expect(events[0]!.message).toMatch(
      /^cluster-wide liveness failure: 5 of 5 pods under PodDisruptionBudget .* restarting at most 2 at a time/,
    );

    // The condition names the budget; the waiting events give the counts.
    const waitEvents = (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=LivenessRestartWaiting' })).items;
    expect(waitEvents.length).toBeGreaterThanOrEqual(3);
    expect(waitEvents[0]!.message).toMatch(
      /allows 2 pod\(s\) unavailable at once; (\d+ liveness restart\(s\) are under way|\d+ of 5 are unavailable or restarting)$/,
    );

    // Still two: nothing more is admitted while those restarts are under way.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await crrs()).toHaveLength(2);

    // The kubelet brings the two restarted containers back (new ids): the next two restart, then the last one.
    const restarted = new Set<string>();
    for (let round = 0; round < 3; round++) {
      const now = await crrs();
      for (const c of now) {
        if (restarted.has(c.spec.podName)) continue;
        restarted.add(c.spec.podName);
        await running(c.spec.podName, `${c.spec.podName}-b`, rfc3339());
      }
      if (restarted.size === 5) break;
      await eventually(async () => ((await crrs()).length > restarted.size ? true : undefined), 30_000);
      expect((await crrs()).length - restarted.size).toBeLessThanOrEqual(2);
    }
    expect(restarted.size).toBe(5);
    // Nothing waits any more: the conditions went False.
    await eventually(async () => ((await pods()).every((p) => pending(p)?.status !== 'True') ? true : undefined), 20_000);
  }, 180_000);

  it("no budget object: a Deployment's pods (through their ReplicaSet) restart within its maxUnavailable, 25% of 4 = 1 at a time", async () => {
    // Nothing runs the Deployment here (no kube-controller-manager): the test writes its ReplicaSet and pods as it would.
    const labels = { app: 'api' };
    const template = { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'example.io/app:1' }] } };
    const dep = await createIn('apps', 'v1', 'deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'api' },
      spec: { replicas: 4, selector: { matchLabels: labels }, template },
    });
    const rs = await createIn('apps', 'v1', 'replicasets', {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: 'api-1',
        labels,
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'api', uid: dep.metadata.uid, controller: true }],
      },
      spec: { replicas: 4, selector: { matchLabels: labels }, template },
    });
    const started = rfc3339(new Date(Date.now() - 60_000));
    const created: V1Pod[] = [];
    for (let i = 0; i < 4; i++) {
      const p = await core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: {
            name: `api-${i}`,
            labels,
            annotations: { 'apps.kruise.io/using-enhanced-liveness': 'true' },
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'api-1', uid: rs.metadata.uid, controller: true }],
          },
          spec: { containers: [{ name: 'app', image: 'example.io/app:1', livenessProbe: probe }] },
        },
      });
      await bindPod(p, node);
      await running(`api-${i}`, `api-${i}-a`, started);
      created.push(p);
    }
    await eventually(async () => {
      const npp = (await custom.getClusterCustomObject({ ...NPP, name: node })) as Obj;
      return ((npp.spec?.podProbes ?? []) as Obj[]).filter((e) => e.namespace === ns && e.name.startsWith('api-')).length === 4
        ? true
        : undefined;
    }, 30_000);
    await reportFailed(created);
    const apiCrrs = async () => (await crrs()).filter((c) => c.spec.podName.startsWith('api-'));
    await eventually(async () => ((await apiCrrs()).length === 1 ? true : undefined), 30_000);
    const waiting = await eventually(async () => {
      const w = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=api' })).items.filter(
        (p) => pending(p)?.status === 'True',
      );
      return w.length === 3 ? w : undefined;
    }, 20_000);
    expect(pending(waiting[0]!)!.message).toMatch(/waits: Deployment .*\/api \(maxUnavailable 1\) allows 1 pod\(s\) unavailable/);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await apiCrrs()).toHaveLength(1);
  }, 120_000);
});

async function createIn(group: string, version: string, plural: string, body: Obj): Promise<Obj> {
  return (await custom.createNamespacedCustomObject({ group, version, plural, namespace: ns, body })) as Obj;
}

async function kubectlApplyPdb(): Promise<void> {
  await custom.createNamespacedCustomObject({
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    namespace: ns,
    body: {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 2 },
    },
  });
}

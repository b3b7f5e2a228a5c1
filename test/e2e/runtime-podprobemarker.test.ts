// The manager's PodProbeMarker and NodePodProbe controllers on the real kube-apiserver: `cdk8s-kruise controller` runs
// as a child process (strict permissions, access log checked against src/contracts/permissions.ts). The test plays the
// scheduler and the kubelet (binds pods, reports them initialized with an IP) and the node daemon (writes probe
// results to the NodePodProbe status, as kruise-daemon does); the daemon's own probing is proven on the real node
// (test/node/podprobemarker.test.ts).
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKubeConfig, bindPod, createNamespace, createNode, mergePatch, setPodStatus } from '../harness/index.js';
import { accessCoverage, accessLogs, eventually, startController, type ControllerProcess } from './runtime/support.js';

let core: CoreV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
const procs: ControllerProcess[] = [];
const node = `node-ppm-${process.pid}`;
const PPM = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'podprobemarkers' } as const;
const NPP = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'nodepodprobes' } as const;
const FINALIZER = 'kruise.io/node-pod-probe-cleanup';

type Npp = {
  metadata: { name: string; resourceVersion: string };
  spec?: { podProbes?: Array<{ name: string; namespace: string; uid: string; IP: string; probes?: Array<{ name: string; probe: any }> }> };
};

async function getNpp(): Promise<Npp> {
  return (await custom.getClusterCustomObject({ ...NPP, name: node })) as never;
}

async function getPod(name: string): Promise<V1Pod> {
  return core.readNamespacedPod({ name, namespace: ns });
}

/** A pod on the test's node, initialized, with an IP: a probe target. */
async function runningPod(name: string, ip: string): Promise<V1Pod> {
  const pod = await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name, labels: { app: 'game' } },
      spec: { containers: [{ name: 'main', image: 'example.io/game:1', ports: [{ name: 'web', containerPort: 8080 }] }] },
    },
  });
  await bindPod(pod, node);
  return setPodStatus(pod, {
    phase: 'Running',
    podIP: ip,
    containerStatuses: [{ name: 'main', ready: true, state: { running: {} } }],
    conditions: [{ type: 'Initialized', status: 'True' }],
  });
}

/** What the node daemon does: the state of each listed probe of `podName`, written to the NodePodProbe status. */
async function report(podName: string, states: Record<string, 'Succeeded' | 'Failed'>, message = ''): Promise<void> {
  const npp = await getNpp();
  const entry = npp.spec!.podProbes!.find((p) => p.name === podName && p.namespace === ns)!;
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  await custom.patchClusterCustomObjectStatus(
    {
      ...NPP,
      name: node,
      body: {
        status: {
          podProbeStatuses: [
            {
              name: entry.name,
              namespace: ns,
              uid: entry.uid,
              probeStates: Object.entries(states).map(([name, state]) => ({
                name,
                state,
                message,
                lastProbeTime: now,
                lastTransitionTime: now,
              })),
            },
          ],
        },
      },
    },
    mergePatch,
  );
}

const condition = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('podprobemarker');
  await createNode(node);
  await core.patchNode({ name: node, body: { spec: { taints: [] } } }, mergePatch);
  const p = await startController(runtimeNs, ['--webhook-port', '0', ...(process.env.DEBUG_PPM ? ['--log-level', 'debug'] : [])]);
  procs.push(p);
  await p.waitReady();
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  for (const p of procs)
    for (const l of p.logs.filter((x) => x.level >= 40 || process.env.DEBUG_PPM).slice(-40)) console.log('[controller]', JSON.stringify(l));
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  console.log(`[runtime permissions] ${report.calls} API calls recorded; declared but unused here: ${report.unused.join(', ') || 'none'}`);
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('PodProbeMarker controllers on the real API server', () => {
  it('a NodePodProbe per Ready node; the marker’s probes listed per pod; results marked on the pod and flipped; cleanup', async () => {
    // One NodePodProbe for the Ready node, named after it.
    await eventually(async () => (await getNpp()).metadata.name === node, 20_000);
    const a = await runningPod('game-a', '10.1.0.1');

    await custom.createNamespacedCustomObject({
      ...PPM,
      namespace: ns,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'PodProbeMarker',
        metadata: { name: 'probes', namespace: ns },
        spec: {
          selector: { matchLabels: { app: 'game' } },
          probes: [
            {
              name: 'healthy',
              containerName: 'main',
              probe: { exec: { command: ['cat', '/healthy'] } },
              podConditionType: 'game.kruise.io/healthy',
              markerPolicy: [
                { state: 'Succeeded', labels: { healthy: 'yes' }, annotations: { 'controller.kubernetes.io/pod-deletion-cost': '10' } },
                { state: 'Failed', labels: { broken: 'yes' }, annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-10' } },
              ],
            },
            {
              name: 'http',
              containerName: 'main',
              probe: { httpGet: { port: 'web', path: '/ready' } },
              podConditionType: 'game.kruise.io/http',
            },
          ],
        },
      },
    });

    // Finalizer, status, and the probes in the node's NodePodProbe with the named port resolved.
    await eventually(async () => {
      const m = (await custom.getNamespacedCustomObject({ ...PPM, namespace: ns, name: 'probes' })) as any;
      expect(m.metadata.finalizers).toContain(FINALIZER);
      expect(m.status).toMatchObject({ observedGeneration: 1, matchedPods: 1 });
      const entry = (await getNpp()).spec?.podProbes?.find((p) => p.namespace === ns && p.name === 'game-a');
      expect(entry).toMatchObject({ uid: a.metadata!.uid, IP: '10.1.0.1' });
      expect(entry!.probes!.map((p) => p.name)).toEqual(['probes#healthy', 'probes#http']);
      expect(entry!.probes![1]!.probe.httpGet.port).toBe(8080);
      return true;
    }, 20_000);

    // The daemon reports success: condition True, the Succeeded labels and annotation.
    await report('game-a', { 'probes#healthy': 'Succeeded', 'probes#http': 'Succeeded' }, 'ok');
    await eventually(async () => {
      const p = await getPod('game-a');
      expect(condition(p, 'game.kruise.io/healthy')).toMatchObject({ status: 'True', message: 'ok' });
      expect(condition(p, 'game.kruise.io/http')).toMatchObject({ status: 'True' });
      expect(p.metadata!.labels).toMatchObject({ healthy: 'yes' });
      expect(p.metadata!.annotations).toMatchObject({ 'controller.kubernetes.io/pod-deletion-cost': '10' });
      return true;
    }, 20_000);

    // It flips: condition False, the Succeeded label gone, the Failed ones set.
    await report('game-a', { 'probes#healthy': 'Failed', 'probes#http': 'Succeeded' }, 'cat: /healthy: No such file');
    await eventually(async () => {
      const p = await getPod('game-a');
      expect(condition(p, 'game.kruise.io/healthy')).toMatchObject({ status: 'False', message: 'cat: /healthy: No such file' });
      expect(p.metadata!.labels!.healthy).toBeUndefined();
      expect(p.metadata!.labels).toMatchObject({ broken: 'yes', app: 'game' });
      expect(p.metadata!.annotations).toMatchObject({ 'controller.kubernetes.io/pod-deletion-cost': '-10' });
      return true;
    }, 20_000);

    // A second pod joins; a pod whose labels stop matching leaves the NodePodProbe.
    await runningPod('game-b', '10.1.0.2');
    await eventually(async () => {
      const names = ((await getNpp()).spec?.podProbes ?? []).filter((p) => p.namespace === ns).map((p) => p.name);
      expect(names).toEqual(['game-a', 'game-b']);
      return true;
    }, 20_000);
    await core.patchNamespacedPod({ name: 'game-b', namespace: ns, body: { metadata: { labels: { app: 'other' } } } }, mergePatch);
    await eventually(async () => {
      const names = ((await getNpp()).spec?.podProbes ?? []).filter((p) => p.namespace === ns).map((p) => p.name);
      expect(names).toEqual(['game-a']);
      return true;
    }, 20_000);

    // A deleted pod leaves it too.
    await core.deleteNamespacedPod({ name: 'game-a', namespace: ns, gracePeriodSeconds: 0 });
    await eventually(async () => {
      expect(((await getNpp()).spec?.podProbes ?? []).filter((p) => p.namespace === ns)).toEqual([]);
      return true;
    }, 20_000);

    // The marker's deletion waits for its finalizer, which goes once its probes are gone everywhere.
    await runningPod('game-c', '10.1.0.3');
    await eventually(async () => {
      expect(((await getNpp()).spec?.podProbes ?? []).filter((p) => p.namespace === ns).map((p) => p.name)).toEqual(['game-c']);
      return true;
    }, 20_000);
    await custom.deleteNamespacedCustomObject({ ...PPM, namespace: ns, name: 'probes' });
    await eventually(async () => {
      await expect(custom.getNamespacedCustomObject({ ...PPM, namespace: ns, name: 'probes' })).rejects.toThrow(/404|not found/i);
      expect(((await getNpp()).spec?.podProbes ?? []).filter((p) => p.namespace === ns)).toEqual([]);
      return true;
    }, 20_000);
  }, 180_000);

  it('refuses a marker without a selector or with a probe lacking its container (schema), with the field named', async () => {
    await expect(
      custom.createNamespacedCustomObject({
        ...PPM,
        namespace: ns,
        body: {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'PodProbeMarker',
          metadata: { name: 'bad', namespace: ns },
          spec: { probes: [{ name: 'x', probe: {} }] },
        },
      }),
    ).rejects.toThrow(/selector|containerName/);
  });

  it('deletes the NodePodProbe with its node', async () => {
    await core.deleteNode({ name: node });
    await eventually(async () => {
      await expect(getNpp()).rejects.toThrow(/404|not found/i);
      return true;
    }, 20_000);
  });
});

// Container launch priority lowered to native sidecars (issue #37 item 3), on a real kubelet with the runtime from dist/
// and its image installed (so its pod webhook admits the pod): the constructs compile an Ordered launch for Kubernetes
// 1.29 into restartable init containers gated by a startupProbe derived from the readiness check, no webhook adds a
// barrier and no `<pod>-barrier` ConfigMap appears; the kubelet starts the containers in order (CRI start times), and
// after the pod's sandbox is stopped the kubelet restarts every container in the same order.
import { ApiObject, Testing } from 'cdk8s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { ContainerLaunchPriority, KUBERNETES_VERSION_CONTEXT } from '../../constructs/index.js';
import { CriClient } from '../../src/runtime/cri/client.js';
import { KubeletLabels } from '../../src/runtime/cri/types.js';
import { ENV_CONTAINER_BARRIER } from '../../src/contracts/keys.js';
import { kubectl } from '../harness/index.js';
import { core, installRuntime, namespace, node, waitFor } from './support.js';

let cri: CriClient;

beforeAll(async () => {
  await installRuntime();
  cri = new CriClient(node().containerdSocket);
}, 900_000);
afterAll(() => cri?.close());

// Each container becomes ready 2 s after it starts (a file its readiness check looks for), so a gate that works holds the
// next container back by at least that long.
const READY_AFTER_S = 2;

/** The Deployment as the constructs compile it for Kubernetes 1.29: `proxy` and `agent` start first, in this order. */
function synthesized(): Record<string, any> {
  const chart = Testing.chart();
  chart.node.setContext(KUBERNETES_VERSION_CONTEXT, '1.29');
  const container = (name: string) => ({
    name,
    image: node().images.busybox,
    imagePullPolicy: 'IfNotPresent',
    // The node's test image links few applets: mkdir through busybox, `test` as the shell's builtin.
    command: [
      'sh',
      '-c',
      `busybox mkdir -p /tmp; sleep ${READY_AFTER_S}; touch /tmp/ready; trap "exit 0" TERM; while true; do sleep 1 & wait $!; done`,
    ],
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '500m', memory: '64Mi' } },
    securityContext: { runAsUser: 65534, runAsGroup: 65534 },
    readinessProbe: { exec: { command: ['sh', '-c', 'test -f /tmp/ready'] }, periodSeconds: 1 },
  });
  const dep = new ApiObject(chart, 'ordered', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'ordered' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'ordered' } },
      template: { metadata: { labels: { app: 'ordered' } }, spec: { containers: ['proxy', 'agent', 'app'].map(container) } },
    },
  });
  ContainerLaunchPriority.of(dep).inOrder();
  const [out] = Testing.synth(chart) as Record<string, any>[];
  return out!;
}

function statusesOf(pod: V1Pod): V1ContainerStatus[] {
  return [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
}

/** CRI start times (ms since the epoch) of the pod's running containers, by name. */
async function startTimes(pod: V1Pod): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const s of statusesOf(pod)) {
    const st = await cri.containerStatus(s.containerID!.replace(/^[a-z]+:\/\//, ''));
    out.set(s.name, Number(BigInt(st.startedAt) / 1_000_000n));
  }
  return out;
}

function describeOrder(times: Map<string, number>): string {
  const order = [...times].sort((x, y) => x[1] - y[1]);
  return order.map(([n, t]) => `${n} +${t - order[0]![1]} ms`).join(', ');
}

async function readyPod(ns: string, what: string, extra: (pod: V1Pod) => boolean = () => true): Promise<V1Pod> {
  let found: V1Pod | undefined;
  let pods: V1Pod[] = [];
  try {
    await waitFor(
      what,
      async () => {
        pods = (await core().listNamespacedPod({ namespace: ns, labelSelector: 'app=ordered' })).items;
        found = pods.find((p) => {
          const all = statusesOf(p);
          return all.length === 3 && all.every((c) => c.ready && c.state?.running) && extra(p);
        });
        return found !== undefined;
      },
      120_000,
      250,
    );
  } catch (error) {
    const states = pods.map((p) => `${p.metadata?.name} ${p.status?.phase} ${JSON.stringify(statusesOf(p))}`);
    throw new Error(`${(error as Error).message}\npods:\n${states.join('\n')}`, { cause: error });
  }
  return found!;
}

describe('launch priority as native sidecars on a real node (runtime from dist/ and its image installed)', () => {
  it('no barrier ConfigMap, containers start in order behind their gates, and again after the pod sandbox restarts', async () => {
    const ns = await namespace('launchnative');
    const deployment = synthesized();
    // The compiled shape: two restartable init containers, the app alone in containers, no barrier marker.
    const spec = deployment.spec.template.spec;
    expect(spec.initContainers.map((c: { name: string }) => c.name)).toEqual(['proxy', 'agent']);
    expect(
      spec.initContainers.every((c: { restartPolicy?: string; startupProbe?: unknown }) => c.restartPolicy === 'Always' && c.startupProbe),
    ).toBe(true);
    expect(spec.containers.map((c: { name: string }) => c.name)).toEqual(['app']);
    expect(deployment.spec.template.metadata.annotations).toEqual({ 'kruise.cdk8s.io/launch-priority-lowered': '["proxy","agent"]' });
    await kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(deployment) });

    const pod = await readyPod(ns, 'pod with every container ready');
    const name = pod.metadata!.name!;
    const first = await startTimes(pod);
    console.log(`[launch-native] CRI start times: ${describeOrder(first)}`);
    const order = (times: Map<string, number>) => [...times].sort((x, y) => x[1] - y[1]).map(([n]) => n);
    expect(order(first)).toEqual(['proxy', 'agent', 'app']);
    // Each gate held the next container until the previous one's check passed (READY_AFTER_S after its start).
    expect(first.get('agent')! - first.get('proxy')!).toBeGreaterThanOrEqual(READY_AFTER_S * 1000);
    expect(first.get('app')! - first.get('agent')!).toBeGreaterThanOrEqual(READY_AFTER_S * 1000);
    // Neither webhook wired a barrier, and no ConfigMap was made for the pod.
    for (const c of [...(pod.spec!.initContainers ?? []), ...pod.spec!.containers]) {
      expect((c.env ?? []).map((e) => e.name)).not.toContain(ENV_CONTAINER_BARRIER);
    }
    const configMaps = (await core().listNamespacedConfigMap({ namespace: ns })).items.map((c) => c.metadata!.name);
    expect(configMaps).not.toContain(`${name}-barrier`);
    expect(configMaps.filter((n) => n !== 'kube-root-ca.crt')).toEqual([]);

    // Restart the whole pod in place: stop its sandbox; the kubelet makes a new one and starts every container again.
    const [sandbox] = (await cri.listPodSandbox({ [KubeletLabels.podUid]: pod.metadata!.uid! })).filter((s) => s.state === 'SANDBOX_READY');
    expect(sandbox).toBeDefined();
    await cri.stopPodSandbox(sandbox!.id);
    // New containers for all three (the kubelet does not count an init container's run in a new sandbox as a restart).
    const before = new Set(statusesOf(pod).map((c) => c.containerID));
    const restarted = await readyPod(ns, 'the same pod with every container started again and ready', (p) =>
      statusesOf(p).every((c) => !before.has(c.containerID)),
    );
    expect(restarted.metadata!.uid).toBe(pod.metadata!.uid);
    const again = await startTimes(restarted);
    console.log(`[launch-native] CRI start times after the sandbox restart: ${describeOrder(again)}`);
    expect(order(again)).toEqual(['proxy', 'agent', 'app']);
    expect(again.get('agent')! - again.get('proxy')!).toBeGreaterThanOrEqual(READY_AFTER_S * 1000);
    expect(again.get('app')! - again.get('agent')!).toBeGreaterThanOrEqual(READY_AFTER_S * 1000);
    expect(Math.min(...again.values())).toBeGreaterThan(Math.max(...first.values()));
    const after = (await core().listNamespacedConfigMap({ namespace: ns })).items.map((c) => c.metadata!.name);
    expect(after.filter((n) => n !== 'kube-root-ca.crt')).toEqual([]);
  });
});

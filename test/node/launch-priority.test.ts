// Container launch priority carried out by the runtime installed from dist/ and its image, on a real kubelet:
// the pod webhook adds the barrier env, the barrier controller releases `<pod>-barrier` keys highest first,
// and the kubelet starts each container only once its key exists. Start order is read from CRI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/runtime/cri/client.js';
import { kubectl } from '../harness/index.js';
import { core, installRuntime, namespace, node, waitFor } from './support.js';

let cri: CriClient;

beforeAll(async () => {
  await installRuntime();
  cri = new CriClient(node().containerdSocket);
}, 900_000);
afterAll(() => cri?.close());

const container = (name: string) => ({
  name,
  image: node().images.busybox,
  imagePullPolicy: 'IfNotPresent',
  command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'],
  resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '500m', memory: '64Mi' } },
  securityContext: { runAsUser: 65534, runAsGroup: 65534 },
});

describe('container launch priority on a real node (runtime from dist/ and its image)', () => {
  it('Ordered: the kubelet starts the containers in spec order (CRI start times), released by <pod>-barrier', async () => {
    const ns = await namespace('launchprio');
    const created = JSON.parse(
      await kubectl(['create', '-n', ns, '-o', 'json', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { generateName: 'ordered-', annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' } },
          // Declared so that name order and spec order differ: the order must come from the spec.
          spec: { containers: [container('c'), container('a'), container('b')] },
        }),
      }),
    ) as V1Pod;
    const name = created.metadata!.name!;
    let pod: V1Pod | undefined;
    await waitFor(
      `pod ${name} with every container ready`,
      async () => {
        pod = await core().readNamespacedPod({ name, namespace: ns });
        return pod.status?.containerStatuses?.length === 3 && pod.status.containerStatuses.every((c) => c.ready);
      },
      120_000,
      250,
    );
    const started = new Map<string, number>();
    for (const s of pod!.status!.containerStatuses!) {
      const st = await cri.containerStatus(s.containerID!.replace(/^[a-z]+:\/\//, ''));
      started.set(s.name, Number(BigInt(st.startedAt) / 1_000_000n));
    }
    const order = [...started].sort((x, y) => x[1] - y[1]);
    console.log(`[launch-priority] CRI start times: ${order.map(([n, t]) => `${n} +${t - order[0]![1]} ms`).join(', ')}`);
    expect(order.map(([n]) => n)).toEqual(['c', 'a', 'b']);
    const barrier = await core().readNamespacedConfigMap({ name: `${name}-barrier`, namespace: ns });
    expect(barrier.data).toEqual({ p_0: 'true', 'p_-1': 'true', 'p_-2': 'true' });
    expect(barrier.metadata!.ownerReferences![0]).toMatchObject({ kind: 'Pod', name, uid: created.metadata!.uid });
  });
});

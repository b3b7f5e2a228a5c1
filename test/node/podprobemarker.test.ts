// PodProbeMarker carried out by the runtime installed from dist/ and its image, on a real kubelet and containerd:
// the manager lists the marker's probes in the node's NodePodProbe, the node daemon runs them (exec through CRI
// ExecSync in the container, http from the node to the pod IP on the named port) and the manager marks the results
// on the pod (condition and labels). The test flips each probe by changing what it checks inside the container
// (through CRI, as `kubectl exec` would) and waits for the pod to show it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/runtime/cri/client.js';
import { adminKubeConfig, kubectl } from '../harness/index.js';
import { installRuntime, namespace, node, waitForPod } from './support.js';

let cri: CriClient;

beforeAll(async () => {
  await installRuntime();
  cri = new CriClient(node().containerdSocket);
}, 900_000);
afterAll(() => cri?.close());

const condition = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;

describe('PodProbeMarker on a real node (runtime from dist/ and its image)', () => {
  it('an exec probe and an http probe mark the pod (condition, labels) and flip when the probes flip', async () => {
    const ns = await namespace('ppm');
    const pod = JSON.parse(
      await kubectl(['create', '-n', ns, '-o', 'json', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'game', labels: { app: 'game' } },
          spec: {
            containers: [
              {
                name: 'main',
                image: node().images.busybox,
                imagePullPolicy: 'IfNotPresent',
                // /tmp/healthy for the exec probe; busybox httpd serves /tmp/www (ready -> 200, gone -> 404). The node's test image
                // links few applets, so the others are called through busybox.
                command: [
                  'sh',
                  '-c',
                  'busybox mkdir -p /tmp/www && echo ok > /tmp/www/ready && touch /tmp/healthy && exec busybox httpd -f -p 8080 -h /tmp/www',
                ],
                ports: [{ name: 'http', containerPort: 8080 }],
                resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
                securityContext: { runAsUser: 65534, runAsGroup: 65534 },
              },
            ],
          },
        }),
      }),
    ) as V1Pod;
    const running = await waitForPod(ns, pod.metadata!.name!, 'running', (p) => !!p.status?.containerStatuses?.[0]?.ready, 120_000);
    const containerId = running.status!.containerStatuses![0]!.containerID!.replace(/^[a-z]+:\/\//, '');

    const custom = adminKubeConfig().makeApiClient(CustomObjectsApi);
    const created = Date.now();
    await custom.createNamespacedCustomObject({
      group: 'apps.kruise.io',
      version: 'v1alpha1',
      plural: 'podprobemarkers',
      namespace: ns,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'PodProbeMarker',
        metadata: { name: 'game-probes', namespace: ns },
        spec: {
          selector: { matchLabels: { app: 'game' } },
          probes: [
            {
              name: 'healthy',
              containerName: 'main',
              probe: { exec: { command: ['sh', '-c', 'test -f /tmp/healthy'] }, periodSeconds: 1, initialDelaySeconds: 1 },
              podConditionType: 'game.kruise.io/healthy',
              markerPolicy: [
                { state: 'Succeeded', labels: { 'game.kruise.io/healthy': 'true' } },
                { state: 'Failed', labels: { 'game.kruise.io/healthy': 'false' } },
              ],
            },
            {
              name: 'ready',
              containerName: 'main',
              probe: { httpGet: { port: 'http', path: '/ready' }, periodSeconds: 1, initialDelaySeconds: 1, timeoutSeconds: 1 },
              podConditionType: 'game.kruise.io/ready',
              markerPolicy: [{ state: 'Succeeded', labels: { 'game.kruise.io/serving': 'yes' } }],
            },
          ],
        },
      },
    });

    const marked = async (what: string, check: (p: V1Pod) => boolean) => {
      const since = Date.now();
      const p = await waitForPod(ns, 'game', what, check, 60_000);
      return { p, ms: Date.now() - since };
    };
    const up = await marked(
      'both probes Succeeded',
      (p) => condition(p, 'game.kruise.io/healthy') === 'True' && condition(p, 'game.kruise.io/ready') === 'True',
    );
    expect(up.p.metadata!.labels).toMatchObject({ 'game.kruise.io/healthy': 'true', 'game.kruise.io/serving': 'yes' });
    console.log(`[ppm] both probes marked True ${Date.now() - created} ms after the PodProbeMarker was created`);

    // The exec probe flips: the file it tests is removed.
    await cri.execSync(containerId, ['busybox', 'rm', '/tmp/healthy'], 5);
    const execDown = await marked('exec probe Failed', (p) => condition(p, 'game.kruise.io/healthy') === 'False');
    expect(execDown.p.metadata!.labels).toMatchObject({ 'game.kruise.io/healthy': 'false', 'game.kruise.io/serving': 'yes' });
    expect(condition(execDown.p, 'game.kruise.io/ready')).toBe('True');

    // The http probe flips: the page it gets is removed (404); its Succeeded-only label goes.
    await cri.execSync(containerId, ['busybox', 'rm', '/tmp/www/ready'], 5);
    const httpDown = await marked('http probe Failed', (p) => condition(p, 'game.kruise.io/ready') === 'False');
    expect(httpDown.p.metadata!.labels?.['game.kruise.io/serving']).toBeUndefined();

    // Both back.
    await cri.execSync(containerId, ['sh', '-c', 'touch /tmp/healthy && echo ok > /tmp/www/ready'], 5);
    const back = await marked(
      'both probes Succeeded again',
      (p) => condition(p, 'game.kruise.io/healthy') === 'True' && condition(p, 'game.kruise.io/ready') === 'True',
    );
    expect(back.p.metadata!.labels).toMatchObject({ 'game.kruise.io/healthy': 'true', 'game.kruise.io/serving': 'yes' });
    console.log(
      `[ppm] flips seen on the pod: exec down ${execDown.ms} ms, http down ${httpDown.ms} ms, both up ${back.ms} ms (period 1 s)`,
    );

    await custom.deleteNamespacedCustomObject({
      group: 'apps.kruise.io',
      version: 'v1alpha1',
      plural: 'podprobemarkers',
      namespace: ns,
      name: 'game-probes',
    });
  }, 300_000);
});

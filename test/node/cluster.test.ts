// The real node itself: the kubelet runs scheduled pods on containerd with bridge networking,
// ServiceAccount tokens are mounted, the controller-manager completes Jobs, and kube-proxy makes a
// ClusterIP Service reachable from the host (the path the apiserver takes to a webhook Service).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiscoveryV1Api } from '@kubernetes/client-node';
import { adminKubeConfig, kubectl } from '../harness/index.js';
import { core, batch, containerLog, namespace, node, waitForJobComplete, waitForPod, waitFor } from './support.js';

/** Each ready endpoint of the EndpointSlices (as serviceDiagnostics prints them) asked on 8080 from the host. */
async function probeEndpoints(slicesJson: string): Promise<string> {
  let addresses: string[];
  try {
    addresses = (JSON.parse(slicesJson) as ({ addresses?: string[] } | null)[][]).flat().flatMap((e) => e?.addresses ?? []);
  } catch {
    return 'no endpoints to ask';
  }
  const answers = await Promise.all(
    addresses.map((a) =>
      fetch(`http://${a}:8080/`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => `${a}: HTTP ${r.status}`,
        (err: Error) => `${a}: ${(err.cause as { code?: string } | undefined)?.code ?? err.message}`,
      ),
    ),
  );
  return answers.join(', ') || 'no endpoints to ask';
}

/** The lines of one iptables table that `keep` selects. */
function iptablesLines(table: 'nat' | 'filter', keep: (line: string) => boolean): string {
  return execFileSync('iptables-save', ['-t', table], { encoding: 'utf8' }).split('\n').filter(keep).join('\n');
}

/** What kube-proxy knows and did about one Service, for a failure message. */
async function serviceDiagnostics(ns: string, service: string, clusterIP: string): Promise<string> {
  const naming = (l: string) => l.includes(clusterIP) || l.includes(`${ns}/${service}`);
  const part = (title: string, read: () => string) => {
    try {
      return `--- ${title}\n${read()}`;
    } catch (err) {
      return `--- ${title}: ${(err as Error).message}`;
    }
  };
  const slices = await adminKubeConfig()
    .makeApiClient(DiscoveryV1Api)
    .listNamespacedEndpointSlice({ namespace: ns, labelSelector: `kubernetes.io/service-name=${service}` })
    .then(
      (list) => JSON.stringify(list.items.map((s) => s.endpoints)),
      (err: Error) => err.message,
    );
  return [
    `--- EndpointSlices of ${ns}/${service}: ${slices}`,
    part('kube-proxy process', () => execFileSync('pgrep', ['-af', 'kube-proxy'], { encoding: 'utf8' })),
    part(`nat rules naming ${clusterIP}`, () => iptablesLines('nat', naming)),
    // A REJECT here (kube-proxy's rule for a Service without endpoints) is what answers ECONNREFUSED.
    part(`filter rules naming ${clusterIP}`, () => iptablesLines('filter', naming)),
    // Without nat OUTPUT's jump to KUBE-SERVICES the host's own connections are never DNATed.
    part('nat OUTPUT chain', () => iptablesLines('nat', (l) => /^(:OUTPUT|-A OUTPUT)\b/.test(l))),
    part(`route to ${clusterIP}`, () => execFileSync('ip', ['route', 'get', clusterIP], { encoding: 'utf8' })),
    part(`conntrack entries to ${clusterIP}`, () =>
      execFileSync('conntrack', ['-L', '-d', clusterIP], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
        .split('\n')
        .slice(0, 10)
        .join('\n'),
    ),
    `--- the endpoints asked directly: ${await probeEndpoints(slices)}`,
    part('kube-proxy log (last 30 lines)', () =>
      readFileSync(path.join(node().dir, 'kube-proxy.log'), 'utf8').trimEnd().split('\n').slice(-30).join('\n'),
    ),
  ].join('\n');
}

describe('real node', () => {
  it('runs a scheduled pod on the pod network with a ServiceAccount token, to Succeeded', async () => {
    const ns = await namespace('node-pod');
    const { images } = node();
    await core().createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'hello' },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: images.busybox,
              command: ['sh', '-c', 'cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo; echo done'],
            },
          ],
        },
      },
    });
    const pod = await waitForPod(ns, 'hello', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    expect(pod.spec?.nodeName).toBe(node().nodeName);
    expect(pod.status?.podIP).toMatch(/^10\.251\.0\.\d+$/);
    expect(containerLog(pod, 'main').map((l) => l.line)).toEqual([ns, 'done']);
  });

  it('runs kubectl exec and logs through kube-apiserver to the kubelet', async () => {
    const ns = await namespace('node-exec');
    await core().createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'shell' },
        spec: {
          containers: [{ name: 'main', image: node().images.busybox, command: ['sh', '-c', 'echo started; exec sleep 3600'] }],
          terminationGracePeriodSeconds: 0,
        },
      },
    });
    await waitForPod(ns, 'shell', 'Running', (p) => p.status?.phase === 'Running');
    // Upstream's e2e specs drive their pods this way (RunHostCmd); the apiserver dials the kubelet by the node's IP.
    expect((await kubectl(['exec', '-n', ns, 'shell', '-c', 'main', '--', 'sh', '-c', 'echo $((6 * 7))'])).trim()).toBe('42');
    await waitFor(
      'the container log through kubectl logs',
      async () => (await kubectl(['logs', '-n', ns, 'shell'])).trim() === 'started',
      30_000,
    );
  });

  it('completes a Job (controller-manager + scheduler + kubelet)', async () => {
    const ns = await namespace('node-job');
    await batch().createNamespacedJob({
      namespace: ns,
      body: {
        metadata: { name: 'once' },
        spec: {
          backoffLimit: 0,
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: node().images.busybox, command: ['sh', '-c', 'exit 0'] }] },
          },
        },
      },
    });
    const job = await waitForJobComplete(ns, 'once');
    expect(job.status?.succeeded).toBe(1);
  });

  it('binds a claim of the default StorageClass to a host-path volume that outlives its pod and goes with its claim', async () => {
    const ns = await namespace('node-pvc');
    const { images } = node();
    // No storageClassName: the default class is what upstream's PVC specs rely on.
    await core().createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    const podUsing = (name: string, script: string) =>
      core().createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name },
          spec: {
            restartPolicy: 'Never',
            volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
            containers: [
              { name: 'main', image: images.busybox, command: ['sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] },
            ],
          },
        },
      });
    await podUsing('writer', 'echo kept > /data/file');
    await waitForPod(ns, 'writer', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    await podUsing('reader', 'cat /data/file');
    const reader = await waitForPod(ns, 'reader', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    expect(containerLog(reader, 'main').map((l) => l.line)).toEqual(['kept']);

    const claim = await core().readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'data' });
    expect(claim.status?.phase).toBe('Bound');
    expect(claim.spec?.storageClassName).toBe('standard');
    const volume = claim.spec!.volumeName!;
    for (const name of ['writer', 'reader']) await core().deleteNamespacedPod({ namespace: ns, name, gracePeriodSeconds: 0 });
    await core().deleteNamespacedPersistentVolumeClaim({ namespace: ns, name: 'data' });
    await waitFor(
      `volume ${volume} deleted with its claim (reclaim policy Delete)`,
      async () => {
        const gone = await core()
          .readPersistentVolume({ name: volume })
          .then(
            () => false,
            (err: { code?: number }) => err.code === 404,
          );
        return gone;
      },
      60_000,
    );
  });

  it('reaches a pod through a ClusterIP Service from the host (kube-proxy, iptables)', async () => {
    const ns = await namespace('node-svc');
    await core().createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'httpd',
              image: node().images.busybox,
              command: [
                'sh',
                '-c',
                'mkdir -p /www && echo "hello from $HOSTNAME" > /www/index.html && exec /bin/busybox httpd -f -p 8080 -h /www',
              ],
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      },
    });
    const service = await core().createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } },
    });
    await waitForPod(ns, 'web', 'Ready', (p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);
    const clusterIP = service.spec!.clusterIP!;
    expect(clusterIP).toMatch(/^10\.0\.0\.\d+$/);
    let body = '';
    try {
      await waitFor(
        `http://${clusterIP}/ through kube-proxy`,
        async () => {
          try {
            const res = await fetch(`http://${clusterIP}/`, { signal: AbortSignal.timeout(2000) });
            body = await res.text();
            return res.status === 200;
          } catch (err) {
            // fetch hides the socket error in `cause` (ECONNREFUSED = a REJECT rule; EHOSTUNREACH or a timeout =
            // no DNAT: the harness routes ClusterIPs into the node's namespace, where they go nowhere).
            const cause = (err as { cause?: { code?: string; message?: string } }).cause;
            throw new Error(`${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`, { cause: err });
          }
        },
        60_000,
        250,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${await serviceDiagnostics(ns, 'web', clusterIP)}`, { cause: err });
    }
    expect(body.trim()).toBe('hello from web');
  });
});

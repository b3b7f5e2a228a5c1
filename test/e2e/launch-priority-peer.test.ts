// Launch priority is upstream-compatible: the same pods, created through upstream kruise-manager (its own control
// plane, test/harness/kruise-peer.ts) and through our runtime (the shared API server, the install's pod webhook
// entry), get the same barrier env (name, configMapKeyRef name and key, place in the env list) and the same
// `<pod>-barrier` ConfigMap (name, keys, owner). Real creates: both barrier controllers act on the stored pods.
import { AdmissionregistrationV1Api, CoreV1Api, type V1ConfigMap, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MUTATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { adminKubeConfig, createNamespace } from '../harness/index.js';
import { ControlPlane } from '../harness/controlplane.js';
import { KruisePeer, kubectlOn, pinnedKruiseVersion } from '../harness/kruise-peer.js';
import { eventually, startWithPodWebhook, type ControllerProcess } from './runtime/support.js';

const peerNs = 'launch-peer';
let plane: ControlPlane;
let peer: KruisePeer;
let core: CoreV1Api;
let runtimeNs: string;
let ns: string;
let ctl: ControllerProcess;

const k = (args: string[], input?: unknown) => kubectlOn(plane, args, input === undefined ? undefined : JSON.stringify(input));

beforeAll(async () => {
  plane = await ControlPlane.start();
  peer = await KruisePeer.start(plane, {});
  await k(['create', '-f', '-'], { apiVersion: 'v1', kind: 'Namespace', metadata: { name: peerNs } });
  core = adminKubeConfig().makeApiClient(CoreV1Api);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('launch-compat');
  ctl = await startWithPodWebhook(runtimeNs);
}, 300_000);

afterAll(async () => {
  await adminKubeConfig()
    .makeApiClient(AdmissionregistrationV1Api)
    .deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION })
    .catch(() => undefined);
  await ctl?.stop('SIGTERM');
  await peer?.stop();
  await plane?.stop();
});

/** Bound to a node name that has no kubelet: the pods stay Pending with no container ready, in both clusters. */
function pod(
  name: string,
  annotations: Record<string, string>,
  containers: V1Pod['spec'] extends infer S ? (S extends { containers: infer C } ? C : never) : never,
): V1Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations }, spec: { nodeName: 'no-kubelet', containers } };
}

async function createBoth(body: V1Pod): Promise<{ upstream: V1Pod; ours: V1Pod }> {
  const upstream = JSON.parse(await k(['create', '-n', peerNs, '-o', 'json', '-f', '-'], body)) as V1Pod;
  // Our webhook may still be starting: retry while the pod comes back without its barrier env.
  await eventually(
    async () => {
      const created = await core.createNamespacedPod({ namespace: ns, body, dryRun: 'All' });
      return created.spec!.containers.some((c) => c.env?.some((e) => e.name === 'KRUISE_CONTAINER_BARRIER')) || undefined;
    },
    30_000,
    'our pod webhook live',
  );
  const ours = await core.createNamespacedPod({ namespace: ns, body });
  return { upstream, ours };
}

const envs = (p: V1Pod) => p.spec!.containers.map((c) => ({ name: c.name, env: c.env ?? [] }));

/** The ConfigMap as far as the two runtimes decide it: the owner's uid is each cluster's own. */
function barrierView(cm: V1ConfigMap, podUid: string) {
  return {
    name: cm.metadata!.name,
    data: cm.data ?? {},
    owners: (cm.metadata!.ownerReferences ?? []).map(({ uid, ...rest }) => ({ ...rest, uidIsPod: uid === podUid })),
  };
}

async function barriers(name: string, upstreamPod: V1Pod, ourPod: V1Pod) {
  const read = async () => {
    const upstream = await k(['get', 'configmap', '-n', peerNs, `${name}-barrier`, '-o', 'json']).then(
      (out) => JSON.parse(out) as V1ConfigMap,
      () => undefined,
    );
    const ours = await core.readNamespacedConfigMap({ name: `${name}-barrier`, namespace: ns }).catch(() => undefined);
    return {
      upstream: upstream && barrierView(upstream, upstreamPod.metadata!.uid!),
      ours: ours && barrierView(ours, ourPod.metadata!.uid!),
    };
  };
  // Both controllers release the highest level at once (no container is ready): wait until each has done so.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const both = await read();
    if (Object.keys(both.upstream?.data ?? {}).length > 0 && Object.keys(both.ours?.data ?? {}).length > 0) {
      return both as { upstream: ReturnType<typeof barrierView>; ours: ReturnType<typeof barrierView> };
    }
    if (Date.now() > deadline) throw new Error(`${name}-barrier not filled in both clusters: ${JSON.stringify(both)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe(`launch priority: ours and upstream kruise-manager ${pinnedKruiseVersion()} agree`, () => {
  it('apps.kruise.io/container-launch-priority: Ordered — same barrier env and same <pod>-barrier', async () => {
    const body = pod('ordered', { 'apps.kruise.io/container-launch-priority': 'Ordered' }, [
      { name: 'c', image: 'registry.example/c:1', env: [{ name: 'KEEP', value: 'first' }] },
      { name: 'a', image: 'registry.example/a:1' },
      { name: 'b', image: 'registry.example/b:1' },
    ]);
    const { upstream, ours } = await createBoth(body);
    expect(envs(ours)).toEqual(envs(upstream));
    expect(envs(ours)[1]!.env).toEqual([
      { name: 'KRUISE_CONTAINER_BARRIER', valueFrom: { configMapKeyRef: { name: 'ordered-barrier', key: 'p_-1' } } },
    ]);
    const b = await barriers('ordered', upstream, ours);
    expect(b.ours).toEqual(b.upstream);
    expect(b.ours.owners).toEqual([expect.objectContaining({ kind: 'Pod', name: 'ordered', uidIsPod: true })]);
  });

  it('per-container KRUISE_CONTAINER_PRIORITY (absent = 0, negative allowed) — same barrier env and same <pod>-barrier', async () => {
    const body = pod('by-env', {}, [
      { name: 'app', image: 'registry.example/app:1' },
      { name: 'envoy', image: 'registry.example/envoy:1', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }] },
      { name: 'late', image: 'registry.example/late:1', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '-3' }] },
    ]);
    const { upstream, ours } = await createBoth(body);
    expect(envs(ours)).toEqual(envs(upstream));
    expect(envs(ours).map((c) => c.env.at(-1)?.valueFrom?.configMapKeyRef?.key)).toEqual(['p_0', 'p_10', 'p_-3']);
    const b = await barriers('by-env', upstream, ours);
    expect(b.ours).toEqual(b.upstream);
    expect(b.ours.data).toEqual({ p_10: 'true' });
  });

  it('all priorities equal: neither adds a barrier', async () => {
    const body = pod('equal', {}, [
      { name: 'a', image: 'registry.example/a:1', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '5' }] },
      { name: 'b', image: 'registry.example/b:1', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '5' }] },
    ]);
    const upstream = JSON.parse(await k(['create', '-n', peerNs, '-o', 'json', '-f', '-'], body)) as V1Pod;
    const ours = await core.createNamespacedPod({ namespace: ns, body });
    expect(envs(ours)).toEqual(envs(upstream));
    expect(envs(ours).flatMap((c) => c.env.map((e) => e.name))).not.toContain('KRUISE_CONTAINER_BARRIER');
  });
});

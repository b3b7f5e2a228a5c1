// The features on a real node, with the runtime installed the way users install it (image built by
// `npm run image`, manifests from dist/). The kubelet, not the test, runs every container, restarts
// it and decides pod phases; the test only creates objects and reads state.
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { sidecarTerminationCrrName } from '../../src/api/pod-contracts.js';
import { kubectl } from '../harness/index.js';
import { seedJob, type SeedJobOptions } from './jobs.js';
import {
  apply,
  containerLog,
  containerStatus,
  core,
  expectAppRecreatedInPlace,
  getJson,
  installRuntime,
  jobPods,
  namespace,
  node,
  recreateContainer,
  sigkillContainerTask,
  twoContainerPod,
  waitFor,
  waitForJobComplete,
  waitForPod,
} from './support.js';

async function runSeedJob(prefix: string, options: Omit<SeedJobOptions, 'name' | 'image'>): Promise<{ ns: string; pod: V1Pod }> {
  const ns = await namespace(prefix);
  await apply(ns, seedJob({ name: 'seed', image: node().images.busybox, ...options }));
  await waitForJobComplete(ns, 'seed');
  const pods = await jobPods(ns, 'seed');
  expect(pods).toHaveLength(1);
  return { ns, pod: pods[0]! };
}

async function crrOf(ns: string, pod: V1Pod): Promise<any> {
  return getJson(['get', 'containerrecreaterequests.apps.kruise.io', '-n', ns, sidecarTerminationCrrName(pod.metadata!.uid!)]);
}

describe('native-sidecar compile target', () => {
  // Other story files may have installed the runtime already; the proof that the kubelet alone stopped the
  // sidecar is that the compiled Job carries no runtime marker and no ContainerRecreateRequest was made for it.
  it('the seed Job compiled for Kubernetes 1.29 completes through the kubelet alone', async () => {
    const ns = await namespace('native');
    const manifests = seedJob({ name: 'seed', image: node().images.busybox, restartPolicy: 'Never', native: true });
    expect(manifests[0]!.spec.template.spec.initContainers[0]).toMatchObject({ name: 'sidecar', restartPolicy: 'Always' });
    await apply(ns, manifests);
    await waitForJobComplete(ns, 'seed');
    const [pod] = await jobPods(ns, 'seed');
    expect(pod!.status?.phase).toBe('Succeeded');
    expect(containerLog(pod!, 'sidecar').map((l) => l.line)).toContain('sidecar got TERM');
    expect(JSON.stringify(manifests)).not.toContain('KRUISE_');
    const crrs = await getJson(['get', 'containerrecreaterequests.apps.kruise.io', '-n', ns, '--ignore-not-found']).catch(() => ({
      items: [],
    }));
    expect((crrs as { items?: unknown[] }).items ?? []).toEqual([]);
  });
});

describe('the runtime installed from dist/ and its image', () => {
  beforeAll(async () => {
    await installRuntime();
  }, 900_000);

  it('runs the controller-manager (2 replicas, one leader) and the daemon on the node', async () => {
    const managers = await core().listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=controller-manager' });
    expect(managers.items.filter((p) => p.status?.phase === 'Running')).toHaveLength(2);
    const daemons = await core().listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=daemon' });
    expect(daemons.items.map((p) => p.spec?.nodeName)).toEqual([node().nodeName]);
  });

  it('seed Job, restartPolicy Never: the daemon stops the sidecar through a CRR and the Job completes', async () => {
    const { ns, pod } = await runSeedJob('seed-never', { restartPolicy: 'Never' });
    expect(pod.status?.phase).toBe('Succeeded');
    expect(containerStatus(pod, 'main').state?.terminated?.exitCode).toBe(0);
    expect(containerStatus(pod, 'sidecar').state?.terminated?.exitCode).toBe(0);
    expect(containerLog(pod, 'sidecar').map((l) => l.line)).toContain('sidecar got TERM');
    const crr = await crrOf(ns, pod);
    expect(crr.spec.containers.map((c: { name: string }) => c.name)).toEqual(['sidecar']);
    expect(crr.status.phase).toBe('Completed');
  });

  it('seed Job, restartPolicy OnFailure: the sidecar is stopped and the Job completes', async () => {
    const { ns, pod } = await runSeedJob('seed-onfailure', { restartPolicy: 'OnFailure' });
    expect(pod.status?.phase).toBe('Succeeded');
    expect(containerStatus(pod, 'sidecar').state?.terminated?.exitCode).toBe(0);
    expect(containerStatus(pod, 'sidecar').restartCount).toBe(0);
    expect((await crrOf(ns, pod)).status.phase).toBe('Completed');
  });

  it('ignore-exit-code sidecar that exits 143 on SIGTERM: Job Complete, pod Succeeded', async () => {
    const { pod } = await runSeedJob('seed-ignore', { restartPolicy: 'Never', sidecarExitOnTerm: 143, ignoreExitCode: true });
    expect(pod.status?.phase, JSON.stringify(pod.status)).toBe('Succeeded');
    expect(pod.status?.conditions?.some((c) => c.type === 'SidecarTerminated' && c.status === 'True')).toBe(true);
  });

  it('OnFailure with a sidecar that exits 1 on SIGTERM, restarted by the kubelet: the pod does not hang, it ends Failed', async () => {
    const ns = await namespace('seed-onfailure-nonzero');
    // backoffLimit 6: the Job controller alone would give up only after minutes of kubelet back-off.
    await apply(
      ns,
      seedJob({ name: 'seed', image: node().images.busybox, restartPolicy: 'OnFailure', sidecarExitOnTerm: 1, backoffLimit: 6 }),
    );
    let first: V1Pod | undefined;
    await waitFor(
      'the first pod terminal',
      async () => {
        const pods = (await jobPods(ns, 'seed')).sort((a, b) =>
          String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)),
        );
        first = pods[0];
        return first?.status?.phase === 'Failed' || first?.status?.phase === 'Succeeded';
      },
      60_000,
      250,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${JSON.stringify(first?.status?.containerStatuses)}`);
    });
    expect(first!.status?.phase).toBe('Failed');
    expect(first!.status?.conditions?.some((c) => c.type === 'SidecarTerminated' && c.status === 'True')).toBe(true);
    expect(containerStatus(first!, 'main').state?.terminated?.exitCode).toBe(0);
    // The kubelet did restart the sidecar after our stop: the case upstream leaves hanging.
    expect(containerStatus(first!, 'sidecar').restartCount).toBeGreaterThanOrEqual(1);
  });

  it('preStop hook of the sidecar runs to its end before the sidecar gets SIGTERM', async () => {
    const eventsDir = mkdtempSync(path.join(node().dir, 'events-'));
    chmodSync(eventsDir, 0o777);
    const { pod } = await runSeedJob('seed-prestop', { restartPolicy: 'Never', preStop: { seconds: 2, eventsDir } });
    expect(pod.status?.phase).toBe('Succeeded');
    expect(readFileSync(path.join(eventsDir, 'log'), 'utf8').trim().split('\n')).toEqual(['prestop-start', 'prestop-end', 'term']);
  });

  it('a CRR with forceRecreate restarts a running container: restartCount + 1, same pod UID', async () => {
    const ns = await namespace('crr-force');
    const before = await twoContainerPod(ns);
    const crr = await recreateContainer(ns, 'app', 'app');
    // Labels the runtime's mutating webhook adds: the apiserver reached it through the webhook Service (kube-proxy).
    expect(crr.metadata.labels).toMatchObject({
      'crr.apps.kruise.io/node-name': node().nodeName,
      'crr.apps.kruise.io/pod-uid': before.metadata!.uid,
    });
    await expectAppRecreatedInPlace(ns, before);
  });

  it('an ImagePullJob pulls an image from the loopback registry onto the node and completes', async () => {
    const ns = await namespace('pull');
    const image = node().images.pullOnly;
    const listed = async () =>
      ((await core().readNode({ name: node().nodeName })).status?.images ?? []).some((i) => i.names?.includes(image));
    expect(await listed()).toBe(false);
    await apply(ns, [
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ImagePullJob',
        metadata: { name: 'pull-busybox2' },
        spec: {
          image,
          parallelism: 1,
          completionPolicy: { type: 'Always', activeDeadlineSeconds: 120 },
          pullPolicy: { backoffLimit: 1, timeoutSeconds: 60 },
        },
      },
    ]);
    await waitFor(
      'ImagePullJob completed',
      async () => {
        const job = await getJson(['get', 'imagepulljobs.apps.kruise.io', '-n', ns, 'pull-busybox2']);
        return job.status?.completionTime !== undefined && job.status?.succeeded === 1;
      },
      120_000,
      500,
    );
    // The kubelet's image list (node status) now has it: the pull went to the node's containerd.
    await waitFor(`${image} in the kubelet's image list`, listed, 60_000, 500);
  });
});

describe('resilience of the installed runtime', () => {
  beforeAll(async () => {
    await installRuntime();
  }, 900_000);

  it('the leader controller-manager pod deleted while a Job runs: the other replica takes over, one CRR, Job Complete', async () => {
    const leaseHolder = async () =>
      ((await getJson(['get', 'lease', '-n', 'kruise-system', 'kruise-manager'])).spec?.holderIdentity as string | undefined) ?? '';
    const leader = (await leaseHolder()).split('_')[0]!;
    expect(leader).toMatch(/^kruise-controller-manager-/);
    const ns = await namespace('resilience-leader');
    await apply(ns, seedJob({ name: 'seed', image: node().images.busybox, restartPolicy: 'Never', mainSeconds: 5 }));
    await waitFor(
      'main container running',
      async () => {
        const [pod] = await jobPods(ns, 'seed');
        return pod?.status?.containerStatuses?.some((c) => c.name === 'main' && c.state?.running) ?? false;
      },
      60_000,
      200,
    );
    await kubectl(['delete', 'pod', '-n', 'kruise-system', leader, '--wait=false']);
    await waitForJobComplete(ns, 'seed', 150_000);
    const newLeader = (await leaseHolder()).split('_')[0]!;
    expect(newLeader).not.toBe(leader);
    const crrs = await getJson<{ items: unknown[] }>(['get', 'containerrecreaterequests.apps.kruise.io', '-n', ns]);
    expect(crrs.items).toHaveLength(1);
  });

  it('the daemon pod deleted during a CRR: the replacement daemon finishes it, the container restarted exactly once', async () => {
    const ns = await namespace('resilience-daemon');
    const image = node().images.busybox;
    await core().createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'app' },
        spec: {
          containers: [
            {
              name: 'app',
              image,
              imagePullPolicy: 'IfNotPresent',
              // A slow preStop keeps the CRR in progress long enough to take the daemon away mid-way.
              lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop > /proc/1/fd/1; sleep 4'] } } },
            },
          ],
        },
      },
    });
    await waitForPod(ns, 'app', 'running', (p) => p.status?.containerStatuses?.[0]?.state?.running !== undefined);
    await apply(ns, [
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ContainerRecreateRequest',
        metadata: { name: 'recreate' },
        spec: { podName: 'app', containers: [{ name: 'app' }] },
      },
    ]);
    const pod = await core().readNamespacedPod({ name: 'app', namespace: ns });
    await waitFor('preStop started by the daemon', () => containerLog(pod, 'app').some((l) => l.line === 'prestop'), 30_000, 100);
    const daemons = await core().listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=daemon' });
    await kubectl(['delete', 'pod', '-n', 'kruise-system', daemons.items[0]!.metadata!.name!, '--wait=false']);
    await waitFor(
      'CRR recreate Completed',
      async () => (await getJson(['get', 'containerrecreaterequests.apps.kruise.io', '-n', ns, 'recreate'])).status?.phase === 'Completed',
      120_000,
      500,
    );
    await kubectl(['rollout', 'status', '-n', 'kruise-system', 'daemonset/kruise-daemon', '--timeout=120s']);
    // Give a second kill (the thing that must not happen) time to show.
    await new Promise((r) => setTimeout(r, 5000));
    const after = await core().readNamespacedPod({ name: 'app', namespace: ns });
    expect(containerStatus(after, 'app').restartCount).toBe(1);
    expect(containerStatus(after, 'app').state?.running).toBeDefined();
  });

  /** A pod whose one container has a slow preStop, and a CRR restarting it; returns once the daemon runs the preStop. */
  async function crrInPreStop(prefix: string): Promise<{ ns: string; before: V1Pod }> {
    const ns = await namespace(prefix);
    await core().createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'app' },
        spec: {
          containers: [
            {
              name: 'app',
              image: node().images.busybox,
              imagePullPolicy: 'IfNotPresent',
              // Long enough to take the manager or the daemon away while the CRR is in progress.
              lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop > /proc/1/fd/1; sleep 6'] } } },
            },
          ],
        },
      },
    });
    const before = await waitForPod(ns, 'app', 'running', (p) => p.status?.containerStatuses?.[0]?.state?.running !== undefined);
    await apply(ns, [
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ContainerRecreateRequest',
        metadata: { name: 'recreate' },
        spec: { podName: 'app', containers: [{ name: 'app' }] },
      },
    ]);
    await waitFor('preStop started by the daemon', () => containerLog(before, 'app').some((l) => l.line === 'prestop'), 30_000, 100);
    return { ns, before };
  }

  /** Waits for the CRR to complete with its active label dropped, then for a second kill (which must not come). */
  async function expectCompletedOnce(ns: string, before: V1Pod): Promise<void> {
    let crr: any;
    await waitFor(
      'CRR recreate Completed, active label dropped',
      async () => {
        crr = await getJson(['get', 'containerrecreaterequests.apps.kruise.io', '-n', ns, 'recreate']);
        return crr.status?.phase === 'Completed' && crr.metadata.labels?.['crr.apps.kruise.io/active'] === undefined;
      },
      120_000,
      500,
    );
    expect(crr.status.containerRecreateStates).toEqual([expect.objectContaining({ name: 'app', phase: 'Succeeded' })]);
    await new Promise((r) => setTimeout(r, 5000));
    const after = await core().readNamespacedPod({ name: 'app', namespace: ns });
    expect(after.metadata?.uid).toBe(before.metadata?.uid);
    expect(containerStatus(after, 'app').restartCount).toBe(1);
    expect(containerStatus(after, 'app').state?.running).toBeDefined();
  }

  it("the manager scaled to 0 with a CRR in flight: the daemon's own writes pass its failing webhook, the CRR completes", async () => {
    const deploy = await getJson(['get', 'deployment', '-n', 'kruise-system', 'kruise-controller-manager']);
    const replicas = String(deploy.spec.replicas ?? 1);
    const { ns, before } = await crrInPreStop('resilience-no-manager');
    await kubectl(['scale', 'deployment', '-n', 'kruise-system', 'kruise-controller-manager', '--replicas=0']);
    try {
      await waitFor(
        'no manager pod left',
        async () =>
          (await core().listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=controller-manager' })).items
            .length === 0,
        90_000,
        250,
      );
      await expectCompletedOnce(ns, before);
      // The webhook was down all along: an update by anyone else is refused.
      await expect(kubectl(['annotate', 'containerrecreaterequests.apps.kruise.io', '-n', ns, 'recreate', 'by=admin'])).rejects.toThrow(
        /failed calling webhook|connection refused|no endpoints available/,
      );
    } finally {
      await kubectl(['scale', 'deployment', '-n', 'kruise-system', 'kruise-controller-manager', `--replicas=${replicas}`]);
      await kubectl(['rollout', 'status', '-n', 'kruise-system', 'deployment/kruise-controller-manager', '--timeout=180s']);
    }
  });

  it('the daemon killed (SIGKILL) during a CRR preStop: it restarts in place, finishes the CRR, the container restarted exactly once', async () => {
    const daemons = await core().listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=daemon' });
    const daemonPod = daemons.items[0]!;
    const daemonRestarts = daemonPod.status?.containerStatuses?.[0]?.restartCount ?? 0;
    const id = daemonPod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');
    const { ns, before } = await crrInPreStop('resilience-daemon-kill');
    sigkillContainerTask(id);
    await waitFor(
      'the daemon container restarted by the kubelet',
      async () =>
        ((await core().readNamespacedPod({ name: daemonPod.metadata!.name!, namespace: 'kruise-system' })).status?.containerStatuses?.[0]
          ?.restartCount ?? 0) > daemonRestarts,
      60_000,
      250,
    );
    await expectCompletedOnce(ns, before);
  });
});

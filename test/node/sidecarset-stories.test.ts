// SidecarSets on a real node with the runtime installed from dist/ and its image: the pod webhook injects
// the logtail sidecar into a Deployment's and a CloneSet's new pods (never into opted-out namespaces; sharing the
// app's volume mounted with a subPathExpr, whose env comes along), the SidecarSet
// controller upgrades the sidecar image in place one pod at a time (same pods, only the sidecar restarted),
// paused and partition hold the rollout, a native-sidecar Job completes on its own, a HotUpgrade sidecar is
// upgraded by its idle container taking over (same pod, app untouched), and with the runtime
// scaled to zero kube-system and the runtime's namespace still admit pods.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { LABEL_POD_WEBHOOK_OPT_OUT, POD_WEBHOOK_OPT_OUT_VALUE } from '../../src/contracts/index.js';
import { kubectl } from '../harness/index.js';
import { core, installRuntime, jobPods, namespace, node, waitFor, waitForJobComplete } from './support.js';

const SET = 'logtail-node';
const LOOP = ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];

async function apply(objects: object[], ns?: string): Promise<void> {
  await kubectl(['apply', ...(ns ? ['-n', ns] : []), '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  });
}

async function sidecarSet(name: string): Promise<any> {
  return JSON.parse(await kubectl(['get', 'sidecarsets.apps.kruise.io', name, '-o', 'json']));
}

async function patchSet(name: string, patch: object): Promise<void> {
  await kubectl(['patch', 'sidecarsets.apps.kruise.io', name, '--type', 'merge', '-p', JSON.stringify(patch)]);
}

/** The logtail sidecar at `image` (a merge patch replaces the whole list, so patches send all of it). */
function logtail(image: string): object {
  return {
    name: 'logtail',
    image,
    command: LOOP,
    // Not ready for ~3 s after each (re)start, so an in-place restart makes its pod unavailable for a while
    // and maxUnavailable is really exercised.
    readinessProbe: { exec: { command: ['/bin/true'] }, initialDelaySeconds: 3, periodSeconds: 1 },
    shareVolumePolicy: { type: 'enabled' },
    volumeMounts: [{ name: 'log-volume', mountPath: '/var/log/app' }],
  };
}

/** The `app=webserver` pod template the Deployment and the CloneSet share. */
function webTemplate(): object {
  return {
    metadata: { labels: { app: 'webserver' } },
    spec: {
      terminationGracePeriodSeconds: 2,
      containers: [
        {
          name: 'app',
          image: node().images.busybox,
          command: LOOP,
          // A per-pod subdirectory: the kubelet expands $(POD_NAME) from the env of each container mounting it,
          // so the sidecar sharing this mount needs POD_NAME too (the webhook brings it along).
          env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          volumeMounts: [{ name: 'data', mountPath: '/data', subPathExpr: '$(POD_NAME)' }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  };
}

function deployment(name: string, replicas: number): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: 'webserver' } }, template: webTemplate() },
  };
}

async function webPods(ns: string): Promise<V1Pod[]> {
  return (await core().listNamespacedPod({ namespace: ns, labelSelector: 'app=webserver' })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
}

const ready = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const sidecarImage = (p: V1Pod) => p.spec!.containers.find((c) => c.name === 'logtail')?.image;

let ns: string;

beforeAll(async () => {
  await installRuntime();
  await apply([
    {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: SET },
      spec: {
        selector: { matchLabels: { app: 'webserver' } },
        updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
        containers: [logtail(node().images.busybox)],
        volumes: [{ name: 'log-volume', emptyDir: {} }],
      },
    },
  ]);
  ns = await namespace('sidecarset');
}, 900_000);

afterAll(async () => {
  await kubectl(['delete', 'sidecarsets.apps.kruise.io', SET, '--ignore-not-found']).catch(() => undefined);
});

describe('SidecarSet on a real node', () => {
  it('the logtail sidecar is injected into a Deployment’s new pods with its volume, and they run', async () => {
    // The webhook serves once the managers are Ready; its SidecarSet cache may lag the apply by a moment.
    await waitFor(
      'pods injected and Ready',
      async () => {
        const pods = await webPods(ns);
        if (pods.length === 0) await apply([deployment('web', 4)], ns);
        if (pods.some((p) => !sidecarImage(p))) {
          // Created before the set reached the webhook's cache: replace them.
          await kubectl(['delete', 'pods', '-n', ns, '-l', 'app=webserver', '--wait=false']);
          return false;
        }
        return pods.length === 4 && pods.every(ready);
      },
      120_000,
      500,
    );
    for (const p of await webPods(ns)) {
      expect(p.spec!.containers.map((c) => c.name)).toEqual(['logtail', 'app']);
      expect(p.spec!.volumes!.map((v) => v.name)).toContain('log-volume');
      // shareVolumePolicy: the sidecar also mounts the app container's volume.
      expect(p.spec!.containers[0]!.volumeMounts!.map((m) => m.mountPath)).toEqual(expect.arrayContaining(['/var/log/app', '/data']));
      // The shared mount's subPathExpr names POD_NAME: the sidecar got it, and it runs (no CreateContainerConfigError).
      expect(p.spec!.containers[0]!.env).toContainEqual({
        name: 'POD_NAME',
        valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } },
      });
      expect(p.metadata!.annotations!['kruise.io/sidecarset-injected-list']).toBe(SET);
      expect(p.status!.containerStatuses!.find((c) => c.name === 'logtail')!.state?.running).toBeDefined();
    }
    await waitFor(
      'status counts',
      async () => {
        const s = (await sidecarSet(SET)).status ?? {};
        return s.matchedPods === 4 && s.updatedPods === 4 && s.readyPods === 4 && s.updatedReadyPods === 4;
      },
      60_000,
      500,
    );
  });

  it('a pod in an opted-out namespace is not injected', async () => {
    const out = await namespace('sidecarset-optout');
    await kubectl(['label', 'namespace', out, `${LABEL_POD_WEBHOOK_OPT_OUT}=${POD_WEBHOOK_OPT_OUT_VALUE}`]);
    await apply([deployment('web', 1)], out);
    await waitFor('opted-out pod Ready', async () => (await webPods(out)).some(ready), 60_000, 500);
    expect((await webPods(out))[0]!.spec!.containers.map((c) => c.name)).toEqual(['app']);
  });

  it('paused and partition hold the image upgrade; then maxUnavailable 1 upgrades in place: same UIDs, only the sidecar restarted', async () => {
    const before = new Map((await webPods(ns)).map((p) => [p.metadata!.name!, p.metadata!.uid!]));
    expect(before.size).toBe(4);
    const image2 = node().images.busybox2;
    let maxUnavailable = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const pods = await webPods(ns);
        maxUnavailable = Math.max(maxUnavailable, pods.filter((p) => !ready(p)).length + (4 - pods.length));
        await new Promise((r) => setTimeout(r, 150));
      }
    })();

    await patchSet(SET, { spec: { updateStrategy: { paused: true }, containers: [logtail(image2)] } });
    await new Promise((r) => setTimeout(r, 5000));
    expect((await webPods(ns)).filter((p) => sidecarImage(p) === image2)).toHaveLength(0);

    await patchSet(SET, { spec: { updateStrategy: { paused: false, partition: 2 } } });
    await waitFor('2 pods upgraded', async () => (await webPods(ns)).filter((p) => sidecarImage(p) === image2).length === 2, 90_000, 500);
    await new Promise((r) => setTimeout(r, 5000));
    expect((await webPods(ns)).filter((p) => sidecarImage(p) === image2)).toHaveLength(2);

    await patchSet(SET, { spec: { updateStrategy: { partition: 0 } } });
    await waitFor(
      'all upgraded and Ready, status converged',
      async () => {
        const pods = await webPods(ns);
        const s = (await sidecarSet(SET)).status ?? {};
        return (
          pods.length === 4 &&
          pods.every((p) => sidecarImage(p) === image2 && ready(p)) &&
          s.updatedPods === 4 &&
          s.updatedReadyPods === 4 &&
          s.readyPods === 4
        );
      },
      120_000,
      500,
    );
    sampling = false;
    await sampler;
    const after = await webPods(ns);
    expect(new Map(after.map((p) => [p.metadata!.name!, p.metadata!.uid!]))).toEqual(before);
    for (const p of after) {
      const st = (n: string) => p.status!.containerStatuses!.find((c) => c.name === n)!;
      expect(st('logtail').restartCount, p.metadata!.name).toBe(1);
      expect(st('logtail').image).toContain(image2.split('/').pop()!.split(':')[0]!);
      expect(st('app').restartCount, p.metadata!.name).toBe(0);
      expect(JSON.parse(p.metadata!.annotations!['kruise.io/sidecarset-inplace-update-state']!)[SET]).toBeDefined();
    }
    // The readiness delay makes each restart visible: exactly one pod at a time.
    expect(maxUnavailable).toBe(1);
    console.log(`[sidecarset] in-place upgrade of 4 pods: at most ${maxUnavailable} unavailable at once`);
  });

  it('a CloneSet’s new pods get the sidecar (the current image) with its volume and the Kruise readiness gates, and they run', async () => {
    // After the upgrade story, so its "4 matched pods" arithmetic stays exact; removed again at the end.
    const csNs = await namespace('sidecarset-cloneset');
    const image2 = node().images.busybox2;
    await apply(
      [
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'CloneSet',
          metadata: { name: 'web-cs' },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: 'webserver' } },
            template: webTemplate(),
          },
        },
      ],
      csNs,
    );
    try {
      await waitFor(
        'CloneSet pods injected and Ready',
        async () => {
          const pods = await webPods(csNs);
          return pods.length === 2 && pods.every(ready);
        },
        120_000,
        500,
      );
      for (const p of await webPods(csNs)) {
        expect(p.metadata!.ownerReferences).toEqual([expect.objectContaining({ kind: 'CloneSet', name: 'web-cs' })]);
        expect(p.spec!.containers.map((c) => c.name)).toEqual(['logtail', 'app']);
        // A new pod gets the set's current version, not the one the set was created with.
        expect(sidecarImage(p)).toBe(image2);
        expect(p.spec!.volumes!.map((v) => v.name)).toEqual(expect.arrayContaining(['log-volume', 'data']));
        expect(p.spec!.containers[0]!.volumeMounts!.map((m) => m.mountPath)).toEqual(expect.arrayContaining(['/var/log/app', '/data']));
        expect(p.metadata!.annotations!['kruise.io/sidecarset-injected-list']).toBe(SET);
        // Injection composes with the Kruise readiness gates such a pod carries: it is Ready only with both True.
        expect(p.spec!.readinessGates!.map((g) => g.conditionType)).toEqual(
          expect.arrayContaining(['KruisePodReady', 'InPlaceUpdateReady']),
        );
        const st = (n: string) => p.status!.containerStatuses!.find((c) => c.name === n)!;
        expect(st('logtail').state?.running, p.metadata!.name).toBeDefined();
        expect(st('app').state?.running, p.metadata!.name).toBeDefined();
      }
      await waitFor(
        'status counts the CloneSet pods',
        async () => {
          const s = (await sidecarSet(SET)).status ?? {};
          return s.matchedPods === 6 && s.updatedPods === 6 && s.updatedReadyPods === 6;
        },
        60_000,
        500,
      );
    } finally {
      await kubectl(['delete', 'clonesets.apps.kruise.io', '-n', csNs, 'web-cs', '--ignore-not-found']);
    }
  });

  it('native sidecar injected into a Job: the kubelet stops it after the main container, the Job completes with no CRR', async () => {
    const jobNs = await namespace('sidecarset-native');
    await apply([
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: 'native-agent', annotations: { 'kruise.cdk8s.io/native-sidecars': 'true' } },
        spec: {
          namespace: jobNs,
          selector: { matchLabels: { role: 'batch' } },
          containers: [{ name: 'agent', image: node().images.busybox, command: LOOP }],
        },
      },
    ]);
    try {
      await waitFor(
        'SidecarSet in the webhook cache',
        async () => (await sidecarSet('native-agent')).status?.latestRevision !== undefined,
        30_000,
        300,
      );
      await apply(
        [
          {
            apiVersion: 'batch/v1',
            kind: 'Job',
            metadata: { name: 'batch' },
            spec: {
              backoffLimit: 0,
              template: {
                metadata: { labels: { role: 'batch' } },
                spec: {
                  restartPolicy: 'Never',
                  terminationGracePeriodSeconds: 5,
                  containers: [{ name: 'main', image: node().images.busybox, command: ['/bin/sh', '-c', 'sleep 2; exit 0'] }],
                },
              },
            },
          },
        ],
        jobNs,
      );
      await waitForJobComplete(jobNs, 'batch');
      const [pod] = await jobPods(jobNs, 'batch');
      expect(pod!.spec!.initContainers).toEqual([expect.objectContaining({ name: 'agent', restartPolicy: 'Always' })]);
      expect(pod!.status!.phase).toBe('Succeeded');
      const crrs = JSON.parse(await kubectl(['get', 'containerrecreaterequests.apps.kruise.io', '-n', jobNs, '-o', 'json']));
      expect(crrs.items).toEqual([]);
    } finally {
      await kubectl(['delete', 'sidecarsets.apps.kruise.io', 'native-agent', '--ignore-not-found']);
    }
  });

  it('HotUpgrade: the new version starts in the idle container, then the old one goes back to the empty image; same pod, app untouched', async () => {
    const hotNs = await namespace('sidecarset-hot');
    const { busybox, busybox2 } = node().images;
    // An empty image with a digest of its own: containerd reports a container's image by the first tag of its digest,
    // so an empty image sharing busybox:1's digest would show as busybox:1 in the status.
    const empty = 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1';
    const envoy = (image: string) => ({
      name: 'envoy',
      image,
      command: LOOP,
      upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: empty },
    });
    const hotPods = async () =>
      (await core().listNamespacedPod({ namespace: hotNs, labelSelector: 'app=hot' })).items.filter((p) => !p.metadata?.deletionTimestamp);
    const image = (p: V1Pod, n: string) => p.spec!.containers.find((c) => c.name === n)?.image;
    const working = (p: V1Pod) => JSON.parse(p.metadata!.annotations!['kruise.io/sidecarset-working-hotupgrade-container'] ?? '{}').envoy;
    try {
      await apply([
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'SidecarSet',
          metadata: { name: 'mesh-hot' },
          spec: { selector: { matchLabels: { app: 'hot' } }, namespace: hotNs, containers: [envoy(busybox)] },
        },
      ]);
      const hotDeployment = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'hot' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'hot' } },
          template: {
            metadata: { labels: { app: 'hot' } },
            spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'app', image: busybox, command: LOOP }] },
          },
        },
      };
      await waitFor(
        'hot pod injected and Ready',
        async () => {
          const pods = await hotPods();
          if (pods.length === 0) await apply([hotDeployment], hotNs);
          if (pods.some((p) => !image(p, 'envoy-1'))) {
            await kubectl(['delete', 'pods', '-n', hotNs, '-l', 'app=hot', '--wait=false']);
            return false;
          }
          return pods.length === 1 && pods.every(ready);
        },
        120_000,
        500,
      );
      const [before] = await hotPods();
      expect(before!.spec!.containers.map((c) => [c.name, c.image])).toEqual([
        ['envoy-1', busybox],
        ['envoy-2', empty],
        ['app', busybox],
      ]);
      expect(working(before!)).toBe('envoy-1');

      await patchSet('mesh-hot', { spec: { containers: [envoy(busybox2)] } });
      await waitFor(
        'handed over to envoy-2 on the new image, envoy-1 back to the empty image, status converged',
        async () => {
          const [p] = await hotPods();
          const s = (await sidecarSet('mesh-hot')).status ?? {};
          return (
            p !== undefined &&
            working(p) === 'envoy-2' &&
            image(p, 'envoy-2') === busybox2 &&
            image(p, 'envoy-1') === empty &&
            ready(p) &&
            s.updatedPods === 1 &&
            s.updatedReadyPods === 1
          );
        },
        120_000,
        500,
      );
      const [after] = await hotPods();
      expect(after!.metadata!.uid).toBe(before!.metadata!.uid);
      const st = (n: string) => after!.status!.containerStatuses!.find((c) => c.name === n)!;
      expect(st('app').restartCount).toBe(0);
      expect(st('envoy-2').state?.running).toBeDefined();
      expect(st('envoy-2').image).toContain('busybox:2');
      const set = await sidecarSet('mesh-hot');
      expect(after!.metadata!.annotations).toMatchObject({
        'version.sidecarset.kruise.io/envoy-2': expect.stringMatching(/^\d+$/),
        'version.sidecarset.kruise.io/envoy-1': '0',
        'versionalt.sidecarset.kruise.io/envoy-2': '0',
      });
      expect(Number(after!.metadata!.annotations!['version.sidecarset.kruise.io/envoy-2'])).toBeLessThanOrEqual(
        Number(set.metadata.resourceVersion),
      );
    } finally {
      await kubectl(['delete', 'sidecarsets.apps.kruise.io', 'mesh-hot', '--ignore-not-found']);
    }
  });

  it('with the runtime scaled to zero, kube-system and the runtime namespace still admit pods; others fail closed', async () => {
    await kubectl(['scale', 'deployment', '-n', 'kruise-system', 'kruise-controller-manager', '--replicas=0']);
    try {
      await waitFor(
        'no manager pod left',
        async () =>
          (await core().listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=controller-manager' })).items
            .length === 0,
        60_000,
        500,
      );
      const probe = (name: string) => ({
        metadata: { name, labels: { app: 'webserver' } },
        spec: { containers: [{ name: 'c', image: node().images.busybox, command: LOOP }] },
      });
      for (const system of ['kube-system', 'kruise-system']) {
        const created = await core().createNamespacedPod({ namespace: system, body: probe('webhook-down-probe'), dryRun: 'All' });
        expect(created.spec!.containers.map((c) => c.name)).toEqual(['c']);
      }
      await expect(core().createNamespacedPod({ namespace: ns, body: probe('webhook-down-probe'), dryRun: 'All' })).rejects.toThrow(
        /mpod\.kb\.io/,
      );
    } finally {
      await kubectl(['scale', 'deployment', '-n', 'kruise-system', 'kruise-controller-manager', '--replicas=2']);
      await kubectl(['rollout', 'status', '-n', 'kruise-system', 'deployment/kruise-controller-manager', '--timeout=300s']);
    }
  });
});

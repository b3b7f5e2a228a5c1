// The SidecarSet controller on the real API server (the test plays the kubelet): status counts, the
// ControllerRevision and the set's hash annotations, an image-only change upgraded in place one pod at a
// time (maxUnavailable 1: the next pod waits until the kubelet reports the new image), and a change beyond
// the image refused with the pod condition, an event and the RolloutStuck status condition.
import { CoreV1Api, CustomObjectsApi, AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SidecarSet } from '../../src/api/kinds/sidecarset.js';
import { SidecarSetDefinition } from '../../src/api/registry.js';
import { sidecarSetHash } from '../../src/api/sidecarset-pod.js';
import type { Pod } from '../../src/runtime/core/types.js';
import { injectSidecarSets } from '../../src/runtime/webhooks/sidecarset/decision.js';
import { adminKubeConfig, bindPod, createNamespace, createNode, mergePatch, setPodStatus } from '../harness/index.js';
import { accessCoverage, accessLogs, eventually, installCrds, startController, type ControllerProcess } from './runtime/support.js';

let core: CoreV1Api;
let custom: CustomObjectsApi;
let appsApi: AppsV1Api;
let runtimeNs: string;
let ns: string;
let ctl: ControllerProcess;
const NAME = `logtail-e2e-${process.pid}`;
const node = `node-sidecarset-${process.pid}`;
const sidecarsets = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets' };

function container(image: string, args?: string[]) {
  return { name: 'logtail', image, ...(args ? { args } : {}) };
}

async function getSet(): Promise<SidecarSet & { status?: Record<string, any> }> {
  return (await custom.getClusterCustomObject({ ...sidecarsets, name: NAME })) as SidecarSet;
}

async function patchContainers(containers: object[]): Promise<void> {
  await custom.patchClusterCustomObject({ ...sidecarsets, name: NAME, body: { spec: { containers } } }, mergePatch);
}

/** Plays the kubelet: Running and Ready, each container reporting the image its spec names. */
async function runPod(name: string): Promise<void> {
  const pod = await core.readNamespacedPod({ name, namespace: ns });
  await setPodStatus(pod, {
    phase: 'Running',
    containerStatuses: pod.spec!.containers.map((c) => ({ name: c.name, state: { running: {} } })),
  });
}

async function pods(): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=e2e-web' })).items;
}
const image = (p: V1Pod) => p.spec!.containers.find((c) => c.name === 'logtail')!.image;

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  appsApi = kc.makeApiClient(AppsV1Api);
  await installCrds([SidecarSetDefinition]);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('sidecarset');
  await createNode(node);
  const set = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: NAME },
    spec: { selector: { matchLabels: { app: 'e2e-web' } }, containers: [container('logtail:1')], updateStrategy: { maxUnavailable: 1 } },
  } as SidecarSet;
  const created = (await custom.createClusterCustomObject({ ...sidecarsets, body: set })) as SidecarSet;
  // Pods as the pod webhook injects them (its pure step; the webhook itself is proven in runtime-pod-webhook).
  for (const i of [0, 1, 2]) {
    const pod: Pod = {
      metadata: { name: `web-${i}`, labels: { app: 'e2e-web' } },
      spec: { containers: [{ name: 'app', image: 'nginx:1' }] },
    };
    injectSidecarSets({
      pod,
      namespace: ns,
      namespaceLabels: {},
      sidecarSets: [created],
      now: new Date().toISOString(),
      metadataKeyAllowed: () => false,
    });
    const p = await core.createNamespacedPod({ namespace: ns, body: pod as V1Pod });
    await bindPod(p, node);
    await runPod(`web-${i}`);
  }
  ctl = await startController(runtimeNs, ['--webhook-port', '0', '--sidecarset-revision-namespace', runtimeNs]);
  await ctl.waitReady();
});

afterAll(async () => {
  await custom.deleteClusterCustomObject({ ...sidecarsets, name: NAME }).catch(() => undefined);
  await ctl?.stop('SIGTERM');
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('SidecarSet controller on the real API server', () => {
  it('writes the status counts, a ControllerRevision and the set’s hash annotations', async () => {
    const s = await eventually(
      async () => {
        const set = await getSet();
        return set.status?.matchedPods === 3 && set.status.readyPods === 3 ? set : undefined;
      },
      30_000,
      'status',
    );
    expect(s.status).toMatchObject({ matchedPods: 3, updatedPods: 3, readyPods: 3, updatedReadyPods: 3, observedGeneration: 1 });
    expect(s.metadata.annotations?.['kruise.io/sidecarset-hash']).toBe(sidecarSetHash(s));
    const rev = await appsApi.readNamespacedControllerRevision({ name: s.status!.latestRevision!, namespace: runtimeNs });
    expect(rev.metadata?.labels).toEqual({ 'kruise.io/sidecarset-name': NAME });
  });

  it('upgrades the image in place one pod at a time, waiting for the kubelet to run the new image', async () => {
    await patchContainers([container('logtail:2')]);
    const first = await eventually(
      async () => {
        const upgraded = (await pods()).filter((p) => image(p) === 'logtail:2');
        return upgraded.length > 0 ? upgraded : undefined;
      },
      30_000,
      'first upgrade',
    );
    expect(first).toHaveLength(1);
    // The kubelet has not restarted it yet: nobody else may be upgraded (maxUnavailable 1).
    await new Promise((r) => setTimeout(r, 3000));
    expect((await pods()).filter((p) => image(p) === 'logtail:2')).toHaveLength(1);
    const state = JSON.parse(first[0]!.metadata!.annotations!['kruise.io/sidecarset-inplace-update-state']!);
    expect(state[NAME]).toMatchObject({ lastContainerStatuses: { logtail: {} } });
    for (let round = 0; round < 3; round++) {
      for (const p of await pods()) if (image(p) === 'logtail:2') await runPod(p.metadata!.name!);
      if ((await pods()).every((p) => image(p) === 'logtail:2')) break;
      await eventually(
        async () => (await pods()).filter((p) => image(p) === 'logtail:2').length > round + 1 || undefined,
        30_000,
        `upgrade ${round + 2}`,
      );
    }
    for (const p of await pods()) await runPod(p.metadata!.name!);
    await eventually(
      async () => {
        const st = (await getSet()).status;
        return st?.updatedPods === 3 && st.updatedReadyPods === 3 ? true : undefined;
      },
      30_000,
      'converged',
    );
  });

  it('refuses a change beyond the image: pod condition, event, RolloutStuck', async () => {
    await patchContainers([container('logtail:2', ['--verbose'])]);
    const s = await eventually(
      async () => {
        const set = await getSet();
        return set.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'RolloutStuck' && c.status === 'True')
          ? set
          : undefined;
      },
      30_000,
      'RolloutStuck',
    );
    const cond = s.status!.conditions!.find((c: { type: string }) => c.type === 'RolloutStuck');
    expect(cond).toMatchObject({
      reason: 'NotUpgradablePods',
      message: expect.stringMatching(/3 of 3 matched pods cannot be upgraded in place/),
    });
    for (const p of await pods()) {
      expect(p.spec!.containers.find((c) => c.name === 'logtail')!.args).toBeUndefined();
      expect(p.status!.conditions).toContainEqual(
        expect.objectContaining({ type: 'SidecarSetUpgradable', status: 'False', reason: 'UpdateImmutableField' }),
      );
    }
    const events = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${NAME}` });
    expect(events.items.map((e) => e.reason)).toContain('NotUpgradablePods');
  });
});

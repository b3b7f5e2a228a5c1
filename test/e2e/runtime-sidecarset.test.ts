// The SidecarSet controller on the real API server (the test plays the kubelet): status counts, the
// ControllerRevision and the set's hash annotations, an image-only change upgraded in place one pod at a
// time (maxUnavailable 1: the next pod waits until the kubelet reports the new image; patchPodMetadata applied
// again with the upgrade; pod condition SidecarSetUpgradable True), and a change beyond the image refused with
// the pod condition (False), an event and the RolloutStuck status condition; two sets on one pod keep one
// verdict each in SidecarSetUpgradable (False until both could upgrade it); a HotUpgrade sidecar hands over
// from its working to its idle container; and the
// revision history: revisionHistoryLimit prunes the oldest unused ControllerRevisions, never one a pod runs,
// a pin names or the latest, and a revision the set returns to counts as the newest again.
import { CoreV1Api, CustomObjectsApi, AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SidecarSet } from '../../src/api/kinds/sidecarset.js';
import { SidecarSetDefinition } from '../../src/api/registry.js';
import { sidecarSetHash } from '../../src/runtime/control/sidecarset-pod.js';
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
const HISTORY = `history-e2e-${process.pid}`;
const node = `node-sidecarset-${process.pid}`;
const sidecarsets = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets' };

function container(image: string, args?: string[]) {
  return { name: 'logtail', image, ...(args ? { args } : {}) };
}

async function getSet(): Promise<SidecarSet & { status?: Record<string, any> }> {
  return (await custom.getClusterCustomObject({ ...sidecarsets, name: NAME })) as SidecarSet;
}

async function patchContainers(containers: object[], extra: object = {}): Promise<void> {
  await custom.patchClusterCustomObject({ ...sidecarsets, name: NAME, body: { spec: { containers, ...extra } } }, mergePatch);
}

const upgradable = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'SidecarSetUpgradable');

/**
 * Plays the kubelet: Running and Ready, each container reporting the image its spec names; conditions the
 * kubelet does not own (SidecarSetUpgradable) are kept, as the kubelet keeps them.
 */
async function runPod(name: string): Promise<void> {
  const pod = await core.readNamespacedPod({ name, namespace: ns });
  await setPodStatus(pod, {
    phase: 'Running',
    containerStatuses: pod.spec!.containers.map((c) => ({ name: c.name, state: { running: {} } })),
    conditions: (pod.status?.conditions ?? []).filter((c) => c.type === 'SidecarSetUpgradable'),
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
      metadata: { name: `web-${i}`, labels: { app: 'e2e-web' }, annotations: { 'e2e.example/key': '{"logtail":1,"kept":true}' } },
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
  await custom.deleteClusterCustomObject({ ...sidecarsets, name: HISTORY }).catch(() => undefined);
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
    // patchPodMetadata is applied again with each in-place upgrade (upstream does), here merged into a pod value.
    await patchContainers([container('logtail:2')], {
      patchPodMetadata: [{ patchPolicy: 'MergePatchJson', annotations: { 'e2e.example/key': '{"logtail":2}' } }],
    });
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
    for (const p of await pods()) {
      expect(JSON.parse(p.metadata!.annotations!['e2e.example/key']!)).toEqual({ logtail: 2, kept: true });
      // Upgraded by the only set that injected it: every set could upgrade it.
      expect(upgradable(p)).toMatchObject({ status: 'True', reason: 'AllSidecarsetUpgradable', message: JSON.stringify({ [NAME]: true }) });
    }
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
      expect(upgradable(p)).toMatchObject({ status: 'False', reason: 'UpdateImmutableField', message: JSON.stringify({ [NAME]: false }) });
    }
    const events = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${NAME}` });
    expect(events.items.map((e) => e.reason)).toContain('NotUpgradablePods');
  });
});

describe('SidecarSetUpgradable with two SidecarSets on one pod (upstream keeps one verdict per set)', () => {
  const A = `multi-a-e2e-${process.pid}`;
  const B = `multi-b-e2e-${process.pid}`;
  const POD = 'multi-0';
  const setBody = (name: string, c: object) =>
    ({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name },
      spec: { selector: { matchLabels: { app: 'e2e-multi' } }, containers: [c] },
    }) as SidecarSet;
  const patchSet = (name: string, c: object) =>
    custom.patchClusterCustomObject({ ...sidecarsets, name, body: { spec: { containers: [c] } } }, mergePatch);
  const multiPod = () => core.readNamespacedPod({ name: POD, namespace: ns });
  const sidecar = (p: V1Pod, n: string) => p.spec!.containers.find((c) => c.name === n)!;
  const condition = (what: string, want: (c: ReturnType<typeof upgradable>) => boolean) =>
    eventually(
      async () => {
        const c = upgradable(await multiPod());
        return want(c) ? c : undefined;
      },
      30_000,
      what,
    );

  afterAll(async () => {
    for (const name of [A, B]) await custom.deleteClusterCustomObject({ ...sidecarsets, name }).catch(() => undefined);
  });

  it('False while one set cannot upgrade the pod, even after the other upgraded it; True once both have', async () => {
    const sets: SidecarSet[] = [];
    for (const [name, c] of [
      [A, { name: 'agent-a', image: 'agent-a:1', command: ['run'] }],
      [B, { name: 'agent-b', image: 'agent-b:1' }],
    ] as const) {
      sets.push((await custom.createClusterCustomObject({ ...sidecarsets, body: setBody(name, c) })) as SidecarSet);
    }
    const pod: Pod = { metadata: { name: POD, labels: { app: 'e2e-multi' } }, spec: { containers: [{ name: 'app', image: 'nginx:1' }] } };
    injectSidecarSets({
      pod,
      namespace: ns,
      namespaceLabels: {},
      sidecarSets: sets,
      now: new Date().toISOString(),
      metadataKeyAllowed: () => false,
    });
    await bindPod(await core.createNamespacedPod({ namespace: ns, body: pod as V1Pod }), node);
    await runPod(POD);

    // A changes beyond the image: it cannot upgrade the pod.
    await patchSet(A, { name: 'agent-a', image: 'agent-a:1', command: ['run', '--other'] });
    const notA = await condition('A not upgradable', (c) => c?.status === 'False');
    expect(notA).toMatchObject({ reason: 'UpdateImmutableField', message: JSON.stringify({ [A]: false }) });

    // B changes only its image: B upgrades the pod, but A still cannot, so the condition stays False.
    await patchSet(B, { name: 'agent-b', image: 'agent-b:2' });
    const bDone = await condition('B upgraded', (c) => c?.message === JSON.stringify({ [A]: false, [B]: true }));
    expect(sidecar(await multiPod(), 'agent-b').image).toBe('agent-b:2');
    expect(bDone).toMatchObject({ status: 'False', reason: 'UpdateImmutableField', lastTransitionTime: notA!.lastTransitionTime });
    await runPod(POD);

    // A goes back to its injected command with a new image: now A upgrades the pod too, and every set could.
    await patchSet(A, { name: 'agent-a', image: 'agent-a:2', command: ['run'] });
    const all = await condition('both upgraded', (c) => c?.status === 'True');
    expect(all).toMatchObject({ reason: 'AllSidecarsetUpgradable', message: JSON.stringify({ [A]: true, [B]: true }) });
    expect(sidecar(await multiPod(), 'agent-a').image).toBe('agent-a:2');
  });
});

describe('SidecarSet HotUpgrade on the real API server', () => {
  const HOT = `hot-e2e-${process.pid}`;
  const POD = 'hot-0';
  const envoy = (image: string) => ({
    name: 'envoy',
    image,
    upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
  });
  const hotPod = () => core.readNamespacedPod({ name: POD, namespace: ns });
  const images = (p: V1Pod) => Object.fromEntries(p.spec!.containers.map((c) => [c.name, c.image]));
  const working = (p: V1Pod) => JSON.parse(p.metadata!.annotations!['kruise.io/sidecarset-working-hotupgrade-container']!).envoy;

  afterAll(async () => {
    await custom.deleteClusterCustomObject({ ...sidecarsets, name: HOT }).catch(() => undefined);
  });

  it('the new version starts in the idle container; once it runs, the old one goes back to the empty image', async () => {
    const set = (await custom.createClusterCustomObject({
      ...sidecarsets,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: HOT },
        spec: { selector: { matchLabels: { app: 'e2e-hot' } }, containers: [envoy('envoy:1')] },
      },
    })) as SidecarSet;
    const pod: Pod = { metadata: { name: POD, labels: { app: 'e2e-hot' } }, spec: { containers: [{ name: 'app', image: 'nginx:1' }] } };
    injectSidecarSets({
      pod,
      namespace: ns,
      namespaceLabels: {},
      sidecarSets: [set],
      now: new Date().toISOString(),
      metadataKeyAllowed: () => false,
    });
    await bindPod(await core.createNamespacedPod({ namespace: ns, body: pod as V1Pod }), node);
    await runPod(POD);
    expect(images(await hotPod())).toEqual({ 'envoy-1': 'envoy:1', 'envoy-2': 'empty:1', app: 'nginx:1' });

    await custom.patchClusterCustomObject({ ...sidecarsets, name: HOT, body: { spec: { containers: [envoy('envoy:2')] } } }, mergePatch);
    const started = await eventually(
      async () => {
        const p = await hotPod();
        return images(p)['envoy-2'] === 'envoy:2' ? p : undefined;
      },
      30_000,
      'new version in envoy-2',
    );
    expect(working(started)).toBe('envoy-2');
    // Both run until the kubelet reports the new one: the old one keeps serving.
    expect(images(started)['envoy-1']).toBe('envoy:1');
    expect(started.metadata!.annotations!['versionalt.sidecarset.kruise.io/envoy-2']).toBe('1');

    await runPod(POD);
    const handedOver = await eventually(
      async () => {
        const p = await hotPod();
        return images(p)['envoy-1'] === 'empty:1' ? p : undefined;
      },
      30_000,
      'handover',
    );
    expect(images(handedOver)).toEqual({ 'envoy-1': 'empty:1', 'envoy-2': 'envoy:2', app: 'nginx:1' });
    expect(handedOver.metadata!.annotations).toMatchObject({
      'version.sidecarset.kruise.io/envoy-1': '0',
      'versionalt.sidecarset.kruise.io/envoy-2': '0',
    });
    await runPod(POD);
    await eventually(
      async () => {
        const st = ((await custom.getClusterCustomObject({ ...sidecarsets, name: HOT })) as SidecarSet & { status?: any }).status;
        return st?.matchedPods === 1 && st.updatedPods === 1 && st.updatedReadyPods === 1 ? true : undefined;
      },
      30_000,
      'status converged',
    );
  });
});

describe('SidecarSet revision history on the real API server', () => {
  /** Patches the HISTORY set and waits until its status names the revision of the new spec. */
  async function step(spec: object, what: string): Promise<string> {
    const before = (await custom.getClusterCustomObject({ ...sidecarsets, name: HISTORY })) as SidecarSet;
    await custom.patchClusterCustomObject({ ...sidecarsets, name: HISTORY, body: { spec } }, mergePatch);
    const generation = (before.metadata.generation ?? 0) + 1;
    const s = await eventually(
      async () => {
        const set = (await custom.getClusterCustomObject({ ...sidecarsets, name: HISTORY })) as SidecarSet & { status?: any };
        return set.status?.observedGeneration === generation ? set : undefined;
      },
      30_000,
      what,
    );
    return s.status.latestRevision as string;
  }

  async function revisionsOnServer(): Promise<Map<string, number>> {
    const list = await appsApi.listNamespacedControllerRevision({
      namespace: runtimeNs,
      labelSelector: `kruise.io/sidecarset-name=${HISTORY}`,
    });
    return new Map(list.items.map((r) => [r.metadata!.name!, r.revision]));
  }

  /** Waits until the set's revisions on the server are exactly `names` (pruning follows the status write). */
  async function expectRevisions(names: string[], what: string): Promise<Map<string, number>> {
    let last = new Map<string, number>();
    try {
      return await eventually(
        async () => {
          last = await revisionsOnServer();
          return [...last.keys()].sort().join() === [...names].sort().join() ? last : undefined;
        },
        30_000,
        what,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}: have ${JSON.stringify([...last])}, want ${JSON.stringify(names)}`, { cause: err });
    }
  }

  it('keeps revisionHistoryLimit revisions, sparing those in use; a revision returned to becomes the newest', async () => {
    const created = (await custom.createClusterCustomObject({
      ...sidecarsets,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: HISTORY },
        // NotUpdate: the pod keeps the revision it was created with, so that revision stays in use.
        spec: {
          selector: { matchLabels: { app: 'e2e-history' } },
          containers: [container('hist:1')],
          updateStrategy: { type: 'NotUpdate' },
          revisionHistoryLimit: 2,
        },
      },
    })) as SidecarSet;
    const pod: Pod = {
      metadata: { name: 'hist-0', labels: { app: 'e2e-history' } },
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
    await core.createNamespacedPod({ namespace: ns, body: pod as V1Pod });
    const rev1 = await eventually(
      async () => ((await getHistorySet()).status?.latestRevision as string | undefined) ?? undefined,
      30_000,
      'first revision',
    );
    expect(JSON.parse(pod.metadata.annotations!['kruise.io/sidecarset-hash']!)[HISTORY].controllerRevision).toBe(rev1);

    const rev2 = await step({ containers: [container('hist:2')] }, 'rev2');
    await step({ injectionStrategy: { revision: { revisionName: rev2 } } }, 'pin rev2');
    const rev3 = await step({ containers: [container('hist:3')] }, 'rev3');
    // Three revisions over a limit of two, but rev1 runs in the pod, rev2 is pinned and rev3 is the latest.
    await expectRevisions([rev1, rev2, rev3], 'nothing pruned while all are in use');
    const rev4 = await step({ containers: [container('hist:4')] }, 'rev4');
    await expectRevisions([rev1, rev2, rev4], 'the unused rev3 pruned');

    // Nothing uses rev1 once its pod is gone and rev2 once unpinned: down to the limit, the oldest first.
    await core.deleteNamespacedPod({ name: 'hist-0', namespace: ns, gracePeriodSeconds: 0 });
    await step({ injectionStrategy: null }, 'unpin');
    await expectRevisions([rev2, rev4], 'rev1 pruned');

    // Back to the hist:2 spec: rev2 is reused and renumbered above rev4, so the next change prunes rev4.
    expect(await step({ containers: [container('hist:2')] }, 'back to rev2')).toBe(rev2);
    const renumbered = await eventually(
      async () => {
        const r = await revisionsOnServer();
        return r.get(rev2)! > r.get(rev4)! ? r : undefined;
      },
      30_000,
      'rev2 renumbered',
    );
    expect(renumbered.size).toBe(2);
    const rev5 = await step({ containers: [container('hist:5')] }, 'rev5');
    await expectRevisions([rev2, rev5], 'rev4 pruned, not the renumbered rev2');
  });
});

async function getHistorySet(): Promise<SidecarSet & { status?: Record<string, any> }> {
  return (await custom.getClusterCustomObject({ ...sidecarsets, name: HISTORY })) as SidecarSet;
}

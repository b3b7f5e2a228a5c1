// The Advanced DaemonSet controller on the real kube-apiserver: `cdk8s-kruise controller` runs as a child process
// (strict permissions, access log checked against src/contracts/permissions.ts); the test plays the scheduler and the
// kubelet (binds each pod to the node its affinity names, reports it running and ready). Node objects are enough for
// the scheduling decisions: no pod runs. The in-place restart of containers, preDelete on real pods and the
// rollout's pace on a real kubelet are proven on the real node (test/node/daemonset.test.ts).
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKubeConfig, bindPod, createNamespace, createNode, mergePatch, setPodStatus } from '../harness/index.js';
import { accessCoverage, accessLogs, eventually, startController, type ControllerProcess } from './runtime/support.js';

let core: CoreV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
const procs: ControllerProcess[] = [];
/** Other test files add nodes to the shared control plane: the sets here select only the nodes of this file. */
const LABEL = 'e2e.cdk8s-kruise.io/daemonset';
const MARK = String(process.pid);
const nodes = ['a', 'b', 'c'].map((n) => `node-ads-${process.pid}-${n}`);
const [NODE_A, NODE_B, NODE_C] = nodes as [string, string, string];
const V1ALPHA1 = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'daemonsets' } as const;
const V1BETA1 = { ...V1ALPHA1, version: 'v1beta1' } as const;

type DS = { metadata: { uid: string; generation: number }; status?: Record<string, any> };

function daemonSet(name: string, spec: Record<string, unknown> = {}, template: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'DaemonSet',
    metadata: { name, namespace: ns },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { nodeSelector: { [LABEL]: MARK }, containers: [{ name: 'agent', image: 'example.io/agent:1' }], ...template },
      },
      ...spec,
    },
  };
}

const rolling = (rollingUpdate: Record<string, unknown>) => ({ updateStrategy: { type: 'RollingUpdate', rollingUpdate } });

async function getDs(name: string): Promise<DS> {
  return (await custom.getNamespacedCustomObject({ ...V1ALPHA1, namespace: ns, name })) as never;
}

async function patchDs(name: string, body: Record<string, unknown>): Promise<void> {
  await custom.patchNamespacedCustomObject({ ...V1ALPHA1, namespace: ns, name, body }, mergePatch);
}

const imagePatch = (image: string) => ({ spec: { template: { spec: { containers: [{ name: 'agent', image }] } } } });

async function podsOf(name: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: `app=${name}` })).items.filter(
    (p) => !p.metadata!.deletionTimestamp,
  );
}

/** The node a pod's required node affinity binds it to. */
const boundNode = (p: V1Pod) =>
  p.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0]!.matchFields![0]!.values![0]!;
const hashOf = (p: V1Pod) => p.metadata!.labels!['controller-revision-hash'];
const byNode = (pods: V1Pod[]) => Object.fromEntries(pods.map((p) => [boundNode(p), p]));

/** The scheduler and the kubelet: binds the set's pods where their affinity says and reports them running and ready. */
async function kubelet(name: string, opts: { except?: (p: V1Pod) => boolean } = {}): Promise<V1Pod[]> {
  const pods = await podsOf(name);
  for (const p of pods) {
    if (opts.except?.(p)) continue;
    if (!p.spec!.nodeName) await bindPod(p, boundNode(p));
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    const image = p.spec!.containers[0]!.image;
    const reported = p.status?.containerStatuses?.[0]?.image;
    if (!ready || reported !== image) {
      await setPodStatus(p, { phase: 'Running', containerStatuses: [{ name: 'agent', state: { running: {} }, image }] });
    }
  }
  return podsOf(name);
}

/** Waits until `check` holds on the set's pods, playing the kubelet on each poll. */
async function settle(name: string, check: (pods: V1Pod[]) => boolean, what: string, timeoutMs = 30_000): Promise<V1Pod[]> {
  return eventually(
    async () => {
      const pods = await kubelet(name);
      return check(pods) ? pods : undefined;
    },
    timeoutMs,
    what,
  );
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('daemonset');
  for (const n of nodes) await createNode(n, { labels: { [LABEL]: MARK, ...(n === NODE_A ? { pool: 'canary' } : {}) } });
  // The API server taints a new node not-ready, and no node lifecycle controller runs here to lift it once the node
  // reports Ready: the nodes get the taints of the test instead. c's is one no daemon pod here tolerates.
  for (const n of nodes) {
    const taints = n === NODE_C ? [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] : [];
    await core.patchNode({ name: n, body: { spec: { taints } } }, mergePatch);
  }
  const p = await startController(runtimeNs, ['--webhook-port', '0', ...(process.env.DEBUG_DAEMONSET ? ['--log-level', 'debug'] : [])]);
  procs.push(p);
  await p.waitReady();
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  for (const p of procs)
    for (const l of p.logs.filter((x) => x.level >= 40 || process.env.DEBUG_DAEMONSET).slice(-40))
      console.log('[controller]', JSON.stringify(l));
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  console.log(`[runtime permissions] ${report.calls} API calls recorded; declared but unused here: ${report.unused.join(', ') || 'none'}`);
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('Advanced DaemonSet controller on the real API server', () => {
  it('one pod per eligible node, bound by node affinity with the daemon tolerations; taints and status follow the nodes', async () => {
    // Written as v1beta1, as upstream's clients do; read back as v1alpha1.
    await custom.createNamespacedCustomObject({
      ...V1BETA1,
      namespace: ns,
      body: { ...daemonSet('agent', rolling({ maxUnavailable: 1 })), apiVersion: 'apps.kruise.io/v1beta1' },
    });
    const pods = await settle('agent', (ps) => ps.length === 2, 'a pod on a and b');
    const ds = await getDs('agent');
    expect(pods.map(boundNode).sort()).toEqual([NODE_A, NODE_B]);
    for (const p of pods) {
      expect(p.metadata!.generateName).toBe('agent-');
      expect(p.metadata!.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'DaemonSet', name: 'agent', uid: ds.metadata.uid, controller: true }),
      ]);
      expect(p.spec!.tolerations!.map((t) => `${t.key}:${t.effect}`)).toEqual(
        expect.arrayContaining([
          'node.kubernetes.io/not-ready:NoExecute',
          'node.kubernetes.io/unreachable:NoExecute',
          'node.kubernetes.io/unschedulable:NoSchedule',
        ]),
      );
    }
    const status = await eventually(
      async () => {
        await kubelet('agent');
        const s = (await getDs('agent')).status;
        return s?.numberReady === 2 ? s : undefined;
      },
      20_000,
      'status counts two ready pods',
    );
    expect(status).toMatchObject({
      desiredNumberScheduled: 2,
      currentNumberScheduled: 2,
      numberReady: 2,
      numberAvailable: 2,
      updatedNumberScheduled: 2,
      numberMisscheduled: 0,
      observedGeneration: ds.metadata.generation,
    });
    // The status is written at v1beta1 (the storage version), with the revision hash as v1beta1 names it.
    const beta = (await custom.getNamespacedCustomObject({ ...V1BETA1, namespace: ns, name: 'agent' })) as DS;
    expect(beta.status?.updateRevision).toBe(hashOf(pods[0]!));
    const revisions = await eventually(
      async () => {
        const l = await custom.listNamespacedCustomObject({ group: 'apps', version: 'v1', plural: 'controllerrevisions', namespace: ns });
        const mine = (l as { items: Array<{ metadata: { name: string; ownerReferences?: Array<{ uid: string }> } }> }).items.filter((r) =>
          r.metadata.ownerReferences?.some((o) => o.uid === ds.metadata.uid),
        );
        return mine.length === 1 ? mine : undefined;
      },
      10_000,
      'one ControllerRevision',
    );
    expect(revisions[0]!.metadata.name).toBe(`agent-${hashOf(pods[0]!)}`);

    // Node c's taint lifted: it gets a pod. A NoSchedule taint again keeps it running (as natively: counted as
    // misscheduled); a NoExecute taint evicts it.
    await core.patchNode({ name: NODE_C, body: { spec: { taints: [] } } }, mergePatch);
    const onC = await settle('agent', (ps) => ps.map(boundNode).includes(NODE_C), 'a pod on c once its taint is gone');
    await core.patchNode(
      { name: NODE_C, body: { spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] } } },
      mergePatch,
    );
    const kept = await eventually(
      async () => {
        const st = (await getDs('agent')).status;
        return st?.numberMisscheduled === 1 && st.desiredNumberScheduled === 2 ? st : undefined;
      },
      20_000,
      'the pod on c counted as misscheduled',
    );
    expect(kept.currentNumberScheduled).toBe(2);
    expect(byNode(await podsOf('agent'))[NODE_C]!.metadata!.uid).toBe(byNode(onC)[NODE_C]!.metadata!.uid);
    await core.patchNode(
      { name: NODE_C, body: { spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoExecute' }] } } },
      mergePatch,
    );
    await settle('agent', (ps) => !ps.map(boundNode).includes(NODE_C) && ps.length === 2, 'the pod on c deleted under a NoExecute taint');
  });

  it('Standard rolling update: partition holds one node back, paused holds the rest, then the rollout completes', async () => {
    await custom.createNamespacedCustomObject({
      ...V1ALPHA1,
      namespace: ns,
      body: daemonSet('std', rolling({ maxUnavailable: 1, partition: 1 })),
    });
    const before = await settle('std', (ps) => ps.length === 2 && ps.every((p) => p.status?.phase === 'Running'), 'two running pods');
    const oldHash = hashOf(before[0]!);
    await patchDs('std', imagePatch('example.io/agent:2'));
    // Upstream's order: from the last node name down, so b first; the partition keeps a.
    const one = await settle('std', (ps) => ps.length === 2 && ps.filter((p) => hashOf(p) !== oldHash).length === 1, 'one node updated');
    expect(hashOf(byNode(one)[NODE_B]!)).not.toBe(oldHash);
    expect(byNode(one)[NODE_A]!.metadata!.uid).toBe(byNode(before)[NODE_A]!.metadata!.uid);
    await sleep(3000);
    expect((await podsOf('std')).filter((p) => hashOf(p) === oldHash).map(boundNode)).toEqual([NODE_A]);

    // Paused: lifting the partition changes nothing while paused.
    await patchDs('std', { spec: { updateStrategy: { rollingUpdate: { paused: true, partition: 0 } } } });
    await sleep(3000);
    await kubelet('std');
    expect((await podsOf('std')).filter((p) => hashOf(p) === oldHash).map(boundNode)).toEqual([NODE_A]);
    await patchDs('std', { spec: { updateStrategy: { rollingUpdate: { paused: false } } } });
    await settle('std', (ps) => ps.length === 2 && ps.every((p) => hashOf(p) !== oldHash), 'every node updated');
    const s = await eventually(
      async () => {
        // A pod created after the last poll of settle() still needs its kubelet.
        await kubelet('std');
        const st = (await getDs('std')).status;
        return st?.updatedNumberScheduled === 2 && st.numberAvailable === 2 ? st : undefined;
      },
      20_000,
      'status: two updated, two available',
    );
    expect(s.numberUnavailable).toBe(0);
  });

  it('InPlaceIfPossible with a node selector: the selected node’s pod keeps its UID and gets the new image; the other is not touched', async () => {
    await custom.createNamespacedCustomObject({
      ...V1ALPHA1,
      namespace: ns,
      body: daemonSet(
        'inplace',
        rolling({ rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 2, selector: { matchLabels: { pool: 'canary' } } }),
      ),
    });
    const before = await settle('inplace', (ps) => ps.length === 2 && ps.every((p) => p.status?.phase === 'Running'), 'two running pods');
    for (const p of before) expect(p.spec!.readinessGates).toEqual([{ conditionType: 'InPlaceUpdateReady' }]);
    const oldHash = hashOf(before[0]!);
    await patchDs('inplace', imagePatch('example.io/agent:2'));
    const after = await eventually(
      async () => {
        const a = byNode(await podsOf('inplace'))[NODE_A];
        return a && hashOf(a) !== oldHash ? a : undefined;
      },
      20_000,
      'pod on a updated in place',
    );
    expect(after.metadata!.uid).toBe(byNode(before)[NODE_A]!.metadata!.uid);
    expect(after.spec!.containers[0]!.image).toBe('example.io/agent:2');
    expect(after.status!.conditions!.find((c) => c.type === 'InPlaceUpdateReady')?.status).toBe('False');
    expect(JSON.parse(after.metadata!.annotations!['apps.kruise.io/inplace-update-state']!)).toMatchObject({
      revision: hashOf(after),
      updateImages: true,
    });
    // The kubelet reports the new image: the update completes and InPlaceUpdateReady turns True.
    await setPodStatus(after, {
      phase: 'Running',
      containerStatuses: [{ name: 'agent', state: { running: {} }, image: 'example.io/agent:2' }],
      conditions: [{ type: 'InPlaceUpdateReady', status: 'False', lastTransitionTime: new Date() }],
    });
    await eventually(
      async () => {
        const a = byNode(await podsOf('inplace'))[NODE_A]!;
        return a.status?.conditions?.find((c) => c.type === 'InPlaceUpdateReady')?.status === 'True' ? a : undefined;
      },
      20_000,
      'InPlaceUpdateReady True once the new image runs',
    );
    await sleep(2000);
    const b = byNode(await podsOf('inplace'))[NODE_B]!;
    expect(b.metadata!.uid).toBe(byNode(before)[NODE_B]!.metadata!.uid);
    expect(hashOf(b)).toBe(oldHash);
  });

  it('maxSurge: a new pod beside the old one, the old one deleted once the new one is available', async () => {
    await custom.createNamespacedCustomObject({
      ...V1ALPHA1,
      namespace: ns,
      body: daemonSet('surge', rolling({ maxUnavailable: 0, maxSurge: 1 })),
    });
    const before = await settle('surge', (ps) => ps.length === 2 && ps.every((p) => p.status?.phase === 'Running'), 'two running pods');
    const oldHash = hashOf(before[0]!);
    await patchDs('surge', imagePatch('example.io/agent:2'));
    // The new pod stays unready (the kubelet holds it back): both pods share the node, nothing else surges.
    const surged = await eventually(
      async () => {
        const ps = await kubelet('surge', { except: (p) => hashOf(p) !== oldHash });
        return ps.length === 3 ? ps : undefined;
      },
      20_000,
      'a third pod beside an old one',
    );
    const fresh = surged.find((p) => hashOf(p) !== oldHash)!;
    expect(surged.filter((p) => boundNode(p) === boundNode(fresh))).toHaveLength(2);
    await sleep(2000);
    expect(await podsOf('surge')).toHaveLength(3);
    // Ready: its old neighbour goes, then the other node surges the same way.
    await settle('surge', (ps) => ps.length === 2 && ps.every((p) => hashOf(p) !== oldHash), 'both nodes updated by surge');
  });

  it('preDelete: a hooked pod waits in PreparingDelete and its replacement with it, until the label is removed', async () => {
    // The pods are born hooked (the template carries the hook's label), as a drain operator's pods would be.
    const hook = { 'example.io/drain': 'pending' };
    const body = daemonSet('hooked', { ...rolling({ maxUnavailable: 1 }), lifecycle: { preDelete: { labelsHandler: hook } } });
    Object.assign(body.spec.template.metadata.labels, hook);
    await custom.createNamespacedCustomObject({ ...V1ALPHA1, namespace: ns, body });
    const before = await settle('hooked', (ps) => ps.length === 2 && ps.every((p) => p.status?.phase === 'Running'), 'two running pods');
    const victim = byNode(before)[NODE_B]!;
    await patchDs('hooked', imagePatch('example.io/agent:2'));
    const held = await eventually(
      async () => {
        const p = (await podsOf('hooked')).find((x) => x.metadata!.uid === victim.metadata!.uid);
        return p?.metadata!.labels!['lifecycle.apps.kruise.io/state'] === 'PreparingDelete' ? p : undefined;
      },
      20_000,
      'the hooked pod in PreparingDelete',
    );
    await sleep(3000);
    const during = await podsOf('hooked');
    expect(during.map((p) => p.metadata!.uid).sort()).toEqual(before.map((p) => p.metadata!.uid).sort());
    await core.patchNamespacedPod(
      { name: held.metadata!.name!, namespace: ns, body: { metadata: { labels: { 'example.io/drain': null } } } },
      mergePatch,
    );
    const replaced = await settle(
      'hooked',
      (ps) =>
        ps.length === 2 && !ps.some((p) => p.metadata!.uid === victim.metadata!.uid) && hashOf(byNode(ps)[NODE_B]!) !== hashOf(victim),
      'the released pod replaced at the new revision',
    );
    expect(boundNode(byNode(replaced)[NODE_B]!)).toBe(NODE_B);
  });

  it('preNormal and inPlaceUpdate hooks (beyond upstream, as on a CloneSet): PreparingNormal until the finalizer is on, PreparingUpdate until released, Updated until the hook is back', async () => {
    const finalizer = 'example.io/lb';
    const ipu = 'example.io/ipu';
    const state = (p: V1Pod | undefined) => p?.metadata!.labels!['lifecycle.apps.kruise.io/state'];
    const patchPod = (p: V1Pod, metadata: Record<string, unknown>) =>
      core.patchNamespacedPod({ name: p.metadata!.name!, namespace: ns, body: { metadata } }, mergePatch);
    await custom.createNamespacedCustomObject({
      ...V1ALPHA1,
      namespace: ns,
      body: daemonSet('hooks', {
        ...rolling({ rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 2 }),
        lifecycle: { preNormal: { finalizersHandler: [finalizer] }, inPlaceUpdate: { labelsHandler: { [ipu]: 'ok' } } },
      }),
    });
    const born = await settle('hooks', (ps) => ps.length === 2 && ps.every((p) => p.status?.phase === 'Running'), 'two running pods');
    // Created without the handlers: the hook operator's finalizer is what lets a pod become Normal.
    for (const p of born) expect(p.metadata!.finalizers ?? []).not.toContain(finalizer);
    expect(born.map(state)).toEqual(['PreparingNormal', 'PreparingNormal']);
    await eventually(
      async () => {
        const st = (await getDs('hooks')).status;
        return st?.numberReady === 2 && st.numberAvailable === 0 ? st : undefined;
      },
      20_000,
      'two ready pods, none available while PreparingNormal',
    );
    await sleep(2000);
    expect((await podsOf('hooks')).map(state)).toEqual(['PreparingNormal', 'PreparingNormal']);
    for (const p of born) await patchPod(p, { finalizers: [finalizer], labels: { [ipu]: 'ok' } });
    await eventually(
      async () => {
        const ps = await podsOf('hooks');
        const st = (await getDs('hooks')).status;
        return ps.every((p) => state(p) === 'Normal') && st?.numberAvailable === 2 ? ps : undefined;
      },
      20_000,
      'both pods Normal and available once the finalizer is on',
    );

    // The image change: both pods are hooked, so both wait in PreparingUpdate with the old image.
    await patchDs('hooks', imagePatch('example.io/agent:2'));
    await eventually(
      async () => ((await podsOf('hooks')).every((p) => state(p) === 'PreparingUpdate') ? true : undefined),
      20_000,
      'both pods in PreparingUpdate',
    );
    await sleep(2000);
    const held = await podsOf('hooks');
    expect(held.map(state)).toEqual(['PreparingUpdate', 'PreparingUpdate']);
    expect(held.map((p) => p.spec!.containers[0]!.image)).toEqual(['example.io/agent:1', 'example.io/agent:1']);

    // Released on a only: a is updated in place, keeps its UID, and stays Updated until the hook label is back.
    const a = byNode(held)[NODE_A]!;
    await patchPod(a, { labels: { [ipu]: null } });
    const updating = await eventually(
      async () => {
        const p = byNode(await podsOf('hooks'))[NODE_A];
        return p?.spec!.containers[0]!.image === 'example.io/agent:2' ? p : undefined;
      },
      20_000,
      'a updated in place',
    );
    expect(updating.metadata!.uid).toBe(a.metadata!.uid);
    await setPodStatus(updating, {
      phase: 'Running',
      containerStatuses: [{ name: 'agent', state: { running: {} }, image: 'example.io/agent:2' }],
      conditions: [{ type: 'InPlaceUpdateReady', status: 'False', lastTransitionTime: new Date() }],
    });
    const updated = await eventually(
      async () => {
        const p = byNode(await podsOf('hooks'))[NODE_A];
        return state(p) === 'Updated' ? p : undefined;
      },
      20_000,
      'a Updated once its new image runs',
    );
    await sleep(2000);
    expect(state(byNode(await podsOf('hooks'))[NODE_A])).toBe('Updated');
    expect(state(byNode(await podsOf('hooks'))[NODE_B])).toBe('PreparingUpdate');
    await patchPod(updated, { labels: { [ipu]: 'ok' } });
    await eventually(
      async () => (state(byNode(await podsOf('hooks'))[NODE_A]) === 'Normal' ? true : undefined),
      20_000,
      'a Normal once the hook label is back',
    );
    // The namespace can go once the user's finalizers are off.
    for (const p of await podsOf('hooks')) await patchPod(p, { finalizers: null });
  });
});

// Advanced StatefulSet on the real node with the runtime installed from dist/ and its image. The apps are built
// with the AdvancedStatefulSet construct and applied with kubectl as users do; the kubelet runs the containers,
// restarts the one whose image changes in place and computes readiness from the InPlaceUpdateReady gate the
// controller manages; the scheduler binds the pods. The test only edits objects and watches state.
import { Duration, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { beforeAll, describe, expect, it } from 'vitest';
import { Watch, type V1Pod } from '@kubernetes/client-node';
import {
  AdvancedStatefulSet,
  AdvancedStatefulSetPodManagement,
  AdvancedStatefulSetUpdateStrategy,
  LifecycleHook,
  type AdvancedStatefulSetProps,
} from '../../constructs/index.js';
import { adminKubeConfig, kubectl } from '../harness/index.js';
import { apply, containerLog, core, installRuntime, namespace, node, waitFor } from './support.js';

const STATE = 'lifecycle.apps.kruise.io/state';
const SLEEPER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];

/** The set `name` as the construct synthesizes it: two sleeper containers on the node's offline images, plus `props`. */
function synthSet(name: string, props: AdvancedStatefulSetProps, mainImage = node().images.busybox): Record<string, any>[] {
  const chart = Testing.chart();
  const container = (n: string, image: string): kplus.ContainerProps => ({
    name: n,
    image,
    imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
    command: SLEEPER,
    resources: {
      cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(200) },
      memory: { request: Size.mebibytes(16), limit: Size.mebibytes(64) },
    },
    securityContext: { ensureNonRoot: true, user: 65534, group: 65534 },
  });
  new AdvancedStatefulSet(chart, name, {
    metadata: { name },
    terminationGracePeriod: Duration.seconds(2),
    ...props,
    podMetadata: { labels: { app: name, ...props.podMetadata?.labels } },
    containers: [container('main', mainImage), container('side', node().images.busybox)],
  });
  const out = Testing.synth(chart) as Record<string, any>[];
  expect(out.map((o) => `${o.apiVersion} ${o.kind}`)).toEqual(['apps.kruise.io/v1beta1 StatefulSet']);
  return out;
}

async function sts(ns: string, name: string): Promise<any> {
  return JSON.parse(await kubectl(['get', 'statefulsets.apps.kruise.io', '-n', ns, name, '-o', 'json']));
}

async function pods(ns: string, app: string, includeDeleting = false): Promise<V1Pod[]> {
  const list = await core().listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` });
  return list.items
    .filter((p) => includeDeleting || !p.metadata!.deletionTimestamp)
    .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
}

async function patchPod(ns: string, name: string, patch: object): Promise<void> {
  await kubectl(['patch', 'pod', '-n', ns, name, '--type', 'merge', '-p', JSON.stringify(patch)]);
}

const condition = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;
const ordinals = (ps: V1Pod[], name: string) => ps.map((p) => Number(p.metadata!.name!.slice(name.length + 1))).sort((a, b) => a - b);

async function waitStatus(ns: string, name: string, what: string, pred: (s: any) => boolean, timeoutMs = 120_000): Promise<any> {
  let last: any;
  try {
    await waitFor(`${ns}/${name}: ${what}`, async () => pred((last = (await sts(ns, name)).status ?? {})), timeoutMs, 300);
  } catch (error) {
    const ps = await pods(ns, name, true).catch(() => []);
    const lines = ps.map(
      (p) =>
        `${p.metadata!.name} ${p.metadata!.labels?.[STATE]} ${p.metadata!.labels?.['controller-revision-hash']} ${p.metadata!.deletionTimestamp ? 'deleting ' : ''}${p.status?.phase} ${JSON.stringify(p.status?.conditions?.map((c) => `${c.type}=${c.status}`))}`,
    );
    // The controller's log says why (read from the kubelet's log files: the apiserver here cannot reach the kubelet).
    const managers = await core()
      .listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=controller-manager' })
      .then((l) => l.items)
      .catch(() => [] as V1Pod[]);
    const tail = managers
      .flatMap((m) => containerLog(m, 'manager').map((l) => `${m.metadata!.name} ${l.line}`))
      .filter((l) => l.includes('statefulset') || l.includes('leader'))
      .slice(-60);
    console.log(`[advanced-statefulset] ${ns}/${name} controller log:\n${tail.join('\n')}`);
    throw new Error(`${(error as Error).message}\nstatus: ${JSON.stringify(last)}\npods:\n${lines.join('\n')}`, { cause: error });
  }
  return last;
}

/**
 * Watches the pods of `app` and records, from every event, when each pod was first seen with `image` in its
 * spec (the order of the rollout) and the largest number of pods not Ready at one time.
 */
async function watchRollout(ns: string, app: string, image: string) {
  const latest = new Map<string, V1Pod>();
  const order: string[] = [];
  let maxNotReady = 0;
  const req = await new Watch(adminKubeConfig()).watch(
    `/api/v1/namespaces/${ns}/pods`,
    { labelSelector: `app=${app}` },
    (type: string, p: V1Pod) => {
      if (type === 'DELETED') latest.delete(p.metadata!.name!);
      else latest.set(p.metadata!.name!, p);
      if (p.spec?.containers.some((c) => c.name === 'main' && c.image === image) && !order.includes(p.metadata!.name!))
        order.push(p.metadata!.name!);
      const notReady = [...latest.values()].filter((x) => condition(x, 'Ready') !== 'True').length;
      maxNotReady = Math.max(maxNotReady, notReady);
    },
    () => undefined,
  );
  return {
    get order() {
      return [...order];
    },
    get maxNotReady() {
      return maxNotReady;
    },
    stop: () => req.abort(),
  };
}

beforeAll(async () => {
  await installRuntime();
}, 900_000);

describe('Advanced StatefulSet on the real node (construct-built apps, runtime from dist/ and its image)', () => {
  it('reserveOrdinals [1] gives ordinals 0, 2, 3; an in-place image update keeps every UID, restarts only the changed container, highest ordinal first, within partition and maxUnavailable', async () => {
    const ns = await namespace('asts-inplace');
    const props = (partition: number): AdvancedStatefulSetProps => ({
      replicas: 3,
      reserveOrdinals: [1],
      updateStrategy: AdvancedStatefulSetUpdateStrategy.inPlaceIfPossible({
        partition,
        maxUnavailable: kplus.PercentOrAbsolute.absolute(1),
      }),
    });
    const t0 = Date.now();
    await apply(ns, synthSet('ip', props(1)));
    const first = await waitStatus(ns, 'ip', '3 available', (s) => s.availableReplicas === 3 && s.replicas === 3);
    console.log(`[advanced-statefulset] 3 pods available (OrderedReady) in ${Date.now() - t0} ms`);
    const before = new Map((await pods(ns, 'ip')).map((p) => [p.metadata!.name!, p]));
    expect(ordinals([...before.values()], 'ip')).toEqual([0, 2, 3]);
    for (const p of before.values()) {
      expect(p.spec!.readinessGates?.map((g) => g.conditionType)).toContain('InPlaceUpdateReady');
      expect(condition(p, 'InPlaceUpdateReady')).toBe('True');
    }

    // Partition 1: the two highest ordinals are updated, one at a time, 3 before 2; ip-0 keeps the old image.
    const image2 = node().images.busybox2;
    const watch = await watchRollout(ns, 'ip', image2);
    const t1 = Date.now();
    try {
      await apply(ns, synthSet('ip', props(1), image2));
      await waitStatus(
        ns,
        'ip',
        'two pods updated in place and available',
        (s) =>
          s.updateRevision !== first.updateRevision && s.updatedReplicas === 2 && s.updatedReadyReplicas === 2 && s.availableReplicas === 3,
      );
      const rolloutMs = Date.now() - t1;
      // A moment for a further (wrong) update to show.
      await new Promise((r) => setTimeout(r, 3000));
      const partitioned = await pods(ns, 'ip');
      console.log(
        `[advanced-statefulset] partition 1: order ${watch.order.join(', ')}, max not-ready ${watch.maxNotReady}, ${rolloutMs} ms`,
      );
      expect(watch.order).toEqual(['ip-3', 'ip-2']);
      expect(watch.maxNotReady).toBe(1);
      expect(partitioned.find((p) => p.metadata!.name === 'ip-0')!.spec!.containers[0]!.image).toBe(node().images.busybox);

      // Partition 0: the last pod follows.
      await apply(ns, synthSet('ip', props(0), image2));
      const done = await waitStatus(
        ns,
        'ip',
        'all 3 updated in place, the update revision current',
        (s) =>
          s.updatedReplicas === 3 && s.updatedReadyReplicas === 3 && s.availableReplicas === 3 && s.currentRevision === s.updateRevision,
      );
      console.log(
        `[advanced-statefulset] partition 0: order ${watch.order.join(', ')}, max not-ready ${watch.maxNotReady}, whole rollout ${Date.now() - t1} ms`,
      );
      expect(watch.order).toEqual(['ip-3', 'ip-2', 'ip-0']);
      expect(watch.maxNotReady).toBe(1);
      const after = await pods(ns, 'ip');
      expect(ordinals(after, 'ip')).toEqual([0, 2, 3]);
      for (const p of after) {
        const b = before.get(p.metadata!.name!)!;
        expect(p.metadata!.uid, `${p.metadata!.name} kept its UID`).toBe(b.metadata!.uid);
        expect(p.status!.podIP).toBe(b.status!.podIP);
        expect(p.spec!.containers[0]!.image).toBe(image2);
        const main = p.status!.containerStatuses!.find((c) => c.name === 'main')!;
        const side = p.status!.containerStatuses!.find((c) => c.name === 'side')!;
        const mainBefore = b.status!.containerStatuses!.find((c) => c.name === 'main')!;
        const sideBefore = b.status!.containerStatuses!.find((c) => c.name === 'side')!;
        expect(main.restartCount, `${p.metadata!.name} main restarted once`).toBe(mainBefore.restartCount + 1);
        expect(main.containerID).not.toBe(mainBefore.containerID);
        expect(side.restartCount).toBe(sideBefore.restartCount);
        expect(side.containerID).toBe(sideBefore.containerID);
        expect(condition(p, 'InPlaceUpdateReady')).toBe('True');
        expect(p.metadata!.labels!['controller-revision-hash']).toBe(done.updateRevision);
      }
    } finally {
      watch.stop();
    }
  }, 400_000);

  it('preDelete: a scale-in waits in PreparingDelete until the hook label is removed, then only the released pod goes', async () => {
    const ns = await namespace('asts-predelete');
    const props = (replicas: number): AdvancedStatefulSetProps => ({
      replicas,
      reserveOrdinals: [1],
      podManagement: AdvancedStatefulSetPodManagement.PARALLEL,
      // Pods are born hooked (the label is in the template); the drain operator removes it when it is done.
      podMetadata: { labels: { 'example.io/drain': 'pending' } },
      lifecycle: { preDelete: LifecycleHook.byLabels({ 'example.io/drain': 'pending' }) },
    });
    await apply(ns, synthSet('pd', props(3)));
    await waitStatus(ns, 'pd', '3 available', (s) => s.availableReplicas === 3);
    await apply(ns, synthSet('pd', props(1)));
    await waitFor(
      'pd-2 and pd-3 in PreparingDelete',
      async () => (await pods(ns, 'pd')).filter((p) => p.metadata!.labels![STATE] === 'PreparingDelete').length === 2,
      60_000,
      300,
    );
    const heldAt = Date.now();
    await new Promise((r) => setTimeout(r, 5000));
    const held = (await pods(ns, 'pd', true)).filter((p) => p.metadata!.labels![STATE] === 'PreparingDelete');
    expect(held.map((p) => p.metadata!.name)).toEqual(['pd-2', 'pd-3']);
    for (const p of held) {
      expect(p.metadata!.deletionTimestamp, `${p.metadata!.name} not deleted while hooked`).toBeUndefined();
      expect(p.status!.phase).toBe('Running');
    }
    expect((await sts(ns, 'pd')).status).toMatchObject({ replicas: 3 });
    // The operator releases pd-3 only: it goes, pd-2 stays held.
    await patchPod(ns, 'pd-3', { metadata: { labels: { 'example.io/drain': null } } });
    await waitFor('pd-3 gone', async () => !(await pods(ns, 'pd', true)).some((p) => p.metadata!.name === 'pd-3'), 60_000, 300);
    console.log(`[advanced-statefulset] preDelete held pd-2 and pd-3 ${Date.now() - heldAt} ms until pd-3 was released`);
    const left = await pods(ns, 'pd', true);
    expect(left.map((p) => p.metadata!.name)).toEqual(['pd-0', 'pd-2']);
    expect(left.find((p) => p.metadata!.name === 'pd-2')!.metadata!.deletionTimestamp).toBeUndefined();
    await patchPod(ns, 'pd-2', { metadata: { labels: { 'example.io/drain': null } } });
    await waitStatus(ns, 'pd', '1 replica left', (s) => s.replicas === 1 && s.availableReplicas === 1);
    await waitFor('pd-2 gone', async () => (await pods(ns, 'pd', true)).length === 1, 60_000, 300);
  }, 300_000);

  it('preNormal: a new pod is Ready but not available (PreparingNormal) until its hook finalizer is added', async () => {
    const ns = await namespace('asts-prenormal');
    const props = (replicas: number): AdvancedStatefulSetProps => ({
      replicas,
      podManagement: AdvancedStatefulSetPodManagement.PARALLEL,
      lifecycle: { preNormal: LifecycleHook.byFinalizers(['example.io/registered']) },
    });
    await apply(ns, synthSet('pn', props(2)));
    const st = await waitStatus(ns, 'pn', '2 ready', (s) => s.readyReplicas === 2);
    expect(st.availableReplicas).toBe(0);
    const ps = await pods(ns, 'pn');
    expect(ps.map((p) => p.metadata!.labels![STATE])).toEqual(['PreparingNormal', 'PreparingNormal']);
    for (const p of ps) expect(condition(p, 'Ready')).toBe('True');
    await new Promise((r) => setTimeout(r, 3000));
    expect((await sts(ns, 'pn')).status.availableReplicas).toBe(0);
    // The registering operator adds the finalizer to pn-1 only: it alone becomes Normal and available.
    await patchPod(ns, 'pn-1', { metadata: { finalizers: ['example.io/registered'] } });
    await waitStatus(ns, 'pn', 'exactly pn-1 available', (s) => s.availableReplicas === 1);
    const states = Object.fromEntries((await pods(ns, 'pn')).map((p) => [p.metadata!.name, p.metadata!.labels![STATE]]));
    expect(states).toEqual({ 'pn-0': 'PreparingNormal', 'pn-1': 'Normal' });
    // A scale-up's new pod starts in PreparingNormal too.
    await apply(ns, synthSet('pn', props(3)));
    await waitStatus(ns, 'pn', '3 ready, still 1 available', (s) => s.readyReplicas === 3);
    expect((await sts(ns, 'pn')).status.availableReplicas).toBe(1);
    expect((await pods(ns, 'pn')).find((p) => p.metadata!.name === 'pn-2')!.metadata!.labels![STATE]).toBe('PreparingNormal');
    for (const name of ['pn-0', 'pn-2']) await patchPod(ns, name, { metadata: { finalizers: ['example.io/registered'] } });
    await waitStatus(ns, 'pn', '3 available', (s) => s.availableReplicas === 3);
    expect((await pods(ns, 'pn')).every((p) => p.metadata!.labels![STATE] === 'Normal')).toBe(true);
    // Clean up the finalizers so the namespace can go.
    for (const p of await pods(ns, 'pn')) await patchPod(ns, p.metadata!.name!, { metadata: { finalizers: null } });
  }, 300_000);
});

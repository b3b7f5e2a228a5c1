// Advanced DaemonSet on the real node with the runtime installed from dist/ and its image: the scheduler binds the
// daemon pod to the node its affinity names, the kubelet runs it, restarts only the changed container on an in-place
// image change and reports readiness through the InPlaceUpdateReady gate the controller manages. One node: the rollout
// across several nodes (order, selector, maxUnavailable, maxSurge) is proven on the real API server (test/e2e).
import { beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { kubectl } from '../harness/index.js';
import {
  advancedDaemonSetStatus,
  containerLog,
  core,
  installRuntime,
  namespace,
  node,
  patchAdvancedDaemonSet,
  setAdvancedDaemonSetImage,
  sleepingContainer,
  waitFor,
} from './support.js';

const STATE = 'lifecycle.apps.kruise.io/state';
const REVISION = 'controller-revision-hash';
/** How long a hold is watched for changes before it is released. */
const HOLD_MS = 8000;

function daemonSet(name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'DaemonSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, ...labels } },
        spec: { terminationGracePeriodSeconds: 2, containers: [sleepingContainer('agent'), sleepingContainer('side')] },
      },
      ...spec,
    },
  };
}

async function apply(ns: string, obj: object): Promise<void> {
  await kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(obj) });
}

async function patchPod(ns: string, name: string, patch: object): Promise<void> {
  await kubectl(['patch', 'pod', '-n', ns, name, '--type', 'merge', '-p', JSON.stringify(patch)]);
}

async function pods(ns: string, app: string): Promise<V1Pod[]> {
  return (await core().listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` })).items.filter(
    (p) => !p.metadata!.deletionTimestamp,
  );
}

const condition = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;
const containerStatus = (p: V1Pod, name: string) => p.status!.containerStatuses!.find((c) => c.name === name)!;

/** Waits for `check`; on a timeout the error carries the pods' states and the controller's DaemonSet log lines. */
async function waitDs(ns: string, app: string, what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  try {
    await waitFor(`${ns}/${app}: ${what}`, check, timeoutMs, 300);
  } catch (error) {
    const lines = (await pods(ns, app).catch(() => [])).map(
      (p) =>
        `${p.metadata!.name} ${p.metadata!.labels?.[STATE]} ${p.metadata!.labels?.[REVISION]} ${p.status?.phase} ` +
        `${JSON.stringify(p.status?.conditions?.map((c) => `${c.type}=${c.status}`))} ` +
        `${JSON.stringify(p.status?.containerStatuses?.map((c) => ({ n: c.name, i: c.image, r: c.restartCount })))}`,
    );
    // `kubectl logs` cannot reach this kubelet: the manager's log is read from the kubelet's log files.
    const managers = await core()
      .listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=controller-manager' })
      .then((l) => l.items)
      .catch(() => [] as V1Pod[]);
    const log = managers
      .flatMap((m) => containerLog(m, 'manager').map((l) => `${m.metadata!.name} ${l.line}`))
      .filter((l) => l.includes(ns) || l.includes('leader'))
      .slice(-60);
    const st = await advancedDaemonSetStatus(ns, app).catch(() => undefined);
    throw new Error(
      `${(error as Error).message}\nstatus: ${JSON.stringify(st)}\npods:\n${lines.join('\n')}\nmanager log:\n${log.join('\n')}`,
      {
        cause: error,
      },
    );
  }
}

/** The pod as the hold began, compared after HOLD_MS: same revision, image, containers and lifecycle state. */
async function expectUnchangedFor(ns: string, app: string, before: V1Pod): Promise<number> {
  const started = Date.now();
  const snapshot = (p: V1Pod) => ({
    uid: p.metadata!.uid,
    revision: p.metadata!.labels![REVISION],
    state: p.metadata!.labels![STATE],
    images: p.spec!.containers.map((c) => c.image),
    containers: p.status!.containerStatuses!.map((c) => [c.name, c.containerID, c.restartCount]),
  });
  const want = snapshot(before);
  while (Date.now() - started < HOLD_MS) {
    const now = await pods(ns, app);
    expect(now).toHaveLength(1);
    expect(snapshot(now[0]!)).toEqual(want);
    await new Promise((r) => setTimeout(r, 500));
  }
  return Date.now() - started;
}

beforeAll(async () => {
  await installRuntime();
}, 900_000);

describe('Advanced DaemonSet on the real node (runtime from dist/ and its image)', () => {
  it('partition and paused hold the rollout; then the in-place image update keeps the pod and restarts only the changed container', async () => {
    const ns = await namespace('ads-inplace');
    await apply(
      ns,
      daemonSet('ip', {
        updateStrategy: {
          type: 'RollingUpdate',
          rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 1, partition: 1 },
        },
      }),
    );
    await waitDs(ns, 'ip', 'the daemon pod available', async () => (await advancedDaemonSetStatus(ns, 'ip')).numberAvailable === 1);
    const [before] = await pods(ns, 'ip');
    expect(before!.spec!.nodeName).toBe(node().nodeName);
    expect(before!.spec!.readinessGates?.map((g) => g.conditionType)).toContain('InPlaceUpdateReady');

    // The partition keeps the node's pod at the old revision.
    await setAdvancedDaemonSetImage(ns, 'ip', node().images.busybox2);
    await waitDs(ns, 'ip', 'the new revision observed', async () => {
      const st = await advancedDaemonSetStatus(ns, 'ip');
      return st.observedGeneration === 2 && st.updatedNumberScheduled === 0;
    });
    const partitionHeldMs = await expectUnchangedFor(ns, 'ip', before!);
    // Paused: lifting the partition changes nothing either.
    await patchAdvancedDaemonSet(ns, 'ip', { spec: { updateStrategy: { rollingUpdate: { paused: true, partition: 0 } } } });
    await waitDs(ns, 'ip', 'the pause observed', async () => (await advancedDaemonSetStatus(ns, 'ip')).observedGeneration === 3);
    const pausedHeldMs = await expectUnchangedFor(ns, 'ip', before!);

    const released = Date.now();
    await patchAdvancedDaemonSet(ns, 'ip', { spec: { updateStrategy: { rollingUpdate: { paused: false } } } });
    let sawUpdating = false;
    await waitDs(ns, 'ip', 'the pod updated in place and available again', async () => {
      const [p] = await pods(ns, 'ip');
      if (p && condition(p, 'InPlaceUpdateReady') === 'False') sawUpdating = true;
      const st = await advancedDaemonSetStatus(ns, 'ip');
      return (
        st.updatedNumberScheduled === 1 &&
        st.numberAvailable === 1 &&
        p?.status?.containerStatuses?.find((c) => c.name === 'agent')?.restartCount === 1 &&
        condition(p, 'Ready') === 'True'
      );
    });
    const updateMs = Date.now() - released;
    const [after] = await pods(ns, 'ip');
    expect(sawUpdating, 'the pod was seen with InPlaceUpdateReady False while it updated').toBe(true);
    expect(after!.metadata!.uid).toBe(before!.metadata!.uid);
    expect(after!.status!.podIP).toBe(before!.status!.podIP);
    expect(after!.spec!.containers.map((c) => c.image)).toEqual([node().images.busybox2, node().images.busybox]);
    expect(containerStatus(after!, 'agent').restartCount).toBe(1);
    expect(containerStatus(after!, 'agent').containerID).not.toBe(containerStatus(before!, 'agent').containerID);
    expect(containerStatus(after!, 'side').restartCount).toBe(0);
    expect(containerStatus(after!, 'side').containerID).toBe(containerStatus(before!, 'side').containerID);
    expect(condition(after!, 'InPlaceUpdateReady')).toBe('True');
    expect(after!.metadata!.labels![REVISION]).not.toBe(before!.metadata!.labels![REVISION]);
    expect(after!.metadata!.labels![REVISION]).toBe((await advancedDaemonSetStatus(ns, 'ip')).updateRevision);
    const ipu = JSON.parse(after!.metadata!.annotations!['apps.kruise.io/inplace-update-state']!);
    expect(ipu.revision).toBe(after!.metadata!.labels![REVISION]);
    console.log(
      `[daemonset] partition held ${partitionHeldMs} ms, paused held ${pausedHeldMs} ms; ` +
        `in-place update ${updateMs} ms from release to available; uid kept ${after!.metadata!.uid}`,
    );
  });

  it('preDelete holds the pod in PreparingDelete, and its replacement with it, until the hook label is removed', async () => {
    const ns = await namespace('ads-predelete');
    const hook = { 'example.io/drain': 'pending' };
    await apply(
      ns,
      daemonSet(
        'pd',
        {
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
          lifecycle: { preDelete: { labelsHandler: hook } },
        },
        hook,
      ),
    );
    await waitDs(ns, 'pd', 'the daemon pod available', async () => (await advancedDaemonSetStatus(ns, 'pd')).numberAvailable === 1);
    const [before] = await pods(ns, 'pd');
    await setAdvancedDaemonSetImage(ns, 'pd', node().images.busybox2);
    await waitDs(
      ns,
      'pd',
      'the pod in PreparingDelete',
      async () => (await pods(ns, 'pd'))[0]?.metadata!.labels![STATE] === 'PreparingDelete',
    );
    const [preparing] = await pods(ns, 'pd');
    const heldMs = await expectUnchangedFor(ns, 'pd', preparing!);
    const released = Date.now();
    await kubectl(['label', 'pod', '-n', ns, before!.metadata!.name!, 'example.io/drain-']);
    await waitDs(ns, 'pd', 'the replacement running at the new image', async () => {
      const ps = await pods(ns, 'pd');
      return ps.length === 1 && ps[0]!.metadata!.uid !== before!.metadata!.uid && condition(ps[0]!, 'Ready') === 'True';
    });
    const replacedMs = Date.now() - released;
    expect((await pods(ns, 'pd'))[0]!.spec!.containers[0]!.image).toBe(node().images.busybox2);
    console.log(`[daemonset] preDelete held ${heldMs} ms; replacement ready ${replacedMs} ms after the release`);
  });

  it('preNormal (beyond upstream): the new pod stays PreparingNormal and unavailable until its hook finalizer is on', async () => {
    const ns = await namespace('ads-prenormal');
    const finalizer = 'example.io/unready-blocker';
    await apply(ns, daemonSet('pn', { lifecycle: { preNormal: { finalizersHandler: [finalizer] } } }));
    await waitDs(ns, 'pn', 'the daemon pod ready', async () => (await advancedDaemonSetStatus(ns, 'pn')).numberReady === 1);
    const [pod] = await pods(ns, 'pn');
    expect(pod!.metadata!.labels![STATE]).toBe('PreparingNormal');
    const heldMs = await expectUnchangedFor(ns, 'pn', pod!);
    expect(await advancedDaemonSetStatus(ns, 'pn')).toMatchObject({ numberReady: 1, numberAvailable: 0, numberUnavailable: 1 });
    const released = Date.now();
    await patchPod(ns, pod!.metadata!.name!, { metadata: { finalizers: [finalizer] } });
    await waitDs(ns, 'pn', 'the pod Normal and available', async () => {
      const [p] = await pods(ns, 'pn');
      return p?.metadata!.labels![STATE] === 'Normal' && (await advancedDaemonSetStatus(ns, 'pn')).numberAvailable === 1;
    });
    console.log(`[daemonset] preNormal held ${heldMs} ms; available ${Date.now() - released} ms after the finalizer`);
    // The namespace can go once the user's finalizer is off.
    await patchPod(ns, pod!.metadata!.name!, { metadata: { finalizers: null } });
  });

  it('inPlaceUpdate hook (beyond upstream): PreparingUpdate until released, then updated in place, Updated until the hook is back, then Normal', async () => {
    const ns = await namespace('ads-ipu-hook');
    const hook = { 'example.io/ipu': 'ok' };
    await apply(
      ns,
      daemonSet(
        'ih',
        {
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 1 } },
          lifecycle: { inPlaceUpdate: { labelsHandler: hook } },
        },
        hook,
      ),
    );
    await waitDs(ns, 'ih', 'the daemon pod available', async () => (await advancedDaemonSetStatus(ns, 'ih')).numberAvailable === 1);
    const [before] = await pods(ns, 'ih');
    await setAdvancedDaemonSetImage(ns, 'ih', node().images.busybox2);
    await waitDs(
      ns,
      'ih',
      'the pod in PreparingUpdate',
      async () => (await pods(ns, 'ih'))[0]?.metadata!.labels![STATE] === 'PreparingUpdate',
    );
    const [preparing] = await pods(ns, 'ih');
    const heldMs = await expectUnchangedFor(ns, 'ih', preparing!);
    expect(preparing!.spec!.containers[0]!.image).toBe(node().images.busybox);
    const released = Date.now();
    await kubectl(['label', 'pod', '-n', ns, before!.metadata!.name!, 'example.io/ipu-']);
    await waitDs(ns, 'ih', 'the pod updated in place and Updated', async () => {
      const [p] = await pods(ns, 'ih');
      return (
        p?.metadata!.labels![STATE] === 'Updated' &&
        containerStatus(p, 'agent').restartCount === 1 &&
        condition(p, 'InPlaceUpdateReady') === 'True'
      );
    });
    const updatedMs = Date.now() - released;
    // The hook operator registers the pod again: it becomes Normal and available.
    await kubectl(['label', 'pod', '-n', ns, before!.metadata!.name!, 'example.io/ipu=ok']);
    await waitDs(ns, 'ih', 'the pod Normal and available', async () => {
      const [p] = await pods(ns, 'ih');
      return p?.metadata!.labels![STATE] === 'Normal' && (await advancedDaemonSetStatus(ns, 'ih')).numberAvailable === 1;
    });
    const [after] = await pods(ns, 'ih');
    expect(after!.metadata!.uid).toBe(before!.metadata!.uid);
    expect(after!.spec!.containers[0]!.image).toBe(node().images.busybox2);
    expect(containerStatus(after!, 'side').containerID).toBe(containerStatus(before!, 'side').containerID);
    console.log(`[daemonset] inPlaceUpdate hook held ${heldMs} ms; updated in place ${updatedMs} ms after the release`);
  });
});

// CloneSet on the real node with the runtime installed from dist/ and its image: the kubelet runs the
// containers, restarts them on an in-place image change and decides readiness from the readiness gates
// the controller manages; the scheduler binds pods; kube-controller-manager's garbage collector and
// PV binder act on what the CloneSet controller writes. The test only edits objects and reads state.
import { mkdtempSync, readFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import type { V1Pod } from '@kubernetes/client-node';
import { kubectl } from '../harness/index.js';
import { apply, containerLog, core, getJson, installRuntime, namespace, node, waitFor } from './support.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const STATE = 'lifecycle.apps.kruise.io/state';
const SLEEPER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];

async function cs(ns: string, name: string): Promise<any> {
  return getJson(['get', 'clonesets.apps.kruise.io', '-n', ns, name]);
}

async function pods(ns: string, app: string, includeDeleting = false): Promise<V1Pod[]> {
  const list = await core().listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` });
  return list.items.filter((p) => includeDeleting || !p.metadata!.deletionTimestamp);
}

async function patchPod(ns: string, name: string, patch: object): Promise<void> {
  await kubectl(['patch', 'pod', '-n', ns, name, '--type', 'merge', '-p', JSON.stringify(patch)]);
}

async function waitStatus(ns: string, name: string, what: string, pred: (s: any) => boolean, timeoutMs = 120_000): Promise<any> {
  let last: any;
  try {
    await waitFor(`${ns}/${name}: ${what}`, async () => pred((last = (await cs(ns, name)).status ?? {})), timeoutMs, 500);
  } catch (error) {
    const ps = await pods(ns, name, true).catch(() => []);
    const lines = ps.map(
      (p) =>
        `${p.metadata!.name} ${p.metadata!.labels?.[STATE]} ${p.metadata!.labels?.['controller-revision-hash']} ${p.metadata!.deletionTimestamp ? 'deleting ' : ''}${p.status?.phase} ${JSON.stringify(p.status?.conditions?.map((c) => `${c.type}=${c.status}`))}`,
    );
    // The controller's log says why it did not get there (read from the kubelet's log files: the
    // apiserver of this cluster cannot reach the kubelet, so `kubectl logs` fails here).
    const managers = await core()
      .listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=controller-manager' })
      .then((l) => l.items)
      .catch(() => [] as V1Pod[]);
    const logs = managers.flatMap((m) => containerLog(m, 'manager').map((l) => `${m.metadata!.name} ${l.line}`)).join('\n');
    const obj = await cs(ns, name).catch(() => undefined);
    const tail = logs
      .split('\n')
      .filter((l) => l.includes('cloneset') || l.includes('leader'))
      .slice(-60);
    console.log(`[cloneset] ${ns}/${name} generation ${obj?.metadata?.generation}; controller log:\n${tail.join('\n')}`);
    throw new Error(`${(error as Error).message}\nstatus: ${JSON.stringify(last)}\npods:\n${lines.join('\n')}`, { cause: error });
  }
  return last;
}

function condition(p: V1Pod, type: string): string | undefined {
  return p.status?.conditions?.find((c) => c.type === type)?.status;
}

/** The seed CloneSet `name` from dist/, its container swapped for the node's offline busybox (no internet here). */
function seedCloneSet(file: string, name: string, app: string): Record<string, any> {
  const docs = YAML.parseAllDocuments(readFileSync(path.join(repoRoot, 'dist', file), 'utf8')).map((d) => d.toJS() as Record<string, any>);
  const obj = structuredClone(docs.find((d) => d?.kind === 'CloneSet' && d.metadata.name === name)!);
  // A plain selector label the test can query by; the seed's own selector label stays too.
  obj.spec.selector.matchLabels.app = app;
  obj.spec.template.metadata.labels.app = app;
  const c = obj.spec.template.spec.containers[0];
  Object.assign(c, {
    image: node().images.busybox,
    imagePullPolicy: 'IfNotPresent',
    command: SLEEPER,
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
    securityContext: { runAsUser: 65534, runAsGroup: 65534, runAsNonRoot: true, allowPrivilegeEscalation: false },
  });
  delete c.startupProbe;
  delete c.ports;
  obj.spec.template.spec.terminationGracePeriodSeconds = 2;
  return obj;
}

function plainCloneSet(name: string, replicas: number, spec: Record<string, unknown> = {}): Record<string, any> {
  const container = (n: string) => ({
    name: n,
    image: node().images.busybox,
    imagePullPolicy: 'IfNotPresent',
    command: SLEEPER,
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
    securityContext: { runAsUser: 65534, runAsGroup: 65534 },
  });
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { terminationGracePeriodSeconds: 2, containers: [container('main'), container('side')] },
      },
      ...spec,
    },
  };
}

beforeAll(async () => {
  await installRuntime();
}, 900_000);

describe('CloneSet on the real node (runtime from dist/ and its image)', () => {
  it('seed preNormal finalizer: pods stay PreparingNormal and unavailable until the hook finalizer is on, then Normal', async () => {
    const ns = await namespace('cs-prenormal');
    await apply(ns, [seedCloneSet('20-app-cloneset-prenormal.yaml', 'web-prenormal-finalizer', 'pn')]);
    const st = await waitStatus(ns, 'web-prenormal-finalizer', '3 ready, none available', (s) => s.readyReplicas === 3);
    expect(st.availableReplicas).toBe(0);
    const ps = await pods(ns, 'pn');
    expect(ps.map((p) => p.metadata!.labels![STATE])).toEqual(['PreparingNormal', 'PreparingNormal', 'PreparingNormal']);
    for (const p of ps) expect(condition(p, 'Ready')).toBe('True');
    // The user's hook operator registers each pod by adding the finalizer: then it becomes Normal.
    for (const p of ps) await patchPod(ns, p.metadata!.name!, { metadata: { finalizers: ['example.io/unready-blocker'] } });
    await waitStatus(ns, 'web-prenormal-finalizer', '3 available', (s) => s.availableReplicas === 3);
    expect((await pods(ns, 'pn')).every((p) => p.metadata!.labels![STATE] === 'Normal')).toBe(true);
    // Clean up the finalizers so the namespace can go.
    for (const p of await pods(ns, 'pn')) await patchPod(ns, p.metadata!.name!, { metadata: { finalizers: null } });
  });

  it('seed preNormal label: the same with the hook label', async () => {
    const ns = await namespace('cs-prenormal-label');
    await apply(ns, [seedCloneSet('20-app-cloneset-prenormal.yaml', 'web-prenormal-label', 'pl')]);
    await waitStatus(ns, 'web-prenormal-label', '3 ready', (s) => s.readyReplicas === 3 && s.availableReplicas === 0);
    const [first] = await pods(ns, 'pl');
    await patchPod(ns, first!.metadata!.name!, { metadata: { labels: { 'example.io/block-unready': 'true' } } });
    await waitStatus(ns, 'web-prenormal-label', 'exactly the labelled pod available', (s) => s.availableReplicas === 1);
    const states = Object.fromEntries((await pods(ns, 'pl')).map((p) => [p.metadata!.name, p.metadata!.labels![STATE]]));
    expect(states[first!.metadata!.name!]).toBe('Normal');
    expect(Object.values(states).filter((s) => s === 'PreparingNormal')).toHaveLength(2);
  });

  it('scale 0 → 5 → 2 with a preDelete hook: victims wait in PreparingDelete until released; kubectl scale works', async () => {
    const ns = await namespace('cs-scale');
    await apply(ns, [plainCloneSet('sc', 0, { lifecycle: { preDelete: { labelsHandler: { 'example.io/drain': 'pending' } } } })]);
    await waitStatus(ns, 'sc', 'observed with 0 replicas', (s) => s.observedGeneration === 1 && s.replicas === 0);
    await kubectl(['scale', '-n', ns, 'clonesets.apps.kruise.io/sc', '--replicas=5']);
    await waitStatus(ns, 'sc', '5 available', (s) => s.availableReplicas === 5);
    for (const p of await pods(ns, 'sc'))
      await patchPod(ns, p.metadata!.name!, { metadata: { labels: { 'example.io/drain': 'pending' } } });
    await kubectl(['scale', '-n', ns, 'clonesets.apps.kruise.io/sc', '--replicas=2']);
    await waitFor(
      '3 pods in PreparingDelete',
      async () => (await pods(ns, 'sc')).filter((p) => p.metadata!.labels![STATE] === 'PreparingDelete').length === 3,
      60_000,
      300,
    );
    await new Promise((r) => setTimeout(r, 2000));
    const held = (await pods(ns, 'sc')).filter((p) => p.metadata!.labels![STATE] === 'PreparingDelete');
    expect(held).toHaveLength(3);
    expect(held.every((p) => p.status?.phase === 'Running')).toBe(true);
    const st = (await cs(ns, 'sc')).status;
    expect(st).toMatchObject({ replicas: 5, availableReplicas: 2 });
    // The hook operator releases the pods one by one; each goes as soon as it is released.
    for (const p of held) await patchPod(ns, p.metadata!.name!, { metadata: { labels: { 'example.io/drain': null } } });
    await waitStatus(ns, 'sc', '2 replicas left', (s) => s.replicas === 2 && s.availableReplicas === 2);
    await waitFor('victims gone', async () => (await pods(ns, 'sc', true)).length === 2, 60_000, 300);
    const left = (await pods(ns, 'sc')).map((p) => p.metadata!.name);
    for (const p of held) expect(left).not.toContain(p.metadata!.name);
  });

  it('in-place image update, partition 2 of 5, maxUnavailable 1: same UID and IP, only the changed container restarts, through InPlaceUpdateReady; an inPlaceUpdate hook holds it', async () => {
    const ns = await namespace('cs-inplace');
    const hook = { labelsHandler: { 'example.io/ipu': 'ok' } };
    await apply(ns, [
      plainCloneSet('ip', 5, {
        updateStrategy: { type: 'InPlaceIfPossible', partition: 2, maxUnavailable: 1 },
        lifecycle: { inPlaceUpdate: hook },
      }),
    ]);
    await waitStatus(ns, 'ip', '5 available', (s) => s.availableReplicas === 5);
    const before = new Map((await pods(ns, 'ip')).map((p) => [p.metadata!.name!, p]));
    // Every pod carries the hook label: the update must wait for its release.
    for (const name of before.keys()) await patchPod(ns, name, { metadata: { labels: { 'example.io/ipu': 'ok' } } });
    const obj = plainCloneSet('ip', 5, {
      updateStrategy: { type: 'InPlaceIfPossible', partition: 2, maxUnavailable: 1 },
      lifecycle: { inPlaceUpdate: hook },
    });
    obj.spec.template.spec.containers[0].image = node().images.busybox2;
    await apply(ns, [obj]);
    const prep = await waitFor(
      'one pod held in PreparingUpdate',
      async () => (await pods(ns, 'ip')).filter((p) => p.metadata!.labels![STATE] === 'PreparingUpdate').length === 1,
      60_000,
      300,
    ).then(async () => (await pods(ns, 'ip')).find((p) => p.metadata!.labels![STATE] === 'PreparingUpdate')!);
    await new Promise((r) => setTimeout(r, 2000));
    const stillHeld = await core().readNamespacedPod({ name: prep.metadata!.name!, namespace: ns });
    expect(stillHeld.metadata!.labels![STATE]).toBe('PreparingUpdate');
    expect(stillHeld.spec!.containers[0]!.image).toBe(node().images.busybox);
    // The hook operator: releases a pod held in PreparingUpdate, and registers it again (hook label back)
    // once it is Updated, which is what lets it become Normal (and available) again.
    let sawNotReady = false;
    let st: any;
    await waitFor(
      '3 pods updated in place, all 5 available',
      async () => {
        for (const p of await pods(ns, 'ip')) {
          const state = p.metadata!.labels![STATE];
          if (condition(p, 'InPlaceUpdateReady') === 'False' && condition(p, 'Ready') === 'False') sawNotReady = true;
          if (state === 'PreparingUpdate' && p.metadata!.labels!['example.io/ipu']) {
            await patchPod(ns, p.metadata!.name!, { metadata: { labels: { 'example.io/ipu': null } } });
          }
          if (state === 'Updated') await patchPod(ns, p.metadata!.name!, { metadata: { labels: { 'example.io/ipu': 'ok' } } });
        }
        st = (await cs(ns, 'ip')).status;
        return st?.updatedReplicas === 3 && st.updatedReadyReplicas === 3 && st.availableReplicas === 5;
      },
      240_000,
      150,
    );
    expect(sawNotReady, 'an updating pod was seen NotReady with InPlaceUpdateReady=False').toBe(true);
    const after = await pods(ns, 'ip');
    expect(after).toHaveLength(5);
    const updated = after.filter((p) => p.spec!.containers[0]!.image === node().images.busybox2);
    expect(updated).toHaveLength(3);
    for (const p of after) {
      const b = before.get(p.metadata!.name!)!;
      expect(p.metadata!.uid).toBe(b.metadata!.uid);
      expect(p.status!.podIP).toBe(b.status!.podIP);
    }
    for (const p of updated) {
      const b = before.get(p.metadata!.name!)!;
      const main = p.status!.containerStatuses!.find((c) => c.name === 'main')!;
      const side = p.status!.containerStatuses!.find((c) => c.name === 'side')!;
      const sideBefore = b.status!.containerStatuses!.find((c) => c.name === 'side')!;
      expect(main.restartCount).toBe(1);
      expect(side.restartCount).toBe(0);
      expect(side.containerID).toBe(sideBefore.containerID);
      expect(condition(p, 'InPlaceUpdateReady')).toBe('True');
      const state = JSON.parse(p.metadata!.annotations!['apps.kruise.io/inplace-update-state']!);
      expect(state.revision).toBe(st.updateRevision);
      expect(p.metadata!.labels![STATE]).toBe('Normal');
    }
    // The two pods under the partition were never touched.
    expect(
      after.filter((p) => p.spec!.containers[0]!.image === node().images.busybox).every((p) => p.metadata!.labels![STATE] === 'Normal'),
    ).toBe(true);
  });

  it('ReCreate update replaces every pod; a rollback to the previous revision recreates them again', async () => {
    const ns = await namespace('cs-recreate');
    const spec = { updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } };
    await apply(ns, [plainCloneSet('rc', 3, spec)]);
    const first = await waitStatus(ns, 'rc', '3 available', (s) => s.availableReplicas === 3);
    const uids = new Set((await pods(ns, 'rc')).map((p) => p.metadata!.uid));
    const v2 = plainCloneSet('rc', 3, spec);
    v2.spec.template.spec.containers[1].env = [{ name: 'VERSION', value: '2' }];
    await apply(ns, [v2]);
    const second = await waitStatus(
      ns,
      'rc',
      'recreated at revision 2',
      (s) => s.updateRevision !== first.updateRevision && s.updatedReplicas === 3 && s.availableReplicas === 3 && s.replicas === 3,
      150_000,
    );
    const now = await pods(ns, 'rc');
    expect(now).toHaveLength(3);
    expect(now.every((p) => !uids.has(p.metadata!.uid))).toBe(true);
    expect(second.currentRevision).toBe(second.updateRevision);
    const secondUids = new Set(now.map((p) => p.metadata!.uid));
    await apply(ns, [plainCloneSet('rc', 3, spec)]);
    const third = await waitStatus(
      ns,
      'rc',
      'rolled back to revision 1',
      (s) => s.updateRevision === first.updateRevision && s.updatedReplicas === 3 && s.availableReplicas === 3 && s.replicas === 3,
      150_000,
    );
    expect(third.currentRevision).toBe(first.updateRevision);
    expect(third.observedGeneration).toBe((await cs(ns, 'rc')).metadata.generation);
    const rolled = await pods(ns, 'rc');
    expect(rolled).toHaveLength(3);
    expect(rolled.every((p) => !secondUids.has(p.metadata!.uid) && !p.spec!.containers[1]!.env)).toBe(true);
  }, 400_000);

  it('leader change in the middle of a ReCreate rollout: the rollout completes with no duplicate pods', async () => {
    const ns = await namespace('cs-leader');
    const spec = { updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } };
    await apply(ns, [plainCloneSet('lc', 4, spec)]);
    const first = await waitStatus(ns, 'lc', '4 available', (s) => s.availableReplicas === 4);
    const v2 = plainCloneSet('lc', 4, spec);
    v2.spec.template.spec.containers[1].env = [{ name: 'VERSION', value: '2' }];
    await apply(ns, [v2]);
    await waitStatus(ns, 'lc', 'rollout under way', (s) => s.updatedReplicas >= 1, 60_000);
    const leaseHolder = async () =>
      ((await getJson(['get', 'lease', '-n', 'kruise-system', 'kruise-manager'])).spec?.holderIdentity as string) ?? '';
    const leader = (await leaseHolder()).split('_')[0]!;
    await kubectl(['delete', 'pod', '-n', 'kruise-system', leader, '--wait=false']);
    const done = await waitStatus(
      ns,
      'lc',
      'recreated at revision 2 across the leader change',
      (s) => s.updateRevision !== first.updateRevision && s.updatedReplicas === 4 && s.availableReplicas === 4 && s.replicas === 4,
      150_000,
    );
    expect((await leaseHolder()).split('_')[0]).not.toBe(leader);
    const now = await pods(ns, 'lc');
    expect(now).toHaveLength(4);
    expect(new Set(now.map((p) => p.metadata!.labels!['apps.kruise.io/cloneset-instance-id'])).size).toBe(4);
    expect(done.currentRevision).toBe(done.updateRevision);
  }, 300_000);

  it("seed disablePVCReuse: a deleted pod's replacement gets a fresh PVC; the old one goes with the old pod", async () => {
    const ns = await namespace('cs-pvc');
    // No provisioner on this node: static hostPath PersistentVolumes the PV binder hands out.
    const dir = mkdtempSync(path.join(tmpdir(), 'cs-pv-'));
    chmodSync(dir, 0o777);
    const pvs = Array.from({ length: 4 }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `${ns}-pv${i}` },
      spec: {
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: '',
        hostPath: { path: path.join(dir, String(i)), type: 'DirectoryOrCreate' },
      },
    }));
    await kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: pvs }) });
    const seed = seedCloneSet('20-app-cloneset-pvc.yaml', 'cache', 'cache');
    seed.spec.replicas = 2;
    seed.spec.volumeClaimTemplates[0].spec.storageClassName = '';
    await apply(ns, [seed]);
    await waitStatus(ns, 'cache', '2 available', (s) => s.availableReplicas === 2, 180_000);
    const initial = await pods(ns, 'cache');
    const victim = initial[0];
    const oldClaim = `data-${victim!.metadata!.name}`;
    await kubectl(['delete', 'pod', '-n', ns, victim!.metadata!.name!, '--wait=false']);
    await waitFor(
      'a replacement pod',
      async () => (await pods(ns, 'cache')).filter((p) => p.metadata!.name !== victim!.metadata!.name).length === 2,
      120_000,
      500,
    );
    await waitStatus(ns, 'cache', '2 available again', (s) => s.availableReplicas === 2, 180_000);
    const now = await pods(ns, 'cache');
    const fresh = now.find((p) => !initial.some((i) => i.metadata!.name === p.metadata!.name));
    expect(now.map((p) => p.metadata!.name)).not.toContain(victim!.metadata!.name);
    const claims = now.flatMap((p) =>
      p.spec!.volumes!.filter((v) => v.persistentVolumeClaim).map((v) => v.persistentVolumeClaim!.claimName),
    );
    expect(claims).not.toContain(oldClaim);
    expect(fresh).toBeDefined();
    expect(claims).toContain(`data-${fresh!.metadata!.name}`);
    // The old claim was deleted (or handed to the dead pod and collected with it).
    await waitFor(
      `${oldClaim} gone`,
      async () => {
        const c = await core()
          .readNamespacedPersistentVolumeClaim({ name: oldClaim, namespace: ns })
          .catch(() => undefined);
        return !c || !!c.metadata!.deletionTimestamp;
      },
      120_000,
      500,
    );
  });
});

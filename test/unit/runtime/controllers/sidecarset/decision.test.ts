// SidecarSet controller decision (pure): status counts, in-place image upgrade under maxUnavailable,
// partition, paused, NotUpdate, selector and priority, pods that cannot be upgraded and the stuck condition.
import { describe, expect, it } from 'vitest';
import type { SidecarSet } from '../../../../../src/api/kinds/sidecarset.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import {
  decide,
  hotUpgradeTarget,
  partitionOf,
  patchedAnnotations,
  PodFactsBySet,
  scaled,
  sidecarsConsistent,
  upgradableCondition,
} from '../../../../../src/runtime/controllers/sidecarset/decision.js';
import { sidecarSetHash } from '../../../../../src/runtime/control/sidecarset-pod.js';
import { injectSidecarSets } from '../../../../../src/runtime/webhooks/sidecarset/decision.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');

function set(image: string, strategy: SidecarSet['spec']['updateStrategy'] = {}, extra: Partial<SidecarSet['spec']> = {}): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'logtail', generation: 2 },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'logtail', image, ...extra.containers?.[0] }],
      updateStrategy: strategy,
    },
  };
}

/** A pod injected with `injectedWith`, running (status images as the kubelet reports them), ready or not. */
function pod(name: string, injectedWith: SidecarSet, opts: { ready?: boolean; labels?: Record<string, string>; at?: string } = {}): Pod {
  const p: Pod = {
    metadata: { name, namespace: 'ns', resourceVersion: '7', labels: { app: 'web', ...opts.labels } },
    spec: { containers: [{ name: 'app', image: 'nginx' }] },
  };
  injectSidecarSets({
    pod: p,
    namespace: 'ns',
    namespaceLabels: {},
    sidecarSets: [injectedWith],
    now: opts.at ?? '2026-01-01T00:00:00Z',
    metadataKeyAllowed: () => true,
  });
  p.status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    containerStatuses: p.spec!.containers.map((c) => ({
      name: c.name,
      image: `docker.io/library/${c.image}`,
      imageID: `sha256:${c.image}`,
      ready: opts.ready !== false,
    })),
  };
  return p;
}

const v1 = set('logtail:1');
const names = (ps: readonly { pod: Pod }[]) => ps.map((u) => u.pod.metadata.name);

describe('SidecarSet controller decision', () => {
  it('counts matched, updated, ready and updatedReady pods', () => {
    const pods = [pod('a', v1), pod('b', v1, { ready: false }), pod('c', set('logtail:0'))];
    expect(decide({ set: v1, pods, nowMs: NOW }).status).toEqual({ matchedPods: 3, updatedPods: 2, readyPods: 2, updatedReadyPods: 1 });
  });

  it('ignores pods not injected by the set, finished or deleting', () => {
    const plain: Pod = { metadata: { name: 'x', namespace: 'ns', labels: { app: 'web' } }, spec: { containers: [{ name: 'app' }] } };
    const done = pod('d', v1);
    done.status!.phase = 'Succeeded';
    expect(decide({ set: v1, pods: [plain, done], nowMs: NOW }).status.matchedPods).toBe(0);
  });

  it('upgrades one ready pod at a time with maxUnavailable 1, only the image, recording the old imageID', () => {
    const v2 = set('logtail:2', { maxUnavailable: 1 });
    const pods = ['a', 'b', 'c', 'd'].map((n) => pod(n, v1));
    const d = decide({ set: v2, pods, nowMs: NOW, revision: 'logtail-abc' });
    expect(names(d.upgrades)).toEqual(['a']);
    const u = d.upgrades[0]!;
    expect(u.images).toEqual({ logtail: 'logtail:2' });
    expect(JSON.parse(u.annotations['kruise.io/sidecarset-hash']!).logtail).toMatchObject({
      controllerRevision: 'logtail-abc',
      sidecarList: ['logtail'],
    });
    expect(JSON.parse(u.annotations['kruise.io/sidecarset-inplace-update-state']!).logtail.lastContainerStatuses).toEqual({
      logtail: { imageID: 'sha256:logtail:1' },
    });
  });

  it('waits while an upgraded pod restarts its sidecar (not consistent) and proceeds once it runs the new image', () => {
    const v2 = set('logtail:2');
    const a = pod('a', v1);
    const first = decide({ set: v2, pods: [a, pod('b', v1)], nowMs: NOW }).upgrades[0]!;
    // The patch as the API server applies it; the kubelet has not restarted the container yet.
    a.metadata.annotations = { ...a.metadata.annotations, ...first.annotations };
    a.spec!.containers[0]!.image = 'logtail:2';
    expect(sidecarsConsistent(v2, a)).toBe(false);
    expect(decide({ set: v2, pods: [a, pod('b', v1)], nowMs: NOW }).upgrades).toEqual([]);
    a.status!.containerStatuses![0] = { name: 'logtail', image: 'docker.io/library/logtail:2', imageID: 'sha256:logtail:2', ready: true };
    expect(sidecarsConsistent(v2, a)).toBe(true);
    expect(names(decide({ set: v2, pods: [a, pod('b', v1)], nowMs: NOW }).upgrades)).toEqual(['b']);
  });

  it('a pod whose new sidecar image cannot be pulled is updated, not ready, and upgraded again by the next version', () => {
    const bad = set('invalid.example/logtail:1');
    const pods = [pod('a', v1), pod('b', v1)];
    const first = decide({ set: bad, pods, nowMs: NOW });
    expect(names(first.upgrades)).toEqual(['a']);
    // The kubelet killed the old container and cannot pull the new image: it keeps reporting the old image and
    // imageID, the container waits (not ready), and so does the pod.
    const a: Pod = JSON.parse(JSON.stringify(pods[0]));
    Object.assign(a.metadata.annotations!, first.upgrades[0]!.annotations);
    a.spec!.containers.find((c) => c.name === 'logtail')!.image = 'invalid.example/logtail:1';
    a.status!.containerStatuses!.find((c) => c.name === 'logtail')!.ready = false;
    a.status!.conditions = [{ type: 'Ready', status: 'False' }];
    const stalled = decide({ set: bad, pods: [a, pods[1]!], nowMs: NOW });
    expect(stalled.status).toEqual({ matchedPods: 2, updatedPods: 1, readyPods: 1, updatedReadyPods: 0 });
    // maxUnavailable 1 is taken by `a`: `b` keeps its old sidecar.
    expect(stalled.upgrades).toEqual([]);
    // The next version reaches `a` too (its sidecar is not ready, so no restart is in flight), and `b` as well:
    // no pod of the new version is unavailable yet.
    const fixed = decide({ set: set('logtail:3'), pods: [a, pods[1]!], nowMs: NOW });
    expect(names(fixed.upgrades)).toEqual(['a', 'b']);
    expect(fixed.upgrades[0]!.images).toEqual({ logtail: 'logtail:3' });
  });

  it('a sidecar still ready on its old image after an upgrade holds the next one back (the kubelet restarts it)', () => {
    const a = pod('a', v1);
    const first = decide({ set: set('logtail:2'), pods: [a], nowMs: NOW }).upgrades[0]!;
    Object.assign(a.metadata.annotations!, first.annotations);
    a.spec!.containers.find((c) => c.name === 'logtail')!.image = 'logtail:2';
    expect(decide({ set: set('logtail:3'), pods: [a], nowMs: NOW }).upgrades).toEqual([]);
    a.status!.containerStatuses!.find((c) => c.name === 'logtail')!.ready = false;
    expect(names(decide({ set: set('logtail:3'), pods: [a], nowMs: NOW }).upgrades)).toEqual(['a']);
  });

  it.each([
    ['maxUnavailable 2', { maxUnavailable: 2 }, ['a', 'b']],
    ['maxUnavailable 50%', { maxUnavailable: '50%' }, ['a', 'b']],
    ['partition 3 of 4', { maxUnavailable: 4, partition: 3 }, ['a']],
    ['partition 50%', { maxUnavailable: 4, partition: '50%' }, ['a', 'b']],
    ['paused', { paused: true }, []],
    ['NotUpdate', { type: 'NotUpdate' as const }, []],
    ['selector', { maxUnavailable: 4, selector: { matchLabels: { canary: 'true' } } }, ['c']],
    [
      'weight priority',
      { priorityStrategy: { weightPriority: [{ weight: 10, matchSelector: { matchLabels: { canary: 'true' } } }] } },
      ['c'],
    ],
  ])('%s', (_n, strategy, want) => {
    const pods = ['a', 'b', 'c', 'd'].map((n) => pod(n, v1, n === 'c' ? { labels: { canary: 'true' } } : {}));
    expect(names(decide({ set: set('logtail:2', strategy), pods, nowMs: NOW }).upgrades)).toEqual(want);
  });

  it('takes not-ready pods regardless of maxUnavailable (they are unavailable already)', () => {
    const pods = [pod('a', v1), pod('b', v1, { ready: false }), pod('c', v1, { ready: false })];
    expect(names(decide({ set: set('logtail:2'), pods, nowMs: NOW }).upgrades)).toEqual(['b', 'c', 'a']);
  });

  it('refuses pods whose sidecars changed in more than the image, and says so in a stuck condition', () => {
    const changed = set('logtail:2', {}, { containers: [{ name: 'logtail', image: 'logtail:2', args: ['--verbose'] }] });
    const d = decide({ set: changed, pods: [pod('a', v1), pod('b', v1)], nowMs: NOW });
    expect(d.upgrades).toEqual([]);
    expect(d.notUpgradable.map((p) => p.metadata.name)).toEqual(['a', 'b']);
    expect(d.stuck).toEqual({
      reason: 'NotUpgradablePods',
      message: expect.stringMatching(/2 of 2 matched pods cannot be upgraded in place.*ns\/a, ns\/b/),
    });
  });

  it('reports a rollout stuck on an upgraded pod that stays unavailable for minutes (upstream stalls silently)', () => {
    const v2 = set('logtail:2');
    const stuckPod = pod('a', v2, { ready: false, at: '2026-01-01T00:00:00Z' });
    const d = decide({ set: v2, pods: [stuckPod, pod('b', v1)], nowMs: NOW });
    expect(d.upgrades).toEqual([]);
    expect(d.stuck).toEqual({ reason: 'UnavailablePods', message: expect.stringMatching(/1 upgraded pods are unavailable.*ns\/a/) });
    // A fresh upgrade still restarting is normal progress, not stuck.
    const fresh = pod('a', v2, { ready: false, at: '2026-01-01T00:59:30Z' });
    expect(decide({ set: v2, pods: [fresh, pod('b', v1)], nowMs: NOW }).stuck).toBeUndefined();
  });

  it('scales percentages and partitions as upstream', () => {
    expect(scaled('25%', 10, true, 1)).toBe(3);
    expect(scaled(undefined, 10, true, 1)).toBe(1);
    expect(partitionOf('99%', 4)).toBe(3);
    expect(partitionOf('100%', 4)).toBe(4);
    expect(partitionOf(9, 4)).toBe(4);
  });
});

describe('pod facts kept between decisions', () => {
  it('gives the decisions a fresh computation gives, and recomputes a pod once its cached object is replaced', () => {
    const facts = new PodFactsBySet();
    const a = pod('a', v1, { ready: false });
    const pods = [a, pod('b', v1), pod('c', set('logtail:0'))];
    const memo = facts.for('logtail', sidecarSetHash(v1));
    const fresh = decide({ set: v1, pods, nowMs: NOW });
    expect(decide({ set: v1, pods, nowMs: NOW, podFacts: memo })).toEqual(fresh);
    expect(decide({ set: v1, pods, nowMs: NOW, podFacts: memo })).toEqual(fresh);
    // The kubelet reports `a` ready: the cache holds a new object for it.
    const readyA = { ...a, status: pod('a', v1).status };
    const counts = decide({ set: v1, pods: [readyA, ...pods.slice(1)], nowMs: NOW, podFacts: memo }).status;
    expect(counts).toEqual(decide({ set: v1, pods: [readyA, ...pods.slice(1)], nowMs: NOW }).status);
    expect(counts.readyPods).toBe(fresh.status.readyPods + 1);
  });

  it('keeps one memo per set version: a new hash starts a new one', () => {
    const facts = new PodFactsBySet();
    const first = facts.for('logtail', sidecarSetHash(v1));
    expect(facts.for('logtail', sidecarSetHash(v1))).toBe(first);
    expect(facts.for('other', sidecarSetHash(v1))).not.toBe(first);
    const v2 = set('logtail:2');
    const second = facts.for('logtail', sidecarSetHash(v2));
    expect(second).not.toBe(first);
    // Facts of v1 would call every v1 pod updated; under v2 none is.
    const pods = [pod('a', v1), pod('b', v1)];
    decide({ set: v1, pods, nowMs: NOW, podFacts: first });
    expect(decide({ set: v2, pods, nowMs: NOW, podFacts: second }).status.updatedPods).toBe(0);
    facts.forget('logtail');
    expect(facts.for('logtail', sidecarSetHash(v2))).not.toBe(second);
  });
});

describe('SidecarSetUpgradable pod condition (upstream keeps one verdict per set in the message)', () => {
  const T0 = '2026-01-01T00:00:00Z';
  const T1 = '2026-01-01T00:05:00Z';

  it('a first verdict creates the condition; False while any recorded set cannot upgrade, True when all can', () => {
    const notA = upgradableCondition(undefined, 'a', false, T0)!;
    expect(notA).toEqual({
      type: 'SidecarSetUpgradable',
      status: 'False',
      reason: 'UpdateImmutableField',
      message: '{"a":false}',
      lastTransitionTime: T0,
    });
    // Set b upgraded the pod; a still cannot: False, the transition time kept.
    const bOk = upgradableCondition([notA], 'b', true, T1)!;
    expect(bOk).toEqual({ ...notA, message: '{"a":false,"b":true}' });
    // a upgraded it too: True, a new transition time.
    expect(upgradableCondition([bOk], 'a', true, T1)).toEqual({
      type: 'SidecarSetUpgradable',
      status: 'True',
      reason: 'AllSidecarsetUpgradable',
      message: '{"a":true,"b":true}',
      lastTransitionTime: T1,
    });
  });

  it('nothing to write when the verdict is recorded already; keys are sorted as Go writes a map', () => {
    const c = upgradableCondition(undefined, 'z', true, T0)!;
    expect(upgradableCondition([{ type: 'Ready', status: 'True' }, c], 'z', true, T1)).toBeUndefined();
    expect(upgradableCondition([c], 'a', true, T1)!.message).toBe('{"a":true,"z":true}');
  });

  it('a message that is not a JSON object counts as empty (never a crash on an edited pod)', () => {
    for (const message of ['not json', '[1]', 'null', '"x"']) {
      expect(upgradableCondition([{ type: 'SidecarSetUpgradable', status: 'True', message }], 's', false, T0)).toMatchObject({
        status: 'False',
        message: '{"s":false}',
        lastTransitionTime: T0,
      });
    }
  });
});

describe('patchPodMetadata applied again with an in-place upgrade', () => {
  const patched = (patch: NonNullable<SidecarSet['spec']['patchPodMetadata']>, annotations: Record<string, string>) =>
    patchedAnnotations({ ...v1, spec: { ...v1.spec, patchPodMetadata: patch } }, { metadata: { name: 'p', annotations } });

  it('returns only the keys that change: MergePatchJson merges, Overwrite sets, Retain keeps a present value', () => {
    expect(
      patched(
        [
          { patchPolicy: 'MergePatchJson', annotations: { m: '{"logtail":2}' } },
          { patchPolicy: 'Overwrite', annotations: { o: 'new', same: 'v' } },
          { annotations: { r: 'set', absent: 'added' } },
        ],
        { m: '{"logtail":1,"other":1}', o: 'old', same: 'v', r: 'pod' },
      ),
    ).toEqual({ m: '{"logtail":2,"other":1}', o: 'new', absent: 'added' });
  });

  it('a pod value MergePatchJson cannot take is left unchanged', () => {
    expect(patched([{ patchPolicy: 'MergePatchJson', annotations: { m: '{"a":1}' } }], { m: 'not json' })).toEqual({});
  });

  it('an upgrade carries the changed annotations in its patch', () => {
    const withPatch = (n: number): SidecarSet => ({
      ...set(`logtail:${n}`),
      spec: {
        ...set(`logtail:${n}`).spec,
        patchPodMetadata: [{ patchPolicy: 'MergePatchJson', annotations: { key: `{"logtail":${n}}` } }],
      },
    });
    const p = pod('a', withPatch(1));
    expect(p.metadata.annotations!.key).toBe('{"logtail":1}');
    const d = decide({ set: withPatch(2), pods: [p], nowMs: NOW });
    expect(d.upgrades[0]!.annotations.key).toBe('{"logtail":2}');
  });
});

describe('HotUpgrade: the new version starts in the idle container, then the old one goes back to the empty image', () => {
  const hotSet = (image: string, resourceVersion: string): SidecarSet => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'mesh', generation: 1, resourceVersion },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'envoy', image, upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } }],
    },
  });
  /** Applies a PodUpgrade as the API server would, then plays the kubelet: every container runs its spec image. */
  const apply = (p: Pod, u: { images: Readonly<Record<string, string>>; annotations: Readonly<Record<string, string>> }): Pod => {
    const next: Pod = JSON.parse(JSON.stringify(p));
    Object.assign(next.metadata.annotations!, u.annotations);
    for (const c of next.spec!.containers) if (u.images[c.name]) c.image = u.images[c.name];
    next.status!.containerStatuses = next.spec!.containers.map((c) => ({
      name: c.name,
      image: `docker.io/library/${c.image}`,
      imageID: `sha256:${c.image}`,
      ready: true,
    }));
    return next;
  };
  const images = (p: Pod) => Object.fromEntries(p.spec!.containers.map((c) => [c.name, c.image]));
  const annotation = (p: Pod, k: string) => p.metadata.annotations![k];

  it('upgrade, handover, and back again, with the version annotations the containers read', () => {
    const v1 = hotSet('envoy:1', '100');
    let p = pod('a', v1);
    expect(images(p)).toEqual({ 'envoy-1': 'envoy:1', 'envoy-2': 'empty:1', app: 'nginx' });
    expect(decide({ set: v1, pods: [p], nowMs: NOW }).status).toEqual({
      matchedPods: 1,
      updatedPods: 1,
      readyPods: 1,
      updatedReadyPods: 1,
    });

    const v2 = hotSet('envoy:2', '200');
    const d1 = decide({ set: v2, pods: [p], nowMs: NOW });
    expect(d1.upgrades).toHaveLength(1);
    expect(d1.upgrades[0]!.images).toEqual({ 'envoy-2': 'envoy:2' });
    expect(d1.upgrades[0]!.annotations).toMatchObject({
      'kruise.io/sidecarset-working-hotupgrade-container': '{"envoy":"envoy-2"}',
      'version.sidecarset.kruise.io/envoy-2': '200',
      'versionalt.sidecarset.kruise.io/envoy-2': '1',
      'versionalt.sidecarset.kruise.io/envoy-1': '200',
    });
    p = apply(p, d1.upgrades[0]!);

    // Both versions run: not ready for the set until the old one is reset; the handover comes first.
    const d2 = decide({ set: v2, pods: [p], nowMs: NOW });
    expect(d2.status).toEqual({ matchedPods: 1, updatedPods: 1, readyPods: 0, updatedReadyPods: 0 });
    expect(d2.handovers).toHaveLength(1);
    expect(d2.handovers![0]!.images).toEqual({ 'envoy-1': 'empty:1' });
    expect(d2.handovers![0]!.annotations).toMatchObject({
      'version.sidecarset.kruise.io/envoy-1': '0',
      'versionalt.sidecarset.kruise.io/envoy-2': '0',
    });
    p = apply(p, d2.handovers![0]!);
    expect(images(p)).toEqual({ 'envoy-1': 'empty:1', 'envoy-2': 'envoy:2', app: 'nginx' });
    const d3 = decide({ set: v2, pods: [p], nowMs: NOW });
    expect(d3.handovers ?? []).toEqual([]);
    expect(d3.status).toEqual({ matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 });

    // Back to envoy:1: it starts in envoy-1 this time.
    const v3 = hotSet('envoy:1', '300');
    const d4 = decide({ set: v3, pods: [p], nowMs: NOW });
    expect(d4.upgrades[0]!.images).toEqual({ 'envoy-1': 'envoy:1' });
    expect(d4.upgrades[0]!.annotations).toMatchObject({
      'kruise.io/sidecarset-working-hotupgrade-container': '{"envoy":"envoy-1"}',
      'version.sidecarset.kruise.io/envoy-1': '300',
      'versionalt.sidecarset.kruise.io/envoy-1': '200',
      'versionalt.sidecarset.kruise.io/envoy-2': '300',
    });
    p = apply(p, d4.upgrades[0]!);
    p = apply(p, decide({ set: v3, pods: [p], nowMs: NOW }).handovers![0]!);
    expect(images(p)).toEqual({ 'envoy-1': 'envoy:1', 'envoy-2': 'empty:1', app: 'nginx' });
    expect(annotation(p, 'version.sidecarset.kruise.io/envoy-2')).toBe('0');
  });

  it('no handover while the new version is not ready or the kubelet still runs the old image', () => {
    const v1 = hotSet('envoy:1', '100');
    const v2 = hotSet('envoy:2', '200');
    const started = apply(pod('a', v1), decide({ set: v2, pods: [pod('a', v1)], nowMs: NOW }).upgrades[0]!);
    const notReady: Pod = JSON.parse(JSON.stringify(started));
    notReady.status!.containerStatuses!.find((c) => c.name === 'envoy-2')!.ready = false;
    notReady.status!.conditions = [{ type: 'Ready', status: 'False' }];
    expect(decide({ set: v2, pods: [notReady], nowMs: NOW }).handovers ?? []).toEqual([]);
    const stale: Pod = JSON.parse(JSON.stringify(started));
    const st = stale.status!.containerStatuses!.find((c) => c.name === 'envoy-2')!;
    st.image = 'docker.io/library/empty:1';
    st.imageID = 'sha256:empty:1';
    expect(decide({ set: v2, pods: [stale], nowMs: NOW }).handovers ?? []).toEqual([]);
  });

  it('a new version that cannot be pulled leaves the pod not ready; the next version replaces it in the same container', () => {
    const v1 = hotSet('envoy:1', '100');
    const bad = hotSet('invalid.example/envoy:2', '200');
    const p0 = pod('a', v1);
    const d1 = decide({ set: bad, pods: [p0, pod('b', v1)], nowMs: NOW });
    expect(names(d1.upgrades)).toEqual(['a']);
    // envoy-2 was the empty container: the kubelet killed it and cannot pull the new image.
    const a: Pod = JSON.parse(JSON.stringify(p0));
    Object.assign(a.metadata.annotations!, d1.upgrades[0]!.annotations);
    a.spec!.containers.find((c) => c.name === 'envoy-2')!.image = 'invalid.example/envoy:2';
    a.status!.containerStatuses!.find((c) => c.name === 'envoy-2')!.ready = false;
    a.status!.conditions = [{ type: 'Ready', status: 'False' }];
    const stalled = decide({ set: bad, pods: [a, pod('b', v1)], nowMs: NOW });
    expect(stalled.status).toEqual({ matchedPods: 2, updatedPods: 1, readyPods: 1, updatedReadyPods: 0 });
    expect(stalled.handovers ?? []).toEqual([]);
    expect(stalled.upgrades).toEqual([]);
    const v3 = hotSet('envoy:3', '300');
    const d3 = decide({ set: v3, pods: [a, pod('b', v1)], nowMs: NOW });
    expect(names(d3.upgrades)).toEqual(['a', 'b']);
    expect(d3.upgrades[0]!.images).toEqual({ 'envoy-2': 'envoy:3' });
    expect(d3.upgrades[0]!.annotations['kruise.io/sidecarset-working-hotupgrade-container']).toBe('{"envoy":"envoy-2"}');
  });

  it('the container to upgrade: the one on the empty image, else the not-ready one, else the idle one', () => {
    const v1 = hotSet('envoy:1', '100');
    const p = pod('a', v1);
    expect(hotUpgradeTarget('envoy', 'empty:1', p, v1)).toEqual({ target: 'envoy-2', other: 'envoy-1' });
    const both: Pod = JSON.parse(JSON.stringify(p));
    both.spec!.containers.find((c) => c.name === 'envoy-2')!.image = 'envoy:0';
    Object.assign(
      both.status!.containerStatuses!.find((c) => c.name === 'envoy-2')!,
      {
        image: 'docker.io/library/envoy:0',
        imageID: 'sha256:envoy:0',
      },
    );
    both.status!.containerStatuses!.find((c) => c.name === 'envoy-1')!.ready = false;
    expect(hotUpgradeTarget('envoy', 'empty:1', both, v1)).toEqual({ target: 'envoy-1', other: 'envoy-2' });
    both.status!.containerStatuses!.find((c) => c.name === 'envoy-1')!.ready = true;
    expect(hotUpgradeTarget('envoy', 'empty:1', both, v1)).toEqual({ target: 'envoy-2', other: 'envoy-1' });
    // Ready but still reporting another image than its spec (the kubelet has not restarted it): not ready yet.
    const restarting: Pod = JSON.parse(JSON.stringify(both));
    restarting.spec!.containers.find((c) => c.name === 'envoy-1')!.image = 'envoy:5';
    restarting.metadata.annotations!['kruise.io/sidecarset-inplace-update-state'] = JSON.stringify({
      mesh: { lastContainerStatuses: { 'envoy-1': { imageID: 'sha256:envoy:1' } } },
    });
    expect(hotUpgradeTarget('envoy', 'empty:1', restarting, v1)).toEqual({ target: 'envoy-1', other: 'envoy-2' });
  });
});

// Advanced StatefulSet decisions: identities (reserved ordinals, start ordinal, names, the new pod), scale (OrderedReady
// and Parallel, scale-time maxUnavailable, the preDelete hook), the rolling update (order, partition, maxUnavailable,
// in place or recreate) and the status counts.
import { describe, expect, it } from 'vitest';
import {
  isCurrentRevisionNeeded,
  newClaim,
  newStatefulPod,
  partitionPods,
  planClaims,
  replicasRange,
  reservedOrdinals,
  type StatefulSetObject,
} from '../../../../../src/runtime/controllers/advancedstatefulset/identity-decision.js';
import { resolveMaxUnavailable } from '../../../../../src/runtime/controllers/advancedstatefulset/reconcile.js';
import { planScale, type ScaleInput } from '../../../../../src/runtime/controllers/advancedstatefulset/scale-decision.js';
import {
  computeStatus,
  statusChanged,
  volumeClaimCounts,
} from '../../../../../src/runtime/controllers/advancedstatefulset/status-decision.js';
import {
  planUpdate,
  sortForUpdate,
  statefulSetPreDownloadStrategy,
  type UpdateInput,
} from '../../../../../src/runtime/controllers/advancedstatefulset/update-decision.js';
import type { Revision } from '../../../../../src/runtime/control/controller-revision.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import { NEW, NOW, OLD, pod, type PodOpts } from '../../control/workload-pod-fixtures.js';

function set(spec: Record<string, unknown> = {}): StatefulSetObject {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'ns', uid: 'u1' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [] } },
      ...spec,
    },
  } as unknown as StatefulSetObject;
}

const at = (ord: number, o: PodOpts = {}) => pod(`db-${ord}`, o);
const names = (ps: ReadonlyArray<Pod | undefined>) => ps.map((p) => p?.metadata.name ?? null);

describe('identities', () => {
  it.each([
    [[1], [1]],
    [
      [1, '3-5'],
      [1, 3, 4, 5],
    ],
    [['2'], [2]],
    [[], []],
  ])('reserveOrdinals %j → %j', (input, out) => {
    expect([...reservedOrdinals(input as Array<number | string>)].sort()).toEqual(out);
  });
  it.each([[[-1]], [['5-3']], [['x']]])('refuses %j with a message', (input) => {
    expect(() => reservedOrdinals(input as Array<number | string>)).toThrow(/reserveOrdinals/);
  });
  it("upstream's example: 4 replicas, reserve [1, 3], start 2 → [2, 7)", () => {
    expect(replicasRange(set({ replicas: 4, reserveOrdinals: [1, 3], ordinals: { start: 2 } }))).toMatchObject({ start: 2, end: 7 });
    // Without gate StatefulSetStartOrdinal the start ordinal does not count.
    expect(replicasRange(set({ replicas: 4, reserveOrdinals: [1, 3], ordinals: { start: 2 } }), false)).toMatchObject({ start: 0, end: 6 });
  });
  it('3 replicas with reserveOrdinals [1] occupy 0, 2, 3; pod 1 and pod 4 are condemned, highest first', () => {
    const part = partitionPods(set({ reserveOrdinals: [1] }), [at(0), at(1), at(3), at(4), pod('other-0')]);
    expect(names(part.replicas)).toEqual(['db-0', null, null, 'db-3']);
    expect(names(part.condemned)).toEqual(['db-4', 'db-1']);
    expect([...part.reserved]).toEqual([1]);
  });
  it('a new pod: identity, gates, claims as volumes, revision, Normal without a preNormal hook', () => {
    const rev = {
      metadata: { name: 'db-abc' },
      data: { spec: { template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c' }] } } } },
    } as Revision;
    const s = set({
      serviceName: 'db-svc',
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '1Gi' } } } }],
    });
    const p = newStatefulPod(s, 2, rev, '2026-01-01T00:00:00Z');
    expect(p.metadata.name).toBe('db-2');
    expect(p.metadata.labels).toMatchObject({
      app: 'db',
      'controller-revision-hash': 'db-abc',
      'statefulset.kubernetes.io/pod-name': 'db-2',
      'apps.kubernetes.io/pod-index': '2',
      'lifecycle.apps.kruise.io/state': 'Normal',
    });
    expect(p.spec).toMatchObject({ hostname: 'db-2', subdomain: 'db-svc' });
    expect(p.spec!.volumes).toEqual([{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-2' } }]);
    expect(p.metadata.ownerReferences).toEqual([
      expect.objectContaining({ apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', uid: 'u1' }),
    ]);
    const hooked = newStatefulPod(set({ lifecycle: { preNormal: { labelsHandler: { ready: 'yes' } } } }), 0, rev, 'now');
    expect(hooked.metadata.labels!['lifecycle.apps.kruise.io/state']).toBe('PreparingNormal');
  });
  it('claims: the selector labels; owned by the set only under whenDeleted Delete', () => {
    const t = { metadata: { name: 'data', labels: { tier: 'x' } }, spec: {} };
    expect(newClaim(set(), t as never, 0)).toMatchObject({ metadata: { name: 'data-db-0', labels: { tier: 'x', app: 'db' } } });
    expect(newClaim(set(), t as never, 0).metadata.ownerReferences).toBeUndefined();
    const owned = newClaim(set({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' } }), t as never, 0);
    expect(owned.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', uid: 'u1' })]);
  });
  it('partition: a new pod below it gets the current revision (ordered), counted over existing pods only', () => {
    const s = set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } });
    const part = { start: 0, replicas: [at(0), undefined, at(2)] };
    expect(isCurrentRevisionNeeded(s, NEW, 1, part, 'db')).toBe(true);
    expect(isCurrentRevisionNeeded(s, NEW, 3, { start: 0, replicas: [at(0), at(1), at(2), undefined] }, 'db')).toBe(false);
    expect(isCurrentRevisionNeeded(set({ updateStrategy: { type: 'OnDelete' } }), NEW, 0, part, 'db')).toBe(false);
  });
  it.each([
    [undefined, 5, 1],
    [3, 5, 3],
    [0, 5, 1],
    ['50%', 5, 2],
    ['10%', 5, 1],
  ])('maxUnavailable %j of %i replicas → %i', (v, total, out) => {
    expect(resolveMaxUnavailable(v as never, total)).toBe(out);
  });
});

const scale = (o: Partial<ScaleInput>): ScaleInput => ({
  replicas: [],
  start: 0,
  reserved: new Set(),
  condemned: [],
  monotonic: true,
  minReadySeconds: 0,
  nowMs: NOW,
  ...o,
});
const kinds = (plan: ReturnType<typeof planScale>) =>
  plan.actions.map((a) => (a.kind === 'create' ? `create ${a.ordinal}` : `${a.kind} ${a.pod.metadata.name}`));

describe('claims (adopt and release)', () => {
  const owner = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'db', uid: 'u1', controller: true };
  const withUid = (p: Pod, uid: string, refs: object[] = []): Pod => ({
    ...p,
    metadata: { ...p.metadata, uid, ownerReferences: refs as never },
  });
  const app = { labels: { app: 'db' } };
  const uids = (ps: readonly Pod[]) => ps.map((p) => p.metadata.uid);

  it('keeps its matching pods, adopts a matching orphan, releases a pod whose labels no longer match', () => {
    const kept = withUid(at(0, app), 'p0', [owner]);
    const orphan = withUid(at(1, app), 'p1');
    const unlabelled = withUid(pod('db-2'), 'p2', [owner]);
    const plan = planClaims(set(), [kept, orphan, unlabelled]);
    expect([uids(plan.owned), uids(plan.adopt), uids(plan.release)]).toEqual([['p0'], ['p1'], ['p2']]);
  });
  it("leaves alone another controller's pod, an orphan of another name or namespace, and a pod listed twice", () => {
    const foreign = withUid(at(0, app), 'p0', [{ ...owner, uid: 'other' }]);
    const otherName = withUid(pod('web-0', app), 'p1');
    const otherNs = { ...withUid(at(1, app), 'p2'), metadata: { ...withUid(at(1, app), 'p2').metadata, namespace: 'elsewhere' } };
    const mine = withUid(at(2, app), 'p3', [owner]);
    expect(planClaims(set(), [foreign, otherName, otherNs, mine, mine])).toEqual({ owned: [mine], adopt: [], release: [] });
  });
  it('a set being deleted keeps what it owns and adopts nothing; a deleting orphan and an empty selector adopt nothing', () => {
    const deleting = { ...set(), metadata: { ...set().metadata, deletionTimestamp: '2026-01-01T00:10:00Z' } } as StatefulSetObject;
    const unlabelled = withUid(pod('db-0'), 'p0', [owner]);
    const orphan = withUid(at(1, app), 'p1');
    expect(planClaims(deleting, [unlabelled, orphan])).toEqual({ owned: [unlabelled], adopt: [], release: [] });
    const goingOrphan = { ...orphan, metadata: { ...orphan.metadata, deletionTimestamp: '2026-01-01T00:10:00Z' } };
    expect(planClaims(set(), [goingOrphan]).adopt).toEqual([]);
    expect(planClaims(set({ selector: {} }), [orphan]).adopt).toEqual([]);
  });
});

describe('scale', () => {
  it('OrderedReady creates the first missing ordinal and stops', () => {
    expect(kinds(planScale(scale({ replicas: [undefined, undefined, undefined] })))).toEqual(['create 0']);
    expect(planScale(scale({ replicas: [undefined] })).stop).toBe(true);
  });
  it('OrderedReady waits for a predecessor that is not ready; reserved slots are skipped', () => {
    expect(kinds(planScale(scale({ replicas: [at(0, { ready: false }), undefined] })))).toEqual([]);
    expect(planScale(scale({ replicas: [at(0, { ready: false }), undefined] })).stop).toBe(true);
    expect(kinds(planScale(scale({ replicas: [at(0), undefined, undefined, undefined], reserved: new Set([1]) })))).toEqual(['create 2']);
  });
  it('Parallel creates every missing ordinal at once, bounded by scaleStrategy.maxUnavailable', () => {
    expect(kinds(planScale(scale({ monotonic: false, replicas: [undefined, undefined, undefined] })))).toEqual([
      'create 0',
      'create 1',
      'create 2',
    ]);
    expect(kinds(planScale(scale({ monotonic: false, scaleMaxUnavailable: 2, replicas: [undefined, undefined, undefined] })))).toEqual([
      'create 0',
      'create 1',
    ]);
  });
  it('condemned pods go highest first, one at a time under OrderedReady, all at once under Parallel', () => {
    const replicas = [at(0), at(1)];
    const condemned = [at(3), at(2)];
    expect(kinds(planScale(scale({ replicas, condemned })))).toEqual(['delete db-3']);
    expect(kinds(planScale(scale({ replicas, condemned, monotonic: false })))).toEqual(['delete db-3', 'delete db-2']);
  });
  it('a failed replica is deleted (to be created again)', () => {
    expect(kinds(planScale(scale({ replicas: [at(0, { phase: 'Failed' })] })))).toEqual(['delete db-0']);
  });
  it('preDelete hook: PreparingDelete first, held while hooked, deleted once released', () => {
    const lifecycle = { preDelete: { labelsHandler: { hold: 'true' } } };
    const replicas = [at(0)];
    expect(kinds(planScale(scale({ replicas, condemned: [at(1, { labels: { hold: 'true' } })], lifecycle })))).toEqual([
      'prepare-delete db-1',
    ]);
    const held = at(1, { labels: { hold: 'true' }, state: 'PreparingDelete' });
    expect(kinds(planScale(scale({ replicas, condemned: [held], lifecycle })))).toEqual([]);
    const released = at(1, { state: 'PreparingDelete' });
    expect(kinds(planScale(scale({ replicas, condemned: [released], lifecycle })))).toEqual(['delete db-1']);
  });
});

const upd = (o: Partial<UpdateInput>): UpdateInput => ({
  replicas: [],
  replicaCount: 3,
  updateRevision: NEW,
  partition: 0,
  maxUnavailable: 1,
  policy: 'ReCreate',
  minReadySeconds: 0,
  canInPlace: () => true,
  nowMs: NOW,
  ...o,
});
const acts = (us: ReturnType<typeof planUpdate>) => us.map((u) => `${u.action} ${u.pod.metadata.name}`);

describe('rolling update', () => {
  const three = [at(0), at(1), at(2)];
  it('descending ordinal above the partition', () => {
    expect(sortForUpdate(upd({ replicas: three }))).toEqual([2, 1, 0]);
    expect(sortForUpdate(upd({ replicas: three, partition: 1 }))).toEqual([2, 1]);
    expect(sortForUpdate(upd({ replicas: three, partition: 3 }))).toEqual([]);
    expect(sortForUpdate(upd({ replicas: [at(0), undefined, at(2), at(3)], replicaCount: 3, partition: 1 }))).toEqual([3, 2]);
  });
  it('one pod at a time with maxUnavailable 1; the next waits for it', () => {
    expect(acts(planUpdate(upd({ replicas: three })))).toEqual(['delete db-2']);
    expect(acts(planUpdate(upd({ replicas: [at(0), at(1), at(2, { rev: NEW, ready: false })] })))).toEqual([]);
    expect(acts(planUpdate(upd({ replicas: [at(0), at(1), at(2, { rev: NEW })] })))).toEqual(['delete db-1']);
  });
  it('maxUnavailable 2 updates two at once (Parallel)', () => {
    expect(acts(planUpdate(upd({ replicas: three, maxUnavailable: 2 })))).toEqual(['delete db-2', 'delete db-1']);
  });
  it('InPlaceIfPossible: in place when possible, else recreate; InPlaceOnly: an error instead', () => {
    expect(acts(planUpdate(upd({ replicas: three, policy: 'InPlaceIfPossible' })))).toEqual(['in-place db-2']);
    expect(acts(planUpdate(upd({ replicas: three, policy: 'InPlaceIfPossible', canInPlace: () => false })))).toEqual(['delete db-2']);
    expect(acts(planUpdate(upd({ replicas: three, policy: 'InPlaceOnly', canInPlace: () => false })))).toEqual(['error db-2']);
  });
  it('the inPlaceUpdate hook: PreparingUpdate first, then in place once released', () => {
    const lifecycle = { inPlaceUpdate: { labelsHandler: { ok: 'true' } } };
    const hooked = [at(0), at(1), at(2, { labels: { ok: 'true' } })];
    expect(acts(planUpdate(upd({ replicas: hooked, policy: 'InPlaceIfPossible', lifecycle })))).toEqual(['prepare-update db-2']);
    const held = [at(0), at(1), at(2, { labels: { ok: 'true' }, state: 'PreparingUpdate' })];
    expect(acts(planUpdate(upd({ replicas: held, policy: 'InPlaceIfPossible', lifecycle })))).toEqual([]);
    const released = [at(0), at(1), at(2, { state: 'PreparingUpdate' })];
    expect(acts(planUpdate(upd({ replicas: released, policy: 'InPlaceIfPossible', lifecycle })))).toEqual(['in-place db-2']);
  });
  it("claim resizing: a pod's claims grow first, the pod waits (unavailable) until they have, then it is updated", () => {
    const stand = (matched: boolean, ready: boolean, completed: boolean) => ({ matched, ready, completed });
    const grown = stand(true, true, true);
    // db-2's claims ask less than the template: they are resized, db-2 counts unavailable, so db-1 waits.
    const claims = (states: Record<string, ReturnType<typeof stand>>) => (p: Pod) => states[p.metadata.name!] ?? grown;
    expect(acts(planUpdate(upd({ replicas: three, claims: claims({ 'db-2': stand(false, true, false) }) })))).toEqual([
      'resize-claims db-2',
    ]);
    // Asked, not grown yet: nothing to do for db-2, and nothing else moves.
    expect(acts(planUpdate(upd({ replicas: three, claims: claims({ 'db-2': stand(true, false, false) }) })))).toEqual([]);
    // Grown: db-2 is updated.
    expect(acts(planUpdate(upd({ replicas: three, claims: claims({}) })))).toEqual(['delete db-2']);
    // Only the claims changed (every pod at the update revision): claims are resized, no pod is touched.
    const updated = [at(0, { rev: NEW }), at(1, { rev: NEW }), at(2, { rev: NEW })];
    expect(acts(planUpdate(upd({ replicas: updated, claims: () => stand(false, true, false) })))).toEqual(['resize-claims db-2']);
    expect(acts(planUpdate(upd({ replicas: updated, claims: claims({ 'db-2': grown, 'db-1': stand(false, true, false) }) })))).toEqual([
      'resize-claims db-1',
    ]);
    // A claim of an updated pod still growing counts it unavailable: with maxUnavailable 1 the next pod waits.
    const growing = [at(0), at(1), at(2, { rev: NEW })];
    expect(acts(planUpdate(upd({ replicas: growing, claims: claims({ 'db-2': stand(true, false, true) }) })))).toEqual([]);
  });
  it('a specified-delete pod goes first, below the partition too', () => {
    const r = [at(0, { labels: { 'apps.kruise.io/specified-delete': 'true' } }), at(1, { rev: NEW }), at(2, { rev: NEW })];
    expect(acts(planUpdate(upd({ replicas: r, partition: 3 })))).toEqual(['delete db-0']);
  });
});

describe('status', () => {
  const base = {
    currentRevision: OLD,
    updateRevision: NEW,
    collisionCount: 0,
    labelSelector: 'app=db',
    minReadySeconds: 0,
    rollingUpdate: true,
    nowMs: NOW,
  };
  it('counts replicas, ready, available, current and updated by revision', () => {
    const s = computeStatus({ ...base, pods: [at(0), at(1, { rev: NEW }), at(2, { rev: NEW, ready: false })] });
    expect(s).toMatchObject({
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      currentReplicas: 1,
      updatedReplicas: 2,
      updatedReadyReplicas: 1,
      updatedAvailableReplicas: 1,
      currentRevision: OLD,
    });
  });
  it('every pod updated and ready makes the update revision current', () => {
    const s = computeStatus({ ...base, pods: [at(0, { rev: NEW }), at(1, { rev: NEW })] });
    expect(s).toMatchObject({ currentRevision: NEW, currentReplicas: 2, updatedReplicas: 2 });
    expect(statusChanged(s, s)).toBe(false);
    expect(statusChanged({ ...s, readyReplicas: 1 }, s)).toBe(true);
  });
  it('per claim template: claims compatible with it (at least its size), and of those the grown ones', () => {
    const tpl = (name: string, storage: string) => ({
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    });
    const claim = (asks: string, capacity: string, deleting = false) => ({
      metadata: deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {},
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: asks } } },
      status: { capacity: { storage: capacity } },
    });
    const claims: Record<string, ReturnType<typeof claim> | undefined> = {
      'data/db-0': claim('2Gi', '2Gi'),
      'data/db-1': claim('2Gi', '1Gi'),
      'data/db-2': claim('1Gi', '1Gi'),
      'logs/db-0': claim('1Gi', '1Gi'),
      'logs/db-1': claim('1Gi', '1Gi', true),
    };
    const counts = volumeClaimCounts(
      [tpl('data', '2Gi'), tpl('logs', '1Gi')],
      [at(0), at(1), at(2)],
      (t, p) => claims[`${t.metadata!.name}/${p.metadata.name}`],
    );
    expect(counts).toEqual([
      { volumeClaimName: 'data', compatibleReplicas: 2, compatibleReadyReplicas: 1 },
      // db-1's is being deleted and db-2 has none: not counted.
      { volumeClaimName: 'logs', compatibleReplicas: 1, compatibleReadyReplicas: 1 },
    ]);
    const s = computeStatus({ ...base, pods: [at(0)], volumeClaims: counts });
    expect(s.volumeClaims).toEqual(counts);
    expect(statusChanged(s, { ...s, volumeClaims: [counts[0]!] })).toBe(true);
    expect(computeStatus({ ...base, pods: [at(0)], volumeClaims: [] })).not.toHaveProperty('volumeClaims');
  });
});

describe('statefulSetPreDownloadStrategy (image pre-download)', () => {
  const inPlace = () => true;
  it.each([
    ['OnDelete recreates', { type: 'OnDelete', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } }, { recreate: true }],
    ['no rollingUpdate recreates', { type: 'RollingUpdate' }, { recreate: true }],
    ['no strategy recreates', undefined, { recreate: true }],
    ['podUpdatePolicy ReCreate', { rollingUpdate: { podUpdatePolicy: 'ReCreate' } }, { recreate: true }],
    ['podUpdatePolicy default (ReCreate)', { rollingUpdate: {} }, { recreate: true }],
    [
      'InPlaceIfPossible with its partition',
      { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', partition: 2 } },
      { recreate: false, partition: 2 },
    ],
    ['InPlaceOnly, no partition', { rollingUpdate: { podUpdatePolicy: 'InPlaceOnly' } }, { recreate: false, partition: 0 }],
  ] as const)('%s', (_name, strategy, expected) => {
    const s = statefulSetPreDownloadStrategy(strategy, 3, inPlace);
    expect(s).toMatchObject({ ...expected, maxUnavailable: 3 });
    expect(s.canUpdateInPlace()).toBe(true);
  });
});

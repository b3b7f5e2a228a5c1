// The restart budget of enhanced liveness (table), and the probe-context annotation the webhook step writes and the
// controller reads back (upstream's key and JSON format).
import { describe, expect, it } from 'vitest';
import {
  admitLivenessRestarts,
  budgetMaxUnavailable,
  livenessProbeContainer,
  livenessProbeName,
  movedLivenessProbes,
  moveLivenessProbes,
  scaledCount,
  type BudgetMember,
} from '../../../../src/runtime/control/enhanced-liveness.js';
import type { Pod } from '../../../../src/runtime/core/types.js';

/** `n` pods p0..p(n-1): `spec` marks each one: `a` available, `u` unavailable, `r` restarting, `F`/`f` failing and available/unavailable. */
function group(spec: string): BudgetMember[] {
  return [...spec].map((c, i) => ({
    uid: `u${i}`,
    name: `p${i}`,
    available: c === 'a' || c === 'F',
    restarting: c === 'r',
    failing: c === 'F' || c === 'f' ? ['app'] : [],
  }));
}

const names = (xs: readonly { name: string }[]) => xs.map((x) => x.name);

describe('admitLivenessRestarts', () => {
  const table: { title: string; spec: string; max: number; restart: string[]; wait: string[]; clusterWide: boolean }[] = [
    { title: 'nothing fails: nothing to do', spec: 'aaaa', max: 1, restart: [], wait: [], clusterWide: false },
    { title: 'one failing, budget 1: restarts', spec: 'Faaa', max: 1, restart: ['p0'], wait: [], clusterWide: false },
    {
      title: 'all 10 failing, budget 2: two restart, eight wait',
      spec: 'FFFFFFFFFF',
      max: 2,
      restart: ['p0', 'p1'],
      wait: ['p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9'],
      clusterWide: true,
    },
    { title: 'a restart under way takes a slot', spec: 'rFFaaaaaaa', max: 2, restart: ['p1'], wait: ['p2'], clusterWide: false },
    {
      title: 'budget spent by restarts under way: all wait',
      spec: 'rrFFFFFFFF',
      max: 2,
      restart: [],
      wait: ['p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9'],
      clusterWide: true,
    },
    {
      title: 'an unready pod counts against an available one',
      spec: 'uFFaaaaaaa',
      max: 2,
      restart: ['p1'],
      wait: ['p2'],
      clusterWide: false,
    },
    {
      title: 'an unavailable failing pod costs no availability and goes first',
      spec: 'aFfaaaaaaa',
      max: 1,
      restart: ['p2'],
      wait: ['p1'],
      clusterWide: false,
    },
    {
      title: 'unavailable failing pods still restart at most max at once',
      spec: 'ffffaaaaaa',
      max: 2,
      restart: ['p0', 'p1'],
      wait: ['p2', 'p3'],
      clusterWide: false,
    },
    { title: 'budget 0 (minAvailable 100%): nothing restarts', spec: 'Faaa', max: 0, restart: [], wait: ['p0'], clusterWide: false },
    {
      title: 'a negative budget (more unavailable than allowed) counts as 0',
      spec: 'Faaa',
      max: -1,
      restart: [],
      wait: ['p0'],
      clusterWide: false,
    },
    { title: 'over budget already: an available failing pod waits', spec: 'uuuFaa', max: 2, restart: [], wait: ['p3'], clusterWide: false },
    {
      title: 'most of a group failing but within budget: no cluster-wide event',
      spec: 'FFa',
      max: 2,
      restart: ['p0', 'p1'],
      wait: [],
      clusterWide: false,
    },
    { title: 'a group of 2 never counts as cluster-wide', spec: 'FF', max: 1, restart: ['p0'], wait: ['p1'], clusterWide: false },
  ];
  for (const t of table) {
    it(t.title, () => {
      const a = admitLivenessRestarts({ source: 'CloneSet ns/web (maxUnavailable 2)', maxUnavailable: t.max, members: group(t.spec) });
      expect(names(a.restart)).toEqual(t.restart);
      expect(names(a.wait)).toEqual(t.wait);
      expect(a.clusterWide !== undefined).toBe(t.clusterWide);
    });
  }

  it('says why a restart waits: the budget (stable while it waits) and the counts of the moment', () => {
    const a = admitLivenessRestarts({ source: 'PodUnavailableBudget ns/web', maxUnavailable: 1, members: group('uFaa') });
    expect(a.wait).toEqual([
      {
        uid: 'u1',
        name: 'p1',
        container: 'app',
        reason: 'PodUnavailableBudget ns/web allows 1 pod(s) unavailable at once',
        detail: '1 of 4 are unavailable or restarting',
      },
    ]);
    const b = admitLivenessRestarts({ source: 'PodUnavailableBudget ns/web', maxUnavailable: 1, members: group('rFaa') });
    expect(b.wait[0]!.reason).toBe(a.wait[0]!.reason);
    expect(b.wait[0]!.detail).toBe('1 liveness restart(s) are under way');
  });

  it('names a cluster-wide failure once, with the counts', () => {
    const a = admitLivenessRestarts({ source: 'CloneSet ns/web (maxUnavailable 2)', maxUnavailable: 2, members: group('FFFFFFFFFF') });
    expect(a.clusterWide).toEqual({
      failing: 10,
      total: 10,
      message: expect.stringMatching(
        /^cluster-wide liveness failure: 10 of 10 pods under CloneSet ns\/web \(maxUnavailable 2\) fail .* at most 2 at a time/,
      ),
    });
  });

  it('restarts the oldest failing container of a pod (one per pod at a time)', () => {
    const members: BudgetMember[] = [{ uid: 'u', name: 'p', available: true, restarting: false, failing: ['sidecar', 'app'] }];
    expect(admitLivenessRestarts({ source: 's', maxUnavailable: 1, members }).restart).toEqual([
      { uid: 'u', name: 'p', container: 'sidecar' },
    ]);
  });
});

describe('budget counts', () => {
  it.each([
    [2, 10, 'down', 2],
    ['20%', 10, 'down', 2],
    ['25%', 10, 'down', 2],
    ['25%', 10, 'up', 3],
    ['0%', 10, 'down', 0],
    ['3', 10, 'down', 3],
    ['x', 10, 'down', undefined],
    [-1, 10, 'down', undefined],
    [undefined, 10, 'down', undefined],
  ] as const)('scaledCount(%s of %s, %s) = %s', (v, total, round, want) => {
    expect(scaledCount(v, total, round)).toBe(want);
  });

  it('maxUnavailable, else total less minAvailable, else 0', () => {
    expect(budgetMaxUnavailable({ maxUnavailable: '20%' }, 10)).toBe(2);
    expect(budgetMaxUnavailable({ minAvailable: '75%' }, 10)).toBe(2);
    expect(budgetMaxUnavailable({ minAvailable: 8 }, 10)).toBe(2);
    expect(budgetMaxUnavailable({ minAvailable: 12 }, 10)).toBe(0);
    expect(budgetMaxUnavailable({}, 10)).toBe(0);
    expect(budgetMaxUnavailable({ maxUnavailable: 'lots' }, 10)).toBe(0);
  });
});

describe('probe context annotation', () => {
  const probe = { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 1, failureThreshold: 2 };
  const pod = (): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', annotations: { 'apps.kruise.io/using-enhanced-liveness': 'true' } },
    spec: {
      containers: [
        { name: 'app', image: 'i', livenessProbe: probe, readinessProbe: { tcpSocket: { port: 80 } } },
        { name: 'sidecar', image: 'i' },
      ],
      initContainers: [{ name: 'init', image: 'i', livenessProbe: probe }],
    },
  });

  it("moves the regular containers' liveness probes into upstream's annotation and JSON shape", () => {
    const p = pod();
    expect(moveLivenessProbes(p)).toEqual([{ name: 'app', livenessProbe: probe }]);
    expect(p.spec!.containers[0]!.livenessProbe).toBeUndefined();
    expect(p.spec!.containers[0]!.readinessProbe).toEqual({ tcpSocket: { port: 80 } });
    expect(p.spec!.initContainers![0]!.livenessProbe).toEqual(probe);
    expect(p.metadata.annotations!['apps.kruise.io/container-probe-context']).toBe(JSON.stringify([{ name: 'app', livenessProbe: probe }]));
    expect(movedLivenessProbes(p)).toEqual([{ name: 'app', livenessProbe: probe }]);
  });

  it('no liveness probe: the pod is left as it is', () => {
    const p = pod();
    delete p.spec!.containers[0]!.livenessProbe;
    expect(moveLivenessProbes(p)).toEqual([]);
    expect(p.metadata.annotations).toEqual({ 'apps.kruise.io/using-enhanced-liveness': 'true' });
  });

  it('reads nothing from a hostile annotation, and skips malformed entries', () => {
    const withCtx = (v: string) => ({ metadata: { annotations: { 'apps.kruise.io/container-probe-context': v } } });
    expect(movedLivenessProbes(withCtx('not json'))).toEqual([]);
    expect(movedLivenessProbes(withCtx('{"name":"app"}'))).toEqual([]);
    expect(movedLivenessProbes(withCtx('[1,null,{"name":""},{"name":"a"},{"name":"b","livenessProbe":{"tcpSocket":{"port":1}}}]'))).toEqual(
      [{ name: 'b', livenessProbe: { tcpSocket: { port: 1 } } }],
    );
  });

  it('names a moved probe in a NodePodProbe without the marker separator', () => {
    expect(livenessProbeName('app')).toBe('enhanced-liveness:app');
    expect(livenessProbeName('app')).not.toContain('#');
    expect(livenessProbeContainer('enhanced-liveness:app')).toBe('app');
    expect(livenessProbeContainer('marker#probe')).toBeUndefined();
    expect(livenessProbeContainer('enhanced-liveness:')).toBeUndefined();
  });
});

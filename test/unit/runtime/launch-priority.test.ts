// Container launch priority, pure parts: the pod webhook step (upstream's barrier env, name filled in under
// generateName) and the barrier controller's decision (which key to release next).
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/runtime/core/types.js';
import { generatePodName, launchPriorities, wireLaunchPriority } from '../../../src/runtime/webhooks/launchpriority/decision.js';
import { barrierPriority, decideBarrier } from '../../../src/runtime/controllers/containerlaunchpriority/decision.js';

function pod(opts: { ordered?: boolean; env?: Record<string, string>; name?: string; containers?: string[] } = {}): Pod {
  const names = opts.containers ?? ['a', 'b', 'c'];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...(opts.name ? { name: opts.name } : { generateName: 'web-' }),
      namespace: 'ns',
      ...(opts.ordered ? { annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' } } : {}),
    },
    spec: {
      containers: names.map((n) => ({
        name: n,
        image: 'busybox',
        ...(opts.env?.[n] !== undefined ? { env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: opts.env[n]! }] } : {}),
      })),
    },
  } as Pod;
}

const barrierEnv = (p: Pod) => p.spec!.containers.map((c) => c.env!.find((e) => e.name === 'KRUISE_CONTAINER_BARRIER'));

describe('launch priority webhook step', () => {
  it.each([
    ['Ordered: spec order, 0, -1, -2', pod({ ordered: true }), [0, -1, -2]],
    ['env priorities (missing = 0)', pod({ env: { a: '1', c: '10' } }), [1, 0, 10]],
    ['all equal: nothing', pod({ env: { a: '3', b: '3', c: '3' } }), undefined],
    ['no env, no annotation: nothing', pod(), undefined],
    ['one container: nothing, even Ordered', pod({ ordered: true, containers: ['a'] }), undefined],
  ])('%s', (_n, p, want) => {
    expect(launchPriorities(p).priorities).toEqual(want);
  });

  it("appends upstream's barrier env to every container and names a generateName pod like the API server", () => {
    const p = pod({ ordered: true });
    wireLaunchPriority(p, () => 0);
    expect(p.metadata.name).toBe('web-bbbbb');
    expect(barrierEnv(p)).toEqual(
      ['p_0', 'p_-1', 'p_-2'].map((key) => ({
        name: 'KRUISE_CONTAINER_BARRIER',
        valueFrom: { configMapKeyRef: { name: 'web-bbbbb-barrier', key } },
      })),
    );
    expect(generatePodName('x'.repeat(70), () => 26)).toBe('x'.repeat(58) + '99999');
  });

  it('called again (reinvocation after another webhook added a container): nothing changes', () => {
    const p = pod({ name: 'fixed', ordered: true });
    wireLaunchPriority(p);
    const first = JSON.stringify(p.spec);
    expect(wireLaunchPriority(p)).toBeUndefined();
    expect(JSON.stringify(p.spec)).toBe(first);
    p.spec!.containers.push({ name: 'istio-proxy', image: 'proxyv2' });
    wireLaunchPriority(p);
    expect(p.spec!.containers[3]!.env).toBeUndefined();
    expect(barrierEnv({ ...p, spec: { containers: p.spec!.containers.slice(0, 3) } } as Pod).map((e) => e!.valueFrom)).toHaveLength(3);
  });

  it('keeps a given name and the env already there', () => {
    const p = pod({ name: 'fixed', env: { a: '2' } });
    wireLaunchPriority(p);
    expect(p.metadata.name).toBe('fixed');
    expect(p.spec!.containers[0]!.env!.map((e) => e.name)).toEqual(['KRUISE_CONTAINER_PRIORITY', 'KRUISE_CONTAINER_BARRIER']);
  });

  it.each([['high'], ['1.5'], ['99999999999']])('refuses KRUISE_CONTAINER_PRIORITY=%s naming the container and pointer', (v) => {
    const result = wireLaunchPriority(pod({ env: { b: v } })) as { deny: string };
    expect(result.deny).toMatch(/container "b" \(at \/spec\/containers\/1\): KRUISE_CONTAINER_PRIORITY must be/);
  });
});

describe('barrier controller decision', () => {
  const wired = () => {
    const p = pod({ name: 'web', ordered: true });
    wireLaunchPriority(p);
    (p.metadata as any).uid = 'u';
    return p;
  };
  const withStatus = (p: Pod, ready: Record<string, boolean>, containersReady = 'False'): Pod => ({
    ...p,
    status: {
      conditions: [{ type: 'ContainersReady', status: containersReady }],
      containerStatuses: Object.entries(ready).map(([name, r]) => ({ name, ready: r })) as never,
    },
  });

  it('reads the priority back from the env', () => {
    expect(wired().spec!.containers.map((c) => barrierPriority(c))).toEqual([0, -1, -2]);
    expect(
      barrierPriority({ env: [{ name: 'KRUISE_CONTAINER_BARRIER', valueFrom: { configMapKeyRef: { key: 'p_x' } } }] }),
    ).toBeUndefined();
  });

  it.each([
    ['no barrier ConfigMap yet: create it', withStatus(wired(), {}), undefined, { action: 'create', name: 'web-barrier' }],
    ['no status yet (as upstream): release the highest (p_0)', wired(), {}, { action: 'release', key: 'p_0' }],
    ['statuses without ready: not ready', withStatus(wired(), { a: true }), { p_0: 'true' }, { action: 'release', key: 'p_-1' }],
    [
      'nothing ready: release the highest (p_0)',
      withStatus(wired(), { a: false, b: false, c: false }),
      {},
      { action: 'release', key: 'p_0' },
    ],
    ['a ready: release p_-1', withStatus(wired(), { a: true, b: false, c: false }), { p_0: 'true' }, { action: 'release', key: 'p_-1' }],
    [
      'a, b ready: release p_-2',
      withStatus(wired(), { a: true, b: true, c: false }),
      { p_0: 'true', 'p_-1': 'true' },
      { action: 'release', key: 'p_-2' },
    ],
    [
      'key already there: nothing',
      withStatus(wired(), { a: true, b: false, c: false }),
      { p_0: 'true', 'p_-1': 'true' },
      { action: 'none' },
    ],
    ['all ready: nothing', withStatus(wired(), { a: true, b: true, c: true }, 'True'), { p_0: 'true' }, { action: 'none' }],
    ['no barrier env: nothing', withStatus(pod({ name: 'x' }), {}), undefined, { action: 'none' }],
  ])('%s', (_n, p, barrier, want) => {
    expect(decideBarrier({ pod: p, barrier })).toMatchObject(want);
  });

  it('does nothing for a pod being deleted', () => {
    const p = withStatus(wired(), { a: false });
    (p.metadata as any).deletionTimestamp = '2026-01-01T00:00:00Z';
    expect(decideBarrier({ pod: p, barrier: {} })).toMatchObject({ action: 'none' });
  });
});

import { describe, expect, it } from 'vitest';
import {
  decideNodeLocal,
  podWithCriStatus,
  withPublishedExits,
  type CriInstance,
} from '../../../../../src/runtime/daemon/crr/node-local-decision.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import { CRR, pod, rows, type Row } from '../../control/sidecar-termination-table.js';

/** What CRI shows for a pod the kubelet reports as in the table: the inverse of podWithCriStatus. */
function criOf(p: Pod): CriInstance[] {
  const out: CriInstance[] = [];
  for (const s of p.status?.containerStatuses ?? []) {
    const attempt = s.restartCount ?? 0;
    const last = s.lastState?.terminated;
    if (last) out.push({ name: s.name, id: `${s.name}-prev`, attempt: Math.max(0, attempt - 1), state: 'exited', exitCode: last.exitCode });
    if (s.state?.running) out.push({ name: s.name, id: s.name, attempt, state: 'running', exitCode: 0 });
    else if (s.state?.terminated) out.push({ name: s.name, id: s.name, attempt, state: 'exited', exitCode: s.state.terminated.exitCode });
    // waiting: no current instance (being created, or in back-off after the exit in lastState)
  }
  return out;
}

/**
 * Rows decided by what only the kubelet's report has (a node kind other than the daemon's own, a status not written
 * yet, a Pending phase while CRI already runs the containers): CRI has no counterpart, tested separately below.
 */
function kubeletOnly(r: Row): boolean {
  const states = [...Object.values(r.pod.mains), ...Object.values(r.pod.sidecars).map(([, s]) => s)];
  return 'node' in r || states.includes('missing') || r.pod.phase === 'Pending';
}

function expected(
  r: Row,
  instances: readonly CriInstance[],
): { action: 'stop'; crr: string; containers: { name: string; id: string }[] } | 'none' {
  if (r.expect.action !== 'act' || !('createCrr' in r.expect) || !r.expect.createCrr) return 'none';
  // Ignore-exit-code sidecars are stopped by the node only after the manager made the phase terminal.
  if ('markTerminated' in r.expect && r.expect.markTerminated?.phase) return 'none';
  const running = r.expect.createCrr.containers.filter((n) => instances.some((i) => i.name === n && i.state === 'running'));
  return running.length === 0
    ? 'none'
    : { action: 'stop', crr: r.expect.createCrr.name, containers: running.map((n) => ({ name: n, id: n })) };
}

describe('node-local sidecar terminator: the manager decision table, read from CRI', () => {
  const table = rows.filter((r) => !kubeletOnly(r));
  it('covers most of the table', () => {
    expect(table.length).toBeGreaterThan(rows.length * 0.7);
  });

  for (const r of table) {
    it(r.name, () => {
      const p = pod(r.pod);
      const instances = criOf(p);
      const step = decideNodeLocal({ pod: p, instances, scheme: 'containerd', crrCached: r.crrExists ?? false, stoppedHere: false });
      const want = expected(r, instances);
      if (want === 'none') expect(step.action).toBe('none');
      else expect(step).toEqual(want);
    });
  }

  it('no double action: with the CRR cached, or after its own stop, the daemon never stops again (any row)', () => {
    for (const r of table) {
      const p = pod(r.pod);
      const instances = criOf(p);
      expect(decideNodeLocal({ pod: p, instances, scheme: 'containerd', crrCached: true, stoppedHere: false }).action).toBe('none');
      expect(decideNodeLocal({ pod: p, instances, scheme: 'containerd', crrCached: false, stoppedHere: true }).action).toBe('none');
    }
  });
});

describe('node-local sidecar terminator: what CRI adds to the kubelet report', () => {
  const job = (restartPolicy: 'Never' | 'OnFailure', phase = 'Running') =>
    pod({ restartPolicy, phase, mains: { app: 'running' }, sidecars: { envoy: ['kill', 'running'] } });
  const run = (name: string, attempt = 0): CriInstance => ({ name, id: `${name}-${attempt}`, attempt, state: 'running', exitCode: 0 });
  const exited = (name: string, exitCode: number, attempt = 0): CriInstance => ({
    name,
    id: `${name}-${attempt}`,
    attempt,
    state: 'exited',
    exitCode,
  });

  it('a main exit CRI shows stops the sidecars before the kubelet reports it (status still says running)', () => {
    const step = decideNodeLocal({
      pod: job('Never'),
      instances: [exited('app', 3), run('envoy')],
      scheme: 'containerd',
      crrCached: false,
      stoppedHere: false,
    });
    expect(step).toEqual({ action: 'stop', crr: CRR, containers: [{ name: 'envoy', id: 'envoy-0' }] });
  });

  it('an ignore-exit-code sidecar waits for the manager to make the phase terminal, then the node stops it', () => {
    const ignoring = (phase: string, conditions: { type: string; status: string }[] = []) =>
      pod({ phase, conditions, mains: { app: 'running' }, sidecars: { envoy: ['kill+ignore', 'running'] } });
    const step = (p: Pod) =>
      decideNodeLocal({ pod: p, instances: [exited('app', 0), run('envoy')], scheme: 'containerd', crrCached: false, stoppedHere: false });
    // Stopped now, it would exit 143 and the kubelet would report Failed before the manager's Succeeded.
    expect(step(ignoring('Running'))).toEqual({
      action: 'none',
      reason: 'ignore-exit-code sidecars wait for the manager to mark the pod Succeeded',
    });
    const marked = ignoring('Succeeded', [{ type: 'SidecarTerminated', status: 'True' }]);
    expect(step(marked)).toEqual({ action: 'stop', crr: CRR, containers: [{ name: 'envoy', id: 'envoy-0' }] });
    // Made terminal by the kubelet instead (Failed), only the condition is the manager's; the node may stop it.
    expect(step(ignoring('Failed'))).toEqual({ action: 'stop', crr: CRR, containers: [{ name: 'envoy', id: 'envoy-0' }] });
  });

  it("containerd's published exit stops the sidecars while CRI still shows the main running; its exit code counts", () => {
    const decideWith = (restartPolicy: 'Never' | 'OnFailure', exits: Record<string, number>) =>
      decideNodeLocal({
        pod: job(restartPolicy),
        instances: withPublishedExits([run('app'), run('envoy')], (id) => (id in exits ? { exitCode: exits[id]! } : undefined)),
        scheme: 'containerd',
        crrCached: false,
        stoppedHere: false,
      });
    expect(decideWith('Never', {})).toMatchObject({ action: 'none' });
    expect(decideWith('Never', { 'app-0': 2 })).toEqual({ action: 'stop', crr: CRR, containers: [{ name: 'envoy', id: 'envoy-0' }] });
    // OnFailure: a non-zero exit is restarted by the kubelet, a zero one finishes the main.
    expect(decideWith('OnFailure', { 'app-0': 1 })).toMatchObject({ action: 'none' });
    expect(decideWith('OnFailure', { 'app-0': 0 }).action).toBe('stop');
    // A sidecar whose own exit is published is not stopped again.
    expect(decideWith('Never', { 'app-0': 0, 'envoy-0': 0 })).toMatchObject({ action: 'none' });
  });

  it('withPublishedExits changes only running instances with a published exit', () => {
    const instances = [run('app'), exited('old', 7), run('envoy')];
    expect(withPublishedExits(instances, (id) => (id === 'app-0' || id === 'old-0' ? { exitCode: 9 } : undefined))).toEqual([
      { ...run('app'), state: 'exited', exitCode: 9 },
      exited('old', 7),
      run('envoy'),
    ]);
  });

  it('a Pending phase the kubelet has not updated yet does not hold the stop back', () => {
    const step = decideNodeLocal({
      pod: job('Never', 'Pending'),
      instances: [exited('app', 0), run('envoy')],
      scheme: 'containerd',
      crrCached: false,
      stoppedHere: false,
    });
    expect(step.action).toBe('stop');
  });

  it('OnFailure: a main that exited non-zero is restarted by the kubelet, so nothing stops', () => {
    const p = job('OnFailure');
    for (const instances of [
      [exited('app', 1), run('envoy')],
      [exited('app', 1), run('app', 1), run('envoy')],
    ]) {
      expect(decideNodeLocal({ pod: p, instances, scheme: 'containerd', crrCached: false, stoppedHere: false }).action).toBe('none');
    }
    const afterRetry = decideNodeLocal({
      pod: p,
      instances: [exited('app', 1), exited('app', 0, 1), run('envoy')],
      scheme: 'containerd',
      crrCached: false,
      stoppedHere: false,
    });
    expect(afterRetry).toEqual({ action: 'stop', crr: CRR, containers: [{ name: 'envoy', id: 'envoy-0' }] });
  });

  it('a sidecar restarted by the kubelet after our stop (OnFailure, exit 143) is left to the manager (it fails the pod)', () => {
    const step = decideNodeLocal({
      pod: job('OnFailure'),
      instances: [exited('app', 0), exited('envoy', 143), run('envoy', 1)],
      scheme: 'containerd',
      crrCached: false,
      stoppedHere: true,
    });
    expect(step.action).toBe('none');
  });

  it('a sidecar not running (still being created) is not stopped by the node', () => {
    const step = decideNodeLocal({
      pod: job('Never'),
      instances: [exited('app', 0), { name: 'envoy', id: 'e', attempt: 0, state: 'created', exitCode: 0 }],
      scheme: 'containerd',
      crrCached: false,
      stoppedHere: false,
    });
    expect(step.action).toBe('none');
  });

  it('podWithCriStatus writes states the way the kubelet reports them', () => {
    const p = podWithCriStatus(
      pod({ restartPolicy: 'OnFailure', mains: { a: 'running', b: 'running', c: 'running' }, sidecars: { s: ['kill', 'running'] } }),
      [exited('a', 0), exited('b', 2), exited('c', 1), run('c', 1), run('s')],
      'containerd',
    );
    expect(p.status?.containerStatuses).toEqual([
      { name: 'a', containerID: 'containerd://a-0', restartCount: 0, state: { terminated: { exitCode: 0 } } },
      {
        name: 'b',
        containerID: 'containerd://b-0',
        restartCount: 0,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: { exitCode: 2 } },
      },
      { name: 'c', containerID: 'containerd://c-1', restartCount: 1, state: { running: {} }, lastState: { terminated: { exitCode: 1 } } },
      { name: 's', containerID: 'containerd://s-0', restartCount: 0, state: { running: {} } },
    ]);
  });
});

describe('node-local sidecar terminator: a sidecar declared by name or pattern (kruise.cdk8s.io/terminate-sidecars)', () => {
  // The injected container carries no env marker: only the annotation makes it a sidecar, on the node as in the manager.
  const declared = (annotation: string | undefined) => {
    const p = pod({ mains: { app: 0, 'mesh-proxy': 'running' }, sidecars: {} });
    if (annotation !== undefined) p.metadata.annotations = { 'kruise.cdk8s.io/terminate-sidecars': annotation };
    return p;
  };
  const table: Array<[string, string | undefined, 'stop' | 'none']> = [
    ['declared by name: stopped', '[{"name":"mesh-proxy","shutdown":{"httpPost":{"port":15020,"path":"/quit"}}}]', 'stop'],
    ['declared by image pattern: stopped', '[{"imagePattern":"/mesh-proxy:"}]', 'stop'],
    ['not declared: left running', undefined, 'none'],
    ['a pattern that never matches: left running', '[{"namePattern":""}]', 'none'],
  ];
  for (const [name, annotation, action] of table) {
    it(name, () => {
      const p = declared(annotation);
      const step = decideNodeLocal({ pod: p, instances: criOf(p), scheme: 'containerd', crrCached: false, stoppedHere: false });
      expect(step.action).toBe(action);
      if (action === 'stop') expect(step).toEqual({ action: 'stop', crr: CRR, containers: [{ name: 'mesh-proxy', id: 'mesh-proxy' }] });
    });
  }
});

// Container exit priority in the runtime, pure parts: the pod webhook step that wires the preStop hooks (and
// refuses bad input with the checker's messages), and the daemon's decisions (which pod a hook names, when a
// held hook is answered). The real kubelet proof is test/node/exit-priority.test.ts.
import { describe, expect, it } from 'vitest';
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  HEADER_EXIT_PRIORITY_PRESTOP,
  exitPriorityHookPath,
  parseExitPriorityHookPath,
  readExitPriorityHook,
} from '../../../src/api/pod-contracts.js';
import { DAEMON_EXIT_PRIORITY_PORT } from '../../../src/contracts/names.js';
import type { Pod } from '../../../src/runtime/core/types.js';
import { composeAdmission } from '../../../src/runtime/core/webhook/compose.js';
import type { AdmissionRequest } from '../../../src/runtime/core/webhook/server.js';
import type { ControllerContext } from '../../../src/runtime/core/controller.js';
import { POD_MUTATORS } from '../../../src/runtime/manager/registry.js';
import { wireExitPriority } from '../../../src/runtime/webhooks/exitpriority/decision.js';
import {
  decideHook,
  findHookPod,
  ownPreStopBudgetMs,
  podExitPlan,
  runtimeSignalsOnce,
  stopTimeoutAfterHookSeconds,
} from '../../../src/runtime/daemon/exitpriority/decision.js';
import { planPreStop } from '../../../src/runtime/daemon/prestop.js';

const TOKEN = '0123456789abcdef0123';

function pod(annotation: string | undefined, extra: { grace?: number; preStop?: Record<string, unknown> } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web',
      namespace: 'ns',
      uid: 'uid-1',
      ...(annotation !== undefined ? { annotations: { [ANNOTATION_CONTAINER_EXIT_PRIORITY]: annotation } } : {}),
    },
    spec: {
      ...(extra.grace !== undefined ? { terminationGracePeriodSeconds: extra.grace } : {}),
      containers: [
        { name: 'app', image: 'a' },
        { name: 'log-agent', image: 'b', ...(extra.preStop ? { lifecycle: { preStop: extra.preStop } } : {}) },
        { name: 'envoy', image: 'c' },
      ],
    },
  } as Pod;
}

const preStopOf = (p: Pod, name: string) => (p.spec!.containers.find((c) => c.name === name)!.lifecycle as any)?.preStop;

describe('exit-priority pod webhook step', () => {
  it('gives containers above level 0 a preStop httpGet to the daemon on the node loopback; level 0 untouched', () => {
    const p = pod('{"log-agent":1,"envoy":2}');
    expect(wireExitPriority(p, 'ns', TOKEN)).toBeUndefined();
    expect(preStopOf(p, 'app')).toBeUndefined();
    expect(preStopOf(p, 'envoy')).toEqual({
      httpGet: { host: '127.0.0.1', port: DAEMON_EXIT_PRIORITY_PORT, path: `/exit-priority/v1/ns/${TOKEN}/envoy`, scheme: 'HTTP' },
    });
  });

  it("carries the container's own preStop in the hook (ASCII-safe), and reads it back", () => {
    const own = { exec: { command: ['sh', '-c', 'echo bye – “quoted”'] } };
    const p = pod('{"log-agent":1,"envoy":2}', { preStop: own });
    wireExitPriority(p, 'ns', TOKEN);
    const hook = preStopOf(p, 'log-agent');
    const header = hook.httpGet.httpHeaders[0];
    expect(header.name).toBe(HEADER_EXIT_PRIORITY_PRESTOP);
    expect(header.value).toMatch(/^[\x20-\x7e]+$/);
    expect(readExitPriorityHook(hook)).toEqual({ namespace: 'ns', token: TOKEN, container: 'log-agent', own });
    // A CRR kill runs the carried hook, never a call to the daemon's own endpoint.
    expect(planPreStop({ name: 'log-agent', lifecycle: { preStop: hook } } as never, '10.0.0.1')).toEqual({
      type: 'exec',
      command: own.exec.command,
    });
  });

  it('keeps the own hook of a spec copied from a live pod (never wraps its own hook)', () => {
    const own = { httpGet: { port: 8080, path: '/drain' } };
    const first = pod('{"log-agent":1,"envoy":2}', { preStop: own });
    wireExitPriority(first, 'ns', TOKEN);
    const copy = pod('{"log-agent":1,"envoy":2}', { preStop: preStopOf(first, 'log-agent') });
    wireExitPriority(copy, 'other', 'ffffffffffffffffffff');
    expect(readExitPriorityHook(preStopOf(copy, 'log-agent'))).toEqual({
      namespace: 'other',
      token: 'ffffffffffffffffffff',
      container: 'log-agent',
      own,
    });
  });

  it.each([
    ['unknown container', '{"envoi":2}', {}, /names container "envoi", which is not in the pod/],
    ['negative', '{"envoy":-1}', {}, /priority of "envoy" must be a non-negative integer, got -1/],
    ['not an integer', '{"envoy":"2"}', {}, /must be a non-negative integer, got "2"/],
    ['not JSON', '{envoy:2}', {}, /not valid JSON/],
    ['grace too short', '{"log-agent":1,"envoy":2}', { grace: 4 }, /terminationGracePeriodSeconds 4 cannot fit the 3 exit levels/],
  ])('refuses %s with the checker message and pointer', (_name, annotation, extra, message) => {
    const result = wireExitPriority(pod(annotation, extra), 'ns', TOKEN) as { deny: string };
    expect(result.deny).toMatch(message);
    expect(result.deny).toMatch(/\(at \/(metadata|spec)/);
  });

  it('refuses an own preStop too large to carry', () => {
    const result = wireExitPriority(pod('{"log-agent":1}', { preStop: { exec: { command: ['x'.repeat(9000)] } } }), 'ns', TOKEN);
    expect((result as { deny: string }).deny).toMatch(/cannot carry/);
  });

  it('runs last on /mutate-pod and leaves pods without the annotation alone', async () => {
    const ctx = { featureGates: new Map([['ContainerExitPriority', true]]) } as unknown as ControllerContext;
    // The mutators that read no cache (SidecarSet injection needs informers; its own tests cover it).
    const [handler] = composeAdmission(POD_MUTATORS.filter((d) => d.reads.length === 0).flatMap((d) => d.setup(ctx)));
    const req = (object: Pod): AdmissionRequest => ({
      uid: 'u',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      operation: 'CREATE',
      namespace: 'ns',
      object,
    });
    expect((await handler!.handle(req(pod(undefined)))) as { patch?: unknown }).not.toHaveProperty('patch');
    const wired = await handler!.handle(req(pod('{"envoy":2}')));
    expect(wired.allowed).toBe(true);
    expect((wired as { patch?: unknown }).patch).toEqual([
      expect.objectContaining({ op: 'add', path: '/spec/containers/2/lifecycle', value: { preStop: expect.any(Object) } }),
    ]);
    const refused = await handler!.handle(req(pod('{"envoi":2}')));
    expect(refused).toMatchObject({ allowed: false, code: 400, message: expect.stringMatching(/envoi/) });
  });
});

describe('hook paths', () => {
  it.each([
    ['/exit-priority/v1/ns/0123456789abcdef0123/envoy', { namespace: 'ns', token: '0123456789abcdef0123', container: 'envoy' }],
    ['/exit-priority/v1/ns/0123456789abcdef0123/envoy/../x', undefined],
    ['/exit-priority/v1/NS/0123456789abcdef0123/envoy', undefined],
    ['/exit-priority/v1/ns/short/envoy', undefined],
    [`/exit-priority/v1/${'a'.repeat(300)}/0123456789abcdef0123/envoy`, undefined],
    ['/healthz', undefined],
  ])('%s', (path, want) => {
    expect(parseExitPriorityHookPath(path)).toEqual(want);
    if (want) expect(exitPriorityHookPath(want)).toBe(path);
  });
});

describe('daemon: which pod a hook names', () => {
  const wired = () => {
    const p = pod('{"log-agent":1,"envoy":2}');
    wireExitPriority(p, 'ns', TOKEN);
    return p;
  };
  it('finds the pod whose container spec carries exactly this hook', () => {
    const found = findHookPod([pod(undefined), wired()], { namespace: 'ns', token: TOKEN, container: 'envoy' });
    expect(found?.container.name).toBe('envoy');
  });
  it.each([
    ['another token', { namespace: 'ns', token: 'ffffffffffffffffffff', container: 'envoy' }],
    ['another namespace', { namespace: 'other', token: TOKEN, container: 'envoy' }],
    ['a level-0 container (no hook)', { namespace: 'ns', token: TOKEN, container: 'app' }],
  ])('finds nothing for %s', (_n, target) => {
    expect(findHookPod([wired()], target)).toBeUndefined();
  });
});

describe('daemon: when a held hook is answered', () => {
  const plan = (grace?: number, deleting = true) => ({
    ...podExitPlan(pod('{"log-agent":1,"envoy":2}', grace === undefined ? {} : { grace })),
    deleting,
  });
  it.each([
    {
      name: 'envoy waits while app runs',
      container: 'envoy',
      waitedMs: 0,
      running: ['app', 'log-agent', 'envoy'],
      release: false,
      waitingFor: ['app', 'log-agent'],
    },
    {
      name: 'envoy waits for log-agent after app exited',
      container: 'envoy',
      waitedMs: 3000,
      running: ['log-agent', 'envoy'],
      release: false,
      waitingFor: ['log-agent'],
    },
    {
      name: 'envoy released once both lower levels exited',
      container: 'envoy',
      waitedMs: 3000,
      running: ['envoy'],
      release: true,
      reason: /lower levels exited/,
    },
    {
      name: 'log-agent released once app exited',
      container: 'log-agent',
      waitedMs: 100,
      running: ['log-agent', 'envoy'],
      release: true,
      reason: /lower levels exited/,
    },
    {
      name: 'log-agent released when its share (10 s of 30) is spent',
      container: 'log-agent',
      waitedMs: 10_000,
      running: ['app', 'log-agent'],
      release: true,
      reason: /share of the grace period spent \(still running: app\)/,
    },
    {
      name: 'envoy still waits at 19.9 s (share 20 s)',
      container: 'envoy',
      waitedMs: 19_900,
      running: ['app'],
      release: false,
      waitingFor: ['app'],
    },
    {
      name: 'a level-0 container is never held',
      container: 'app',
      waitedMs: 0,
      running: ['app', 'log-agent'],
      release: true,
      reason: /lowest exit level/,
    },
  ])('$name', ({ container, waitedMs, running, release, waitingFor, reason }) => {
    const d = decideHook({ container, plan: plan(), waitedMs, running: new Set(running) });
    expect(d.release).toBe(release);
    if (d.release) expect(d.reason).toMatch(reason!);
    else {
      expect(d.waitingFor).toEqual(waitingFor);
      expect(d.checkAgainMs).toBeLessThanOrEqual(50);
    }
  });

  it('looks again at the given pace while exits are pushed, never past the level deadline', () => {
    const waiting = { container: 'log-agent', plan: plan(), running: new Set(['app']), pollMs: 500 };
    const early = decideHook({ ...waiting, waitedMs: 1_000 });
    expect(early.release === false && early.checkAgainMs).toBe(500);
    const late = decideHook({ ...waiting, waitedMs: 9_800 });
    expect(late.release === false && late.checkAgainMs).toBeLessThan(500);
  });

  it.each([
    ['containerd', '1.6.20~ds1', true],
    ['containerd', 'v1.7.13', true],
    ['containerd', 'v2.0.0', true],
    ['containerd', 'v1.6.19', false],
    ['containerd', 'v1.5.18', false],
    ['containerd', 'devel', false],
    ['cri-o', '1.30.0', false],
  ])('stops a released container itself only on a runtime that signals once: %s %s -> %s', (name, version, once) => {
    expect(runtimeSignalsOnce(name, version)).toBe(once);
  });

  it("gives the daemon's stop the kubelet's timeout: the grace period left after the hook, at least 2 s", () => {
    expect(stopTimeoutAfterHookSeconds(30, 10_200)).toBe(20);
    expect(stopTimeoutAfterHookSeconds(30, 29_500)).toBe(2);
  });

  it('uses the deletion grace period over the pod spec (kubectl delete --grace-period)', () => {
    const p = pod('{"log-agent":1,"envoy":2}', { grace: 30 });
    (p.metadata as any).deletionTimestamp = '2026-01-01T00:00:03Z';
    (p.metadata as any).deletionGracePeriodSeconds = 3;
    const short = podExitPlan(p);
    expect(short).toMatchObject({ graceSeconds: 3, deleting: true });
    // 3 s cannot hold 3 levels of 2 s: envoy waits at most until 1 s, leaving the kubelet's 2 s minimum.
    expect(decideHook({ container: 'envoy', plan: short, waitedMs: 1000, running: new Set(['app']) }).release).toBe(true);
    expect(ownPreStopBudgetMs(short, 1000)).toBe(0);
  });

  it('ignores a hostile annotation (only valid entries count)', () => {
    const p = pod('{"envoy":2,"app":"x"}');
    expect(podExitPlan(p).levels.map((l) => l.containers)).toEqual([['app', 'log-agent'], ['envoy']]);
    expect(podExitPlan(pod('not json')).levels).toHaveLength(1);
  });
});

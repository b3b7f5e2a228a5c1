// Daemon bounds against hostile specs: backoffLimit is bounded by the schema, a pull backing off holds no
// worker, and user durations past Node's timer range never become 1 ms timers.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { validateObject } from '../../../../src/api/validate.js';
import { MAX_PULL_BACKOFF_LIMIT } from '../../../../src/api/kinds/imagepulljob.js';
import { WorkQueue } from '../../../../src/runtime/core/queue.js';
import { MAX_TIMER_MS, clampTimerMs, clampTimerSeconds } from '../../../../src/runtime/core/timers.js';
import type { CriClient } from '../../../../src/runtime/cri/client.js';
import { Puller } from '../../../../src/runtime/daemon/imagepull/puller.js';
import type { PullTask } from '../../../../src/runtime/daemon/imagepull/decision.js';
import { killContainer } from '../../../../src/runtime/daemon/crr/kill.js';

describe('pullPolicy.backoffLimit is bounded by the schema', () => {
  const job = (backoffLimit: number) => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name: 'j', namespace: 'n' },
    spec: { image: 'busybox:1', completionPolicy: { type: 'Always' }, pullPolicy: { backoffLimit } },
  });
  it.each([
    [0, true],
    [MAX_PULL_BACKOFF_LIMIT, true],
    [MAX_PULL_BACKOFF_LIMIT + 1, false],
    [2_147_483_647, false],
  ])('backoffLimit %s valid: %s', (n, ok) => {
    const issues = validateObject(job(n)).issues;
    expect(issues.length === 0, JSON.stringify(issues)).toBe(ok);
    if (!ok) expect(issues[0]!.jsonPointer).toBe('/spec/pullPolicy/backoffLimit');
  });
});

describe('timer clamping', () => {
  it.each([
    [-5, 0],
    [Number.NaN, 0],
    [0, 0],
    [1.2, 2],
    [MAX_TIMER_MS, MAX_TIMER_MS],
    [MAX_TIMER_MS + 1, MAX_TIMER_MS],
    [Number.POSITIVE_INFINITY, MAX_TIMER_MS],
    [2 ** 63 * 1000, MAX_TIMER_MS],
  ])('clampTimerMs(%s) = %s', (ms, want) => expect(clampTimerMs(ms)).toBe(want));

  it.each([
    [30, 30],
    [2 ** 40, Math.floor(MAX_TIMER_MS / 1000)],
    [-1, 0],
  ])('clampTimerSeconds(%s) = %s', (s, want) => expect(clampTimerSeconds(s)).toBe(want));

  it('a requeue far in the future is not run at once', async () => {
    const q = new WorkQueue({});
    q.addAfter('k', 2 ** 40);
    await new Promise((r) => setTimeout(r, 50));
    expect(q.depth).toBe(0);
    q.shutDown();
  });

  it('a huge terminationGracePeriodSeconds gives the preStop its time instead of a 1 ms timeout', async () => {
    let execTimeout = -1;
    let stopTimeout = -1;
    const cri = {
      execSync: async (_id: string, _cmd: string[], t: number) => {
        execTimeout = t;
        await new Promise((r) => setTimeout(r, 30));
        return { exitCode: 0, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };
      },
      stopContainer: async (_id: string, t: number) => {
        stopTimeout = t;
      },
    } as unknown as CriClient;
    const out = await killContainer(cri, {
      containerId: 'abc',
      podContainer: { name: 'c', lifecycle: { preStop: { exec: { command: ['true'] } } } },
      gracePeriodSeconds: 9_223_372_036,
    });
    expect(out.preStopError).toBeUndefined();
    expect(execTimeout).toBe(Math.floor(MAX_TIMER_MS / 1000));
    expect(stopTimeout).toBeGreaterThan(2_000_000);
  });
});

describe('a pull backing off holds no worker', () => {
  const task = (image: string, backoffLimit: number): PullTask => ({
    ref: `${image}:1`,
    image,
    tag: '1',
    version: 1,
    imagePullPolicy: 'Always',
    timeoutSeconds: 5,
    backoffLimit,
    pullSecrets: [],
  });

  it('a failing image in backoff lets another image pull with the only worker', async () => {
    const pulled: string[] = [];
    const cri = {
      pullImage: async (ref: string) => {
        if (ref.startsWith('broken')) throw new Error('manifest unknown');
        pulled.push(ref);
        return 'sha256:ok';
      },
    } as unknown as CriClient;
    const results: Array<{ image: string; phase?: string }> = [];
    const puller = new Puller(
      cri,
      async () => null,
      1,
      pino({ level: 'silent' }),
      (r) => results.push({ image: r.image, phase: r.status.phase }),
    );
    puller.submit(task('broken', MAX_PULL_BACKOFF_LIMIT));
    // Let the first attempt fail and the backoff (1 s) begin.
    await new Promise((r) => setTimeout(r, 50));
    expect(puller.busyWorkers).toBe(0);
    puller.submit(task('good', 0));
    for (let i = 0; i < 50 && pulled.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(pulled).toEqual(['good:1']);
    expect(results).toContainEqual({ image: 'good', phase: 'Succeeded' });
    puller.stop();
  });
});

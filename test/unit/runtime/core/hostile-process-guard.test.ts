// Process-level guards: a stray rejection or a lone uncaught exception is logged and the process keeps
// running; a burst of uncaught exceptions exits for a restart.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { onUncaught } from '../../../../src/runtime/core/process-guard.js';

const child = fileURLToPath(new URL('../../support/guarded-process.ts', import.meta.url));

function run(maxUncaught: number) {
  return spawnSync(process.execPath, ['--import', 'tsx', child, String(maxUncaught)], { encoding: 'utf8', timeout: 30_000 });
}

describe('onUncaught', () => {
  const policy = { maxUncaught: 2, windowMs: 1000 };
  it.each([
    ['the first one', [], 5000, false, [5000]],
    ['the second within the window', [4500], 5000, false, [4500, 5000]],
    ['the third within the window', [4200, 4500], 5000, true, [4200, 4500, 5000]],
    ['old ones fall out of the window', [1000, 2000, 4500], 5000, false, [4500, 5000]],
  ] as const)('%s', (_name, history, now, exit, kept) => {
    expect(onUncaught(history, now, policy)).toEqual({ exit, history: kept });
  });
});

describe('installProcessGuards in a real process', () => {
  it('logs an unhandled rejection and two uncaught exceptions and keeps running', () => {
    const r = run(5);
    expect(r.stdout).toBe('alive\n');
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/unhandled promise rejection.*process keeps running/);
    expect(r.stderr).toMatch(/"err":"forgotten catch"/);
    expect(r.stderr).toMatch(/"err":"thrown from a timer".*uncaught exception/);
    expect(r.stderr).toMatch(/"err":"thrown again from a timer"/);
  });

  it('exits 1 when uncaught exceptions come faster than the policy allows', () => {
    const r = run(1);
    expect(r.stdout).toBe('');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/repeated uncaught exceptions; exiting for a restart/);
  });
});

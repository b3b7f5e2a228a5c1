// One whole process measured as a user feels it: wall time by our clock, CPU time and peak RSS from GNU time
// (its %M is the process tree's largest resident set, which /proc of a finished process no longer has).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export const GNU_TIME = '/usr/bin/time';

export interface ProcessSample {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly rssMb: number;
}

/** Throws a clear error when GNU time is missing (it is a Debian package, not part of coreutils). */
export function requireGnuTime(): void {
  if (!existsSync(GNU_TIME)) throw new Error(`${GNU_TIME} (GNU time) is needed for peak RSS: apt-get install time`);
}

/**
 * Runs `argv` once under GNU time and expects `expectStatus`; its stdout is dropped unless `keepStdout`.
 * The environment is this process's without NODE_EXTRA_CA_CERTS: Node reads and parses that bundle at every
 * start whatever it runs, which a peer written in Go never does.
 */
export function runMeasured(argv: readonly string[], expectStatus: number, options: { keepStdout?: boolean } = {}): ProcessSample {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  const t0 = performance.now();
  const r = spawnSync(GNU_TIME, ['-f', '%U %S %M', ...argv], {
    encoding: 'utf8',
    env,
    stdio: ['ignore', options.keepStdout ? 'pipe' : 'ignore', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallMs = performance.now() - t0;
  if (r.status !== expectStatus)
    throw new Error(
      `${argv.join(' ')} exited ${r.status}, expected ${expectStatus}:\n${(r.stdout ?? '').slice(-2000)}\n${r.stderr.slice(-2000)}`,
    );
  const [user, system, kb] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number, number];
  return { wallMs, cpuMs: (user + system) * 1000, rssMb: kb / 1024 };
}

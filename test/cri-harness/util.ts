import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      server.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Polls `check` until it returns true (errors count as "not yet"), or fails naming `what`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Starts a long-running tool with stdout and stderr appended to `logPath` (read it when the tool dies). */
export function spawnLogged(command: string, args: readonly string[], logPath: string): ChildProcess {
  const log = createWriteStream(logPath, { flags: 'a' });
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // Two sources into one file: neither may end it (the other could still write), the process's close does.
  proc.stdout!.pipe(log, { end: false });
  proc.stderr!.pipe(log, { end: false });
  proc.once('close', () => log.end());
  return proc;
}

/** SIGTERM, then SIGKILL if the process has not exited within `graceMs`. */
export async function stopProcess(proc: ChildProcess, graceMs: number): Promise<void> {
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
  if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
}

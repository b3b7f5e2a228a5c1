// `cdk8s-kruise controller` as a child process with its JSON log lines parsed. No vitest or harness
// imports: the benchmark (bench/sidecarterminator.bench.ts) uses it outside the test runner too.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** A free loopback TCP port (bound and released). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Every access log written by processes of this test run (per test file). */
export const accessLogs: string[] = [];

export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/** `cdk8s-kruise controller` in a child process, with its JSON log lines parsed. */
export class ControllerProcess {
  readonly logs: LogLine[] = [];
  readonly stderr: string[] = [];
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  exitCode: number | null | undefined;
  private readonly waiters: Array<{ pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }> = [];

  private constructor(
    args: string[],
    readonly accessLog: string,
    entry: string[],
  ) {
    this.child = spawn(process.execPath, [...entry, 'controller', ...args], {
      cwd: repoRoot,
      env: { ...process.env, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buf = '';
    this.child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          const l = JSON.parse(line) as LogLine;
          this.logs.push(l);
          for (const w of [...this.waiters]) {
            if (w.pred(l)) {
              this.waiters.splice(this.waiters.indexOf(w), 1);
              w.resolve(l);
            }
          }
        } catch {
          this.stderr.push(line);
        }
      }
    });
    this.child.stderr!.on('data', (c: Buffer) => this.stderr.push(c.toString()));
    this.exited = new Promise((r) =>
      this.child.on('exit', (code) => {
        this.exitCode = code;
        r(code);
      }),
    );
  }

  /** Starts a controller; `args` are extra flags. Resolves once it logs `probes listening`. */
  static async start(
    kubeconfig: string,
    namespace: string,
    args: string[],
    opts: { logLevel?: string; /** Node arguments that run the CLI; default: tsx on src/cli/main.ts. */ entry?: string[] } = {},
  ): Promise<ControllerProcess> {
    const dir = mkdtempSync(path.join(tmpdir(), 'kruise-ctl-'));
    const accessLog = path.join(dir, 'access.jsonl');
    accessLogs.push(accessLog);
    const p = new ControllerProcess(
      [
        '--kubeconfig',
        kubeconfig,
        '--namespace',
        namespace,
        '--health-probe-addr',
        '127.0.0.1:0',
        '--metrics-addr',
        '0',
        '--strict-permissions',
        '--access-log',
        accessLog,
        '--log-level',
        opts.logLevel ?? 'debug',
        ...args,
      ],
      accessLog,
      opts.entry ?? ['--import', 'tsx', path.join(repoRoot, 'src/cli/main.ts')],
    );
    await p.waitForLog((l) => l.msg === 'probes listening', 60_000);
    return p;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get healthPort(): number {
    return this.logs.find((l) => l.msg === 'probes listening')!.healthPort as number;
  }

  get identity(): string {
    return this.logs.find((l) => l.msg === 'probes listening')!.identity as string;
  }

  waitForLog(pred: (l: LogLine) => boolean, timeoutMs = 30_000): Promise<LogLine> {
    const found = this.logs.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      this.waiters.push(w);
      const t = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`controller ${this.child.pid}: no matching log line in ${timeoutMs} ms; last lines:\n${this.tail()}`));
      }, timeoutMs);
      void this.exited.then(() => {
        if (this.waiters.includes(w)) {
          clearTimeout(t);
          this.waiters.splice(this.waiters.indexOf(w), 1);
          reject(new Error(`controller ${this.child.pid} exited (${this.exitCode}); last lines:\n${this.tail()}`));
        }
      });
      w.resolve = (l) => {
        clearTimeout(t);
        resolve(l);
      };
    });
  }

  tail(n = 15): string {
    return [...this.logs.slice(-n).map((l) => JSON.stringify(l)), ...this.stderr.slice(-5)].join('\n');
  }

  async get(pathname: string): Promise<{ status: number; text: string }> {
    const res = await fetch(`http://127.0.0.1:${this.healthPort}${pathname}`);
    return { status: res.status, text: await res.text() };
  }

  async waitReady(timeoutMs = 60_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < until) {
      if (this.exitCode !== undefined) throw new Error(`controller exited (${this.exitCode}):\n${this.tail()}`);
      try {
        const r = await this.get('/readyz');
        if (r.status === 200) return;
        last = r.text;
      } catch (err) {
        last = (err as Error).message;
      }
      await sleep(100);
    }
    throw new Error(`controller not ready in ${timeoutMs} ms: ${last}\n${this.tail()}`);
  }

  /** Value of one Prometheus series (sum over matching label sets). */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const { text } = await this.get('/metrics');
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(name)) continue;
      const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
      if (!m || m[1] !== name) continue;
      const ls = m[2] ?? '';
      if (Object.entries(labels).every(([k, v]) => ls.includes(`${k}="${v}"`))) sum += Number(m[3]);
    }
    return sum;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.exitCode === undefined) this.child.kill(signal);
    return this.exited;
  }
}

/** Polls `fn` until it returns a truthy value. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const until = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < until) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    await sleep(50);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ''}`);
}

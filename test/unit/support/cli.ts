// Running the cdk8s-kruise CLI from unit tests: in process (fast; the binary's startup costs seconds on a
// loaded machine) or as the real binary (Node 24 + tsx), as a user or CI would.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { vi } from 'vitest';
import { registerCommands } from '../../../src/cli/commands/index.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** The binary's entry point (src/cli/main.ts), run with `node --import tsx`. */
export const cliMain = path.join(repoRoot, 'src/cli/main.ts');

export interface CliResult {
  /** Exit code: process.exit's argument, else process.exitCode, else 0 (null if a spawned binary was killed). */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

class ExitSignal extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** The commander program in this process: stdout/stderr captured, process.exit intercepted. */
export async function runCli(args: string[]): Promise<CliResult & { code: number }> {
  const out: string[] = [];
  const err: string[] = [];
  const so = vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => (out.push(String(c)), true));
  const se = vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => (err.push(String(c)), true));
  const ex = vi.spyOn(process, 'exit').mockImplementation((code?: number | string | null) => {
    throw new ExitSignal(Number(code ?? 0));
  });
  let code: number;
  try {
    const program = new Command().name('cdk8s-kruise');
    registerCommands(program);
    await program.parseAsync(['node', 'cdk8s-kruise', ...args]);
    code = Number(process.exitCode ?? 0);
  } catch (e) {
    if (!(e instanceof ExitSignal)) throw e;
    code = e.code;
  } finally {
    process.exitCode = undefined;
    so.mockRestore();
    se.mockRestore();
    ex.mockRestore();
  }
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** tsx's loader by its URL: `--import tsx` would be resolved from the child's working directory, maybe outside the repository. */
function tsxLoader(): string {
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const entry = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: { '.': string } }).exports['.'];
  return pathToFileURL(path.join(path.dirname(manifest), entry)).href;
}

/** Runs the real CLI binary (Node 24 + tsx) with `input` on stdin, from the repository root unless `cwd` says otherwise. */
export function spawnCli(args: string[], opts: { input?: string | Buffer; cwd?: string } = {}): CliResult {
  const r = spawnSync(process.execPath, ['--import', tsxLoader(), cliMain, ...args], {
    cwd: opts.cwd ?? repoRoot,
    input: opts.input ?? '',
    encoding: 'utf8',
    env: { ...process.env, FORCE_COLOR: '0' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// The npm package as a user gets it, for tests that run its CLI: `npm pack` of a snapshot of HEAD (the `prepare`
// build runs in the snapshot, so the shared working tree's lib/ is neither read nor rewritten while others edit it),
// installed into an empty project from the tarball. Packages come through the same npm cache outside the repository
// as the package-consumer test's, so reruns are fast. Needs the npm registry (or that cache).
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../..');
const npmCache = path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'cdk8s-kruise', 'npm-cache');

/**
 * The environment of a fresh shell: no npm_* variables of the npm that started the tests (they point npm at this
 * repository), no directory of this repository on PATH, the shared npm cache.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD'));
  const PATH = (env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => !dir.startsWith(repoRoot))
    .join(path.delimiter);
  return { ...env, PATH, npm_config_cache: npmCache, npm_config_update_notifier: 'false', NO_COLOR: '1', FORCE_COLOR: '0', ...extra };
}

/** Runs a command as a user would; on failure the error carries its output. */
export async function userRun(
  cwd: string,
  file: string,
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(file, args, { cwd, env: userEnv(extra), maxBuffer: 64 << 20 });
  } catch (e) {
    const err = e as Error & { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed in ${cwd}:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`, { cause: e });
  }
}

export interface PackedPackage {
  /** The tarball `npm pack` wrote. */
  readonly tarball: string;
  /** A project with only the tarball installed (`npx --no-install cdk8s-kruise` runs its CLI). */
  readonly project: string;
  readonly packSeconds: number;
  readonly installSeconds: number;
}

/** Packs a snapshot of HEAD under `work` and installs the tarball into an empty project there. */
export async function packAndInstall(work: string): Promise<PackedPackage> {
  const checkout = path.join(work, 'checkout');
  mkdirSync(checkout, { recursive: true });
  await userRun(repoRoot, 'git', ['archive', '--output', path.join(work, 'head.tar'), 'HEAD']);
  await userRun(checkout, 'tar', ['-xf', path.join(work, 'head.tar')]);
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(checkout, 'node_modules'));
  const t0 = Date.now();
  const { stdout } = await userRun(checkout, 'npm', ['pack', '--json', '--pack-destination', work]);
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string }[];
  const tarball = path.join(work, info!.filename);
  const packSeconds = (Date.now() - t0) / 1000;
  const project = path.join(work, 'project');
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, 'package.json'), '{ "name": "platform", "private": true }\n');
  const t1 = Date.now();
  await userRun(project, 'npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=peer', tarball]);
  return { tarball, project, packSeconds, installSeconds: (Date.now() - t1) / 1000 };
}

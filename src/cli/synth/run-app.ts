import { spawn, type ChildProcess } from 'node:child_process';

let running: ChildProcess | undefined;

/**
 * Runs the cdk8s app command like the cdk8s CLI does (through a shell, CDK8S_OUTDIR pointing at `outdir`,
 * construct metadata recorded). The app's own output goes to stderr so stdout stays machine-readable. It runs in
 * its own process group so that an interrupted synth can stop the whole app (shell and children) at once.
 */
export function runApp(
  command: string,
  outdir: string,
  cwd: string,
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, {
      cwd,
      shell: true,
      detached: true,
      stdio: ['ignore', 2, 2],
      env: { ...process.env, ...extraEnv, CDK8S_OUTDIR: outdir, CDK8S_RECORD_CONSTRUCT_METADATA: 'true' },
    });
    running = child;
    child.on('error', reject);
    child.on('close', (code, signal) => {
      running = undefined;
      resolve({ code, signal });
    });
  });
}

/** Stops the app started by runApp, if one is running (its whole process group). */
export function stopApp(): void {
  const pid = running?.pid;
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

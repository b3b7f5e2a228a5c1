import { spawn } from 'node:child_process';

/**
 * Runs the cdk8s app command like the cdk8s CLI does (through a shell, CDK8S_OUTDIR pointing at `outdir`,
 * construct metadata recorded). The app's own output goes to stderr so stdout stays machine-readable.
 */
export function runApp(command: string, outdir: string, cwd: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, {
      cwd,
      shell: true,
      stdio: ['ignore', 2, 2],
      env: { ...process.env, CDK8S_OUTDIR: outdir, CDK8S_RECORD_CONSTRUCT_METADATA: 'true' },
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
}

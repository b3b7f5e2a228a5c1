import { Command } from 'commander';
import { guarded, usageExitCodes } from '../report.js';
import type { ApplyOptions } from './apply-run.js';

export function register(program: Command): void {
  const cmd = program
    .command('apply')
    .description('Apply a synth output to the cluster in phases: CRDs (wait Established), runtime (wait rolled out), app')
    .argument('[dir]', 'output directory written by `cdk8s-kruise synth` (plain or --gitops flux layout)', 'dist')
    .option('--kubectl <path>', 'kubectl binary', 'kubectl')
    .option('--kubeconfig <file>', 'kubeconfig passed to kubectl')
    .option('--context <name>', 'kubeconfig context passed to kubectl')
    .option('--timeout <seconds>', 'how long each wait may take', '180')
    .option('-q, --quiet', 'no progress lines (errors are still printed)')
    .addHelpText(
      'after',
      '\nPhases: 1. CRDs, then `kubectl wait --for condition=established`; 2. the runtime, then `kubectl rollout status` of\n' +
        'its Deployments and DaemonSets (the controller-manager serves the admission webhooks); 3. the app, in\n' +
        'kustomization order. ops/ (one-shot operations) is never applied. Server-side apply, field manager cdk8s-kruise.\n' +
        'Exit codes: 0 every phase done, 1 a phase failed or timed out (later phases are not applied), 2 usage error.',
    )
    .action(guarded(async (dir: string, opts: ApplyOptions) => (await import('./apply-run.js')).apply(dir, opts)));
  usageExitCodes(cmd);
}

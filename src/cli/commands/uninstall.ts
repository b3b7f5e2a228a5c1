import { Command } from 'commander';
import { guarded, usageExitCodes } from '../report.js';
import type { UninstallOptions } from './uninstall-run.js';

export function register(program: Command): void {
  const cmd = program
    .command('uninstall')
    .description('Remove the runtime and the CRDs a synth output installed; refused while any Kruise object exists')
    .argument('[dir]', 'output directory written by `cdk8s-kruise synth` (plain or --gitops flux layout)', 'dist')
    .option('--kubectl <path>', 'kubectl binary', 'kubectl')
    .option('--kubeconfig <file>', 'kubeconfig passed to kubectl')
    .option('--context <name>', 'kubeconfig context passed to kubectl')
    .option('--timeout <seconds>', 'how long each deletion may take', '180')
    .option('-q, --quiet', 'no progress lines (errors are still printed)')
    .addHelpText(
      'after',
      '\nDeleting a CRD deletes every object of its kind, so uninstall first lists the objects of every CRD the output\n' +
        'installs and refuses while any exists (as the Helm chart of upstream OpenKruise guards its uninstall). Then it\n' +
        'deletes the runtime, checks again, and deletes the CRDs. The app and ops/ are never touched.\n' +
        'Exit codes: 0 removed (or nothing was installed), 1 refused or a deletion failed, 2 usage error.',
    )
    .action(guarded(async (dir: string, opts: UninstallOptions) => (await import('./uninstall-run.js')).uninstall(dir, opts)));
  usageExitCodes(cmd);
}

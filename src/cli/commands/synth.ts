import { Command, Option } from 'commander';
import { DEFAULT_MAX_FINDINGS, FORMATS, guarded, usageExitCodes } from '../report.js';
import type { SynthOptions } from './synth-run.js';

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function register(program: Command): void {
  const cmd = program
    .command('synth')
    .description('Run the cdk8s app, check every rule, and only if nothing fails replace the output directory atomically')
    .option('-a, --app <command>', 'command that runs the cdk8s app (default: "app" in cdk8s.yaml)')
    .option('-o, --output <dir>', 'output directory (default: "output" in cdk8s.yaml, else dist)')
    .option('-c, --config <file>', 'cdk8s config file', 'cdk8s.yaml')
    .option('--sync-waves', 'annotate objects with Argo CD sync waves: CRDs -2, runtime -1, app 0')
    .addOption(
      new Option(
        '--gitops <target>',
        'output layout: plain (kubectl/kustomize), argocd (sync waves + Application), flux (crds/, runtime/, app/ + Flux Kustomizations)',
      )
        .choices(['plain', 'argocd', 'flux'])
        .default('plain'),
    )
    .option(
      '--repo-path <path>',
      'path of the output directory in the Git repository, for Flux spec.path and Argo CD source.path (default: the output directory relative to the working directory)',
    )
    .option('--repo-url <url>', "Argo CD: the Application's source.repoURL (default: repoURL of the KruiseValidation entry in cdk8s.yaml)")
    .option(
      '--target-revision <rev>',
      "Argo CD: the Application's source.targetRevision (default: targetRevision of the KruiseValidation entry in cdk8s.yaml, else HEAD)",
    )
    .addOption(new Option('-f, --format <format>', 'findings report format').choices(FORMATS).default('text'))
    .option('--report <file>', 'write the findings report to a file (e.g. --format sarif --report kruise.sarif)')
    .option('-r, --rule <id>', 'run only this rule (repeatable)', collect)
    .option('-s, --skip-rule <id>', 'do not run this rule (repeatable)', collect)
    .option('-W, --warnings-as-errors', 'fail on warnings too')
    .option('-v, --verbose', 'progress and timing on stderr (default: only when stderr is a terminal)')
    .option('-q, --quiet', 'no progress or timing, even on a terminal')
    .option('--max-findings <n>', 'findings listed in the report (the summary counts all; 0 lists all)', String(DEFAULT_MAX_FINDINGS))
    .option('--clean', 'take over an output directory that holds only what `cdk8s synth` writes (*.k8s.yaml, construct-metadata.json)')
    .option(
      '--capabilities-from-cluster',
      "read the platform runtime's capabilities (ConfigMap kruise-runtime-capabilities) with kubectl and hand them to the app's KruiseRuntime (target PLATFORM)",
    )
    .option('--runtime-namespace <ns>', 'with --capabilities-from-cluster: namespace of the platform runtime', 'kruise-system')
    .option('--kubectl <path>', 'with --capabilities-from-cluster: kubectl binary', 'kubectl')
    .option('--kubeconfig <file>', 'with --capabilities-from-cluster: kubeconfig passed to kubectl')
    .option('--context <name>', 'with --capabilities-from-cluster: kubeconfig context passed to kubectl')
    .option(
      '--pre-pull',
      "pre-pull for every workload (not only those under ImagePrePull.enableIn): for each new image since the previous output, an ImagePullJob on the nodes of the workload's pods, applied before the app",
    )
    .option(
      '--previous <dir|commit>',
      'with pre-pull or an InPlaceOnly workload: the output to compare with, a directory or a Git commit whose output directory is read (default: the output directory as it is)',
    )
    .option('--allow-empty', 'write the output even when the app produced no manifests (otherwise that fails the synth)')
    .addHelpText(
      'after',
      '\nOutput: 00-crds.yaml, 10-runtime.yaml, 20-app-<chart id>.yaml (apply order), kustomization.yaml, ops/<chart id>.yaml\n' +
        '(one-shot operations such as ContainerRecreateRequests, listed by no kustomization) and the marker\n' +
        '.cdk8s-kruise-synth. Synth replaces only a directory holding that marker, or an empty one, and never the working\n' +
        'directory or its parents. Concurrent synths into one directory: the second fails (lock file beside it).\n' +
        'Exit codes: 0 written, 1 the app failed or findings failed the synth (output left untouched), 2 usage error.',
    )
    .action(
      // The app runner, engine and rules load only when the command runs (--help/--version stay fast).
      guarded(async (opts: SynthOptions) => (await import('./synth-run.js')).synth(opts)),
    );
  usageExitCodes(cmd);
}

// Cold start of the published `cdk8s-kruise` binary (the esbuild bundle `npm run build` writes to lib/cli/)
// against kubeconform, the validator teams run on cdk8s output, built from Go modules as users install it.
// Same run, interleaved, whole-process wall time and peak RSS (GNU time's %M) of:
//   --version                          vs `kubeconform -v`
//   validate of one CloneSet manifest  vs kubeconform on the same file against our editor JSON Schema of
//                                        CloneSet (`cdk8s-kruise schema`), so both check the same schema offline.
// Targets: --version <= 100 ms, validate <= 200 ms and <= 80 MB; reported next to the ratios, since absolute
// times move with the machine's load.
// Also reported: CPU time (user + system) of each process, which other users' load inflates far less than wall time.
// On a shared, loaded machine run the whole bench under SCHED_FIFO (`chrt -f 50 node_modules/.bin/tsx
// bench/cli-coldstart.bench.ts`, as root): the bench and every measured process (ours and kubeconform) then get
// the CPU when they need it, so the wall times are those of an idle machine. NODE_EXTRA_CA_CERTS is removed from the measured
// processes' environment: Node 20 reads and parses that CA bundle at every start (~60 ms here), whatever it runs.
// Usage: npm run build && npm run bench:cli-coldstart [-- --reps N --warmup N --node /path/to/node --cli FILE --json]
// --cli measures another build of the CLI instead of lib/cli/, e.g. the runtime image's (src/image/app.ts; write it
// with `npm run image -- --stage-app DIR`, then pass DIR/app/bin/cdk8s-kruise.mjs).
// kubeconform is built by `bash test/prepare.sh` (test/prepare.d/25-kubeconform.sh) into the build cache.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findKubeconform, KUBECONFORM_VERSION } from '../test/harness/kubeconform.js';
import { benchArgs, median, ratio, repeat } from './lib.js';
import { recordBench } from './record.js';
import { requireGnuTime, runMeasured, type ProcessSample } from './support/process-sample.js';

const TARGETS = { versionMs: 100, validateMs: 200, validateMb: 80 };

const args = benchArgs({ reps: 15, warmup: 3 }, { node: { type: 'string', default: process.execPath }, cli: { type: 'string' } });
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = args.extra.cli ? path.resolve(args.extra.cli) : path.join(repoRoot, 'lib', 'cli', 'cdk8s-kruise.mjs');
const node = args.extra.node;

if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first (the benchmark measures the published bundle)`);
requireGnuTime();

/** The scheduling policy of this process (field 41 of /proc/self/stat): 0 normal, 1 SCHED_FIFO. */
function schedulingPolicy(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]);
  } catch {
    return undefined;
  }
}

const work = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-coldstart-'));
try {
  const manifest = path.join(work, 'cloneset.yaml');
  writeFileSync(
    manifest,
    `apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
  namespace: default
spec:
  replicas: 3
  selector:
    matchLabels: { app: web }
  updateStrategy: { type: InPlaceIfPossible, maxUnavailable: 1 }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: nginx:1.27
          ports: [{ containerPort: 80 }]
          resources: { requests: { cpu: 100m, memory: 128Mi } }
`,
  );
  const schemas = path.join(work, 'schemas');
  execFileSync(node, [cli, 'schema', '--out', schemas], { stdio: 'ignore' });
  const kc = findKubeconform();

  const variants = {
    // The floor: starting Node itself with nothing to load.
    'node (empty script)': () => runMeasured([node, '-e', '0'], 0),
    'cdk8s-kruise --version': () => runMeasured([node, cli, '--version'], 0),
    'kubeconform -v': () => runMeasured([kc, '-v'], 0),
    'cdk8s-kruise validate': () => runMeasured([node, cli, 'validate', manifest], 0),
    'kubeconform (same file)': () =>
      runMeasured([kc, '-strict', '-schema-location', path.join(schemas, '{{ .ResourceKind }}.json'), manifest], 0),
  } as const;
  type Name = keyof typeof variants;
  const samples = repeat(Object.keys(variants) as Name[], { warmup: args.warmup, reps: args.reps, order: 'rotate' }, (n) => variants[n]());
  const med = (n: Name, k: keyof ProcessSample) => median(samples[n].map((s) => s[k]));

  const nodeVersion = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const result = {
    node: nodeVersion,
    kubeconform: KUBECONFORM_VERSION,
    // SCHED_FIFO (1) when the bench runs under `chrt -f`, else the normal policy (0).
    schedulingPolicy: schedulingPolicy(),
    reps: args.reps,
    medians: Object.fromEntries(
      (Object.keys(variants) as Name[]).map((n) => [
        n,
        { wallMs: +med(n, 'wallMs').toFixed(1), cpuMs: +med(n, 'cpuMs').toFixed(0), rssMb: +med(n, 'rssMb').toFixed(1) },
      ]),
    ),
    ratios: {
      versionWall: ratio(med('cdk8s-kruise --version', 'wallMs'), med('kubeconform -v', 'wallMs')),
      versionRss: ratio(med('cdk8s-kruise --version', 'rssMb'), med('kubeconform -v', 'rssMb')),
      validateWall: ratio(med('cdk8s-kruise validate', 'wallMs'), med('kubeconform (same file)', 'wallMs')),
      validateRss: ratio(med('cdk8s-kruise validate', 'rssMb'), med('kubeconform (same file)', 'rssMb')),
      versionOverNodeStart: ratio(med('cdk8s-kruise --version', 'wallMs'), med('node (empty script)', 'wallMs')),
      validateOverNodeStart: ratio(med('cdk8s-kruise validate', 'wallMs'), med('node (empty script)', 'wallMs')),
    },
    targets: {
      versionMs: { target: TARGETS.versionMs, met: med('cdk8s-kruise --version', 'wallMs') <= TARGETS.versionMs },
      validateMs: { target: TARGETS.validateMs, met: med('cdk8s-kruise validate', 'wallMs') <= TARGETS.validateMs },
      validateMb: { target: TARGETS.validateMb, met: med('cdk8s-kruise validate', 'rssMb') <= TARGETS.validateMb },
    },
    loadAverage: (await import('node:os')).loadavg().map((x) => +x.toFixed(1)),
  };
  const version = result.medians['cdk8s-kruise --version'];
  const validate = result.medians['cdk8s-kruise validate'];
  await recordBench(
    'bench:cli-coldstart',
    [
      {
        measure: 'built CLI `--version`, whole process: wall, CPU, RSS',
        figure: `${version.wallMs} ms, ${version.cpuMs} ms, ${version.rssMb} MB`,
        peer: `${result.ratios.versionWall}x wall, ${result.ratios.versionRss}x RSS of kubeconform -v; ${result.ratios.versionOverNodeStart}x Node's own start`,
      },
      {
        measure: 'built CLI `validate` of one CloneSet, whole process: wall, CPU, RSS',
        figure: `${validate.wallMs} ms, ${validate.cpuMs} ms, ${validate.rssMb} MB (targets ≤ ${TARGETS.validateMs} ms, ≤ ${TARGETS.validateMb} MB)`,
        peer: `${result.ratios.validateWall}x wall, ${result.ratios.validateRss}x RSS of kubeconform on the same file`,
      },
    ],
    { conditions: `measured Node ${nodeVersion}${result.schedulingPolicy === 1 ? ', SCHED_FIFO' : ''}` },
  );
  if (args.json) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } else {
    process.stdout.write(
      `CLI cold start of ${path.relative(repoRoot, cli).startsWith('..') ? cli : path.relative(repoRoot, cli)}, Node ${nodeVersion} vs kubeconform ${KUBECONFORM_VERSION}; medians of ${args.reps}` +
        `${result.schedulingPolicy === 1 ? ', SCHED_FIFO' : ''} (load average ${result.loadAverage.join(' ')})\n`,
    );
    for (const [n, m] of Object.entries(result.medians))
      process.stdout.write(
        `  ${n.padEnd(26)} ${m.wallMs.toFixed(1).padStart(7)} ms wall ${String(m.cpuMs).padStart(5)} ms CPU ${m.rssMb.toFixed(1).padStart(7)} MB\n`,
      );
    const r = result.ratios;
    process.stdout.write(
      `  ratios to kubeconform: --version ${r.versionWall}x wall, ${r.versionRss}x RSS; validate ${r.validateWall}x wall, ${r.validateRss}x RSS\n`,
    );
    process.stdout.write(`  ratios to Node's own start: --version ${r.versionOverNodeStart}x, validate ${r.validateOverNodeStart}x\n`);
    for (const [k, t] of Object.entries(result.targets))
      process.stdout.write(`  target ${k} <= ${t.target}: ${t.met ? 'met' : 'NOT met'}\n`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

// `cdk8s-kruise validate` against kubeconform as whole processes on the same 10,000 documents (8.6 MB, the
// input of bench/validate.bench.ts: Kruise kinds, Jobs, Deployments and ConfigMaps, 1% with a mistake).
// kubeconform (built from Go modules by `bash test/prepare.sh`) runs strict, offline, against standalone strict JSON
// Schemas for every kind in the input: core kinds generated from a test API server's OpenAPI v2 document, Kruise
// kinds from upstream OpenKruise's CRDs of the peer version, both as openapi2jsonschema converts them
// (test/harness/kubeconform.ts; cached outside git). Both write their full JSON report to a file.
// Runs alternate (rotating order) after warm-up; each process runs under GNU time: wall time by our clock, CPU time
// (user + system) and peak RSS from time. Targets: wall <= 1.0x and peak RSS <= 3x kubeconform, with every resource
// and path kubeconform reports also among our findings (checked on one run of each before timing).
// Usage: npm run build && npm run bench:validate-kubeconform [-- --docs N --reps R --warmup W --node /path/to/node --json]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedKubernetesVersion } from '../test/harness/assets.js';
import { ControlPlane } from '../test/harness/controlplane.js';
import {
  crdFilesIn,
  fetchOpenApiV2,
  findKubeconform,
  kubeconformArgs,
  KUBECONFORM_VERSION,
  kubeconformSchemaCacheDir,
  writeKubeconformSchemas,
} from '../test/harness/kubeconform.js';
import { findKruisePeerAssets } from '../test/harness/kruise-peer.js';
import { uncoveredKubeconformFindings } from '../test/harness/kubeconform-compare.js';
import { benchArgs, median, ratio, repeat } from './lib.js';
import { recordBench } from './record.js';
import { validateInput } from './support/validate-docs.js';
import { requireGnuTime, runMeasured, type ProcessSample } from './support/process-sample.js';

const TARGETS = { wall: 1.0, rss: 3.0 };
const args = benchArgs(
  { docs: 10000, reps: 7, warmup: 1 },
  { node: { type: 'string', default: process.execPath }, out: { type: 'string', default: 'out/bench/validate-kubeconform.json' } },
);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(repo, 'lib', 'cli', 'cdk8s-kruise.mjs');
if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first (the benchmark measures the published binary)`);
requireGnuTime();
const node = args.extra.node;
const kubeconform = findKubeconform();
const peer = findKruisePeerAssets();

/** The schemas, generated once per Kubernetes and Kruise version into the build cache (outside git). */
async function schemas(): Promise<string> {
  const dir = kubeconformSchemaCacheDir(`kubernetes-${pinnedKubernetesVersion()}-kruise-${peer.version}`);
  if (existsSync(dir)) return dir;
  process.stderr.write(`generating kubeconform schemas into ${dir} (a control plane's OpenAPI v2 + upstream CRDs)\n`);
  const plane = await ControlPlane.start();
  let openapi;
  try {
    openapi = fetchOpenApiV2(plane.assets.kubectl, plane.kubeconfigPath);
  } finally {
    await plane.stop();
  }
  return writeKubeconformSchemas(dir, { openapi, crdFiles: crdFilesIn(peer.crdDir) });
}

const schemaDir = await schemas();
const work = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-validate-kubeconform-'));
try {
  const input = path.join(work, 'docs.yaml');
  const { text } = validateInput(args.docs);
  writeFileSync(input, text);
  const oursReport = path.join(work, 'ours.json');
  const theirsReport = path.join(work, 'kubeconform.json');
  const oursArgv = [node, cli, 'validate', '--quiet', '--format', 'json', '--max-findings', '0', '--output', oursReport, input];
  const theirsArgv = [kubeconform, ...kubeconformArgs(schemaDir), '-output', 'json'];
  // kubeconform writes its report to stdout only: a shell redirect, so both processes write a file.
  const theirsShell = ['/bin/sh', '-c', `exec "$0" "$@" > ${JSON.stringify(theirsReport)}`, ...theirsArgv, input];

  runMeasured(oursArgv, 1);
  runMeasured(theirsShell, 1);
  const ours = JSON.parse(readFileSync(oursReport, 'utf8')) as Parameters<typeof uncoveredKubeconformFindings>[0];
  const theirs = JSON.parse(readFileSync(theirsReport, 'utf8')) as Parameters<typeof uncoveredKubeconformFindings>[1];
  const coverage = uncoveredKubeconformFindings(ours, theirs);

  const variants = { 'cdk8s-kruise validate': () => runMeasured(oursArgv, 1), kubeconform: () => runMeasured(theirsShell, 1) } as const;
  type Name = keyof typeof variants;
  const loads: number[] = [loadavg()[0]!];
  const samples = repeat(Object.keys(variants) as Name[], { warmup: args.warmup, reps: args.reps, order: 'rotate' }, (n) => {
    const s = variants[n]();
    loads.push(loadavg()[0]!);
    return s;
  });
  const med = (n: Name, k: keyof ProcessSample) => median(samples[n].map((s) => s[k]));
  const max = (n: Name, k: keyof ProcessSample) => Math.max(...samples[n].map((s) => s[k]));
  const nodeVersion = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const ratios = {
    wall: ratio(med('cdk8s-kruise validate', 'wallMs'), med('kubeconform', 'wallMs')),
    cpu: ratio(med('cdk8s-kruise validate', 'cpuMs'), med('kubeconform', 'cpuMs')),
    rss: ratio(med('cdk8s-kruise validate', 'rssMb'), med('kubeconform', 'rssMb')),
  };
  const result = {
    node: nodeVersion,
    kubeconform: KUBECONFORM_VERSION,
    kruiseSchemas: peer.version,
    kubernetesSchemas: pinnedKubernetesVersion(),
    cores: cpus().length,
    docs: args.docs,
    bytes: Buffer.byteLength(text),
    reps: args.reps,
    findings: {
      ours: ours.summary,
      kubeconform: { resources: theirs.resources.length, errors: coverage.total },
      kubeconformNotReportedByUs: coverage.uncovered,
    },
    medians: Object.fromEntries(
      (Object.keys(variants) as Name[]).map((n) => [
        n,
        {
          wallMs: +med(n, 'wallMs').toFixed(0),
          cpuMs: +med(n, 'cpuMs').toFixed(0),
          rssMb: +med(n, 'rssMb').toFixed(1),
          maxRssMb: +max(n, 'rssMb').toFixed(1),
        },
      ]),
    ),
    ratios,
    targets: {
      wall: { target: TARGETS.wall, met: ratios.wall <= TARGETS.wall },
      rss: { target: TARGETS.rss, met: ratios.rss <= TARGETS.rss },
      superset: { met: coverage.uncovered.length === 0 },
    },
    loadAverage1m: { min: +Math.min(...loads).toFixed(1), median: +median(loads).toFixed(1), max: +Math.max(...loads).toFixed(1) },
  };
  mkdirSync(path.dirname(path.resolve(repo, args.extra.out)), { recursive: true });
  writeFileSync(path.resolve(repo, args.extra.out), JSON.stringify(result, null, 2) + '\n');
  const o = result.medians['cdk8s-kruise validate'];
  await recordBench(
    'bench:validate-kubeconform',
    [
      {
        measure: `built CLI validate of ${args.docs} documents (${(result.bytes / 1e6).toFixed(1)} MB, schemas for every kind), whole process: wall, CPU, peak RSS`,
        figure:
          `${o.wallMs} ms, ${o.cpuMs} ms, ${o.rssMb} MB; ` +
          (coverage.uncovered.length
            ? `${coverage.uncovered.length} kubeconform findings not among ours`
            : 'every kubeconform finding among ours'),
        peer: `${ratios.wall}x, ${ratios.cpu}x, ${ratios.rss}x kubeconform ${KUBECONFORM_VERSION} (targets wall ≤ ${TARGETS.wall}x, RSS ≤ ${TARGETS.rss}x)`,
      },
    ],
    { conditions: `measured Node ${nodeVersion}; 1-minute load ${result.loadAverage1m.min}–${result.loadAverage1m.max} during the run` },
  );
  if (args.json) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } else {
    const l = result.loadAverage1m;
    process.stdout.write(
      `validate vs kubeconform ${KUBECONFORM_VERSION}: ${args.docs} documents (${(result.bytes / 1e6).toFixed(1)} MB), Node ${nodeVersion}, ` +
        `${result.cores} cores, medians of ${args.reps} alternating runs (1-min load ${l.min}..${l.max}, median ${l.median})\n`,
    );
    process.stdout.write(`  ${''.padEnd(24)} ${'wall ms'.padStart(8)} ${'CPU ms'.padStart(8)} ${'peak RSS MB'.padStart(12)}\n`);
    for (const [n, m] of Object.entries(result.medians))
      process.stdout.write(
        `  ${n.padEnd(24)} ${String(m.wallMs).padStart(8)} ${String(m.cpuMs).padStart(8)} ${m.rssMb.toFixed(1).padStart(12)}\n`,
      );
    process.stdout.write(
      `  ratio ours/kubeconform: wall ${ratios.wall}x (target <= ${TARGETS.wall}), CPU ${ratios.cpu}x, peak RSS ${ratios.rss}x (target <= ${TARGETS.rss})\n`,
    );
    process.stdout.write(
      `  findings: ours ${JSON.stringify(ours.summary)}; kubeconform ${theirs.resources.length} resources, ${coverage.total} errors, ` +
        `${coverage.uncovered.length} not among ours${coverage.uncovered.length ? `: ${JSON.stringify(coverage.uncovered.slice(0, 5))}` : ''}\n`,
    );
  }
  if (!result.targets.wall.met || !result.targets.rss.met || !result.targets.superset.met) process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}

// Peak memory of `cdk8s-kruise validate` on a large input where every document has findings: by default 50 MB of
// CloneSets with an unknown field, a bad image and a YAML 1.1 boolean where a string belongs, in one file.
// Target: peak RSS at most 512 MB in the text and the JSON format. Each run is a separate process running the
// published binary (lib/cli/, as `npm run build` writes it and `npx cdk8s-kruise` runs it), peak RSS read from the
// kernel at its exit. The baseline is the same binary on a 1 MB slice of the same input, in the same run, so the
// ratio shows how much of the peak grows with the input.
// Usage: npm run build && npm run bench:validate-memory [-- --mb 50 --node /path/to/node --json]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchArgs, ratio } from './lib.js';
import { recordBench } from './record.js';

const args = benchArgs({ mb: 50, limitMb: 512 }, { node: { type: 'string', default: process.execPath } });
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(path.join(tmpdir(), 'kruise-validate-memory-'));
const cli = path.join(repo, 'lib', 'cli', 'cdk8s-kruise.mjs');
const node = args.extra.node;
if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first (the benchmark measures the published binary)`);

function erroringDoc(i: number): string {
  return `---
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web-${i}
  namespace: team-${i % 20}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web-${i}}
  updateStrategy:
    maxUnavaliable: 1
  template:
    metadata:
      labels: {app: web-${i}}
    spec:
      containers:
        - name: app
          image: "example.io/app:1.0.${i}:bad:tag"
          env:
            - name: FEATURE_FLAG
              value: yes
          resources:
            requests: {cpu: 100m, memory: 128Mi}
`;
}

function writeInput(file: string, bytes: number): number {
  const parts: string[] = [];
  let size = 0;
  let docs = 0;
  while (size < bytes) {
    const d = erroringDoc(docs++);
    parts.push(d);
    size += d.length;
  }
  writeFileSync(file, parts.join(''));
  return docs;
}

function peakRssMb(file: string, format: string): { mb: number; seconds: number; findings: string } {
  const rssFile = path.join(dir, 'rss');
  rmSync(rssFile, { force: true });
  const t0 = performance.now();
  const r = spawnSync(
    node,
    [
      '--import',
      path.join(repo, 'bench/support/report-max-rss.mjs'),
      cli,
      'validate',
      '--format',
      format,
      '--max-file-size',
      '1GiB',
      '--output',
      path.join(dir, `report.${format}`),
      file,
    ],
    { cwd: repo, encoding: 'utf8', env: { ...process.env, BENCH_MAX_RSS_FILE: rssFile }, maxBuffer: 1 << 20 },
  );
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 1) throw new Error(`validate exited ${r.status} (expected 1: findings): ${r.stderr.slice(0, 2000)}`);
  const report = readFileSync(path.join(dir, `report.${format}`), 'utf8');
  const summary =
    format === 'json'
      ? JSON.stringify((JSON.parse(report) as { summary: unknown }).summary)
      : report.trimEnd().split('\n').slice(-2).join(' | ');
  return { mb: Number(readFileSync(rssFile, 'utf8')) / 1024, seconds, findings: summary };
}

const big = path.join(dir, 'big.yaml');
const small = path.join(dir, 'small.yaml');
const bigDocs = writeInput(big, args.mb * 1024 * 1024);
writeInput(small, 1024 * 1024);
const results: Record<
  string,
  { baselineMb: number; peakMb: number; ratio: number; withinLimit: boolean; seconds: number; summary: string }
> = {};
try {
  for (const format of ['text', 'json']) {
    const baseline = peakRssMb(small, format);
    const peak = peakRssMb(big, format);
    results[format] = {
      baselineMb: Math.round(baseline.mb),
      peakMb: Math.round(peak.mb),
      ratio: ratio(peak.mb, baseline.mb),
      withinLimit: peak.mb <= args.limitMb,
      seconds: +peak.seconds.toFixed(1),
      summary: peak.findings,
    };
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const nodeVersion = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
const loadAverage = loadavg().map((x) => +x.toFixed(1));
await recordBench(
  'bench:validate-memory',
  Object.entries(results).map(([format, r]) => ({
    measure: `built CLI validate of ${args.mb} MB of erroring YAML (${bigDocs} documents), ${format} report: peak RSS`,
    figure: `${r.peakMb} MB (target ≤ ${args.limitMb} MB), ${r.seconds} s`,
    peer: `${r.ratio}x a 1 MB slice (${r.baselineMb} MB)`,
  })),
  { conditions: `measured Node ${nodeVersion}` },
);
if (args.json) {
  process.stdout.write(
    JSON.stringify({ node: nodeVersion, loadAverage, mb: args.mb, documents: bigDocs, limitMb: args.limitMb, results }, null, 2) + '\n',
  );
} else {
  process.stdout.write(
    `validate memory: ${args.mb} MB of erroring YAML (${bigDocs} documents), peak RSS of the CLI process, Node ${nodeVersion} ` +
      `(load average ${loadAverage.join(' ')})\n`,
  );
  for (const [format, r] of Object.entries(results)) {
    process.stdout.write(
      `  ${format.padEnd(5)} 1 MB slice (baseline) ${String(r.baselineMb).padStart(5)} MB   ${args.mb} MB input ${String(r.peakMb).padStart(5)} MB   ratio ${r.ratio}   ` +
        `${r.withinLimit ? 'within' : 'OVER'} the ${args.limitMb} MB target   ${r.seconds} s\n    report tail: ${r.summary}\n`,
    );
  }
}
if (Object.values(results).some((r) => !r.withinLimit)) process.exitCode = 1;

// Peak memory of `cdk8s-kruise validate` on a large input where every document has findings: by default 50 MB of
// CloneSets with an unknown field, a bad image and a YAML 1.1 boolean where a string belongs, in one file.
// Target: peak RSS at most 512 MB in the text and the JSON format. Each run is a separate process running the CLI
// as it ships (bundled with esbuild, as in the runtime image; not through the tsx loader, which alone adds ~60 MB),
// peak RSS read from the kernel at its exit. The baseline is the same CLI on a 1 MB slice of the same input, in
// the same run, so the ratio shows how much of the peak grows with the input.
// Usage: npm run bench:validate-memory [-- --mb 50 --json]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { benchArgs, ratio } from './lib.js';

const args = benchArgs({ mb: 50, limitMb: 512 });
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(path.join(tmpdir(), 'kruise-validate-memory-'));
// Inside node_modules so that the bundle's external packages resolve from the repository; a package.json one level
// up carries the version, as in the runtime image.
const bundleDir = path.join(repo, 'node_modules/.cache/cdk8s-kruise-bench');
const cli = path.join(bundleDir, 'app/cli.mjs');
const pkg = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as { name: string; version: string };
mkdirSync(bundleDir, { recursive: true });
writeFileSync(
  path.join(bundleDir, 'package.json'),
  JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', private: true }),
);
await build({
  entryPoints: [path.join(repo, 'src/cli/main.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  outfile: cli,
  logLevel: 'warning',
});

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

function peakRssMb(file: string, format: string): { mb: number; code: number | null; findings: string } {
  const rssFile = path.join(dir, 'rss');
  rmSync(rssFile, { force: true });
  const r = spawnSync(
    process.execPath,
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
  if (r.status !== 1) throw new Error(`validate exited ${r.status} (expected 1: findings): ${r.stderr.slice(0, 2000)}`);
  const report = readFileSync(path.join(dir, `report.${format}`), 'utf8');
  const summary =
    format === 'json'
      ? JSON.stringify((JSON.parse(report) as { summary: unknown }).summary)
      : report.trimEnd().split('\n').slice(-2).join(' | ');
  return { mb: Number(readFileSync(rssFile, 'utf8')) / 1024, code: r.status, findings: summary };
}

const big = path.join(dir, 'big.yaml');
const small = path.join(dir, 'small.yaml');
const bigDocs = writeInput(big, args.mb * 1024 * 1024);
writeInput(small, 1024 * 1024);
const results: Record<string, { baselineMb: number; peakMb: number; ratio: number; withinLimit: boolean; summary: string }> = {};
try {
  for (const format of ['text', 'json']) {
    const baseline = peakRssMb(small, format);
    const peak = peakRssMb(big, format);
    results[format] = {
      baselineMb: Math.round(baseline.mb),
      peakMb: Math.round(peak.mb),
      ratio: ratio(peak.mb, baseline.mb),
      withinLimit: peak.mb <= args.limitMb,
      summary: peak.findings,
    };
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (args.json) {
  process.stdout.write(JSON.stringify({ mb: args.mb, documents: bigDocs, limitMb: args.limitMb, results }, null, 2) + '\n');
} else {
  process.stdout.write(`validate memory: ${args.mb} MB of erroring YAML (${bigDocs} documents), peak RSS of the CLI process\n`);
  for (const [format, r] of Object.entries(results)) {
    process.stdout.write(
      `  ${format.padEnd(5)} 1 MB slice (baseline) ${String(r.baselineMb).padStart(5)} MB   ${args.mb} MB input ${String(r.peakMb).padStart(5)} MB   ratio ${r.ratio}   ` +
        `${r.withinLimit ? 'within' : 'OVER'} the ${args.limitMb} MB target\n    report tail: ${r.summary}\n`,
    );
  }
}
if (Object.values(results).some((r) => !r.withinLimit)) process.exitCode = 1;

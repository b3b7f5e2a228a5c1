// `cdk8s-kruise validate` of one CloneSet with many unknown fields under /spec (issue 28: it was quadratic in them,
// 4.9 s for 10,000 and 119.5 s for 40,000, and 300,000 overflowed the stack). The published binary (the esbuild
// bundle `npm run build` writes to lib/cli/, precompiled validators) runs as a user runs it, one process per
// validation: whole-process wall time, CPU time and peak RSS (GNU time), medians of interleaved repetitions.
// Targets: --large (100,000 keys) in at most 2 s, and at most 3x the time of --small (10,000 keys). Also shown: the
// CLI's own start (`--version`), which both sizes include, and the ratio without it.
// On a shared, loaded machine the wall times grow with the load; CPU time much less.
// Usage: npm run build && npm run bench:validate-unknown-keys [-- --small N --large N --reps N --warmup N --cli FILE --json]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_UNKNOWN_FIELDS_LISTED } from '../src/api/validate.js';
import { benchArgs, median, ratio, repeat } from './lib.js';
import { recordBench } from './record.js';
import { requireGnuTime, runMeasured, type ProcessSample } from './support/process-sample.js';

const TARGETS = { largeSeconds: 2, largeOverSmall: 3 };

const args = benchArgs(
  { small: 10_000, large: 100_000, reps: 5, warmup: 1 },
  { node: { type: 'string', default: process.execPath }, cli: { type: 'string' } },
);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = args.extra.cli ? path.resolve(args.extra.cli) : path.join(repoRoot, 'lib', 'cli', 'cdk8s-kruise.mjs');
const node = args.extra.node;

if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first (the benchmark measures the published bundle)`);
requireGnuTime();

/** A CloneSet with `n` unknown fields under /spec, one per line. */
function wideCloneSet(n: number): string {
  const lines = [
    'apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: wide, namespace: default}\nspec:\n  replicas: 1\n',
    '  selector: {matchLabels: {app: wide}}\n  template:\n    metadata: {labels: {app: wide}}\n',
    '    spec:\n      containers: [{name: main, image: "nginx:1.27"}]\n',
  ];
  for (let i = 0; i < n; i++) lines.push(`  unknownField${i}: ${i}\n`);
  return lines.join('');
}

const work = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-unknown-keys-'));
try {
  const sizes = { small: args.small, large: args.large };
  const files = Object.fromEntries(
    Object.entries(sizes).map(([name, n]) => {
      const file = path.join(work, `${name}.yaml`);
      writeFileSync(file, wideCloneSet(n));
      return [name, file];
    }),
  ) as Record<keyof typeof sizes, string>;

  // What is timed is a complete validation: the capped findings, each at its line, and the count of the rest.
  for (const [name, n] of Object.entries(sizes) as Array<[keyof typeof sizes, number]>) {
    const r = spawnSync(node, [cli, 'validate', '--quiet', '--format', 'json', files[name]], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const report = r.status === 1 ? (JSON.parse(r.stdout) as { findings: Array<{ message: string; line?: number }> }) : undefined;
    const rest = report?.findings.find((f) => f.message.startsWith('… and'));
    const expected = `${(n - MAX_UNKNOWN_FIELDS_LISTED).toLocaleString('en-US')} more unknown fields under /spec`;
    if (report?.findings.length !== MAX_UNKNOWN_FIELDS_LISTED + 1 || !rest?.message.includes(expected) || !rest.line)
      throw new Error(`${name}: exit ${r.status}, unexpected report:\n${r.stdout.slice(0, 2000)}\n${r.stderr.slice(0, 2000)}`);
  }

  const variants = {
    'cdk8s-kruise --version': () => runMeasured([node, cli, '--version'], 0),
    small: () => runMeasured([node, cli, 'validate', '--quiet', files.small], 1),
    large: () => runMeasured([node, cli, 'validate', '--quiet', files.large], 1),
  } as const;
  type Name = keyof typeof variants;
  const samples = repeat(Object.keys(variants) as Name[], { warmup: args.warmup, reps: args.reps, order: 'rotate' }, (n) => variants[n]());
  const med = (n: Name, k: keyof ProcessSample) => median(samples[n].map((s) => s[k]));

  const start = med('cdk8s-kruise --version', 'wallMs');
  const result = {
    cli: path.relative(repoRoot, cli).startsWith('..') ? cli : path.relative(repoRoot, cli),
    keys: sizes,
    reps: args.reps,
    medians: Object.fromEntries(
      (Object.keys(variants) as Name[]).map((n) => [
        n,
        {
          wallSeconds: +(med(n, 'wallMs') / 1000).toFixed(3),
          cpuSeconds: +(med(n, 'cpuMs') / 1000).toFixed(3),
          rssMb: +med(n, 'rssMb').toFixed(1),
        },
      ]),
    ),
    ratios: {
      largeOverSmallWall: ratio(med('large', 'wallMs'), med('small', 'wallMs')),
      largeOverSmallCpu: ratio(med('large', 'cpuMs'), med('small', 'cpuMs')),
      // The work itself: each size's wall time less the CLI's own start.
      largeOverSmallWallWithoutStart: ratio(med('large', 'wallMs') - start, med('small', 'wallMs') - start),
      keys: ratio(sizes.large, sizes.small),
    },
    targets: {
      largeSeconds: { target: TARGETS.largeSeconds, met: med('large', 'wallMs') / 1000 <= TARGETS.largeSeconds },
      largeOverSmall: { target: TARGETS.largeOverSmall, met: med('large', 'wallMs') / med('small', 'wallMs') <= TARGETS.largeOverSmall },
    },
    loadAverage: loadavg().map((x) => +x.toFixed(1)),
  };

  await recordBench('bench:validate-unknown-keys', [
    {
      measure: `built CLI validate of one CloneSet with ${sizes.large.toLocaleString('en-US')} unknown fields: wall, CPU, peak RSS`,
      figure: `${result.medians.large.wallSeconds} s, ${result.medians.large.cpuSeconds} s, ${result.medians.large.rssMb} MB`,
      peer:
        `${result.ratios.largeOverSmallWall}x wall, ${result.ratios.largeOverSmallCpu}x CPU of the same with ` +
        `${sizes.small.toLocaleString('en-US')} keys (target ≤ ${TARGETS.largeOverSmall}x; ≤ ${TARGETS.largeSeconds} s)`,
    },
  ]);
  if (args.json) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } else {
    process.stdout.write(
      `validate of one CloneSet with ${sizes.small.toLocaleString('en-US')} and ${sizes.large.toLocaleString('en-US')} unknown fields, ` +
        `${result.cli}; medians of ${args.reps} (load average ${result.loadAverage.join(' ')})\n`,
    );
    for (const [n, m] of Object.entries(result.medians))
      process.stdout.write(
        `  ${n.padEnd(24)} ${m.wallSeconds.toFixed(3).padStart(7)} s wall ${m.cpuSeconds.toFixed(3).padStart(7)} s CPU ${m.rssMb.toFixed(1).padStart(7)} MB\n`,
      );
    const r = result.ratios;
    process.stdout.write(
      `  large / small (${r.keys}x the keys): ${r.largeOverSmallWall}x wall, ${r.largeOverSmallCpu}x CPU, ` +
        `${r.largeOverSmallWallWithoutStart}x wall without the CLI's start\n`,
    );
    process.stdout.write(
      `  target large <= ${TARGETS.largeSeconds} s: ${result.targets.largeSeconds.met ? 'met' : 'NOT met'}; ` +
        `target large / small <= ${TARGETS.largeOverSmall}x: ${result.targets.largeOverSmall.met ? 'met' : 'NOT met'}\n`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

// Synth-time benchmark: an app of N workloads built with cdk8s-kruise constructs (alone and with a
// KruiseRuntime, whose feature detection must not render the app twice: target <= 1.1x), against two
// baselines built in the same run — (a) the same workloads as cdk8s-plus-27 Deployments with the
// same containers, (b) our exact output manifests as raw ApiObjects (the floor: cdk8s core only).
// Two phases per variant, each on a fresh app: "render" = construct tree + every chart's toJson()
// (where construct libraries spend their time), "synth" = construct tree + App.synthYaml() (adds the
// YAML serialisation, identical work for all variants, so ratios shrink). Variants are interleaved,
// after warm-up; the median of the repetitions is reported. Usage: npm run bench:synth [-- --workloads N --reps R]
import { ApiObject, App, Chart, type ApiObjectProps } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { performance } from 'node:perf_hooks';
import { CloneSet, ContainerExitPriority, JobSidecarTermination, KruiseRuntime } from '../constructs/index.js';
import { benchArgs, collectGarbage, cpuMs, formatRatio, median, repeat } from './lib.js';
import { recordBench } from './record.js';

const args = benchArgs({ workloads: 2000, reps: 7, warmup: 2 });
const N = args.workloads;
const REPS = args.reps;
const WARMUP = args.warmup;

function containers(i: number): kplus.ContainerProps[] {
  return [
    {
      name: 'app',
      image: `example.io/app-${i % 50}:1.0.${i}`,
      portNumber: 8080,
      envVariables: { INDEX: kplus.EnvValue.fromValue(String(i)) },
      readiness: kplus.Probe.fromHttpGet('/healthz'),
    },
    { name: 'log-agent', image: 'fluent/fluent-bit:3.0' },
    { name: 'envoy', image: 'envoyproxy/envoy:v1.30.1', portNumber: 15001 },
  ];
}

/** Ours: half CloneSets with exit priorities, half Jobs with a terminated sidecar. */
function buildOurs(app: App): void {
  const chart = new Chart(app, 'ours');
  for (let i = 0; i < N; i++) {
    if (i % 2 === 0) {
      const clone = new CloneSet(chart, `w${i}`, { replicas: 2, containers: containers(i) });
      ContainerExitPriority.of(clone).set('log-agent', 1).set('envoy', 2);
    } else {
      const job = new kplus.Job(chart, `w${i}`, { containers: containers(i) });
      JobSidecarTermination.of(job).terminate('log-agent').terminate('envoy');
    }
  }
}

// The runtime's synth warnings (features the bundled runtime does not carry out yet) would flood the
// output with one line per workload per repetition; they are not what this bench measures.
const stderrWrite = process.stderr.write.bind(process.stderr);
process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
  typeof chunk === 'string' && chunk.startsWith('cdk8s-kruise: ') ? true : stderrWrite(chunk, ...rest)) as typeof process.stderr.write;

/** Ours with a KruiseRuntime in the app: its feature detection must not render the app a second time. */
function buildOursWithRuntime(app: App): void {
  new KruiseRuntime(app, 'kruise');
  buildOurs(app);
}

/** Baseline (a): cdk8s-plus-27 Deployments with the same containers. */
function buildPlus(app: App): void {
  const chart = new Chart(app, 'plus');
  for (let i = 0; i < N; i++) new kplus.Deployment(chart, `w${i}`, { replicas: 2, containers: containers(i) });
}

/** Baseline (b): our output manifests as raw ApiObjects. */
function buildRawFrom(manifests: ApiObjectProps[]): (app: App) => void {
  return (app: App) => {
    const chart = new Chart(app, 'raw');
    manifests.forEach((m, i) => new ApiObject(chart, `w${i}`, m));
  };
}

function timeRender(build: (app: App) => void): { ms: number; cpu: number } {
  const [start, cpu] = [performance.now(), cpuMs()];
  const app = new App({ outdir: 'unused' });
  build(app);
  for (const chart of app.charts) chart.toJson();
  return { ms: performance.now() - start, cpu: cpuMs() - cpu };
}

function timeSynth(build: (app: App) => void): { ms: number; cpu: number; bytes: number } {
  const [start, cpu] = [performance.now(), cpuMs()];
  const app = new App({ outdir: 'unused' });
  build(app);
  const yaml = app.synthYaml();
  return { ms: performance.now() - start, cpu: cpuMs() - cpu, bytes: yaml.length };
}

async function main(): Promise<void> {
  const oursApp = new App({ outdir: 'unused' });
  buildOurs(oursApp);
  const manifests = oursApp.charts.flatMap((c) => c.toJson() as ApiObjectProps[]);
  const variants: Array<[string, (app: App) => void]> = [
    ['ours', buildOurs],
    ['runtime', buildOursWithRuntime],
    ['plus', buildPlus],
    ['raw', buildRawFrom(manifests)],
  ];
  const builds = new Map(variants);
  const bytes = new Map<string, number>();
  // Rotating order: drift on a shared machine hits every variant alike.
  const runs = repeat(
    variants.map(([name]) => name),
    { warmup: WARMUP, reps: REPS, order: 'rotate' },
    (name) => {
      const build = builds.get(name)!;
      collectGarbage();
      const render = timeRender(build);
      collectGarbage();
      const synth = timeSynth(build);
      bytes.set(name, synth.bytes);
      return { render, synth };
    },
  );
  const perVariant = (pick: (run: (typeof runs)[string][number]) => number) =>
    new Map<string, number[]>(Object.entries(runs).map(([name, rs]) => [name, rs.map(pick)]));
  const samples = perVariant((r) => r.synth.ms);
  const cpuSamples = perVariant((r) => r.synth.cpu);
  const renderSamples = perVariant((r) => r.render.ms);
  const renderCpuSamples = perVariant((r) => r.render.cpu);
  const phase = (wall: Map<string, number[]>, cpu: Map<string, number[]>) => {
    const w = Object.fromEntries([...wall].map(([k, v]) => [k, median(v)]));
    const c = Object.fromEntries([...cpu].map(([k, v]) => [k, median(v)]));
    return {
      medianWallMs: w,
      medianCpuMs: c,
      // Ratios use CPU time: wall time on a shared machine mostly measures the neighbours.
      ratios: { oursVsPlus: c.ours / c.plus, oursVsRaw: c.ours / c.raw, plusVsRaw: c.plus / c.raw, runtimeVsOurs: c.runtime / c.ours },
      wallRatios: { oursVsPlus: w.ours / w.plus, oursVsRaw: w.ours / w.raw, plusVsRaw: w.plus / w.raw },
      samplesWallMs: Object.fromEntries(wall),
      samplesCpuMs: Object.fromEntries(cpu),
    };
  };
  const result = {
    workloads: N,
    reps: REPS,
    warmup: WARMUP,
    render: phase(renderSamples, renderCpuSamples),
    synth: phase(samples, cpuSamples),
    yamlBytes: Object.fromEntries(bytes),
  };
  const s0 = result.synth;
  await recordBench('bench:synth', [
    {
      measure: `synth CPU of an app of ${N} workloads (CloneSets, Jobs with exit priority and sidecar termination)`,
      figure: `${s0.medianCpuMs.ours.toFixed(1)} ms`,
      peer: `${formatRatio(s0.ratios.oursVsPlus)} cdk8s-plus-27 Deployments (target ≤ 1.20x), ${formatRatio(s0.ratios.oursVsRaw)} raw ApiObjects`,
    },
    {
      measure: 'the same app with KruiseRuntime (CRDs, runtime, inferred gates): synth CPU',
      figure: `${s0.medianCpuMs.runtime.toFixed(1)} ms`,
      peer: `${formatRatio(s0.ratios.runtimeVsOurs)} the app without it (target ≤ 1.10x)`,
    },
  ]);
  if (args.json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  const f = (x: number) => x.toFixed(1).padStart(9);
  const x = (r: number) => formatRatio(r);
  const { render: r, synth: s } = result;
  console.log(`synth benchmark: ${N} workloads, ${WARMUP} warm-up + ${REPS} reps, median ms (CPU / wall)`);
  console.log('                                                render cpu  render wall   synth cpu  synth wall');
  for (const [key, label] of [
    ['ours', 'ours (CloneSet/Job + exit priority/sidecars)'],
    ['runtime', 'ours + KruiseRuntime (CRDs, runtime, gates) '],
    ['plus', '(a) cdk8s-plus-27 Deployments               '],
    ['raw', '(b) raw ApiObjects (floor)                  '],
  ] as const) {
    console.log(`  ${label} ${f(r.medianCpuMs[key])}    ${f(r.medianWallMs[key])}   ${f(s.medianCpuMs[key])}   ${f(s.medianWallMs[key])}`);
  }
  for (const [name, p] of [
    ['render', r],
    ['synth', s],
  ] as const) {
    console.log(
      `  ${name.padEnd(6)} (CPU): ours/(a) = ${x(p.ratios.oursVsPlus)} (target <= 1.20x), ours/(b) = ${x(p.ratios.oursVsRaw)}, ` +
        `(a)/(b) = ${x(p.ratios.plusVsRaw)}; wall ours/(a) = ${x(p.wallRatios.oursVsPlus)}; ` +
        `with KruiseRuntime/without = ${x(p.ratios.runtimeVsOurs)}${name === 'synth' ? ' (target <= 1.10x)' : ' (render skips validation)'}`,
    );
  }
  if (result.render.ratios.oursVsPlus > 1.2 || result.synth.ratios.oursVsPlus > 1.2 || result.synth.ratios.runtimeVsOurs > 1.1)
    process.exitCode = 1;
}

await main();

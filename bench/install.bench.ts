// Install-manifest benchmark: what a KruiseRuntime adds to synth. The same app of N workloads is
// synthesized with and without a KruiseRuntime chart (interleaved, after warm-up, median of the
// repetitions), so the figure is a ratio to a baseline measured in the same run. The runtime renders
// the app's objects once more to find the features it needs, so the ratio is expected near 2x
// for large apps and is reported, not asserted. Also prints the install's object counts and sizes.
// Usage: npm run bench:install [-- --workloads N --reps R --json]
import { ApiObject, App, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { stringify } from 'yaml';
import { JobSidecarTermination, KruiseRuntime } from '../constructs/index.js';
import { benchArgs, median, ratio, timeVariants } from './lib.js';
import { recordBench } from './record.js';

const args = benchArgs({ workloads: 2000, reps: 5, warmup: 1 });
const N = args.workloads;
const REPS = args.reps;
const WARMUP = args.warmup;

function buildApp(app: App): void {
  const chart = new Chart(app, 'app');
  for (let i = 0; i < N; i++) {
    if (i % 10 === 0) {
      new ApiObject(chart, `ipj${i}`, {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ImagePullJob',
        metadata: { name: `ipj${i}` },
        spec: { image: `example.io/app:${i}`, completionPolicy: { type: 'Always' } },
      });
      continue;
    }
    const job = new kplus.Job(chart, `w${i}`, {
      containers: [
        { name: 'app', image: `example.io/app-${i % 50}:1.0.${i}`, envVariables: { INDEX: kplus.EnvValue.fromValue(String(i)) } },
        { name: 'envoy', image: 'envoyproxy/envoy:v1.30.1', portNumber: 15001 },
      ],
    });
    if (i % 2 === 1) JobSidecarTermination.of(job).terminate('envoy');
  }
}

function synthApp(withRuntime: boolean): void {
  const app = Testing.app();
  if (withRuntime) new KruiseRuntime(app, 'kruise');
  buildApp(app);
  app.synthYaml();
}

function synthRuntimeAlone(): void {
  const app = Testing.app();
  new KruiseRuntime(app, 'kruise');
  new Chart(app, 'empty');
  app.synthYaml();
}

const times = timeVariants(
  { base: () => synthApp(false), withRuntime: () => synthApp(true), alone: synthRuntimeAlone },
  { warmup: WARMUP, reps: REPS },
);

// Sizes of the install for a small app that needs every part (daemon, pod webhook).
const app = Testing.app();
const rt = new KruiseRuntime(app, 'kruise');
const c = new Chart(app, 'app');
new ApiObject(c, 'ss', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'ss' }, spec: { selector: {} } });
new ApiObject(c, 'crr', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: { name: 'crr' }, spec: {} });
const crds = Testing.synth(rt.crds!);
const runtime = Testing.synth(rt);
const bytes = (docs: unknown[]) => docs.reduce<number>((n, d) => n + stringify(d).length, 0);

const result = {
  workloads: N,
  reps: REPS,
  baselineMs: Math.round(median(times.base)),
  withRuntimeMs: Math.round(median(times.withRuntime)),
  ratio: ratio(median(times.withRuntime), median(times.base)),
  runtimeAloneMs: Math.round(median(times.alone)),
  install: { crds: crds.length, crdBytes: bytes(crds), runtimeObjects: runtime.length, runtimeBytes: bytes(runtime) },
};
await recordBench('bench:install', [
  {
    measure: `synth of an app of ${N} workloads with KruiseRuntime; the runtime alone (empty app)`,
    figure: `${result.withRuntimeMs} ms; ${result.runtimeAloneMs} ms`,
    peer: `${result.ratio}x the app without KruiseRuntime (${result.baselineMs} ms)`,
  },
  {
    measure: 'install size for an app that needs every part (daemon, pod webhook)',
    figure: `${result.install.crds} CRDs (${result.install.crdBytes} bytes of YAML), ${result.install.runtimeObjects} runtime objects (${result.install.runtimeBytes} bytes)`,
    peer: '(size, no peer)',
  },
]);
if (args.json) console.log(JSON.stringify(result));
else {
  console.log(`app of ${N} workloads, median of ${REPS}:`);
  console.log(`  baseline (no KruiseRuntime)   ${result.baselineMs} ms`);
  console.log(`  with KruiseRuntime            ${result.withRuntimeMs} ms  (ratio ${result.ratio}x)`);
  console.log(`  KruiseRuntime, empty app      ${result.runtimeAloneMs} ms`);
  console.log(
    `install: ${result.install.crds} CRDs (${result.install.crdBytes} bytes YAML), ${result.install.runtimeObjects} runtime objects (${result.install.runtimeBytes} bytes YAML)`,
  );
}

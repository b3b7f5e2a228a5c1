// KruiseRuntime detects the app's features from its rendered objects at synth; the app must still be
// rendered only once per synth (constructs/internal/render-once.ts), and never from a stale rendering.
import { ApiObject, Chart, Lazy, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { JobSidecarTermination, KruiseRuntime } from '../../../constructs/index.js';

function countedApp() {
  const app = Testing.app();
  const runtime = new KruiseRuntime(app, 'kruise');
  const chart = new Chart(app, 'app');
  let renders = 0;
  let image = 'example.io/app:1';
  new ApiObject(chart, 'pod', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: Lazy.any({
      produce: () => {
        renders++;
        return { containers: [{ name: 'app', image }] };
      },
    }),
  });
  const job = new kplus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox' }] });
  job.addContainer({ name: 'envoy', image: 'envoy' });
  JobSidecarTermination.of(job).terminate('envoy');
  return { app, runtime, chart, renders: () => renders, setImage: (i: string) => (image = i) };
}

describe('KruiseRuntime renders the app once per synth', () => {
  it('app.synthYaml(): each app object is rendered once, and the runtime still sees its features', () => {
    const t = countedApp();
    const yaml = t.app.synthYaml();
    expect(t.renders()).toBe(1);
    expect(yaml).toContain('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT');
    expect(t.runtime.report().gates.required.has('SidecarTerminator')).toBe(true);
  });

  it('a later synth after a change renders again and shows the change', async () => {
    const t = countedApp();
    t.app.synthYaml();
    t.setImage('example.io/app:2');
    await Promise.resolve();
    const yaml = t.app.synthYaml();
    expect(t.renders()).toBe(2);
    expect(yaml).toContain('example.io/app:2');
    expect(yaml).not.toContain('example.io/app:1');
  });

  it('outside a synth (report() then a change) a chart renders fresh', async () => {
    const t = countedApp();
    t.runtime.report();
    t.setImage('example.io/app:3');
    await Promise.resolve();
    const docs = Testing.synth(t.chart) as { kind: string; spec: { containers: { image: string }[] } }[];
    expect(docs.find((d) => d.kind === 'Pod')!.spec.containers[0]!.image).toBe('example.io/app:3');
  });
});

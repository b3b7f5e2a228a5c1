import { ApiObject, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { AdvancedDaemonSet, CloneSet, ImagePrePull, ImagePullJob, KruiseRuntime } from '../../../constructs/index.js';
import { validateManifests } from '../../../src/policy/index.js';

const KEY = 'kruise.cdk8s.io/pre-pull-changed-images';
const annotated = (chart: Chart) =>
  Object.fromEntries(
    Testing.synth(chart).map((o) => [
      `${o.kind}/${o.metadata.name}`,
      (o.metadata.annotations as Record<string, string> | undefined)?.[KEY],
    ]),
  );

describe('ImagePrePull', () => {
  it('enableIn annotates every workload under the scope, including those added after it, and nothing else', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'web');
    ImagePrePull.enableIn(chart);
    const d = new kplus.Deployment(chart, 'deploy', {
      containers: [{ image: 'nginx:1.27', portNumber: 80, securityContext: { ensureNonRoot: false } }],
    });
    d.exposeViaService({ ports: [{ port: 80 }] });
    new CloneSet(chart, 'clones', { containers: [{ image: 'nginx:1.27', name: 'web' }] });
    new kplus.Job(chart, 'migrate', { containers: [{ image: 'migrate:2', securityContext: { ensureNonRoot: false } }] });
    new ImagePullJob(chart, 'pull', { image: 'redis:7.2' });
    const other = new Chart(app, 'other');
    new kplus.Deployment(other, 'api', { containers: [{ image: 'api:1', securityContext: { ensureNonRoot: false } }] });
    const marks = Object.entries(annotated(chart));
    expect(marks.filter(([k]) => /^(Deployment|CloneSet|Job)\//.test(k)).map(([, v]) => v)).toEqual(['true', 'true', 'true']);
    expect(marks.filter(([k]) => /^(Service|ImagePullJob)\//.test(k)).map(([, v]) => v)).toEqual([undefined, undefined]);
    expect(Object.values(annotated(other))).toEqual([undefined]);
  });

  it('enableFor annotates one workload; anything that runs no pods is refused with its path', () => {
    const chart = Testing.chart();
    const d = new kplus.Deployment(chart, 'deploy', { containers: [{ image: 'nginx:1.27', securityContext: { ensureNonRoot: false } }] });
    new kplus.Deployment(chart, 'plain', { containers: [{ image: 'nginx:1.27', securityContext: { ensureNonRoot: false } }] });
    ImagePrePull.enableFor(d);
    expect(Object.values(annotated(chart)).sort()).toEqual(['true', undefined]);
    const cm = new ApiObject(chart, 'cm', { apiVersion: 'v1', kind: 'ConfigMap' });
    expect(() => ImagePrePull.enableFor(cm)).toThrow(/\[test\/cm\] ImagePrePull.enableFor: ConfigMap \(v1\) runs no pods of its own/);
    expect(() => ImagePrePull.enableFor(chart)).toThrow(/not a Kubernetes object/);
  });

  it('the annotation is there when KruiseRuntime renders the app (it does so while validating, before later charts)', () => {
    const app = Testing.app();
    new KruiseRuntime(app, 'kruise');
    const chart = new Chart(app, 'agents');
    ImagePrePull.enableIn(chart);
    new AdvancedDaemonSet(chart, 'agent', { containers: [{ image: 'agent:2', name: 'agent', securityContext: { ensureNonRoot: false } }] });
    const ds = parseAllDocuments(app.synthYaml())
      .map((d) => d.toJS() as { kind: string; apiVersion: string; metadata: { annotations?: Record<string, string> } })
      .find((o) => o.kind === 'DaemonSet' && o.apiVersion.startsWith('apps.kruise.io/'))!;
    expect(ds.metadata.annotations?.[KEY]).toBe('true');
  });

  it('an opted-in workload counts as the ImagePullJob feature: the bundled runtime runs its controller and the daemon, nothing reported', () => {
    const app = Testing.app();
    new KruiseRuntime(app, 'kruise');
    const chart = new Chart(app, 'web');
    ImagePrePull.enableIn(chart);
    new kplus.Deployment(chart, 'deploy', { containers: [{ image: 'nginx:1.27', securityContext: { ensureNonRoot: false } }] });
    app.synth();
    const all = app.charts.flatMap((ch) => ch.toJson() as { kind: string; metadata: { name: string }; spec: any }[]);
    const manager = all.find((o) => o.kind === 'Deployment' && o.metadata.name === 'kruise-controller-manager')!;
    const args: string[] = manager.spec.template.spec.containers[0].args;
    expect(args.find((a) => a.startsWith('--feature-gates='))).toMatch(/ImagePullJobGate=true/);
    expect(all.some((o) => o.kind === 'DaemonSet')).toBe(true);
    expect(validateManifests(all).filter((f) => f.ruleId.startsWith('KRUISE-RUNTIME-') || f.severity === 'error')).toEqual([]);
  });
});

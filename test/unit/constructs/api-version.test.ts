import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import {
  BroadcastJob,
  CloneSet,
  ImageListPullJob,
  ImagePullJob,
  KruiseApiVersion,
  KruiseApiVersions,
  KruiseRuntime,
} from '../../../constructs/index.js';
import { validateObject } from '../../../src/api/index.js';
import { validateManifests } from '../../../src/policy/index.js';

const versions = (chart: Chart) => Object.fromEntries(Testing.synth(chart).map((o) => [o.kind, o.apiVersion]));

function jobs(chart: Chart, apiVersion?: KruiseApiVersion): void {
  new ImagePullJob(chart, 'pull', { image: 'redis:7.2', apiVersion });
  new ImageListPullJob(chart, 'list', { images: ['redis:7.2', 'nginx:1.27'], apiVersion });
  new BroadcastJob(chart, 'bcj', { containers: [{ image: 'busybox:1.36', name: 'main' }], apiVersion });
}

describe('the apps.kruise.io version constructs emit', () => {
  it('is v1alpha1 by default', () => {
    const chart = Testing.chart();
    jobs(chart);
    expect(versions(chart)).toMatchObject({
      ImagePullJob: 'apps.kruise.io/v1alpha1',
      ImageListPullJob: 'apps.kruise.io/v1alpha1',
      BroadcastJob: 'apps.kruise.io/v1alpha1',
    });
  });

  it('is the construct prop where given, and the objects pass the schema and the rules at that version', () => {
    const chart = Testing.chart();
    jobs(chart, KruiseApiVersion.V1BETA1);
    expect(versions(chart)).toMatchObject({
      ImagePullJob: 'apps.kruise.io/v1beta1',
      ImageListPullJob: 'apps.kruise.io/v1beta1',
      BroadcastJob: 'apps.kruise.io/v1beta1',
    });
    for (const o of Testing.synth(chart)) expect(validateObject(o).issues, o.kind).toEqual([]);
    expect(validateManifests(Testing.synth(chart)).filter((f) => f.severity === 'error')).toEqual([]);
  });

  it("is the app's choice where the kind is served at it; other kinds keep v1alpha1; a prop still wins", () => {
    const app = Testing.app();
    KruiseApiVersions.emitIn(app, KruiseApiVersion.V1BETA1);
    const chart = new Chart(app, 'c');
    new ImagePullJob(chart, 'pull', { image: 'redis:7.2' });
    new ImageListPullJob(chart, 'list', { images: ['redis:7.2'], apiVersion: KruiseApiVersion.V1ALPHA1 });
    new CloneSet(chart, 'web', { containers: [{ image: 'nginx:1.27', name: 'web' }] });
    expect(versions(chart)).toMatchObject({
      ImagePullJob: 'apps.kruise.io/v1beta1',
      ImageListPullJob: 'apps.kruise.io/v1alpha1',
      CloneSet: 'apps.kruise.io/v1alpha1',
    });
  });

  it('a chart may choose for its own constructs', () => {
    const app = Testing.app();
    const beta = new Chart(app, 'beta');
    KruiseApiVersions.emitIn(beta, KruiseApiVersion.V1BETA1);
    const alpha = new Chart(app, 'alpha');
    new ImagePullJob(beta, 'pull', { image: 'redis:7.2' });
    new ImagePullJob(alpha, 'pull', { image: 'redis:7.2' });
    expect(versions(beta).ImagePullJob).toBe('apps.kruise.io/v1beta1');
    expect(versions(alpha).ImagePullJob).toBe('apps.kruise.io/v1alpha1');
  });

  it('refuses a version that does not exist, and a choice made after constructs were added, naming the scope', () => {
    const chart = Testing.chart();
    expect(() => new ImagePullJob(chart, 'pull', { image: 'redis:7.2', apiVersion: 'apps.kruise.io/v1' as KruiseApiVersion })).toThrow(
      /\[test\/pull\] apiVersion: "apps.kruise.io\/v1" is not a version ImagePullJob is served at; use one of apps.kruise.io\/v1alpha1, apps.kruise.io\/v1beta1/,
    );
    const app = new App();
    new Chart(app, 'first');
    expect(() => KruiseApiVersions.emitIn(app, KruiseApiVersion.V1BETA1)).toThrow(/call it before adding constructs/);
    expect(() => KruiseApiVersions.emitIn(new App(), 'v1beta1' as KruiseApiVersion)).toThrow(/"v1beta1" is not one of/);
  });

  it('KruiseRuntime counts a v1beta1 ImagePullJob as the ImagePullJob feature: its gate and the daemon, nothing reported', () => {
    const app = Testing.app();
    new KruiseRuntime(app, 'kruise');
    new ImagePullJob(new Chart(app, 'apps'), 'warm', { image: 'nginx:1.25', apiVersion: KruiseApiVersion.V1BETA1 });
    app.synth();
    const all = app.charts.flatMap((ch) => ch.toJson() as { kind: string; metadata: { name: string }; spec: any }[]);
    const manager = all.find((o) => o.kind === 'Deployment' && o.metadata.name === 'kruise-controller-manager')!;
    const args: string[] = manager.spec.template.spec.containers[0].args;
    expect(args.find((a) => a.startsWith('--feature-gates='))).toMatch(/ImagePullJobGate=true/);
    expect(all.some((o) => o.kind === 'DaemonSet')).toBe(true);
    expect(validateManifests(all).filter((f) => f.ruleId.startsWith('KRUISE-RUNTIME-') || f.severity === 'error')).toEqual([]);
  });
});

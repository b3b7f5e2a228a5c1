import { describe, expect, it } from 'vitest';
import { isPrePullJob, prePullJobs, prePullWorkloadOf } from '../../../src/policy/pre-pull.js';
import { validateObject } from '../../../src/api/index.js';
import { validateManifests } from '../../../src/policy/index.js';

type Obj = Record<string, unknown>;
const OPT_IN = { 'kruise.cdk8s.io/pre-pull-changed-images': 'true' };

const deployment = (images: string[], opts: { name?: string; optIn?: boolean; ns?: string; secrets?: string[] } = {}): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: opts.name ?? 'web',
    ...(opts.ns === undefined ? {} : { namespace: opts.ns }),
    ...(opts.optIn === false ? {} : { annotations: OPT_IN }),
  },
  spec: {
    selector: { matchLabels: { app: opts.name ?? 'web' } },
    template: {
      metadata: { labels: { app: opts.name ?? 'web' } },
      spec: {
        ...(opts.secrets ? { imagePullSecrets: opts.secrets.map((name) => ({ name })) } : {}),
        initContainers: images.length > 1 ? [{ name: 'init', image: images[1] }] : [],
        containers: [{ name: 'main', image: images[0] }],
      },
    },
  },
});

const cronJob = (image: string, labels?: Record<string, string>): Obj => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly', namespace: 'ops', annotations: OPT_IN },
  spec: {
    schedule: '0 3 * * *',
    jobTemplate: {
      spec: { template: { metadata: labels ? { labels } : {}, spec: { restartPolicy: 'Never', containers: [{ name: 'run', image }] } } },
    },
  },
});

const images = (jobs: Obj[]) => jobs.map((j) => (j.spec as { image: string }).image);

describe('pre-pull from the diff: which images', () => {
  it.each<[string, Obj[], Obj[] | undefined, string[]]>([
    ['a changed image: the new one', [deployment(['nginx:1.27'])], [deployment(['nginx:1.25'])], ['nginx:1.27']],
    ['no previous output: nothing', [deployment(['nginx:1.27'])], undefined, []],
    ['unchanged: nothing', [deployment(['nginx:1.25'])], [deployment(['nginx:1.25'])], []],
    [
      'a workload new in this output (no pod runs yet): nothing',
      [deployment(['nginx:1.27'])],
      [deployment(['nginx:1.25'], { name: 'api' })],
      [],
    ],
    ['not opted in: nothing', [deployment(['nginx:1.27'], { optIn: false })], [deployment(['nginx:1.25'], { optIn: false })], []],
    [
      'an init container image changed too: both new ones',
      [deployment(['nginx:1.27', 'migrate:2'])],
      [deployment(['nginx:1.25', 'migrate:1'])],
      ['migrate:2', 'nginx:1.27'],
    ],
    ['an image removed only: nothing', [deployment(['nginx:1.25'])], [deployment(['nginx:1.25', 'migrate:1'])], []],
    ['another namespace is another workload', [deployment(['nginx:1.27'], { ns: 'b' })], [deployment(['nginx:1.25'], { ns: 'a' })], []],
    ['a CronJob: its job template', [cronJob('report:2', { app: 'nightly' })], [cronJob('report:1', { app: 'nightly' })], ['report:2']],
    ['a CronJob without labels: no way to find its pods, nothing', [cronJob('report:2')], [cronJob('report:1')], []],
  ])('%s', (_name, current, previous, expected) => {
    expect(images(prePullJobs(current, previous)).sort()).toEqual(expected);
  });

  it('--pre-pull (all) takes workloads without the annotation', () => {
    const jobs = prePullJobs([deployment(['nginx:1.27'], { optIn: false })], [deployment(['nginx:1.25'], { optIn: false })], { all: true });
    expect(images(jobs)).toEqual(['nginx:1.27']);
  });
});

describe('pre-pull from the diff: the ImagePullJob', () => {
  const [job] = prePullJobs(
    [deployment(['nginx:1.27'], { ns: 'shop', secrets: ['regcred', 'regcred'] })],
    [deployment(['nginx:1.25'], { ns: 'shop' })],
    {
      ttlSecondsAfterFinished: 600,
    },
  );

  it("targets the nodes of the workload's pods, in its namespace, with its pull secrets, bounded in time", () => {
    expect(job).toMatchObject({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: { namespace: 'shop', annotations: { 'kruise.cdk8s.io/pre-pull-for': 'Deployment.apps/web' } },
      spec: {
        image: 'nginx:1.27',
        podSelector: { matchLabels: { app: 'web' } },
        pullSecrets: ['regcred'],
        completionPolicy: { type: 'Always', activeDeadlineSeconds: 900, ttlSecondsAfterFinished: 600 },
      },
    });
    expect(isPrePullJob(job!)).toBe(true);
  });

  it('passes the schema and every rule (the emitted finding is info)', () => {
    expect(validateObject(job!).issues).toEqual([]);
    const findings = validateManifests([job!]);
    expect(findings.map((f) => [f.ruleId, f.severity])).toEqual([['KRUISE-PREPULL-001', 'info']]);
  });

  it('has a stable DNS-label name per workload and image, even for a long workload name', () => {
    const long = 'a'.repeat(60) + '.b';
    const again = prePullJobs([deployment(['nginx:1.27'], { name: long })], [deployment(['nginx:1.25'], { name: long })]);
    const twice = prePullJobs([deployment(['nginx:1.27'], { name: long })], [deployment(['nginx:1.25'], { name: long })]);
    const name = (again[0]!.metadata as { name: string }).name;
    expect(name).toBe((twice[0]!.metadata as { name: string }).name);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(name.length).toBeLessThanOrEqual(63);
  });

  it('has no TTL when none is asked for (Flux: Git prunes it)', () => {
    const [j] = prePullJobs([deployment(['nginx:1.27'])], [deployment(['nginx:1.25'])]);
    expect((j!.spec as { completionPolicy: Obj }).completionPolicy).not.toHaveProperty('ttlSecondsAfterFinished');
  });
});

describe('pre-pull from the diff: a repeated synth writes the same output', () => {
  const v1 = [deployment(['nginx:1.25'])];
  const v2 = [deployment(['nginx:1.27'])];
  const first = [...v2, ...prePullJobs(v2, v1)];

  it('keeps the jobs of the previous output while the images stay (a fixed point after one synth)', () => {
    const second = [...v2, ...prePullJobs(v2, first)];
    expect(second).toEqual(first);
    expect([...v2, ...prePullJobs(v2, second)]).toEqual(first);
  });

  it("replaces them at the workload's next image change", () => {
    const v3 = [deployment(['nginx:1.28'])];
    expect(images(prePullJobs(v3, first))).toEqual(['nginx:1.28']);
  });

  it('drops a kept job whose image the workload no longer runs', () => {
    const twoImages = [deployment(['nginx:1.27', 'migrate:2'])];
    const withJobs = [...twoImages, ...prePullJobs(twoImages, [deployment(['nginx:1.25', 'migrate:1'])])];
    expect(images(prePullJobs([deployment(['nginx:1.27'])], withJobs))).toEqual(['nginx:1.27']);
  });
});

describe('what pre-pull reads as a workload', () => {
  it.each<[string, Obj, boolean]>([
    ['Deployment', deployment(['x:1']), true],
    ['CloneSet', { ...deployment(['x:1']), apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet' }, true],
    ['Advanced StatefulSet', { ...deployment(['x:1']), apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet' }, true],
    [
      'a bare Pod (no rollout)',
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
      false,
    ],
    ['a ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }, false],
    ['a Deployment without a name', { ...deployment(['x:1']), metadata: {} }, false],
  ])('%s: %s', (_name, o, expected) => {
    expect(prePullWorkloadOf(o) !== undefined).toBe(expected);
  });
});

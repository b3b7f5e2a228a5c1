import { Chart, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { BroadcastJob, BroadcastJobCompletionPolicy, BroadcastJobFailurePolicy, JobSidecarTermination } from '../../../constructs/index.js';
import { validateObject } from '../../../src/api/index.js';

const chart = () => new Chart(Testing.app(), 'test');

describe('BroadcastJob construct', () => {
  it('renders the pod template and the policies as the bundled and upstream runtimes read them', () => {
    const c = chart();
    const job = new BroadcastJob(c, 'warm', {
      parallelism: kplus.PercentOrAbsolute.percent(50),
      activeDeadline: Duration.minutes(10),
      ttlAfterFinished: Duration.minutes(5),
      failurePolicy: BroadcastJobFailurePolicy.CONTINUE,
      restartLimit: 2,
      containers: [{ name: 'warm', image: 'busybox:1.36', command: ['sh', '-c', 'echo warm'] }],
    });
    job.scheduling.tolerate(kplus.Node.tainted(kplus.NodeTaintQuery.exists('dedicated', { effect: kplus.TaintEffect.NO_SCHEDULE })));
    const [o] = Testing.synth(c);
    expect(o).toMatchObject({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'BroadcastJob',
      spec: {
        parallelism: '50%',
        completionPolicy: { type: 'Always', activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 300 },
        failurePolicy: { type: 'Continue', restartLimit: 2 },
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [expect.objectContaining({ name: 'warm', image: 'busybox:1.36' })],
            tolerations: [expect.objectContaining({ key: 'dedicated', effect: 'NoSchedule' })],
          },
        },
      },
    });
    expect(validateObject(o).issues).toEqual([]);
  });

  it('refuses restartPolicy Always, a deadline or TTL with completion policy Never, and a negative restartLimit', () => {
    const containers = [{ name: 'main', image: 'busybox:1.36' }];
    expect(() => new BroadcastJob(chart(), 'a', { containers, restartPolicy: kplus.RestartPolicy.ALWAYS })).toThrow(
      /\[test\/a\] a BroadcastJob pod must finish: restartPolicy must be NEVER or ON_FAILURE/,
    );
    expect(
      () =>
        new BroadcastJob(chart(), 'b', {
          containers,
          completionPolicy: BroadcastJobCompletionPolicy.NEVER,
          ttlAfterFinished: Duration.minutes(1),
        }),
    ).toThrow(/\[test\/b\] ttlAfterFinished needs completionPolicy ALWAYS/);
    expect(() => new BroadcastJob(chart(), 'c', { containers, restartLimit: -1 })).toThrow(/restartLimit must be a non-negative integer/);
    expect(() => new BroadcastJob(chart(), 'd', { containers: [{ name: 'main', image: 'Bad Image' }] })).toThrow(/\[test\/d\]/);
  });

  it('takes a terminated sidecar like a Job', () => {
    const c = chart();
    const job = new BroadcastJob(c, 'job', {
      restartPolicy: kplus.RestartPolicy.ON_FAILURE,
      containers: [{ name: 'main', image: 'busybox:1.36' }],
    });
    JobSidecarTermination.of(job).addSidecar({ name: 'proxy', image: 'envoyproxy/envoy:v1.30.0' });
    const [o] = Testing.synth(c);
    expect(o.spec.template.spec.restartPolicy).toBe('OnFailure');
    expect(o.spec.template.spec.containers[1]).toMatchObject({
      name: 'proxy',
      env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }],
    });
  });
});

// The constructs take cdk8s-plus objects by what they can do, not by one package's classes: a cdk8s-plus-33
// Job (what `cdk8s init` installs today) works with the constructs built against cdk8s-plus-27, and a
// construct that is no pod owner is rejected naming what was expected and what was given.
import { Chart, Cron, Testing } from 'cdk8s';
import * as plus27 from 'cdk8s-plus-27';
import * as plus33 from 'cdk8s-plus-33';
import { describe, expect, it } from 'vitest';
import { ContainerExitPriority, JobSidecarTermination } from '../../../constructs/index.js';

const TERMINATE_ENV = { name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' };

describe('cdk8s-plus versions', () => {
  it('a cdk8s-plus-33 Job gets a terminated sidecar and exit priorities like a cdk8s-plus-27 one', () => {
    const outputs = [plus27, plus33].map((plus) => {
      const chart = new Chart(Testing.app(), 'test');
      const job = new plus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
      const side = JobSidecarTermination.of(job).addSidecar({ name: 'side', image: 'busybox:1.36' });
      ContainerExitPriority.of(job).set(side, 1);
      const [manifest] = Testing.synth(chart);
      return manifest.spec.template;
    });
    for (const template of outputs) {
      expect(template.spec.containers.map((c: { name: string }) => c.name)).toEqual(['main', 'side']);
      expect(template.spec.containers[1].env).toContainEqual(TERMINATE_ENV);
      expect(template.metadata.annotations['kruise.io/container-exit-priority']).toBe('{"side":1}');
    }
  });

  it('a cdk8s-plus-33 CronJob and Pod are accepted; restartPolicy Always is refused for either version', () => {
    const chart = new Chart(Testing.app(), 'test');
    const cron = new plus33.CronJob(chart, 'cron', { schedule: Cron.hourly(), containers: [{ name: 'main', image: 'busybox:1.36' }] });
    expect(JobSidecarTermination.of(cron).addSidecar({ name: 'side', image: 'busybox:1.36' }).name).toBe('side');
    const pod = new plus33.Pod(chart, 'pod', {
      restartPolicy: plus33.RestartPolicy.ALWAYS,
      containers: [{ name: 'main', image: 'busybox:1.36' }],
    });
    expect(() => JobSidecarTermination.of(pod)).toThrow(/\[test\/pod\] Job sidecar termination needs restartPolicy Never or OnFailure/);
  });

  it('addSidecar on a construct that is no pod owner names what was expected and what was given', () => {
    const chart = new Chart(Testing.app(), 'test');
    const service = new plus33.Service(chart, 'svc', { ports: [{ port: 80 }] });
    expect(() => JobSidecarTermination.of(service).addSidecar({ name: 'side', image: 'busybox:1.36' })).toThrow(
      /\[test\/svc\] addSidecar needs a cdk8s-plus pod owner \(a Pod, Job, CronJob, Deployment, StatefulSet, DaemonSet or CloneSet, from any cdk8s-plus-NN\), but got a Service at "test\/svc"/,
    );
  });
});

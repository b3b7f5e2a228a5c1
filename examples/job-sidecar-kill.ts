import { Chart, ChartProps } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { InjectedSidecar, JobSidecarTermination } from '../constructs/index.js';

/**
 * A batch Job whose long-running sidecar is killed once the main container finishes (kill mode). An Istio proxy a mesh
 * injects into the pod after synth is declared by name and stops too, through its own quitquitquit.
 */
export class JobSidecarKill extends Construct {
  public constructor(scope: Construct, id: string) {
    super(scope, id);
    const job = new kplus.Job(this, 'job', {
      metadata: { name: 'job-with-sidecar' },
      backoffLimit: 2,
      containers: [
        {
          name: 'main',
          image: 'busybox:1.36',
          command: ['sh', '-c', 'echo computing; sleep 30; echo done'],
        },
      ],
    });
    JobSidecarTermination.of(job, { injectedSidecars: [InjectedSidecar.istio()] }).addSidecar(
      {
        name: 'log-shipper',
        image: 'fluent/fluent-bit:3.0',
        args: ['-i', 'dummy', '-o', 'stdout'],
      },
      { ignoreExitCode: true },
    );
  }
}

/** {@link JobSidecarKill} as a chart of its own. */
export class JobSidecarKillChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new JobSidecarKill(this, 'scenario');
  }
}

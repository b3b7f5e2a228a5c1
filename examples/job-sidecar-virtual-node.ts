import { Chart, ChartProps } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { JobSidecarTermination, SidecarTerminationMode } from '../constructs/index.js';

/**
 * The same Job on virtual-kubelet nodes, which run no node daemon: the sidecar is stopped by
 * swapping its image in place for one that exits immediately.
 */
export class JobSidecarVirtualNodeChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    const job = new kplus.Job(this, 'job', {
      metadata: { name: 'job-with-sidecar-on-vk' },
      containers: [
        {
          name: 'main',
          image: 'busybox:1.36',
          command: ['sh', '-c', 'echo computing; sleep 30; echo done'],
        },
      ],
    });
    job.scheduling.attract(kplus.Node.labeled(kplus.NodeLabelQuery.is('type', 'virtual-kubelet')));
    job.scheduling.tolerate(kplus.Node.tainted(kplus.NodeTaintQuery.exists('virtual-kubelet.io/provider')));
    JobSidecarTermination.of(job).addSidecar(
      {
        name: 'log-shipper',
        image: 'fluent/fluent-bit:3.0',
        args: ['-i', 'dummy', '-o', 'stdout'],
      },
      { mode: SidecarTerminationMode.quickExitImage('example.io/quick-exit:v1.0.0') },
    );
  }
}

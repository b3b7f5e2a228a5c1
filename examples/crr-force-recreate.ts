import { Chart, ChartProps, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import { ContainerRecreateRequest, ContainerRecreateFailurePolicy } from '../constructs/index.js';

/** Force-recreate the `app` and `envoy` containers of one pod, in order. */
export class CrrForceRecreateChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new ContainerRecreateRequest(this, 'restart', {
      metadata: { name: 'restart-app-0' },
      podName: 'app-with-exit-priority-0',
      containers: ['app', 'envoy'],
      strategy: {
        forceRecreate: true,
        orderedRecreate: true,
        failurePolicy: ContainerRecreateFailurePolicy.FAIL,
        unreadyGracePeriod: Duration.seconds(5),
        minStarted: Duration.seconds(10),
      },
      activeDeadline: Duration.minutes(5),
      ttlAfterFinished: Duration.minutes(30),
    });
  }
}

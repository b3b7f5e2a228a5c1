import { Chart, ChartProps, Duration } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { ContainerRecreateRequest, ContainerRecreateFailurePolicy } from '../constructs/index.js';

/**
 * Force-recreate the `app` and `envoy` containers of one pod, in order. The pod is part of the app (desired state,
 * synced); the request is a one-shot operation, so synth writes it to `dist/ops/`, which no sync applies: run it
 * with `kubectl create -f dist/ops/crr-force-recreate.yaml` once the pod runs.
 */
export class CrrForceRecreateChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    // A named Pod, so the request can name it (a CloneSet's or Deployment's pods get generated names).
    const pod = new kplus.Pod(this, 'target', {
      metadata: { name: 'crr-demo' },
      containers: [
        { name: 'app', image: 'busybox:1.36', command: ['sleep', '3600'], securityContext: { user: 65534, group: 65534 } },
        { name: 'envoy', image: 'busybox:1.36', command: ['sleep', '3600'], securityContext: { user: 65534, group: 65534 } },
      ],
    });
    new ContainerRecreateRequest(this, 'restart', {
      metadata: { name: 'restart-crr-demo' },
      podName: pod.name,
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

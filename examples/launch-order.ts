import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { ContainerLaunchPriority } from '../constructs/index.js';

/**
 * envoy starts before app (launch priority 10 against the default 0), gated by envoy's readiness check. Below
 * Kubernetes 1.29 this is upstream's barrier (env KRUISE_CONTAINER_PRIORITY, one `<pod>-barrier` ConfigMap per pod);
 * from 1.29 on envoy becomes a native sidecar with a startupProbe derived from that check, and no ConfigMap is made.
 */
export class LaunchOrder extends Construct {
  public constructor(scope: Construct, id: string) {
    super(scope, id);
    const api = new kplus.Deployment(this, 'api', {
      metadata: { name: 'api-with-launch-order' },
      replicas: 2,
      containers: [
        { name: 'app', image: 'example.io/api:1.4.0', portNumber: 8080 },
        {
          name: 'envoy',
          image: 'envoyproxy/envoy:v1.30.1',
          portNumber: 15001,
          readiness: kplus.Probe.fromHttpGet('/ready', { port: 15021 }),
        },
      ],
    });
    ContainerLaunchPriority.of(api).set('envoy', 10);
  }
}

import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { CloneSet, ContainerExitPriority } from '../constructs/index.js';

/** Main containers exit first, then log-agent (priority 1), then envoy (priority 2). */
export class ExitPriority extends Construct {
  public constructor(scope: Construct, id: string) {
    super(scope, id);
    const app = new CloneSet(this, 'app', {
      metadata: { name: 'app-with-exit-priority' },
      replicas: 2,
      containers: [
        { name: 'app', image: 'example.io/app:2.3.0', portNumber: 8080 },
        { name: 'log-agent', image: 'fluent/fluent-bit:3.0' },
        { name: 'envoy', image: 'envoyproxy/envoy:v1.30.1', portNumber: 15001 },
      ],
    });
    ContainerExitPriority.of(app).setAll({ 'log-agent': 1, envoy: 2 });
  }
}

/** {@link ExitPriority} as a chart of its own. */
export class ExitPriorityChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new ExitPriority(this, 'scenario');
  }
}

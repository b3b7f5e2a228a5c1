import { Chart, ChartProps } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { SidecarSet, SidecarSetUpdateStrategy } from '../constructs/index.js';

/**
 * A SidecarSet injecting a `logtail` container into every `app=webserver` pod, sharing its log volume, and the
 * webserver Deployment whose pods it selects.
 */
export class SidecarSetLogtailChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    const logs = kplus.Volume.fromEmptyDir(this, 'log-volume', 'log-volume');
    new kplus.Deployment(this, 'webserver', {
      metadata: { name: 'webserver' },
      podMetadata: { labels: { app: 'webserver' } },
      replicas: 2,
      containers: [
        {
          name: 'web',
          image: 'nginxinc/nginx-unprivileged:1.25',
          portNumber: 8080,
          volumeMounts: [{ path: '/var/log/app', volume: logs }],
        },
      ],
    });
    new SidecarSet(this, 'logtail', {
      metadata: { name: 'logtail' },
      selector: kplus.LabelSelector.of({ labels: { app: 'webserver' } }),
      updateStrategy: SidecarSetUpdateStrategy.rollingUpdate({ maxUnavailable: kplus.PercentOrAbsolute.absolute(1) }),
      containers: [
        {
          name: 'logtail',
          image: 'example.io/logtail:1.0.0',
          command: ['/logtail', '--dir=/var/log/app'],
          volumeMounts: [{ path: '/var/log/app', volume: logs }],
          shareVolumePolicy: true,
          resources: {
            cpu: { request: kplus.Cpu.millis(50), limit: kplus.Cpu.millis(200) },
          },
        },
      ],
    });
  }
}

import { Chart, ChartProps, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import { ImagePullJob, ImagePullJobCompletionPolicy } from '../constructs/index.js';

/** Pre-pull nginx:1.9.1 on every node, tagging the CRI pull with sandbox metadata. */
export class ImagePullJobChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new ImagePullJob(this, 'nginx', {
      metadata: { name: 'pull-nginx' },
      image: 'nginx:1.9.1',
      parallelism: 10,
      pullPolicy: { timeout: Duration.minutes(5), backoffLimit: 3 },
      completionPolicy: ImagePullJobCompletionPolicy.always({
        activeDeadline: Duration.hours(1),
        ttlAfterFinished: Duration.minutes(5),
      }),
      sandboxConfig: {
        annotations: { 'io.kubernetes.image.metrics.tags': 'cluster=cn-shanghai' },
        labels: { 'io.kubernetes.image.app': 'foo' },
      },
    });
  }
}

import { Chart, ChartProps, Size } from 'cdk8s';
import { Construct } from 'constructs';
import { CloneSet } from '../constructs/index.js';

/** A CloneSet of 4 whose replacement pods always get fresh PVCs (disablePVCReuse). */
export class CloneSetPvcChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    const cache = new CloneSet(this, 'cache', {
      metadata: { name: 'cache' },
      replicas: 4,
      scaleStrategy: { disablePVCReuse: true },
    });
    const data = cache.addVolumeClaimTemplate({ name: 'data', storage: Size.gibibytes(10) });
    const container = cache.addContainer({
      name: 'redis',
      image: 'redis:7.2',
      portNumber: 6379,
      securityContext: { user: 999, group: 999 },
    });
    container.mount('/data', data);
  }
}

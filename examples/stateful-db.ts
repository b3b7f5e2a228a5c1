import { Chart, ChartProps, Duration, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { AdvancedStatefulSet, AdvancedStatefulSetUpdateStrategy, LifecycleHook } from '../constructs/index.js';

/**
 * A replicated store as an Advanced StatefulSet behind its headless Service: each replica keeps its name and its
 * claim; a new image is rolled out in place, highest ordinal first, one replica at a time, with a partition that keeps
 * replica 0 at the old version until it is lowered; a new replica stays out of service (PreparingNormal) until the
 * operator that registers it adds its finalizer, and a replica leaving waits for its drain to finish (preDelete).
 */
export class StatefulDbChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    const db = new AdvancedStatefulSet(this, 'db', {
      metadata: { name: 'store' },
      replicas: 3,
      updateStrategy: AdvancedStatefulSetUpdateStrategy.inPlaceIfPossible({ partition: 1, minReady: Duration.seconds(10) }),
      lifecycle: {
        preNormal: LifecycleHook.byFinalizers(['example.io/registered']),
        preDelete: LifecycleHook.byLabels({ 'example.io/draining': 'true' }, { markPodNotReady: true }),
      },
      containers: [
        {
          name: 'store',
          image: 'registry.k8s.io/pause:3.9',
          portNumber: 6379,
          securityContext: { ensureNonRoot: true, user: 65535 },
          resources: { cpu: { request: kplus.Cpu.millis(10) }, memory: { request: Size.mebibytes(32) } },
        },
      ],
    });
    db.containers[0]!.mount('/data', db.addVolumeClaimTemplate({ name: 'data', storage: Size.gibibytes(1) }));
    db.exposeViaService({ name: 'store' });
  }
}

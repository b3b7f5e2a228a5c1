import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { CloneSet, CloneSetUpdateStrategy, LifecycleHook } from '../constructs/index.js';

/**
 * Two CloneSets whose new pods wait in PreparingNormal until an external operator has set
 * them up: one hooked by finalizer, one by label.
 */
export class CloneSetPreNormalChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new CloneSet(this, 'by-finalizer', {
      metadata: { name: 'web-prenormal-finalizer' },
      replicas: 3,
      updateStrategy: CloneSetUpdateStrategy.inPlaceIfPossible(),
      lifecycle: { preNormal: LifecycleHook.byFinalizers(['example.io/unready-blocker']) },
      containers: [{ name: 'web', image: 'nginxinc/nginx-unprivileged:1.25', portNumber: 8080 }],
    });
    new CloneSet(this, 'by-label', {
      metadata: { name: 'web-prenormal-label' },
      replicas: 3,
      updateStrategy: CloneSetUpdateStrategy.inPlaceIfPossible(),
      lifecycle: { preNormal: LifecycleHook.byLabels({ 'example.io/block-unready': 'true' }) },
      containers: [{ name: 'web', image: 'nginxinc/nginx-unprivileged:1.25', portNumber: 8080 }],
    });
  }
}

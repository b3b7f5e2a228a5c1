import { Chart, ChartProps, Duration, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { AdvancedDaemonSet, AdvancedDaemonSetUpdateStrategy, ImagePrePull, LifecycleHook } from '../constructs/index.js';

/**
 * A node agent as an Advanced DaemonSet: a new image is rolled out in place (the pods keep their UID, only the
 * container restarts), first on the nodes labelled for the canary pool, with a partition that keeps two nodes at the
 * old version until it is lowered; a pod leaving its node waits for the agent's drain to release it (preDelete). With
 * pre-pull on, `cdk8s-kruise synth` turns the agent's next image change into an ImagePullJob on the nodes that run it,
 * applied before the DaemonSet, so the in-place restarts find the image there.
 */
export class NodeAgentDaemonSetChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    ImagePrePull.enableIn(this);
    new AdvancedDaemonSet(this, 'agent', {
      metadata: { name: 'node-agent' },
      updateStrategy: AdvancedDaemonSetUpdateStrategy.inPlaceIfPossible({
        maxUnavailable: kplus.PercentOrAbsolute.percent(10),
        partition: kplus.PercentOrAbsolute.absolute(2),
        nodeLabels: { 'example.io/pool': 'canary' },
      }),
      lifecycle: { preDelete: LifecycleHook.byLabels({ 'example.io/agent-draining': 'true' }) },
      minReady: Duration.seconds(10),
      containers: [
        {
          name: 'agent',
          image: 'registry.k8s.io/pause:3.9',
          securityContext: { ensureNonRoot: true, user: 65535 },
          resources: { cpu: { request: kplus.Cpu.millis(10) }, memory: { request: Size.mebibytes(16) } },
        },
      ],
    });
  }
}

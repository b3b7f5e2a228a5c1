import { Chart, ChartProps } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { KUBERNETES_VERSION_CONTEXT } from '../constructs/index.js';
import { ExitPriority } from './exit-priority.js';
import { JobSidecarKill } from './job-sidecar-kill.js';
import { LaunchOrder } from './launch-order.js';

/** Namespace the native-sidecar variant is deployed to. */
export const NATIVE_SIDECARS_NAMESPACE = 'native-sidecars';

/**
 * Creates {@link NATIVE_SIDECARS_NAMESPACE}. A chart of its own, without a chart namespace: cdk8s stamps a
 * chart's namespace onto every object in it, the cluster-scoped Namespace included. Add it before
 * {@link NativeSidecarsChart} so the Namespace is applied first.
 */
export class NativeSidecarsNamespaceChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, { ...props, namespace: undefined });
    new kplus.Namespace(this, 'namespace', { metadata: { name: NATIVE_SIDECARS_NAMESPACE } });
  }
}

/**
 * The same scenario code as the job-sidecar-kill and exit-priority charts, targeting Kubernetes 1.29:
 * sidecar termination and exit priorities compile to native sidecars instead of the Kruise contracts; so does the
 * launch order of {@link LaunchOrder} (no `<pod>-barrier` ConfigMap).
 */
export class NativeSidecarsChart extends Chart {
  public constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, { namespace: NATIVE_SIDECARS_NAMESPACE, ...props });
    // Context must be set before the first child exists; the constructs read it when they are built.
    this.node.setContext(KUBERNETES_VERSION_CONTEXT, '1.29');
    new JobSidecarKill(this, 'job-sidecar-kill');
    new ExitPriority(this, 'exit-priority');
    new LaunchOrder(this, 'launch-order');
  }
}

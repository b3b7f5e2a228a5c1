// The seed scenarios as one cdk8s app: one chart per scenario, synthesized into dist/.
// Run through `cdk8s synth` (see cdk8s.yaml); output is deterministic.
import { App } from 'cdk8s';
import { KruiseRuntime } from '../constructs/index.js';
import { CloneSetPreNormalChart } from './cloneset-prenormal.js';
import { CloneSetPvcChart } from './cloneset-pvc.js';
import { CrrForceRecreateChart } from './crr-force-recreate.js';
import { ExitPriorityChart } from './exit-priority.js';
import { ImagePullJobChart } from './image-pull-job.js';
import { JobSidecarKillChart } from './job-sidecar-kill.js';
import { JobSidecarVirtualNodeChart } from './job-sidecar-virtual-node.js';
import { NativeSidecarsChart, NativeSidecarsNamespaceChart } from './native-sidecars.js';
import { NodeAgentDaemonSetChart } from './node-agent-daemonset.js';
import { StatefulDbChart } from './stateful-db.js';
import { SidecarSetLogtailChart } from './sidecarset-logtail.js';

/** Builds the examples app (no synth), so tests and the benchmark can reuse it. */
export function buildExamplesApp(outdir?: string): App {
  const app = new App(outdir ? { outdir } : {});
  // CRDs + bundled runtime, derived from what the charts below use; ordered before them.
  new KruiseRuntime(app, 'kruise');
  new JobSidecarKillChart(app, 'job-sidecar-kill');
  new JobSidecarVirtualNodeChart(app, 'job-sidecar-virtual-node');
  new SidecarSetLogtailChart(app, 'sidecarset-logtail');
  new CloneSetPreNormalChart(app, 'cloneset-prenormal');
  new CloneSetPvcChart(app, 'cloneset-pvc');
  new ExitPriorityChart(app, 'exit-priority');
  new ImagePullJobChart(app, 'image-pull-job');
  new CrrForceRecreateChart(app, 'crr-force-recreate');
  new NodeAgentDaemonSetChart(app, 'node-agent-daemonset');
  new StatefulDbChart(app, 'stateful-db');

  // The same user code targeting Kubernetes 1.29 (native sidecars), in a namespace the app creates first.
  new NativeSidecarsNamespaceChart(app, 'native-sidecars-namespace');
  new NativeSidecarsChart(app, 'native-sidecars');
  return app;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('examples/main.ts')) {
  buildExamplesApp().synth();
}

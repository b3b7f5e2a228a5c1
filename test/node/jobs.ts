// The seed's Job scenario (main + sidecar marked for termination), written with the project's own
// constructs and synthesized for either compile target, with the node's offline test images.
import { Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { JobSidecarTermination, KUBERNETES_VERSION_CONTEXT } from '../../constructs/index.js';

export interface SeedJobOptions {
  readonly name: string;
  readonly image: string;
  readonly restartPolicy: 'Never' | 'OnFailure';
  /** Seconds the main container works before it exits 0. */
  readonly mainSeconds?: number;
  /** Exit code of the sidecar when it gets SIGTERM. */
  readonly sidecarExitOnTerm?: number;
  readonly ignoreExitCode?: boolean;
  /**
   * A preStop exec hook on the sidecar that appends `prestop-start`, sleeps this long, appends
   * `prestop-end` to `/events/log`; the sidecar's SIGTERM handler appends `term`. `/events` is the
   * host directory `eventsDir` (world-writable; the kubelet removes an emptyDir once the pod ends).
   */
  readonly preStop?: { readonly seconds: number; readonly eventsDir: string };
  /**
   * Without a preStop: the host directory mounted at `/events` all the same, so the sidecar's SIGTERM handler appends
   * `term` to `/events/log` (its mtime is when the handler ran, without the container log's copy in between).
   */
  readonly eventsDir?: string;
  /** Compile for Kubernetes >= 1.29: native sidecars (initContainers, restartPolicy Always). */
  readonly native?: boolean;
  readonly backoffLimit?: number;
}

// Small requests: the node has 2 CPUs, shared with the runtime's own pods.
const resources: kplus.ContainerResources = {
  cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(500) },
  memory: { request: Size.mebibytes(16), limit: Size.mebibytes(64) },
};
// The offline busybox image runs as root; the constructs' defaults require a non-root user.
const securityContext: kplus.ContainerSecurityContextProps = { user: 65534, group: 65534 };

/** Kubernetes manifests (JSON objects) of the seed Job for `options`. */
export function seedJob(options: SeedJobOptions): Record<string, any>[] {
  const chart = Testing.chart();
  if (options.native) chart.node.setContext(KUBERNETES_VERSION_CONTEXT, '1.29');
  const job = new kplus.Job(chart, 'job', {
    metadata: { name: options.name },
    backoffLimit: options.backoffLimit ?? 0,
    restartPolicy: options.restartPolicy === 'OnFailure' ? kplus.RestartPolicy.ON_FAILURE : kplus.RestartPolicy.NEVER,
    securityContext: { user: 65534, group: 65534 },
    containers: [
      {
        name: 'main',
        image: options.image,
        imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
        command: ['sh', '-c', `echo main start; sleep ${options.mainSeconds ?? 2}; echo main done`],
        resources,
        securityContext,
      },
    ],
  });
  const exitCode = options.sidecarExitOnTerm ?? 0;
  JobSidecarTermination.of(job).addSidecar(
    {
      name: 'sidecar',
      image: options.image,
      imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
      command: [
        'sh',
        '-c',
        `trap 'echo sidecar got TERM; [ -d /events ] && echo term >> /events/log; exit ${exitCode}' TERM; echo sidecar up; while true; do sleep 1 & wait $!; done`,
      ],
      resources,
      securityContext,
      ...(options.preStop
        ? {
            lifecycle: {
              preStop: kplus.Handler.fromCommand([
                'sh',
                '-c',
                `echo prestop-start >> /events/log; sleep ${options.preStop.seconds}; echo prestop-end >> /events/log`,
              ]),
            },
            volumeMounts: [
              { path: '/events', volume: kplus.Volume.fromHostPath(chart, 'events', 'events', { path: options.preStop.eventsDir }) },
            ],
          }
        : options.eventsDir
          ? {
              volumeMounts: [
                { path: '/events', volume: kplus.Volume.fromHostPath(chart, 'events', 'events', { path: options.eventsDir }) },
              ],
            }
          : {}),
    },
    { ignoreExitCode: options.ignoreExitCode ?? false },
  );
  return Testing.synth(chart);
}

// Shared pieces of the daemon e2e tests: the project's CRDs on the shared API server, an in-process
// daemon pointed at the test containerd, and a fake kubelet that keeps a pod's API status in step
// with what CRI shows (restarting exited containers under restartPolicy Always, as the kubelet does).
import type { V1Pod } from '@kubernetes/client-node';
import { KubeClient, PODS, PatchStrategy } from '../../src/runtime/core/index.js';
import { customResourceDefinitions } from '../../src/install/crds.js';
import { Daemon, DEFAULT_DAEMON_OPTIONS, type DaemonOptions } from '../../src/runtime/daemon/daemon.js';
import type { CriClient } from '../../src/runtime/cri/client.js';
import { KubeletPod, waitFor } from '../cri-harness/index.js';
import { adminKubeConfig, kubeconfigPath, kubectl } from '../harness/index.js';

/** Admin client (plain JSON, explicit patch types) for test-side API writes. */
export function adminClient(): KubeClient {
  return new KubeClient(adminKubeConfig());
}

let crdsInstalled = false;

/** Applies the project's generated CRDs (server-side apply: idempotent across test files) and waits until served. */
export async function installCrds(): Promise<void> {
  if (crdsInstalled) return;
  const list = { apiVersion: 'v1', kind: 'List', items: customResourceDefinitions() };
  await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager', 'daemon-e2e', '-f', '-'], {
    input: JSON.stringify(list),
  });
  for (const crd of list.items) {
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${crd.metadata!.name}`]);
  }
  crdsInstalled = true;
}

/** Starts the daemon in-process for `nodeName` on the given CRI socket, with permission enforcement on. */
export async function startDaemon(nodeName: string, criSocket: string, extra: Partial<DaemonOptions> = {}): Promise<Daemon> {
  const daemon = new Daemon({
    ...DEFAULT_DAEMON_OPTIONS,
    nodeName,
    kubeconfig: kubeconfigPath(),
    criSocket,
    healthProbeAddr: '127.0.0.1:0',
    strictPermissions: true,
    logLevel: process.env.DAEMON_LOG_LEVEL ?? 'warn',
    criCheckIntervalMs: 500,
    // Several daemons run in one test process: each holds exit-priority hooks on a port of its own.
    controllerOptions: { exitPriorityAddr: '127.0.0.1:0' },
    ...extra,
  });
  await daemon.start();
  return daemon;
}

/**
 * Plays the kubelet for one API pod: runs it through CRI with the pod's uid, then every `periodMs`
 * restarts exited containers (restartPolicy Always only) and writes the container statuses and
 * phase to pods/status.
 */
export class FakeKubelet {
  private timer?: NodeJS.Timeout;
  private busy = false;
  /** Errors seen by the sync loop (tests assert it stays empty). */
  readonly errors: string[] = [];

  private constructor(
    readonly pod: V1Pod,
    readonly cri: KubeletPod,
    private readonly restartPolicy: string,
  ) {}

  /** `hostPaths` maps a pod volume name to a host directory (hostPath volumes, bind-mounted through CRI). */
  static async start(
    cri: CriClient,
    pod: V1Pod,
    logRoot: string,
    periodMs = 200,
    hostPaths: Record<string, string> = {},
  ): Promise<FakeKubelet> {
    const md = pod.metadata!;
    const kubeletPod = await KubeletPod.run(
      cri,
      {
        uid: md.uid!,
        name: md.name!,
        namespace: md.namespace!,
        containers: pod.spec!.containers.map((c) => ({
          name: c.name,
          image: c.image!,
          ...(c.command ? { command: c.command } : {}),
          mounts: (c.volumeMounts ?? [])
            .filter((m) => hostPaths[m.name])
            .map((m) => ({ containerPath: m.mountPath, hostPath: hostPaths[m.name]! })),
        })),
      },
      logRoot,
    );
    const k = new FakeKubelet(pod, kubeletPod, pod.spec!.restartPolicy ?? 'Always');
    await k.sync();
    k.timer = setInterval(() => void k.tick(), periodMs);
    return k;
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.sync();
    } catch (err) {
      this.errors.push((err as Error).message);
    } finally {
      this.busy = false;
    }
  }

  async sync(): Promise<void> {
    let statuses = await this.cri.containerStatuses();
    if (this.restartPolicy === 'Always') {
      for (const s of statuses) if (s.state.terminated) await this.cri.startContainer(s.name);
      statuses = await this.cri.containerStatuses();
    }
    // As the kubelet: a restartPolicy Always pod never reaches a terminal phase (a container seen exited
    // between the restart above and the second read would otherwise make the pod Failed).
    const allDone = this.restartPolicy !== 'Always' && statuses.every((s) => s.state.terminated);
    const phase = !allDone ? 'Running' : statuses.every((s) => s.state.terminated!.exitCode === 0) ? 'Succeeded' : 'Failed';
    const ready = phase === 'Running' && statuses.every((s) => s.ready);
    const now = new Date().toISOString();
    const md = this.pod.metadata!;
    await adminClient().patch(
      PODS,
      md.name!,
      md.namespace!,
      {
        status: {
          phase,
          podIP: '127.0.0.1',
          containerStatuses: statuses,
          conditions: [
            { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now },
            { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: now },
          ],
        },
      },
      PatchStrategy.StrategicMergePatch,
      { subresource: 'status' },
    );
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await waitFor('fake kubelet idle', () => !this.busy, 10_000, 20);
    await this.cri.destroy();
  }
}

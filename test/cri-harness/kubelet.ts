import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CriClient } from '../../src/runtime/cri/client.js';
import { KubeletLabels, type ContainerStatus, type PodSandboxConfig } from '../../src/runtime/cri/types.js';

export interface KubeletContainerSpec {
  readonly name: string;
  readonly image: string;
  /** Overrides the image entrypoint. */
  readonly command?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Host directories to bind-mount, like hostPath volumes. */
  readonly mounts?: ReadonlyArray<{ containerPath: string; hostPath: string }>;
}

export interface KubeletPodSpec {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly containers: readonly KubeletContainerSpec[];
}

/** What the kubelet would write into `pod.status.containerStatuses[]` for one container. */
export interface KubeContainerStatus {
  name: string;
  containerID: string;
  restartCount: number;
  ready: boolean;
  started: boolean;
  image: string;
  imageID: string;
  state: {
    running?: { startedAt: string };
    terminated?: { exitCode: number; reason: string; startedAt: string; finishedAt: string; containerID: string };
  };
}

const nsToIso = (ns: string): string => new Date(Number(BigInt(ns) / 1_000_000n)).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Plays the kubelet for one pod through CRI only: a host-network sandbox with the pod's metadata,
 * containers created with the kubelet's labels (pod uid/name/namespace, container name), restarts
 * with attempt+1, and the pod's container statuses as the kubelet would report them.
 */
export class KubeletPod {
  readonly sandboxConfig: PodSandboxConfig;
  private readonly attempts = new Map<string, number>();
  /** Latest container id per container name. */
  readonly containerIds = new Map<string, string>();

  private constructor(
    private readonly cri: CriClient,
    readonly spec: KubeletPodSpec,
    readonly sandboxId: string,
    sandboxConfig: PodSandboxConfig,
  ) {
    this.sandboxConfig = sandboxConfig;
  }

  static async run(cri: CriClient, spec: KubeletPodSpec, logRoot: string): Promise<KubeletPod> {
    const logDirectory = join(logRoot, `${spec.namespace}_${spec.name}_${spec.uid}`);
    await mkdir(logDirectory, { recursive: true });
    const labels = {
      [KubeletLabels.podUid]: spec.uid,
      [KubeletLabels.podName]: spec.name,
      [KubeletLabels.podNamespace]: spec.namespace,
    };
    const sandboxConfig: PodSandboxConfig = {
      metadata: { name: spec.name, uid: spec.uid, namespace: spec.namespace, attempt: 0 },
      // Host-network pods share the node's UTS namespace: runc refuses a hostname there.
      logDirectory,
      labels,
      annotations: {},
      linux: { securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
    };
    const sandboxId = await cri.runPodSandbox(sandboxConfig);
    const pod = new KubeletPod(cri, spec, sandboxId, sandboxConfig);
    for (const c of spec.containers) await pod.startContainer(c.name);
    return pod;
  }

  private containerSpec(name: string): KubeletContainerSpec {
    const c = this.spec.containers.find((x) => x.name === name);
    if (!c) throw new Error(`pod ${this.spec.name} has no container ${name}`);
    return c;
  }

  /** Creates and starts (the next attempt of) a container, like the kubelet after an exit. */
  async startContainer(name: string): Promise<string> {
    const c = this.containerSpec(name);
    // IfNotPresent, as the kubelet does before creating a container.
    if (!(await this.cri.imageStatus(c.image))) await this.cri.pullImage(c.image, { sandboxConfig: this.sandboxConfig });
    const attempt = this.attempts.has(name) ? this.attempts.get(name)! + 1 : 0;
    const id = await this.cri.createContainer(
      this.sandboxId,
      {
        metadata: { name, attempt },
        image: { image: c.image },
        command: c.command ? [...c.command] : [],
        envs: Object.entries(c.env ?? {}).map(([key, value]) => ({ key, value })),
        mounts: (c.mounts ?? []).map((m) => ({ ...m, readonly: false })),
        labels: { ...this.sandboxConfig.labels, [KubeletLabels.containerName]: name },
        annotations: { 'io.kubernetes.container.restartCount': String(attempt) },
        logPath: `${name}/${attempt}.log`,
      },
      this.sandboxConfig,
    );
    await this.cri.startContainer(id);
    this.attempts.set(name, attempt);
    this.containerIds.set(name, id);
    return id;
  }

  async status(name: string): Promise<ContainerStatus> {
    const id = this.containerIds.get(name);
    if (!id) throw new Error(`container ${name} not started`);
    return this.cri.containerStatus(id);
  }

  /** The kubelet's view of every container, for a pods/status patch. */
  async containerStatuses(): Promise<KubeContainerStatus[]> {
    const out: KubeContainerStatus[] = [];
    for (const c of this.spec.containers) {
      const st = await this.status(c.name);
      const containerID = `containerd://${st.id}`;
      const base = { name: c.name, containerID, restartCount: this.attempts.get(c.name) ?? 0, image: c.image, imageID: st.imageRef };
      if (st.state === 'CONTAINER_EXITED') {
        out.push({
          ...base,
          ready: false,
          started: false,
          state: {
            terminated: {
              exitCode: st.exitCode,
              reason: st.reason || (st.exitCode === 0 ? 'Completed' : 'Error'),
              startedAt: nsToIso(st.startedAt),
              finishedAt: nsToIso(st.finishedAt),
              containerID,
            },
          },
        });
      } else {
        out.push({
          ...base,
          ready: st.state === 'CONTAINER_RUNNING',
          started: st.state === 'CONTAINER_RUNNING',
          state: { running: { startedAt: nsToIso(st.startedAt !== '0' ? st.startedAt : st.createdAt) } },
        });
      }
    }
    return out;
  }

  async destroy(): Promise<void> {
    await this.cri.stopPodSandbox(this.sandboxId).catch(() => undefined);
    await this.cri.removePodSandbox(this.sandboxId).catch(() => undefined);
  }
}

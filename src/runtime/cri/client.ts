import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { CRI_RUNTIME_V1_SUBSET } from './proto.js';
import { clampTimerMs } from '../core/timers.js';
import type {
  AuthConfig,
  Container,
  ContainerConfig,
  ContainerFilter,
  ContainerEventResponse,
  ContainerStatus,
  ExecResult,
  Image,
  ImageSpec,
  PodSandbox,
  PodSandboxConfig,
  VersionResponse,
} from './types.js';

/** A CRI call failed; `code` is the gRPC status (UNAVAILABLE while the socket is gone). */
export class CriError extends Error {
  constructor(
    readonly method: string,
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(`CRI ${method} failed: ${grpc.status[code] ?? code}: ${details}`);
    this.name = 'CriError';
  }

  get unavailable(): boolean {
    return this.code === grpc.status.UNAVAILABLE;
  }

  /** The runtime does not implement the method (e.g. GetContainerEvents before containerd 1.7). */
  get unimplemented(): boolean {
    return this.code === grpc.status.UNIMPLEMENTED;
  }
}

export interface CriClientOptions {
  /** Default deadline of a call that has no deadline of its own (ms). */
  readonly callTimeoutMs?: number;
}

type Unary = (req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;
type ServiceCtor = new (
  address: string,
  creds: grpc.ChannelCredentials,
  options: grpc.ChannelOptions,
) => grpc.Client & Record<string, Unary>;

let services: { runtime: ServiceCtor; image: ServiceCtor } | undefined;

function loadServices(): { runtime: ServiceCtor; image: ServiceCtor } {
  if (services) return services;
  const root = protobuf.parse(CRI_RUNTIME_V1_SUBSET, { keepCase: false }).root;
  const def = protoLoader.fromJSON(root.toJSON(), { keepCase: false, longs: String, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { runtime: { v1: { RuntimeService: ServiceCtor; ImageService: ServiceCtor } } };
  services = { runtime: pkg.runtime.v1.RuntimeService, image: pkg.runtime.v1.ImageService };
  return services;
}

/**
 * The gRPC service definitions of the subset, for in-process CRI servers (test proxies and fakes
 * for unit tests of pure code); keys are the proto method names.
 */
export function criServiceDefinitions(): { runtime: grpc.ServiceDefinition; image: grpc.ServiceDefinition } {
  const { runtime, image } = loadServices();
  return {
    runtime: (runtime as unknown as { service: grpc.ServiceDefinition }).service,
    image: (image as unknown as { service: grpc.ServiceDefinition }).service,
  };
}

/** Channel options: the kubelet's 16 MiB message cap, and quick reconnects so a runtime restart is noticed in seconds. */
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': 16 * 1024 * 1024,
  'grpc.max_send_message_length': 16 * 1024 * 1024,
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 2000,
};

/** Normalises "unix:///run/x.sock" or "/run/x.sock" to the gRPC target form. */
export function criTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return endpoint;
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  throw new Error(
    `CRI endpoint "${endpoint}" must be an absolute socket path or a unix:// URL (e.g. unix:///run/containerd/containerd.sock)`,
  );
}

/**
 * A client for the CRI runtime and image services over a unix socket. The underlying channel
 * reconnects by itself when the runtime goes away and comes back; calls made while it is away fail
 * fast with a CriError whose `unavailable` is true, and the caller retries through its work queue.
 */
export class CriClient {
  readonly target: string;
  private readonly runtime: grpc.Client & Record<string, Unary>;
  private readonly image: grpc.Client & Record<string, Unary>;
  private readonly callTimeoutMs: number;

  constructor(endpoint: string, options: CriClientOptions = {}) {
    const { runtime, image } = loadServices();
    this.target = criTarget(endpoint);
    this.callTimeoutMs = options.callTimeoutMs ?? 30_000;
    const creds = grpc.credentials.createInsecure();
    this.runtime = new runtime(this.target, creds, CHANNEL_OPTIONS);
    // Same target + options => grpc-js shares one subchannel between both services.
    this.image = new image(this.target, creds, CHANNEL_OPTIONS);
  }

  close(): void {
    this.runtime.close();
    this.image.close();
  }

  private call<T>(client: grpc.Client & Record<string, Unary>, method: string, req: unknown, timeoutMs?: number): Promise<T> {
    const deadline = Date.now() + clampTimerMs(timeoutMs ?? this.callTimeoutMs);
    return new Promise<T>((resolve, reject) => {
      const fn = client[method];
      if (!fn) return reject(new Error(`CRI method ${method} is not in the subset proto`));
      fn.call(client, req, new grpc.Metadata(), { deadline }, (err, res) => {
        if (err) reject(new CriError(method, err.code, err.details || err.message));
        else resolve(res as T);
      });
    });
  }

  version(): Promise<VersionResponse> {
    return this.call(this.runtime, 'Version', { version: 'v1' });
  }

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = ''): Promise<string> {
    const res = await this.call<{ podSandboxId: string }>(this.runtime, 'RunPodSandbox', { config, runtimeHandler });
    return res.podSandboxId;
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    await this.call(this.runtime, 'StopPodSandbox', { podSandboxId });
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    await this.call(this.runtime, 'RemovePodSandbox', { podSandboxId });
  }

  async listPodSandbox(labelSelector?: Record<string, string>): Promise<PodSandbox[]> {
    const res = await this.call<{ items: PodSandbox[] }>(this.runtime, 'ListPodSandbox', {
      filter: labelSelector ? { labelSelector } : undefined,
    });
    return res.items;
  }

  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    const res = await this.call<{ containerId: string }>(this.runtime, 'CreateContainer', { podSandboxId, config, sandboxConfig });
    return res.containerId;
  }

  async startContainer(containerId: string): Promise<void> {
    await this.call(this.runtime, 'StartContainer', { containerId });
  }

  /**
   * Stops a container: SIGTERM (or the image's stop signal), SIGKILL after `timeoutSeconds`.
   * Idempotent on the runtime side. The call's own deadline leaves room for the grace period.
   */
  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    await this.call(
      this.runtime,
      'StopContainer',
      { containerId, timeout: String(Math.max(0, Math.floor(timeoutSeconds))) },
      (timeoutSeconds + 30) * 1000,
    );
  }

  async removeContainer(containerId: string): Promise<void> {
    await this.call(this.runtime, 'RemoveContainer', { containerId });
  }

  async listContainers(filter: ContainerFilter = {}): Promise<Container[]> {
    const res = await this.call<{ containers: Container[] }>(this.runtime, 'ListContainers', { filter });
    return res.containers;
  }

  async containerStatus(containerId: string): Promise<ContainerStatus> {
    const res = await this.call<{ status: ContainerStatus }>(this.runtime, 'ContainerStatus', { containerId });
    return res.status;
  }

  /**
   * Opens the CRI `GetContainerEvents` stream (runtimes from containerd 1.7 / CRI-O 1.26 on; older ones end it
   * at once with UNIMPLEMENTED or UNKNOWN). No deadline: it lasts until `cancel()` or the runtime ends it.
   */
  containerEvents(): grpc.ClientReadableStream<ContainerEventResponse> {
    const fn = (this.runtime as unknown as Record<string, (req: unknown) => grpc.ClientReadableStream<ContainerEventResponse>>)
      .GetContainerEvents;
    if (!fn) throw new Error('CRI method GetContainerEvents is not in the subset proto');
    return fn.call(this.runtime, {});
  }

  /** Runs a command in a container (a preStop exec hook), bounded by `timeoutSeconds`. */
  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecResult> {
    return this.call<ExecResult>(
      this.runtime,
      'ExecSync',
      { containerId, cmd, timeout: String(Math.max(0, Math.floor(timeoutSeconds))) },
      (timeoutSeconds + 10) * 1000,
    );
  }

  /**
   * Pulls an image. `sandboxConfig` carries the pod-level labels/annotations the runtime may use
   * (OpenKruise's ImagePullJob.spec.sandboxConfig); `timeoutMs` bounds this one attempt.
   */
  async pullImage(
    image: string,
    opts: { auth?: AuthConfig; sandboxConfig?: PodSandboxConfig; annotations?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<string> {
    const spec: ImageSpec = { image, annotations: opts.annotations ?? {} };
    const res = await this.call<{ imageRef: string }>(
      this.image,
      'PullImage',
      { image: spec, auth: opts.auth, sandboxConfig: opts.sandboxConfig },
      opts.timeoutMs ?? 10 * 60_000,
    );
    return res.imageRef;
  }

  /** The image if present, else null (the CRI answers "not present" with an empty image). */
  async imageStatus(image: string): Promise<Image | null> {
    const res = await this.call<{ image: Image | null }>(this.image, 'ImageStatus', { image: { image } });
    return res.image && res.image.id ? res.image : null;
  }

  async listImages(): Promise<Image[]> {
    const res = await this.call<{ images: Image[] }>(this.image, 'ListImages', {});
    return res.images;
  }

  async removeImage(image: string): Promise<void> {
    await this.call(this.image, 'RemoveImage', { image: { image } });
  }
}

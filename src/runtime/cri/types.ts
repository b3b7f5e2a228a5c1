/**
 * TypeScript shapes of the CRI messages declared in ./proto.ts, as proto-loader decodes them with
 * our options (camelCase names, int64 as decimal strings, enums as their names, defaults filled).
 */

export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';

/** The kubelet's CRI labels: how a container is tied back to its pod and container name. */
export const KubeletLabels = {
  podUid: 'io.kubernetes.pod.uid',
  podName: 'io.kubernetes.pod.name',
  podNamespace: 'io.kubernetes.pod.namespace',
  containerName: 'io.kubernetes.container.name',
} as const;

export interface VersionResponse {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt?: number;
}

export interface PodSandboxConfig {
  metadata?: PodSandboxMetadata;
  hostname?: string;
  logDirectory?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  linux?: {
    cgroupParent?: string;
    securityContext?: { namespaceOptions?: { network?: NamespaceMode; pid?: NamespaceMode; ipc?: NamespaceMode } };
  };
}

export interface ImageSpec {
  image: string;
  annotations?: Record<string, string>;
}

export interface ContainerConfig {
  metadata: { name: string; attempt?: number };
  image: ImageSpec;
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: { key: string; value: string }[];
  /** Host directories bind-mounted into the container (the kubelet's volumes). */
  mounts?: { containerPath: string; hostPath: string; readonly?: boolean }[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  logPath?: string;
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata: { name: string; attempt: number } | null;
  image: ImageSpec | null;
  imageRef: string;
  state: ContainerState;
  /** Nanoseconds since the epoch, as a decimal string (int64). */
  createdAt: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface ContainerFilter {
  id?: string;
  state?: { state: ContainerState };
  podSandboxId?: string;
  labelSelector?: Record<string, string>;
}

export interface ContainerStatus {
  id: string;
  metadata: { name: string; attempt: number } | null;
  state: ContainerState;
  /** Nanoseconds since the epoch, as decimal strings (int64); "0" when not reached. */
  createdAt: string;
  startedAt: string;
  finishedAt: string;
  exitCode: number;
  imageRef: string;
  reason: string;
  message: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export type ContainerEventType =
  'CONTAINER_CREATED_EVENT' | 'CONTAINER_STARTED_EVENT' | 'CONTAINER_STOPPED_EVENT' | 'CONTAINER_DELETED_EVENT';

/** One message of the CRI `GetContainerEvents` stream (the pod sandbox status is not decoded). */
export interface ContainerEventResponse {
  containerId: string;
  containerEventType: ContainerEventType;
  /** Nanoseconds since the epoch, as a decimal string (int64). */
  createdAt: string;
  /** The statuses of the pod's containers at the event, when the runtime sends them. */
  containersStatuses: ContainerStatus[];
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  createdAt: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface AuthConfig {
  username?: string;
  password?: string;
  /** base64("user:password"), as in a docker config.json `auth` entry. */
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  /** Bytes, as a decimal string (uint64). */
  size: string;
  pinned: boolean;
}

export interface ExecResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

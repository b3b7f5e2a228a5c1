import type { V1EnvVarSource } from '@kubernetes/client-node';

/**
 * Plain-JSON shapes of the Kubernetes objects the runtime reads. The runtime keeps objects exactly as the
 * API server sends them (timestamps are RFC 3339 strings), unlike client-node's generated model classes
 * (which turn timestamps into Date objects) - list results and watch events must look the same in the cache.
 * Only fields the runtime reads are typed; the rest stays reachable through the index signature.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
  [k: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [k: string]: unknown;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: V1EnvVarSource;
}

export interface Container {
  name: string;
  image?: string;
  env?: EnvVar[];
  [k: string]: unknown;
}

export interface ContainerStateTerminated {
  exitCode: number;
  reason?: string;
  containerID?: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface ContainerStatus {
  name: string;
  containerID?: string;
  restartCount?: number;
  ready?: boolean;
  image?: string;
  state?: {
    running?: { startedAt?: string };
    waiting?: { reason?: string };
    terminated?: ContainerStateTerminated;
  };
  lastState?: { terminated?: ContainerStateTerminated };
  [k: string]: unknown;
}

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
}

export interface Pod extends KubeObject {
  spec?: {
    nodeName?: string;
    restartPolicy?: 'Always' | 'OnFailure' | 'Never' | (string & {});
    containers: Container[];
    initContainers?: Container[];
    [k: string]: unknown;
  };
  status?: {
    phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown' | (string & {});
    conditions?: PodCondition[];
    containerStatuses?: ContainerStatus[];
    [k: string]: unknown;
  };
}

export interface Node extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/** `namespace/name` (or `name` for cluster-scoped objects): the key of caches and work queues. */
export function objectKey(obj: { metadata: ObjectMeta }): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : String(obj.metadata.name);
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** An ImagePullJob as read from the API (the API model's type with object metadata). */
export type ImagePullJobObject = import('../../api/kinds/imagepulljob.js').ImagePullJob & KubeObject;
/** A NodeImage as read from the API. */
export type NodeImageObject = import('../../api/kinds/nodeimage.js').NodeImage & KubeObject;

// Client-side helpers for e2e tests: admin access to the shared control plane, per-test namespaces,
// Node objects, and a "fake kubelet" (bind pods, patch pods/status, force-delete) since no kubelet,
// scheduler or garbage collector runs.
import { execFile } from 'node:child_process';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1ContainerStatus,
  type V1Node,
  type V1Pod,
  type V1PodCondition,
  type V1PodStatus,
} from '@kubernetes/client-node';
import { inject } from 'vitest';
import { findAssets } from './assets.js';
import { bypassProxyForLoopback } from './controlplane.js';

bypassProxyForLoopback();

/** Path of the shared control plane's admin kubeconfig (set by the e2e globalSetup). */
export function kubeconfigPath(): string {
  const file = inject('kubeconfig') ?? process.env.KUBECONFIG;
  if (!file) throw new Error('no control plane: run this test in the vitest "e2e" project (its globalSetup starts one)');
  return file;
}

/** A KubeConfig for the admin user (group system:masters) of the shared control plane. */
export function adminKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath());
  return kc;
}

export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/**
 * The apiserver's own message for a failed client-node call (ApiException carries it only in its
 * JSON body; its `message` is just "HTTP-Code: 422 ..."), for readable assertion failures.
 */
export function apiErrorMessage(error: unknown): string {
  const e = error as { code?: number; body?: unknown; message?: string };
  if (typeof e?.code !== 'number') return String(e?.message ?? error);
  try {
    const status = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as { message?: string };
    if (status?.message) return `HTTP ${e.code}: ${status.message}`;
  } catch {
    /* body is not JSON: fall through */
  }
  return `HTTP ${e.code}: ${typeof e.body === 'string' ? e.body : (JSON.stringify(e.body) ?? e.message)}`;
}

/** A raw HTTP exchange with the apiserver (no client-node model serialization in between). */
export interface RawResponse {
  readonly status: number;
  readonly body: string;
  /** Response headers, names in lower case (e.g. APF's `x-kubernetes-pf-flowschema-uid`). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** Sends one request to the shared apiserver as admin; `path` is e.g. `/api/v1/namespaces`. */
export async function rawRequest(
  method: string,
  path: string,
  options: { body?: string; contentType?: string; kubeConfig?: KubeConfig; headers?: Readonly<Record<string, string>> } = {},
): Promise<RawResponse> {
  const kc = options.kubeConfig ?? adminKubeConfig();
  const url = new URL(path, kc.getCurrentCluster()!.server);
  const request: https.RequestOptions = {
    method,
    hostname: url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    headers: {
      accept: 'application/json',
      ...(options.contentType ? { 'content-type': options.contentType } : {}),
      // e.g. Impersonate-User / Impersonate-Extra-<key>: what client-node's impersonation cannot express (extras).
      ...options.headers,
    },
  };
  await kc.applyToHTTPSOptions(request);
  return new Promise((resolve, reject) => {
    const req = https.request(request, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

interface ApiResource {
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** Discovery: the REST resource serving `apiVersion` `kind`, or undefined when none does. */
export async function discoverResource(apiVersion: string, kind: string): Promise<ApiResource | undefined> {
  const res = await rawRequest('GET', apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`);
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`discovery of ${apiVersion} failed: HTTP ${res.status}: ${res.body}`);
  const list = JSON.parse(res.body) as { resources: ApiResource[] };
  return list.resources.find((r) => r.kind === kind && !r.name.includes('/'));
}

/**
 * Server-side apply of a raw object, byte for byte. Unlike KubernetesObjectApi, which re-serializes
 * through client-node's models and silently drops keys it does not model in camelCase (e.g. a CRD's
 * `x-kubernetes-int-or-string`), this sends exactly what the manifest says. Namespaced objects
 * without a namespace go to `defaultNamespace`. Returns the applied object; throws with the
 * apiserver's message when rejected.
 */
export async function serverSideApply(
  object: KubernetesObject,
  options: { fieldManager: string; defaultNamespace?: string; dryRun?: boolean },
): Promise<KubernetesObject> {
  const { apiVersion, kind } = object;
  const name = object.metadata?.name;
  if (!apiVersion || !kind || !name) throw new Error('object needs apiVersion, kind and metadata.name');
  const resource = await discoverResource(apiVersion, kind);
  if (!resource) throw new Error(`the apiserver serves no ${apiVersion} ${kind} (is its CRD installed and Established?)`);
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  let body = object;
  let path = `${base}/${resource.name}/${encodeURIComponent(name)}`;
  if (resource.namespaced) {
    const namespace = object.metadata?.namespace ?? options.defaultNamespace;
    if (!namespace) throw new Error(`${kind}/${name} is namespaced: give metadata.namespace or defaultNamespace`);
    body = { ...object, metadata: { ...object.metadata, namespace } };
    path = `${base}/namespaces/${encodeURIComponent(namespace)}/${resource.name}/${encodeURIComponent(name)}`;
  }
  const query = new URLSearchParams({ fieldManager: options.fieldManager, force: 'true' });
  if (options.dryRun) query.set('dryRun', 'All');
  const res = await rawRequest('PATCH', `${path}?${query.toString()}`, {
    body: JSON.stringify(body),
    contentType: 'application/apply-patch+yaml',
  });
  if (res.status >= 300) {
    let message = res.body;
    try {
      message = (JSON.parse(res.body) as { message?: string }).message ?? res.body;
    } catch {
      /* not a Status object */
    }
    throw new Error(`server-side apply of ${kind}/${name} rejected: HTTP ${res.status}: ${message}`);
  }
  return JSON.parse(res.body) as KubernetesObject;
}

/** Runs the control plane's kubectl against the shared control plane; rejects with stderr on failure. */
export async function kubectl(args: readonly string[], options: { input?: string } = {}): Promise<string> {
  const child = promisify(execFile)(findAssets().kubectl, ['--kubeconfig', kubeconfigPath(), ...args], {
    maxBuffer: 64 * 1024 * 1024,
  });
  if (options.input !== undefined) child.child.stdin!.end(options.input);
  try {
    return (await child).stdout;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr || e.message}`, { cause: error });
  }
}

/**
 * Creates a namespace with a unique name (`<prefix>-<random>`), for one test. Namespaces are not
 * cleaned up: no namespace controller runs, and the whole etcd goes away with the run.
 */
export async function createNamespace(prefix = 'test', labels: Record<string, string> = {}): Promise<string> {
  const name = `${prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 40)}-${randomBytes(3).toString('hex')}`;
  await adminKubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name, labels } } });
  return name;
}

export interface NodeOptions {
  /** Mark as a virtual-kubelet node (label `type=virtual-kubelet`), which OpenKruise treats specially. */
  readonly virtual?: boolean;
  /** Extra labels. */
  readonly labels?: Record<string, string>;
}

/** Creates a Node object and reports it Ready through `nodes/status`, as a kubelet would. */
export async function createNode(name: string, options: NodeOptions = {}): Promise<V1Node> {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const labels = { 'kubernetes.io/hostname': name, ...(options.virtual ? { type: 'virtual-kubelet' } : {}), ...options.labels };
  await core.createNode({ body: { metadata: { name, labels } } });
  const now = new Date();
  return core.patchNodeStatus(
    {
      name,
      body: {
        status: {
          conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: now, lastTransitionTime: now }],
          capacity: { cpu: '4', memory: '8Gi', pods: '110' },
          allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
        },
      },
    },
    mergePatch,
  );
}

type PodRef = Pick<V1Pod, 'metadata'> | { metadata: { name: string; namespace: string } };

function ref(pod: PodRef): { name: string; namespace: string } {
  const { name, namespace } = pod.metadata ?? {};
  if (!name || !namespace) throw new Error('pod needs metadata.name and metadata.namespace');
  return { name, namespace };
}

/** Schedules a pod onto a node through the `pods/binding` subresource (what the scheduler does). */
export async function bindPod(pod: PodRef, nodeName: string): Promise<void> {
  const { name, namespace } = ref(pod);
  await adminKubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespacedPodBinding({
      name,
      namespace,
      body: { metadata: { name, namespace }, target: { apiVersion: 'v1', kind: 'Node', name: nodeName } },
    });
}

/** A container's state as a kubelet would report it. */
export interface ContainerStatusInput {
  /** Container name (must match spec.containers[].name or spec.initContainers[].name). */
  readonly name: string;
  /** The state: running, terminated with an exit code, or waiting with a reason. */
  readonly state:
    | { readonly running: { readonly startedAt?: Date } }
    | { readonly terminated: { readonly exitCode: number; readonly reason?: string; readonly signal?: number } }
    | { readonly waiting: { readonly reason: string } };
  /** Readiness; defaults to true while running. */
  readonly ready?: boolean;
  /** Restart count; defaults to 0. */
  readonly restartCount?: number;
  /** Image reported; defaults to the spec's image or "unknown". */
  readonly image?: string;
}

export interface PodStatusInput {
  /** Pod phase. */
  readonly phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  /** Statuses of spec.containers. */
  readonly containerStatuses?: readonly ContainerStatusInput[];
  /** Statuses of spec.initContainers. */
  readonly initContainerStatuses?: readonly ContainerStatusInput[];
  /** Pod IP; defaults to none. */
  readonly podIP?: string;
  /** Extra or overriding conditions; Ready/ContainersReady are derived from container readiness. */
  readonly conditions?: readonly V1PodCondition[];
}

function containerStatus(input: ContainerStatusInput): V1ContainerStatus {
  const now = new Date();
  const state =
    'running' in input.state
      ? { running: { startedAt: input.state.running.startedAt ?? now } }
      : 'terminated' in input.state
        ? {
            terminated: {
              exitCode: input.state.terminated.exitCode,
              signal: input.state.terminated.signal,
              reason: input.state.terminated.reason ?? (input.state.terminated.exitCode === 0 ? 'Completed' : 'Error'),
              startedAt: now,
              finishedAt: now,
            },
          }
        : { waiting: { reason: input.state.waiting.reason } };
  return {
    name: input.name,
    image: input.image ?? 'unknown',
    imageID: '',
    ready: input.ready ?? 'running' in input.state,
    restartCount: input.restartCount ?? 0,
    started: 'running' in input.state,
    state,
  };
}

/**
 * Acts as the kubelet: replaces the pod's status via a merge patch on `pods/status`.
 * Lists (containerStatuses, conditions) are replaced wholesale, so pass every container.
 */
export async function setPodStatus(pod: PodRef, input: PodStatusInput): Promise<V1Pod> {
  const { name, namespace } = ref(pod);
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const spec = 'spec' in pod && pod.spec ? (pod as V1Pod).spec : (await core.readNamespacedPod({ name, namespace })).spec;
  const imageOf = (n: string) => [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].find((c) => c.name === n)?.image;
  const statuses = (input.containerStatuses ?? []).map((c) => containerStatus({ ...c, image: c.image ?? imageOf(c.name) }));
  const initStatuses = (input.initContainerStatuses ?? []).map((c) => containerStatus({ ...c, image: c.image ?? imageOf(c.name) }));
  const allReady = input.phase === 'Running' && statuses.length > 0 && statuses.every((s) => s.ready);
  const now = new Date();
  const derived: V1PodCondition[] = [
    { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
    { type: 'ContainersReady', status: allReady ? 'True' : 'False', lastTransitionTime: now },
    { type: 'Ready', status: allReady ? 'True' : 'False', lastTransitionTime: now },
  ];
  const overrides = new Map((input.conditions ?? []).map((c) => [c.type, c]));
  const conditions = [...derived.filter((c) => !overrides.has(c.type)), ...overrides.values()];
  const status: V1PodStatus = {
    phase: input.phase,
    conditions,
    containerStatuses: statuses,
    initContainerStatuses: initStatuses,
    ...(input.podIP ? { podIP: input.podIP, podIPs: [{ ip: input.podIP }] } : {}),
    startTime: now,
  };
  return core.patchNamespacedPodStatus({ name, namespace, body: { status } }, mergePatch);
}

/**
 * Deletes an object with grace period 0. Pods bound to a node otherwise stay Terminating forever,
 * because no kubelet confirms their shutdown.
 */
export async function forceDelete(obj: KubernetesObject): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(adminKubeConfig());
  try {
    await api.delete(obj, undefined, undefined, 0);
  } catch (error) {
    if ((error as { code?: number }).code !== 404) throw error;
  }
}

// Shared pieces of the real-node stories: clients for the node's cluster, namespaces with their
// default ServiceAccount, waits on real pod/Job state, container logs read from the kubelet's pod-log
// files (each line with its time, across restarts), and installing the runtime the way users do.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { AppsV1Api, BatchV1Api, CoreV1Api, type V1ContainerStatus, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { expect, inject } from 'vitest';
import { adminKubeConfig, createNamespace, kubectl } from '../harness/index.js';
import type { RealClusterNode } from '../harness/real-node.js';
import { installRuntime as installOnNode } from '../harness/runtime-install.js';
import { waitFor } from '../cri-harness/util.js';

/** Applies objects into a namespace with kubectl, as users do (defaults and webhooks on the way). */
export async function apply(ns: string, objects: object[]): Promise<void> {
  await kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }) });
}

/** `kubectl <args> -o json`, parsed. */
export async function getJson<T = any>(args: string[]): Promise<T> {
  return JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
}

/**
 * Has the runtime restart one container of a pod through a ContainerRecreateRequest (forceRecreate) and waits until
 * the request is Completed; returns the request as stored (labels the runtime's webhook added, its status).
 */
export async function recreateContainer(ns: string, podName: string, container: string, name = `restart-${container}`): Promise<any> {
  await requestContainerRecreate(ns, podName, container, name);
  await waitFor(`CRR ${name} Completed`, async () => (await containerRecreateRequest(ns, name)).status?.phase === 'Completed', 60_000, 250);
  return containerRecreateRequest(ns, name);
}

/** Creates the ContainerRecreateRequest `recreateContainer` makes (forceRecreate), without waiting for it. */
export async function requestContainerRecreate(
  ns: string,
  podName: string,
  container: string,
  name = `restart-${container}`,
): Promise<void> {
  await apply(ns, [
    {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name },
      spec: { podName, containers: [{ name: container }], strategy: { forceRecreate: true } },
    },
  ]);
}

/** A ContainerRecreateRequest as stored (labels the runtime's webhook added, its status). */
export function containerRecreateRequest(ns: string, name: string): Promise<any> {
  return getJson(['get', 'containerrecreaterequests.apps.kruise.io', '-n', ns, name]);
}

/** A container's status in a pod; throws with the pod's status when it has none. */
export function containerStatus(pod: V1Pod, container: string): V1ContainerStatus {
  const s = pod.status?.containerStatuses?.find((c) => c.name === container);
  if (!s) throw new Error(`no status for ${container} in ${JSON.stringify(pod.status)}`);
  return s;
}

/** Creates pod `app` with two sleeping containers, `app` and `other` (on `nodeName` if given), and waits until both run. */
export async function twoContainerPod(ns: string, nodeName?: string): Promise<V1Pod> {
  const image = node().images.busybox;
  await core().createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 'app' },
      spec: {
        ...(nodeName ? { nodeName } : {}),
        containers: [
          { name: 'app', image, imagePullPolicy: 'IfNotPresent' },
          { name: 'other', image, imagePullPolicy: 'IfNotPresent' },
        ],
      },
    },
  });
  return waitForPod(
    ns,
    'app',
    'both containers running',
    (p) => (p.status?.containerStatuses ?? []).filter((c) => c.state?.running).length === 2,
  );
}

/**
 * Waits until container `app` of a `twoContainerPod` restarted once and runs again, and checks it was recreated in
 * place: the same pod UID, a new container, `other` untouched.
 */
export async function expectAppRecreatedInPlace(ns: string, before: V1Pod): Promise<V1Pod> {
  const after = await waitForPod(
    ns,
    'app',
    'app restarted and running',
    (p) => containerStatus(p, 'app').restartCount === 1 && containerStatus(p, 'app').state?.running !== undefined,
  );
  expect(after.metadata?.uid).toBe(before.metadata?.uid);
  expect(containerStatus(after, 'app').containerID).not.toBe(containerStatus(before, 'app').containerID);
  expect(containerStatus(after, 'other').restartCount).toBe(0);
  return after;
}

export function node() {
  return inject('realNode');
}

export function core(): CoreV1Api {
  return adminKubeConfig().makeApiClient(CoreV1Api);
}

export function batch(): BatchV1Api {
  return adminKubeConfig().makeApiClient(BatchV1Api);
}

export function apps(): AppsV1Api {
  return adminKubeConfig().makeApiClient(AppsV1Api);
}

export { waitFor };

/** A fresh namespace whose `default` ServiceAccount exists (ServiceAccount admission rejects pods before). */
export async function namespace(prefix: string): Promise<string> {
  const ns = await createNamespace(prefix);
  await waitFor(
    `ServiceAccount default in ${ns}`,
    async () => {
      await core().readNamespacedServiceAccount({ name: 'default', namespace: ns });
      return true;
    },
    30_000,
    100,
  );
  return ns;
}

export async function jobPods(ns: string, job: string): Promise<V1Pod[]> {
  return (await core().listNamespacedPod({ namespace: ns, labelSelector: `job-name=${job}` })).items;
}

export function jobCondition(job: V1Job, type: string): boolean {
  return job.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}

/** Waits for the Job to be Complete; fails early (with pod states) if it Failed. */
export async function waitForJobComplete(ns: string, name: string, timeoutMs = 90_000): Promise<V1Job> {
  let job: V1Job | undefined;
  try {
    await waitFor(
      `Job ${ns}/${name} Complete`,
      async () => {
        job = await batch().readNamespacedJob({ name, namespace: ns });
        if (jobCondition(job, 'Failed')) throw new Error(`Job ${name} Failed`);
        return jobCondition(job, 'Complete');
      },
      timeoutMs,
      250,
    );
  } catch (error) {
    const pods = await jobPods(ns, name).catch(() => []);
    const states = pods.map(
      (p) =>
        `${p.metadata?.name} ${p.status?.phase} ${JSON.stringify(p.status?.containerStatuses?.map((c) => ({ n: c.name, s: c.state, r: c.restartCount })))}`,
    );
    throw new Error(`${(error as Error).message}\njob status: ${JSON.stringify(job?.status)}\npods:\n${states.join('\n')}`, {
      cause: error,
    });
  }
  return job!;
}

export async function waitForPod(
  ns: string,
  name: string,
  what: string,
  check: (pod: V1Pod) => boolean,
  timeoutMs = 60_000,
): Promise<V1Pod> {
  let pod: V1Pod | undefined;
  try {
    await waitFor(
      `pod ${ns}/${name}: ${what}`,
      async () => check((pod = await core().readNamespacedPod({ name, namespace: ns }))),
      timeoutMs,
      200,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\nlast status: ${JSON.stringify(pod?.status)}`, { cause: error });
  }
  return pod!;
}

/**
 * A container's log lines as the kubelet wrote them (CRI log format: `<time> <stream> <tag> <line>`),
 * all restarts in order, each line as `{ time, line }`.
 */
export function containerLog(pod: V1Pod, container: string): { time: Date; line: string }[] {
  const dir = path.join(node().podLogsDir, `${pod.metadata!.namespace}_${pod.metadata!.name}_${pod.metadata!.uid}`, container);
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir)
    .filter((f) => /^\d+\.log$/.test(f))
    .sort((a, b) => parseInt(a) - parseInt(b));
  return files.flatMap((f) =>
    readFileSync(path.join(dir, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((raw) => {
        const [time, , , ...rest] = raw.split(' ');
        return { time: new Date(time!), line: rest.join(' ') };
      }),
  );
}

let runtimeInstalled: Promise<void> | undefined;

/** Installs the runtime from its image and dist/ (see test/harness/runtime-install.ts), once per test file. */
export function installRuntime(): Promise<void> {
  runtimeInstalled ??= installOnNode(node()).then((t) => {
    if (t.imageMs) console.log(`[node] runtime image built and imported in ${t.imageMs} ms, rollout ${t.rolloutMs} ms`);
  });
  return runtimeInstalled;
}

/** Runs containerd's `ctr` against the node's containerd, in the kubelet's namespace; returns its output. */
export function ctr(...args: string[]): string {
  return execFileSync('ctr', ['--address', node().containerdSocket, '-n', 'k8s.io', ...args], { encoding: 'utf8' });
}

/** `ctr` against one node's own containerd (of a several-node cluster), in the kubelet's namespace. */
export function ctrOn(member: RealClusterNode, ...args: string[]): string {
  return execFileSync('ctr', ['--address', member.containerdSocket, '-n', 'k8s.io', ...args], { encoding: 'utf8' });
}

/**
 * SIGKILLs a container's init process on the host, found in containerd's task list (what `kill -9` of a process
 * in a pod means); `containerID` is the bare id, without the `containerd://` prefix.
 */
export function sigkillContainerTask(containerID: string): void {
  const tasks = ctr('task', 'ls');
  const pid = Number(
    tasks
      .split('\n')
      .find((l) => l.startsWith(containerID))
      ?.split(/\s+/)[1],
  );
  if (!(pid > 1)) throw new Error(`no host process for task ${containerID} in:\n${tasks}`);
  process.kill(pid, 'SIGKILL');
}

const SLEEPER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];

/** A container of the node's busybox that sleeps until TERM, non-root, with small requests and limits. */
export function sleepingContainer(name: string) {
  return {
    name,
    image: node().images.busybox,
    imagePullPolicy: 'IfNotPresent',
    command: SLEEPER,
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
    securityContext: { runAsUser: 65534, runAsGroup: 65534, runAsNonRoot: true, allowPrivilegeEscalation: false },
  };
}

/** A JSON merge patch of an Advanced DaemonSet (`daemonsets.apps.kruise.io`). */
export async function patchAdvancedDaemonSet(ns: string, name: string, patch: object): Promise<void> {
  await kubectl(['patch', 'daemonsets.apps.kruise.io', '-n', ns, name, '--type', 'merge', '-p', JSON.stringify(patch)]);
}

/** An Advanced DaemonSet's status (`{}` before its controller wrote one). */
export async function advancedDaemonSetStatus(ns: string, name: string): Promise<any> {
  return (await getJson<{ status?: any }>(['get', 'daemonsets.apps.kruise.io', '-n', ns, name])).status ?? {};
}

/**
 * Sets the first container's image of an Advanced DaemonSet, nothing else: a JSON merge patch of `containers` would
 * replace the whole list (a custom resource has no strategic merge), dropping the other containers.
 */
export async function setAdvancedDaemonSetImage(ns: string, name: string, image: string): Promise<void> {
  const op = [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }];
  await kubectl(['patch', 'daemonsets.apps.kruise.io', '-n', ns, name, '--type', 'json', '-p', JSON.stringify(op)]);
}

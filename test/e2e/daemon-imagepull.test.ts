// ImagePullJob end to end on real parts: the manager's ImagePullJob + NodeImage controllers turn a job
// into a tag on this node's NodeImage; the daemon pulls it through CRI from a loopback registry into
// a real containerd (through a recording CRI proxy, since containerd keeps no trace of the
// sandboxConfig a pull was given) and reports back; the job aggregates, completes and expires.
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IMAGE_PULL_JOBS,
  NAMESPACES,
  NODE_IMAGES,
  PODS,
  SECRETS,
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  type Secret,
} from '../../src/runtime/core/index.js';
import { criServiceDefinitions, criTarget } from '../../src/runtime/cri/client.js';
import type { Daemon } from '../../src/runtime/daemon/daemon.js';
import { DEFAULT_MANAGER_OPTIONS, Manager } from '../../src/runtime/manager/manager.js';
import { REGISTRY_USER, RecordingCriProxy, startCriEnvironment, waitFor, type CriEnvironment } from '../cri-harness/index.js';
import { createNamespace, createNode, kubeconfigPath } from '../harness/index.js';
import { adminClient, installCrds, startDaemon } from './daemon-support.js';

const NODE = `node-ipj-${randomBytes(2).toString('hex')}`;
const CONFIG_NS = 'kruise-daemon-config';
let env: CriEnvironment;
let proxy: RecordingCriProxy;
let daemon: Daemon;
let manager: Manager;
let ns: string;

beforeAll(async () => {
  env = await startCriEnvironment();
  await installCrds();
  ns = await createNamespace('daemon-ipj');
  await adminClient()
    .create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CONFIG_NS } })
    .catch((err) => {
      if (!isAlreadyExists(err)) throw err;
    });
  await createNode(NODE, { labels: { 'pull-test': 'yes' } });
  manager = new Manager({
    ...DEFAULT_MANAGER_OPTIONS,
    kubeconfig: kubeconfigPath(),
    // SidecarTerminator too: its slim node cache is shared with the NodeImage controller.
    featureGates: 'ImagePullJobGate=true,SidecarTerminator=true',
    webhookPort: 0,
    healthProbeAddr: '127.0.0.1:0',
    metricsAddr: '0',
    strictPermissions: true,
    logLevel: process.env.DAEMON_LOG_LEVEL ?? 'warn',
    controllerOptions: { daemonConfigNamespace: CONFIG_NS },
  });
  await manager.start();
  proxy = await RecordingCriProxy.start(env.dir, env.containerd.socket);
  daemon = await startDaemon(NODE, proxy.socket, { featureGates: 'ImagePullJobGate=true', configNamespace: CONFIG_NS, maxPullWorkers: 2 });
  await waitFor(
    `NodeImage ${NODE} created by the nodeimage controller`,
    async () => {
      const ni = await adminClient().get(NODE_IMAGES, NODE);
      return ni.metadata.labels?.['pull-test'] === 'yes';
    },
    30_000,
    200,
  );
});

afterAll(async () => {
  await daemon?.stop();
  await manager?.stop();
  await proxy?.stop();
  await env?.stop();
});

interface JobStatus {
  desired?: number;
  active?: number;
  succeeded?: number;
  failed?: number;
  message?: string;
  failedNodes?: string[];
  completionTime?: string;
  startTime?: string;
}
type Job = KubeObject & { status?: JobStatus };

async function createJob(name: string, spec: Record<string, unknown>): Promise<Job> {
  return adminClient().create(IMAGE_PULL_JOBS, {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name, namespace: ns },
    spec: { selector: { names: [NODE] }, completionPolicy: { type: 'Always' }, ...spec },
  });
}

async function waitFinished(name: string, timeoutMs = 60_000): Promise<Job> {
  let job: Job | undefined;
  await waitFor(
    `ImagePullJob ${name} finished`,
    async () => {
      job = await adminClient().get<Job>(IMAGE_PULL_JOBS, name, ns);
      return !!job.status?.completionTime;
    },
    timeoutMs,
    200,
  );
  return job!;
}

async function dockerSecret(name: string, host: string, username: string, password: string): Promise<void> {
  const config = { auths: { [host]: { username, password, auth: Buffer.from(`${username}:${password}`).toString('base64') } } };
  await adminClient().create(SECRETS, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') },
  } as Secret);
}

describe('ImagePullJob through NodeImage and the daemon', () => {
  it('pulls the image into containerd and passes the job sandboxConfig to CRI PullImage', async () => {
    const before = proxy.callsOf('PullImage').length;
    expect(await env.cri.imageStatus(env.images.busybox)).toBeNull();
    await createJob('busybox', {
      image: env.images.busybox,
      imagePullPolicy: 'Always',
      sandboxConfig: { labels: { team: 'payments', 'io.kubernetes.pod.namespace': ns }, annotations: { 'example.com/reason': 'prewarm' } },
    });
    const job = await waitFinished('busybox');
    expect(job.status).toMatchObject({ desired: 1, active: 0, succeeded: 1, failed: 0, message: 'job has completed', failedNodes: [] });

    const img = await env.cri.imageStatus(env.images.busybox);
    expect(img?.repoTags).toContain(env.images.busybox);
    const { stdout } = await env.containerd.ctr(['images', 'ls', '-q']);
    expect(stdout.split('\n')).toContain(env.images.busybox);

    const pulls = proxy
      .callsOf('PullImage')
      .slice(before)
      .filter((c) => (c.request.image as { image: string }).image === env.images.busybox);
    expect(pulls).toHaveLength(1);
    expect(pulls[0]!.request.sandboxConfig).toMatchObject({
      labels: { team: 'payments', 'io.kubernetes.pod.namespace': ns },
      annotations: { 'example.com/reason': 'prewarm' },
    });

    const ni = await adminClient().get<
      KubeObject & { status?: { imageStatuses?: Record<string, { tags: Array<{ tag: string; phase: string; imageID?: string }> }> } }
    >(NODE_IMAGES, NODE);
    const tags = ni.status?.imageStatuses?.[env.images.busybox.replace(/:1$/, '')]?.tags ?? [];
    expect(tags).toEqual([expect.objectContaining({ tag: '1', phase: 'Succeeded', imageID: expect.stringContaining('sha256:') })]);
  });

  it('podSelector targets the nodes of matching active pods in the job namespace', async () => {
    await adminClient().create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'consumer', namespace: ns, labels: { app: 'consumer' } },
      spec: { nodeName: NODE, containers: [{ name: 'c', image: env.images.pause }] },
    } as KubeObject);
    await adminClient().create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'other', namespace: ns, labels: { app: 'other' } },
      spec: { nodeName: 'some-other-node', containers: [{ name: 'c', image: env.images.pause }] },
    } as KubeObject);
    await adminClient().create(IMAGE_PULL_JOBS, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: { name: 'by-pods', namespace: ns },
      spec: { image: env.images.pause, podSelector: { matchLabels: { app: 'consumer' } }, completionPolicy: { type: 'Always' } },
    });
    const job = await waitFinished('by-pods');
    // Only NODE runs a matching pod; the pause image is already there (IfNotPresent).
    expect(job.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0 });
  });

  it('parallelism 1 over two nodes: the second node gets its tag only after the first finished; status aggregates both', async () => {
    // A second node whose daemon shares the same containerd (two kubelets on one runtime would not
    // happen in a cluster, but the API-side cooperation is the same).
    const node2 = `${NODE}-b`;
    await createNode(node2, { labels: { 'pull-test': 'yes' } });
    const daemon2 = await startDaemon(node2, proxy.socket, { featureGates: 'ImagePullJobGate=true', configNamespace: CONFIG_NS });
    try {
      await waitFor(
        `NodeImage ${node2}`,
        async () =>
          !!(await adminClient()
            .get(NODE_IMAGES, node2)
            .catch(() => undefined)),
        30_000,
        200,
      );
      await createJob('two-nodes', {
        image: env.images.big,
        imagePullPolicy: 'Always',
        parallelism: 1,
        selector: { matchLabels: { 'pull-test': 'yes' } },
      });
      const job = await waitFinished('two-nodes');
      expect(job.status).toMatchObject({ desired: 2, active: 0, succeeded: 2, failed: 0 });
      type NiTags = KubeObject & {
        spec?: { images?: Record<string, { tags: Array<{ tag: string; createdAt?: string }> }> };
        status?: { imageStatuses?: Record<string, { tags: Array<{ tag: string; completionTime?: string }> }> };
      };
      const name = env.images.big.replace(/:1$/, '');
      const [a, b] = await Promise.all([NODE, node2].map((n) => adminClient().get<NiTags>(NODE_IMAGES, n)));
      // Nodes are taken in name order; node2 = NODE + "-b" sorts after NODE.
      const firstDone = Date.parse(a!.status!.imageStatuses![name]!.tags[0]!.completionTime!);
      const secondAsked = Date.parse(b!.spec!.images![name]!.tags[0]!.createdAt!);
      expect(secondAsked).toBeGreaterThanOrEqual(firstDone);
    } finally {
      await daemon2.stop();
      // Later tests need the big image absent.
      await env.cri.removeImage(env.images.big);
    }
  });

  it('a wrong registry password fails the job with a clear message after the backoff limit', async () => {
    await dockerSecret('bad-cred', env.authRegistry.host, REGISTRY_USER.username, 'not-the-password');
    const before = proxy.callsOf('PullImage').length;
    await createJob('bad-password', {
      image: env.images.private,
      imagePullPolicy: 'Always',
      pullSecrets: ['bad-cred'],
      pullPolicy: { backoffLimit: 1, timeoutSeconds: 20 },
    });
    const job = await waitFinished('bad-password');
    expect(job.status).toMatchObject({ desired: 1, succeeded: 0, failed: 1, failedNodes: [NODE] });
    expect(job.status?.message).toContain(`image pull failed on 1 node(s) [${NODE}]`);
    expect(job.status?.message).toContain('after 2 attempt(s) (backoffLimit 1)');
    expect(job.status?.message).toContain('401 Unauthorized');
    // 1 try + backoffLimit retries, each with the (wrong) credentials from the copied secret.
    const pulls = proxy.callsOf('PullImage').slice(before);
    expect(pulls).toHaveLength(2);
    expect(pulls[0]!.request.auth).toMatchObject({ username: REGISTRY_USER.username, password: 'not-the-password' });
    expect(await env.cri.imageStatus(env.images.private)).toBeNull();
  });

  it('bounds each attempt by pullPolicy.timeoutSeconds (a registry that accepts and never answers)', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const image = `127.0.0.1:${(silent.address() as AddressInfo).port}/test/hang:1`;
      await createJob('hanging', { image, pullPolicy: { timeoutSeconds: 2, backoffLimit: 1 } });
      const job = await waitFinished('hanging', 30_000);
      expect(job.status).toMatchObject({ succeeded: 0, failed: 1 });
      expect(job.status?.message).toContain('after 2 attempt(s) (backoffLimit 1)');
      expect(job.status?.message).toContain('DEADLINE_EXCEEDED');
      // Two 2 s attempts and a 1 s backoff: done in seconds, not the 600 s default.
      const elapsed = Date.parse(job.status!.completionTime!) - Date.parse(job.status!.startTime!);
      expect(elapsed).toBeGreaterThanOrEqual(4_000);
      expect(elapsed).toBeLessThan(20_000);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it('the recording proxy relays a client-cancelled PullImage to containerd and stops counting it', async () => {
    // The bound below is measured at the proxy; a call the client has given up on must not count.
    const sockets = new Set<Socket>();
    let asked = false;
    const silent = createServer((sock) => {
      sockets.add(sock);
      sock.on('data', () => (asked = true));
      sock.on('close', () => sockets.delete(sock));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const md = criServiceDefinitions().image.PullImage!;
    const client = new (grpc.makeGenericClientConstructor({}, 'raw'))(criTarget(proxy.socket), grpc.credentials.createInsecure());
    try {
      const image = `127.0.0.1:${(silent.address() as AddressInfo).port}/test/cancelled:1`;
      let status: grpc.ServiceError | null = null;
      // A deadline far beyond the test: only the explicit cancel can end this call in time.
      const call = client.makeUnaryRequest(
        md.path,
        md.requestSerialize,
        md.responseDeserialize,
        { image: { image } },
        new grpc.Metadata(),
        { deadline: Date.now() + 120_000 },
        (err) => {
          status = err;
        },
      );
      // Cancel only once containerd has sent its request: a connection whose dial a cancel
      // overtakes goes to Go's idle pool and stays open, which would prove nothing here.
      await waitFor('containerd asked the silent registry for the manifest', async () => asked, 10_000, 50);
      expect(proxy.inFlight('PullImage')).toBe(1);
      call.cancel();
      await waitFor('proxy no longer counts the cancelled call', async () => proxy.inFlight('PullImage') === 0, 2_000, 10);
      expect(status).toMatchObject({ code: grpc.status.CANCELLED });
      // containerd got the cancellation: it abandons its request, closing the connection.
      await waitFor('containerd closed its registry connection', async () => sockets.size === 0, 10_000, 50);
    } finally {
      client.close();
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it('pulls at most --max-workers-for-pull-image (2) images at once', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const host = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
      // Nothing of an earlier test may still count at the proxy when the peak starts.
      expect(proxy.inFlight('PullImage')).toBe(0);
      proxy.resetPeaks();
      const before = proxy.callsOf('PullImage').length;
      for (const i of [1, 2, 3, 4])
        await createJob(`queued-${i}`, { image: `${host}/test/q${i}:1`, pullPolicy: { timeoutSeconds: 2, backoffLimit: 0 } });
      for (const i of [1, 2, 3, 4]) expect((await waitFinished(`queued-${i}`, 30_000)).status).toMatchObject({ failed: 1 });
      expect(proxy.callsOf('PullImage').length - before).toBe(4);
      expect(proxy.peakConcurrency('PullImage')).toBe(2);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it('pulls with the right credentials from a pull secret copied to the daemon-config namespace', async () => {
    await dockerSecret('good-cred', env.authRegistry.host, REGISTRY_USER.username, REGISTRY_USER.password);
    await createJob('private', { image: env.images.private, pullSecrets: ['good-cred'] });
    const job = await waitFinished('private');
    expect(job.status).toMatchObject({ succeeded: 1, failed: 0 });
    // Finished, it lets go of the protection finalizer (so the TTL deletion is immediate) once it let go of its
    // copies: at completion, but no sooner than SECRET_COPY_MIN_LIFETIME_MS (5 s) after its start.
    await waitFor(
      'the finished job without its finalizer',
      async () => !(await adminClient().get<Job>(IMAGE_PULL_JOBS, 'private', ns)).metadata.finalizers?.length,
      10_000,
      100,
    );
    expect(await env.cri.imageStatus(env.images.private)).not.toBeNull();
    // The finished job let go of the copy; no other job used it, so it is gone, as upstream's.
    await waitFor(
      'the pull secret copy is deleted',
      async () =>
        isNotFound(
          await adminClient()
            .get<Secret>(SECRETS, `${ns}.good-cred`, CONFIG_NS)
            .catch((err: unknown) => err),
        ),
      10_000,
      200,
    );
  });

  it("a pull secret copy names its source and the unfinished jobs using it, and goes with the last of them (upstream's keys)", async () => {
    await dockerSecret('shared-cred', env.authRegistry.host, REGISTRY_USER.username, REGISTRY_USER.password);
    const annotations = async () =>
      (
        await adminClient()
          .get<Secret>(SECRETS, `${ns}.shared-cred`, CONFIG_NS)
          .catch(() => undefined)
      )?.metadata.annotations;
    // completionPolicy Never: the jobs stay unfinished until deleted.
    for (const name of ['keeper-a', 'keeper-b'])
      await createJob(name, { image: env.images.private, pullSecrets: ['shared-cred'], completionPolicy: { type: 'Never' } });
    await waitFor(
      'both jobs referenced',
      async () => (await annotations())?.['imagepulljobs.kruise.io/references'] === `${ns}/keeper-a,${ns}/keeper-b`,
      20_000,
      200,
    );
    expect((await annotations())?.['imagepulljobs.kruise.io/source-key']).toBe(`${ns}/shared-cred`);
    await adminClient().delete(IMAGE_PULL_JOBS, 'keeper-a', ns);
    await waitFor(
      'keeper-a released',
      async () => (await annotations())?.['imagepulljobs.kruise.io/references'] === `${ns}/keeper-b`,
      20_000,
      200,
    );
    await adminClient().delete(IMAGE_PULL_JOBS, 'keeper-b', ns);
    await waitFor('the copy is deleted with the last job', async () => (await annotations()) === undefined, 20_000, 200);
  });

  it('an update of the source pull secret of a Never job that sits still reaches its copy (Secret watch)', async () => {
    await dockerSecret('moving-cred', env.authRegistry.host, REGISTRY_USER.username, REGISTRY_USER.password);
    await createJob('still', { image: env.images.private, pullSecrets: ['moving-cred'], completionPolicy: { type: 'Never' } });
    const copyData = async () =>
      (
        await adminClient()
          .get<Secret>(SECRETS, `${ns}.moving-cred`, CONFIG_NS)
          .catch(() => undefined)
      )?.data?.['.dockerconfigjson'];
    // The pull is done and reported: no job or NodeImage event is due any more.
    await waitFor(
      'the Never job has pulled on its node',
      async () => (await adminClient().get<Job>(IMAGE_PULL_JOBS, 'still', ns)).status?.succeeded === 1,
      60_000,
      200,
    );
    const source = await adminClient().get<Secret>(SECRETS, 'moving-cred', ns);
    expect(await copyData()).toBe(source.data?.['.dockerconfigjson']);
    const rotated = Buffer.from(
      JSON.stringify({ auths: { [env.authRegistry.host]: { username: 'rotated', password: 'new-password' } } }),
    ).toString('base64');
    await adminClient().update(SECRETS, { ...source, data: { '.dockerconfigjson': rotated } });
    // The manager runs without resync here: only the Secret event brings the job back to its reconcile.
    await waitFor('the copy carries the rotated credential', async () => (await copyData()) === rotated, 5_000, 100);
    // Unfinished, the job carries upstream's protection finalizer: its deletion waits for the copy to be let go of.
    expect((await adminClient().get<Job>(IMAGE_PULL_JOBS, 'still', ns)).metadata.finalizers).toContain(
      'apps.kruise.io/deletion-protection',
    );
    await adminClient().delete(IMAGE_PULL_JOBS, 'still', ns);
    await waitFor(
      'the deleted job is gone once its copy is',
      async () =>
        isNotFound(
          await adminClient()
            .get(IMAGE_PULL_JOBS, 'still', ns)
            .catch((err: unknown) => err),
        ),
      10_000,
      100,
    );
    expect(await copyData()).toBeUndefined();
  });

  it('hostile: a Secret that is not a registry credential is never copied for the daemons', async () => {
    await adminClient().create(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'not-a-cred', namespace: ns },
      type: 'Opaque',
      data: { token: Buffer.from('not-for-every-node').toString('base64') },
    } as Secret);
    await createJob('foreign-secret', { image: env.images.busybox, pullSecrets: ['not-a-cred'] });
    // The pull itself goes ahead (the image is public), without the refused Secret.
    const job = await waitFinished('foreign-secret');
    expect(job.status).toMatchObject({ succeeded: 1, failed: 0 });
    const copy = await adminClient()
      .get<Secret>(SECRETS, `${ns}.not-a-cred`, CONFIG_NS)
      .catch((err: unknown) => err);
    expect(isNotFound(copy)).toBe(true);
  });

  it('a job with a deadline ends failed when the registry is down', async () => {
    await env.registry.stop();
    try {
      await createJob('registry-down', {
        image: env.images.big,
        pullPolicy: { timeoutSeconds: 4, backoffLimit: 3 },
        completionPolicy: { type: 'Always', activeDeadlineSeconds: 4 },
      });
      const job = await waitFinished('registry-down', 30_000);
      expect(job.status).toMatchObject({ desired: 1, succeeded: 0, failed: 1, failedNodes: [NODE] });
      expect(job.status?.message).toContain('job exceeds activeDeadlineSeconds (4s)');
      const elapsed = Date.parse(job.status!.completionTime!) - Date.parse(job.status!.startTime!);
      expect(elapsed).toBeGreaterThanOrEqual(3_000);
      expect(await env.cri.imageStatus(env.images.big)).toBeNull();
    } finally {
      await env.registry.start();
    }
  });

  it('ttlSecondsAfterFinished deletes the finished job and its tag is pruned from the NodeImage', async () => {
    const created = await createJob('short-lived', {
      image: env.images.busybox,
      completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 2 },
    });
    await waitFinished('short-lived');
    await waitFor(
      'job deleted after its TTL',
      async () => {
        try {
          await adminClient().get(IMAGE_PULL_JOBS, 'short-lived', ns);
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      20_000,
      200,
    );
    await waitFor(
      'tag owner pruned from the NodeImage',
      async () => {
        const ni = await adminClient().get<
          KubeObject & { spec?: { images?: Record<string, { tags: Array<{ ownerReferences?: Array<{ uid: string }> }> }> } }
        >(NODE_IMAGES, NODE);
        return !JSON.stringify(ni.spec ?? {}).includes(created.metadata.uid!);
      },
      20_000,
      200,
    );
  });
});

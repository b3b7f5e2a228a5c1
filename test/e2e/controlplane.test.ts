// Sanity of the real control plane and of every harness helper other e2e suites rely on.
import { CoreV1Api, RbacAuthorizationV1Api, VersionApi, type V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  adminKubeConfig,
  bindPod,
  canI,
  createNamespace,
  createNode,
  forceDelete,
  kubectl,
  pinnedKubernetesVersion,
  registerWebhook,
  restartApiServer,
  serviceAccountUser,
  setPodStatus,
  startApiServer,
  stopApiServer,
} from '../harness/index.js';

const core = () => adminKubeConfig().makeApiClient(CoreV1Api);

function podManifest(namespace: string, name: string): V1Pod {
  return {
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      containers: [
        { name: 'app', image: 'registry.example/app:1' },
        { name: 'sidecar', image: 'registry.example/sidecar:1' },
      ],
    },
  };
}

describe('control plane', () => {
  it('serves the pinned real Kubernetes version', async () => {
    const info = await adminKubeConfig().makeApiClient(VersionApi).getCode();
    expect(info.gitVersion).toBe(pinnedKubernetesVersion());
    expect(`v${info.major}.${info.minor}`).toBe(pinnedKubernetesVersion().replace(/\.\d+$/, ''));
    const client = await kubectl(['version', '-o', 'json']);
    expect(JSON.parse(client).serverVersion.gitVersion).toBe(pinnedKubernetesVersion());
  });

  it('creates nodes, schedules a pod, and reports kubelet-style status', async () => {
    const ns = await createNamespace('sanity');
    const nodeName = `node-${ns}`;
    const virtualName = `vk-${ns}`;
    await createNode(nodeName);
    await createNode(virtualName, { virtual: true });
    const node = await core().readNode({ name: nodeName });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(node.metadata?.labels?.type).toBeUndefined();
    expect((await core().readNode({ name: virtualName })).metadata?.labels?.type).toBe('virtual-kubelet');

    const pod = await core().createNamespacedPod({ namespace: ns, body: podManifest(ns, 'web') });
    await bindPod(pod, nodeName);
    expect((await core().readNamespacedPod({ name: 'web', namespace: ns })).spec?.nodeName).toBe(nodeName);

    await setPodStatus(pod, {
      phase: 'Running',
      podIP: '10.1.0.7',
      containerStatuses: [
        { name: 'app', state: { running: {} } },
        { name: 'sidecar', state: { terminated: { exitCode: 137, reason: 'OOMKilled' } }, restartCount: 2 },
      ],
    });
    const status = (await core().readNamespacedPod({ name: 'web', namespace: ns })).status!;
    expect(status.phase).toBe('Running');
    expect(status.podIP).toBe('10.1.0.7');
    const app = status.containerStatuses!.find((c) => c.name === 'app')!;
    const sidecar = status.containerStatuses!.find((c) => c.name === 'sidecar')!;
    expect(app.state?.running?.startedAt).toBeDefined();
    expect(app.image).toBe('registry.example/app:1');
    expect(sidecar.state?.terminated).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
    expect(sidecar.restartCount).toBe(2);
    expect(status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');

    // A bound pod would stay Terminating without a kubelet; grace 0 removes it at once.
    await forceDelete({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: ns } });
    await expect(core().readNamespacedPod({ name: 'web', namespace: ns })).rejects.toMatchObject({ code: 404 });
  });

  it('calls a mutating webhook served by the test process', async () => {
    const ns = await createNamespace('webhook');
    const hook = await registerWebhook({
      type: 'mutating',
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' }],
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
      handler: (request) => ({
        allowed: true,
        patch: [{ op: 'add', path: '/metadata/labels/injected-by', value: 'test-webhook' }],
        warnings: [`saw ${request.operation} ${request.kind.kind}`],
      }),
    });
    try {
      await core().createNamespacedPod({ namespace: ns, body: podManifest(ns, 'mutated') });
      const pod = await core().readNamespacedPod({ name: 'mutated', namespace: ns });
      expect(pod.metadata?.labels).toMatchObject({ app: 'mutated', 'injected-by': 'test-webhook' });
      expect(hook.requests.map((r) => `${r.operation} ${r.namespace}/${r.name ?? (r.object as V1Pod).metadata?.name}`)).toEqual([
        `CREATE ${ns}/mutated`,
      ]);
    } finally {
      await hook.close();
    }
  });

  it('enforces a validating webhook denial with its message', async () => {
    const ns = await createNamespace('deny');
    const hook = await registerWebhook({
      type: 'validating',
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'], scope: 'Namespaced' }],
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
      handler: (request) =>
        (request.object as { data?: Record<string, string> }).data?.forbidden
          ? { allowed: false, message: 'data.forbidden is not allowed' }
          : { allowed: true },
    });
    try {
      await core().createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'ok' }, data: { fine: '1' } } });
      await expect(
        core().createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'bad' }, data: { forbidden: '1' } } }),
      ).rejects.toMatchObject({ code: 403, body: expect.stringContaining('data.forbidden is not allowed') });
    } finally {
      await hook.close();
    }
  });

  it('keeps objects across a kube-apiserver restart', async () => {
    const ns = await createNamespace('restart');
    await core().createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'survivor' }, data: { k: 'v' } } });
    const { startMs } = await restartApiServer();
    console.log(`[controlplane] kube-apiserver restart ready in ${startMs} ms`);
    expect((await core().readNamespacedConfigMap({ name: 'survivor', namespace: ns })).data).toEqual({ k: 'v' });
  });

  it('refuses connections while kube-apiserver is stopped, then serves the same data', async () => {
    const ns = await createNamespace('outage');
    await stopApiServer();
    try {
      await expect(core().readNamespace({ name: ns })).rejects.toThrow(/ECONNREFUSED|fetch failed/);
    } finally {
      await startApiServer();
    }
    expect((await core().readNamespace({ name: ns })).metadata?.name).toBe(ns);
  });

  it('authorizes with RBAC, checked by impersonation', async () => {
    const ns = await createNamespace('rbac');
    const user = serviceAccountUser(ns, 'reader');
    await core().createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'reader' } } });
    const listPods = { verb: 'list', resource: 'pods', namespace: ns };
    expect((await canI(user, listPods)).allowed).toBe(false);

    const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: ns,
      body: { metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: 'pod-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
      },
    });
    expect(await canI(user, listPods)).toMatchObject({ allowed: true });
    expect((await canI(user, { verb: 'delete', resource: 'pods', namespace: ns })).allowed).toBe(false);
    expect((await canI(user, { verb: 'list', resource: 'pods', namespace: 'default' })).allowed).toBe(false);
  });
});

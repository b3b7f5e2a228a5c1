// The runtime installed from dist/ with an image that does not exist, on a real node: the kubelet never starts the
// manager (image pull failure), and still pods of a namespace that uses no runtime feature are created, run and are
// edited; only a pod the app's SidecarSet selects is refused (created without its sidecar would be worse). The
// runtime this file installs can never start, so it removes its workloads and webhook configurations afterwards: a
// later file installs the real runtime afresh.
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { kubectl } from '../harness/index.js';
import { runtimeManifests } from '../harness/runtime-install.js';
import { core, namespace, node, waitFor, waitForPod } from './support.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const MISSING_IMAGE = 'registry.invalid/cdk8s-kruise:does-not-exist';
const LOOP = ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];
const RUNTIME_NS = 'kruise-system';

async function removeRuntimeWorkloads(): Promise<void> {
  await kubectl(['delete', 'deployment', '-n', RUNTIME_NS, 'kruise-controller-manager', '--ignore-not-found', '--wait=true']);
  await kubectl(['delete', 'daemonset', '-n', RUNTIME_NS, 'kruise-daemon', '--ignore-not-found', '--wait=true']);
  await kubectl(['delete', 'mutatingwebhookconfiguration', MUTATING_WEBHOOK_CONFIGURATION, '--ignore-not-found']);
  await kubectl(['delete', 'validatingwebhookconfiguration', VALIDATING_WEBHOOK_CONFIGURATION, '--ignore-not-found']);
}

const pod = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'c', image: node().images.busybox, command: LOOP }] },
});

let ns: string;

beforeAll(async () => {
  await kubectl(['apply', '--server-side', '-f', path.join(repoRoot, 'dist/00-crds.yaml')]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  // A runtime an earlier file installed is replaced: this story needs one that can never start.
  await removeRuntimeWorkloads();
  const docs = YAML.parseAllDocuments(runtimeManifests(node().hostRunDir)).map((d) => d.toJS() as Record<string, any>);
  for (const d of docs.filter((x) => x.kind === 'Deployment' || x.kind === 'DaemonSet')) {
    for (const c of d.spec.template.spec.containers) c.image = MISSING_IMAGE;
  }
  await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: docs.map((d) => YAML.stringify(d)).join('---\n') });
  ns = await namespace('failsafe');
}, 180_000);

afterAll(async () => {
  await removeRuntimeWorkloads();
}, 120_000);

describe('runtime image that does not exist', () => {
  it('the kubelet cannot start the manager: its pods wait on the image pull', async () => {
    await waitFor(
      'a manager pod waiting on ErrImagePull or ImagePullBackOff',
      async () =>
        (await core().listNamespacedPod({ namespace: RUNTIME_NS, labelSelector: 'control-plane=controller-manager' })).items.some((p) =>
          p.status?.containerStatuses?.some((s) => /^(ErrImagePull|ImagePullBackOff)$/.test(s.state?.waiting?.reason ?? '')),
        ),
      120_000,
      500,
    );
  });

  it('pods of a namespace that uses no runtime feature are created, run and are edited', async () => {
    await core().createNamespacedPod({ namespace: ns, body: pod('plain') });
    await waitForPod(ns, 'plain', 'Running', (p) => p.status?.phase === 'Running', 90_000);
    const edited = await core().patchNamespacedPod({
      name: 'plain',
      namespace: ns,
      body: [{ op: 'add', path: '/metadata/labels', value: { edited: 'yes' } }],
    });
    expect(edited.metadata!.labels).toEqual({ edited: 'yes' });
    expect(edited.spec!.containers.map((c) => c.name)).toEqual(['c']);
    await core().deleteNamespacedPod({ name: 'plain', namespace: ns });
  });

  it("a pod the app's SidecarSet selects is refused rather than created without its sidecar", async () => {
    // dist/'s logtail SidecarSet selects app=webserver in every namespace.
    await expect(core().createNamespacedPod({ namespace: ns, body: pod('web', { app: 'webserver' }) })).rejects.toThrow(/mpod\.kb\.io/);
  });
});

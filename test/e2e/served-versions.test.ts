// The kinds upstream v1.9 serves at apps.kruise.io/v1beta1 too (and stores there), on the real kube-apiserver with our
// generated CRDs: an object created at either version reads back at the other, the storage version is v1beta1, a
// v1beta1-only field (a NodeImage pull secret's mode) is kept at v1beta1 and absent at v1alpha1 (conversion None: the
// API server prunes it, as upstream's conversion drops it), and the bundled ImagePullJob controller, which lists and
// watches v1alpha1, acts on a job written as v1beta1.
import { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKubeConfig, createNamespace, createNode } from '../harness/index.js';
import { accessCoverage, accessLogs, eventually, startController, type ControllerProcess } from './runtime/support.js';

let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
const procs: ControllerProcess[] = [];
const GROUP = 'apps.kruise.io';
const LABEL = 'e2e.cdk8s-kruise.io/served-versions';
const MARK = String(process.pid);
const node = `node-served-${process.pid}`;
const at = (version: string, plural: string) => ({ group: GROUP, version, plural }) as const;

type Obj = { apiVersion: string; metadata: { name: string; uid: string }; spec: Record<string, any> };

beforeAll(async () => {
  custom = adminKubeConfig().makeApiClient(CustomObjectsApi);
  runtimeNs = await createNamespace('served-versions-runtime');
  ns = await createNamespace('served-versions');
  await createNode(node, { labels: { [LABEL]: MARK } });
  const p = await startController(runtimeNs, ['--webhook-port', '0', '--feature-gates', 'ImagePullJobGate=true']);
  procs.push(p);
  await p.waitReady();
  await eventually(() => custom.getClusterCustomObject({ ...at('v1alpha1', 'nodeimages'), name: node }), 20_000, `NodeImage ${node}`);
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  for (const p of procs) for (const l of p.logs.filter((x) => x.level >= 40).slice(-20)) console.log('[controller]', JSON.stringify(l));
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('apps.kruise.io/v1beta1 served beside v1alpha1 (conversion None)', () => {
  it('stores ImagePullJob, NodeImage, BroadcastJob and ImageListPullJob at v1beta1, as upstream v1.9 does', async () => {
    const api = adminKubeConfig().makeApiClient(ApiextensionsV1Api);
    for (const plural of ['imagepulljobs', 'nodeimages', 'broadcastjobs', 'imagelistpulljobs']) {
      const crd = await api.readCustomResourceDefinition({ name: `${plural}.${GROUP}` });
      expect(
        crd.spec.versions.map((v) => [v.name, v.served, v.storage]),
        plural,
      ).toEqual([
        ['v1alpha1', true, false],
        ['v1beta1', true, true],
      ]);
      expect(crd.spec.conversion?.strategy ?? 'None').toBe('None');
    }
  });

  it('an ImagePullJob created at either version reads back at the other, field for field', async () => {
    const spec = {
      image: 'e2e.example/served:1',
      selector: { matchLabels: { [LABEL]: 'nobody' } },
      parallelism: 1,
      pullPolicy: { timeoutSeconds: 30, backoffLimit: 2 },
      completionPolicy: { type: 'Never' },
      sandboxConfig: { labels: { team: 'a' }, annotations: { note: 'b' } },
      imagePullPolicy: 'Always',
    };
    for (const [write, read] of [
      ['v1beta1', 'v1alpha1'],
      ['v1alpha1', 'v1beta1'],
    ] as const) {
      const name = `ipj-${write}`;
      await custom.createNamespacedCustomObject({
        ...at(write, 'imagepulljobs'),
        namespace: ns,
        body: { apiVersion: `${GROUP}/${write}`, kind: 'ImagePullJob', metadata: { name }, spec },
      });
      const got = (await custom.getNamespacedCustomObject({ ...at(read, 'imagepulljobs'), namespace: ns, name })) as Obj;
      expect(got.apiVersion).toBe(`${GROUP}/${read}`);
      expect(got.spec).toEqual(spec);
    }
  });

  it("a NodeImage pull secret's mode is kept at v1beta1 and absent at v1alpha1; a v1alpha1 write drops it", async () => {
    // A NodeImage lives as long as its Node (the NodeImage controller makes and removes it): this one is for this test.
    const name = `${node}-secret`;
    await createNode(name);
    const made = await eventually(
      () => custom.getClusterCustomObject({ ...at('v1beta1', 'nodeimages'), name }),
      20_000,
      `NodeImage ${name}`,
    );
    const image = 'e2e.example/served-secret';
    const pullSecrets = [{ namespace: ns, name: 'pull', mode: 'batch' }];
    await custom.replaceClusterCustomObject({
      ...at('v1beta1', 'nodeimages'),
      name,
      body: { ...(made as Obj), spec: { images: { [image]: { pullSecrets, tags: [{ tag: '1', version: 0 }] } } } },
    });
    const beta = (await custom.getClusterCustomObject({ ...at('v1beta1', 'nodeimages'), name })) as Obj;
    expect(beta.spec.images[image].pullSecrets).toEqual(pullSecrets);
    const alpha = (await custom.getClusterCustomObject({ ...at('v1alpha1', 'nodeimages'), name })) as Obj;
    expect(alpha.apiVersion).toBe(`${GROUP}/v1alpha1`);
    expect(alpha.spec.images[image].pullSecrets).toEqual([{ namespace: ns, name: 'pull' }]);
    // Upstream's v1alpha1 → v1beta1 conversion has no mode either: an update through v1alpha1 stores it without one.
    await custom.replaceClusterCustomObject({ ...at('v1alpha1', 'nodeimages'), name, body: alpha });
    const after = (await custom.getClusterCustomObject({ ...at('v1beta1', 'nodeimages'), name })) as Obj;
    expect(after.spec.images[image].pullSecrets).toEqual([{ namespace: ns, name: 'pull' }]);
  });

  it('the ImagePullJob controller (watching v1alpha1) puts a v1beta1 job on its node and counts it', async () => {
    const image = 'e2e.example/served-pull';
    await custom.createNamespacedCustomObject({
      ...at('v1beta1', 'imagepulljobs'),
      namespace: ns,
      body: {
        apiVersion: `${GROUP}/v1beta1`,
        kind: 'ImagePullJob',
        metadata: { name: 'pull-beta' },
        spec: { image: `${image}:2`, selector: { matchLabels: { [LABEL]: MARK } }, completionPolicy: { type: 'Never' } },
      },
    });
    const tags = await eventually(async () => {
      const ni = (await custom.getClusterCustomObject({ ...at('v1beta1', 'nodeimages'), name: node })) as Obj;
      const t = ni.spec?.images?.[image]?.tags as { tag: string }[] | undefined;
      return t?.length ? t : undefined;
    }, 20_000);
    expect(tags.map((t) => t.tag)).toEqual(['2']);
    const job = await eventually(async () => {
      const j = (await custom.getNamespacedCustomObject({ ...at('v1beta1', 'imagepulljobs'), namespace: ns, name: 'pull-beta' })) as Obj & {
        status?: { desired?: number };
      };
      return j.status?.desired === 1 ? j : undefined;
    }, 20_000);
    expect(job.apiVersion).toBe(`${GROUP}/v1beta1`);
  });
});

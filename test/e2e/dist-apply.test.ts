// Everything the repo ships in dist/ must be accepted by a real kube-apiserver: CRDs become
// Established, then every other object is applied with server-side apply, and `kubectl apply
// --dry-run=server` accepts every file. Data-driven: new files in dist/ are picked up automatically.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiextensionsV1Api, type KubernetesObject, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKubeConfig, createNamespace, discoverResource, kubectl, rawRequest, serverSideApply } from '../harness/index.js';
import { conversionNone } from './runtime/support.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const distDir = path.join(repoRoot, 'dist');
const FIELD_MANAGER = 'cdk8s-kruise-e2e';

interface DistObject {
  /** dist-relative file and document index, for messages. */
  readonly source: string;
  readonly object: KubernetesObject;
}

const KUSTOMIZATION = /^(kustomization\.ya?ml|Kustomization)$/;

/** Manifest files under dir (kustomize's own config files excluded: they are not API objects). */
function manifestFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name) && !KUSTOMIZATION.test(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** Directories under dir (itself included) that hold a kustomization. */
function kustomizationDirs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && KUSTOMIZATION.test(e.name))
    .map((e) => e.parentPath)
    .sort();
}

function loadDist(): DistObject[] {
  const objects: DistObject[] = [];
  for (const file of manifestFiles(distDir)) {
    const rel = path.relative(repoRoot, file);
    parseAllDocuments(readFileSync(file, 'utf8')).forEach((doc, i) => {
      if (doc.errors.length > 0) throw new Error(`${rel} document ${i}: ${doc.errors[0]!.message}`);
      const object = doc.toJS() as KubernetesObject | null;
      if (object === null) return;
      if (!object.apiVersion || !object.kind) throw new Error(`${rel} document ${i}: not a Kubernetes object (no apiVersion/kind)`);
      objects.push({ source: `${rel}#${i}`, object });
    });
  }
  return objects;
}

const all = loadDist();
const isCrd = (o: KubernetesObject) => o.kind === 'CustomResourceDefinition';
const isWebhookConfig = (o: KubernetesObject) => /^(Mutating|Validating)WebhookConfiguration$/.test(o.kind!);
const crds = all.filter((d) => isCrd(d.object));
// Webhook configurations go last: they point at a manager that does not run here, so once applied
// they would (with failurePolicy Fail) reject the remaining objects.
const webhookConfigs = all.filter((d) => isWebhookConfig(d.object));
const rest = all.filter((d) => !isCrd(d.object) && !isWebhookConfig(d.object)).sort((a, b) => applyRank(a.object) - applyRank(b.object));

function applyRank(o: KubernetesObject): number {
  const order = ['Namespace', 'ServiceAccount', 'ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding', 'ConfigMap', 'Secret'];
  const i = order.indexOf(o.kind!);
  return i === -1 ? order.length : i;
}

const label = (d: DistObject) => `${d.source} ${d.object.kind}/${d.object.metadata?.name ?? '?'}`;

async function waitEstablished(name: string): Promise<V1CustomResourceDefinition> {
  const api = adminKubeConfig().makeApiClient(ApiextensionsV1Api);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const crd = await api.readCustomResourceDefinition({ name });
    const conditions = crd.status?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return crd;
    if (Date.now() > deadline) throw new Error(`CRD ${name} not Established after 30s: ${JSON.stringify(conditions)}`);
    await sleep(200);
  }
}

describe('dist/ on a real kube-apiserver', () => {
  let defaultNamespace: string;
  const appliedWebhookConfigs: KubernetesObject[] = [];
  // SidecarSets are cluster-scoped and select pods in every namespace: left behind, they would inject into
  // the pods of later test files (and collide with their own SidecarSets).
  const appliedSidecarSets: string[] = [];

  beforeAll(async () => {
    defaultNamespace = await createNamespace('dist');
  });

  afterAll(async () => {
    // Leave no webhook configuration, and no CRD conversion, pointing at a non-running manager for later test files.
    await conversionNone();
    for (const config of appliedWebhookConfigs) {
      const kind = config.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
      await rawRequest('DELETE', `/apis/admissionregistration.k8s.io/v1/${kind}/${config.metadata!.name}`);
    }
    for (const name of appliedSidecarSets) await rawRequest('DELETE', `/apis/apps.kruise.io/v1alpha1/sidecarsets/${name}`);
  });

  async function apply(d: DistObject): Promise<KubernetesObject> {
    const namespace = d.object.metadata?.namespace;
    const resource = await discoverResource(d.object.apiVersion!, d.object.kind!);
    if (namespace && resource?.namespaced) {
      // dist/ may place objects in a namespace it does not create itself (the user's own). Create,
      // never apply: applying a bare Namespace could strip labels the dist/ Namespace set.
      if ((await rawRequest('GET', `/api/v1/namespaces/${namespace}`)).status === 404) {
        await rawRequest('POST', '/api/v1/namespaces', {
          body: JSON.stringify({ metadata: { name: namespace } }),
          contentType: 'application/json',
        });
      }
    }
    if (d.object.kind === 'SidecarSet') appliedSidecarSets.push(d.object.metadata!.name!);
    try {
      return await serverSideApply(d.object, { fieldManager: FIELD_MANAGER, defaultNamespace });
    } catch (error) {
      throw new Error(`${label(d)}: ${(error as Error).message}`, { cause: error });
    }
  }

  it('dist/ contains CustomResourceDefinitions (else this suite would prove nothing)', () => {
    expect(crds.map(label)).not.toEqual([]);
  });

  it('has a CRD in dist/ for every custom resource in dist/', () => {
    const served = new Set(
      crds.flatMap((d) => {
        const spec = (d.object as V1CustomResourceDefinition).spec;
        return spec.versions.map((v) => `${spec.group}/${v.name} ${spec.names.kind}`);
      }),
    );
    const builtinGroups = /^(v1|[a-z0-9.-]*\.k8s\.io\/\w+|apps\/v1|batch\/v1|policy\/v1|autoscaling\/v\w+)$/;
    const missing = all
      .filter((d) => !builtinGroups.test(d.object.apiVersion!) && !isCrd(d.object))
      .filter((d) => !served.has(`${d.object.apiVersion} ${d.object.kind}`))
      .map(label);
    expect(missing).toEqual([]);
  });

  describe.each(crds.map((d) => [label(d), d] as const))('CRD %s', (_name, d) => {
    it('is accepted and becomes Established', async () => {
      await apply(d);
      const crd = await waitEstablished(d.object.metadata!.name!);
      expect(crd.status?.acceptedNames?.kind).toBe((d.object as V1CustomResourceDefinition).spec.names.kind);
    });
  });

  it('CRDs that convert through a webhook call the install Service (set to None here: no manager answers)', async () => {
    const converting = crds.filter((d) => (d.object as V1CustomResourceDefinition).spec.conversion?.strategy === 'Webhook');
    expect(converting.map(label)).not.toEqual([]);
    for (const d of converting) {
      const service = (d.object as V1CustomResourceDefinition).spec.conversion!.webhook!.clientConfig!.service;
      expect(service, label(d)).toMatchObject({ name: 'kruise-webhook-service', path: '/convert' });
    }
    // A write at a version other than the stored one (a v1alpha1 SidecarSet in dist/) would need the manager's
    // `/convert`, which sidecarset-conversion.test.ts proves; the objects below are judged without it.
    await conversionNone();
  });

  describe.each(rest.map((d) => [label(d), d] as const))('%s', (_name, d) => {
    it('is accepted by server-side apply', async () => {
      const applied = await apply(d);
      expect(applied.metadata?.uid).toBeTruthy();
      expect(applied.metadata?.managedFields?.some((f) => f.manager === FIELD_MANAGER)).toBe(true);
    });
  });

  describe.each(manifestFiles(distDir).map((f) => [path.relative(repoRoot, f), f] as const))(
    'kubectl apply --dry-run=server -f %s',
    (_name, file) => {
      it('is accepted', async () => {
        const out = await kubectl(['apply', '--dry-run=server', '-f', file]);
        expect(out).toMatch(/\(server dry run\)/);
      });
    },
  );

  describe.each(kustomizationDirs(distDir).map((d) => [path.relative(repoRoot, d) || '.', d] as const))(
    'kubectl apply -k %s --dry-run=server',
    (_name, dir) => {
      it('is accepted', async () => {
        const out = await kubectl(['apply', '-k', dir, '--dry-run=server']);
        expect(out).toMatch(/\(server dry run\)/);
      });
    },
  );

  describe.each(webhookConfigs.map((d) => [label(d), d] as const))('%s', (_name, d) => {
    it('is accepted by server-side apply', async () => {
      const applied = await apply(d);
      appliedWebhookConfigs.push(applied);
      expect(applied.metadata?.uid).toBeTruthy();
    });
  });
});

// The GitOps layouts on the real kube-apiserver: the Flux layout applied directory by directory in its dependsOn
// order (waiting as Flux's `wait`/healthChecks do), and `cdk8s-kruise apply` on the plain layout, each from a
// runtime namespace that does not exist yet to an app whose custom resources passed the runtime's admission webhook.
//
// No kubelet, kube-controller-manager or runtime image runs in the e2e project, so a small harness loop plays them,
// as the other e2e tests play the kubelet: it writes a rolled-out status on Deployments, and once the runtime's
// webhook configurations exist it points them at an admitting HTTPS server in this process (the runtime would
// serve them and patch the caBundle) before it marks the controller-manager rolled out. An app applied before
// that would be rejected: the configurations name a Service with no backend and failurePolicy Fail.
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MUTATING_WEBHOOK_CONFIGURATION, NAMES, VALIDATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { createCertificateAuthority, findAssets, kubeconfigPath, kubectl, rawRequest } from '../harness/index.js';
import { repoRoot, runCli } from '../unit/support/cli.js';

type Obj = Record<string, any>;

const id = randomBytes(3).toString('hex');
const WEBHOOK_CONFIGS = [
  ['mutatingwebhookconfigurations', MUTATING_WEBHOOK_CONFIGURATION],
  ['validatingwebhookconfigurations', VALIDATING_WEBHOOK_CONFIGURATION],
] as const;

// The app: the bundled runtime in its own namespace, and an app chart with a Namespace, a Deployment and a CloneSet
// (a custom resource the runtime's validating webhook admits).
const APP = (runtimeNs: string, appNs: string) => `
const { App, Chart, ApiObject } = await import(${JSON.stringify(path.join(repoRoot, 'node_modules/cdk8s/lib/index.js'))});
const kplus = await import(${JSON.stringify(path.join(repoRoot, 'node_modules/cdk8s-plus-27/lib/index.js'))});
const { KruiseRuntime, CloneSet } = await import(${JSON.stringify(path.join(repoRoot, 'constructs/index.ts'))});
const app = new App();
new KruiseRuntime(app, 'kruise', { namespace: '${runtimeNs}', daemonConfigNamespace: '${runtimeNs}-daemon' });
const ns = new Chart(app, 'namespace');
new ApiObject(ns, 'ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: '${appNs}' } });
const web = new Chart(app, 'web', { namespace: '${appNs}' });
web.addDependency(ns);
new kplus.Deployment(web, 'web', { metadata: { name: 'web' }, replicas: 1, containers: [{ name: 'web', image: 'nginx:1.27', portNumber: 8080 }] });
const cs = new CloneSet(web, 'cache', { metadata: { name: 'cache' }, replicas: 1 });
cs.addContainer({ name: 'redis', image: 'redis:7.2', portNumber: 6379 });
app.synth();
`;

/** Plays the missing pieces (see the header). Returns a stop function and what it saw. */
async function playCluster(runtimeNs: string, namespaces: string[]) {
  const admitted: string[] = [];
  const ca = await createCertificateAuthority(`gitops-${id}`);
  const serving = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'], usage: 'server' });
  const server = https.createServer({ key: serving.key, cert: serving.cert }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const review = JSON.parse(body) as { request: { uid: string; kind: { kind: string }; name?: string; namespace?: string } };
      admitted.push(`${req.url} ${review.request.kind.kind} ${review.request.namespace}/${review.request.name}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: review.request.uid, allowed: true },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const caBundle = Buffer.from(ca.cert).toString('base64');
  const events: string[] = [];
  let webhooksServed = false;
  let running = true;

  async function serveWebhooks(): Promise<boolean> {
    for (const [resource, name] of WEBHOOK_CONFIGS) {
      const res = await rawRequest('GET', `/apis/admissionregistration.k8s.io/v1/${resource}/${name}`);
      if (res.status !== 200) return false;
    }
    for (const [resource, name] of WEBHOOK_CONFIGS) {
      const config = JSON.parse((await rawRequest('GET', `/apis/admissionregistration.k8s.io/v1/${resource}/${name}`)).body) as Obj;
      const patch = (config.webhooks as Obj[]).map((w, i) => ({
        op: 'replace',
        path: `/webhooks/${i}/clientConfig`,
        value: { url: `https://127.0.0.1:${port}${w.clientConfig.service?.path ?? '/'}`, caBundle },
      }));
      const r = await rawRequest('PATCH', `/apis/admissionregistration.k8s.io/v1/${resource}/${name}`, {
        body: JSON.stringify(patch),
        contentType: 'application/json-patch+json',
      });
      if (r.status !== 200) throw new Error(`patching ${name}: HTTP ${r.status} ${r.body}`);
    }
    // The API server loads webhook configurations asynchronously: give it a moment before declaring them served.
    await sleep(1500);
    events.push('webhooks served');
    return true;
  }

  async function rollOut(ns: string): Promise<void> {
    const res = await rawRequest('GET', `/apis/apps/v1/namespaces/${ns}/deployments`);
    if (res.status !== 200) return;
    for (const d of (JSON.parse(res.body) as { items: Obj[] }).items) {
      const isManager = ns === runtimeNs && d.metadata.name === NAMES.managerDeployment;
      if (d.status?.observedGeneration === d.metadata.generation && d.status?.availableReplicas === d.spec.replicas) continue;
      if (isManager && !webhooksServed) {
        webhooksServed = await serveWebhooks();
        if (!webhooksServed) continue;
      }
      const n = d.spec.replicas ?? 1;
      const status = {
        observedGeneration: d.metadata.generation,
        replicas: n,
        updatedReplicas: n,
        readyReplicas: n,
        availableReplicas: n,
        conditions: [
          { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'e2e' },
          { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: 'e2e' },
        ],
      };
      const r = await rawRequest('PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/${d.metadata.name}/status`, {
        body: JSON.stringify({ status }),
        contentType: 'application/merge-patch+json',
      });
      if (r.status === 200) events.push(`rolled out ${ns}/${d.metadata.name}`);
    }
  }

  const loop = (async () => {
    while (running) {
      for (const ns of namespaces) await rollOut(ns).catch(() => undefined);
      await sleep(300);
    }
  })();
  return {
    admitted,
    events,
    async stop() {
      running = false;
      await loop;
      server.close();
      for (const [resource, name] of WEBHOOK_CONFIGS)
        await rawRequest('DELETE', `/apis/admissionregistration.k8s.io/v1/${resource}/${name}`);
    },
  };
}

function docsOf(file: string): Obj[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

async function synth(dir: string, appFile: string, out: string, gitops: string): Promise<void> {
  const r = await runCli([
    'synth',
    '--app',
    `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(appFile)}`,
    '-o',
    out,
    '--gitops',
    gitops,
    '--repo-path',
    './dist',
    '--config',
    path.join(dir, 'none.yaml'),
  ]);
  if (r.code !== 0) throw new Error(`synth failed (${r.code}): ${r.stdout}${r.stderr}`);
}

async function appReady(appNs: string): Promise<void> {
  expect(await kubectl(['rollout', 'status', 'deploy/web', '-n', appNs, '--timeout=60s'])).toMatch(/successfully rolled out/);
  const cs = JSON.parse(await kubectl(['get', 'clonesets.apps.kruise.io', 'cache', '-n', appNs, '-o', 'json'])) as Obj;
  expect(cs.metadata.uid).toBeTruthy();
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-gitops-'));
});

describe('Flux layout, directory by directory in dependsOn order', () => {
  const runtimeNs = `kruise-flux-${id}`;
  const appNs = `app-flux-${id}`;
  let cluster: Awaited<ReturnType<typeof playCluster>>;
  beforeAll(async () => {
    cluster = await playCluster(runtimeNs, [runtimeNs, appNs]);
  });
  afterAll(async () => {
    await cluster.stop();
    // Cluster-scoped runtime objects (ClusterRole, bindings) share their names with the next install: remove them.
    for (const sub of ['app', 'runtime'])
      await kubectl(['delete', '-k', path.join(dir, 'flux', sub), '--ignore-not-found', '--wait=false']);
  });

  it('crds → runtime → app, each once the previous is healthy, ends with a ready app', async () => {
    writeFileSync(path.join(dir, 'flux-app.mts'), APP(runtimeNs, appNs));
    const out = path.join(dir, 'flux');
    await synth(dir, path.join(dir, 'flux-app.mts'), out, 'flux');
    const kustomizations = docsOf(path.join(out, 'flux/kustomizations.yaml'));
    // Order by dependsOn, as Flux does.
    const order: Obj[] = [];
    const pending = [...kustomizations];
    while (pending.length > 0) {
      const next = pending.findIndex((k) =>
        (k.spec.dependsOn ?? []).every((d: { name: string }) => order.some((o) => o.metadata.name === d.name)),
      );
      expect(next, 'dependsOn has a cycle or names a missing Kustomization').toBeGreaterThanOrEqual(0);
      order.push(...pending.splice(next, 1));
    }
    expect(order.map((k) => k.spec.path.split('/').pop())).toEqual(['crds', 'runtime', 'app']);
    for (const k of order) {
      const sub = path.join(out, k.spec.path.split('/').pop());
      await kubectl(['apply', '--server-side', '--field-manager=flux-e2e', '-k', sub]);
      // wait: true → every applied object ready (here: CRDs Established); healthChecks → the runtime's workloads rolled out.
      if (k.spec.wait) {
        const objects = docsOf(path.join(sub, (docsOf(path.join(sub, 'kustomization.yaml'))[0]!.resources as string[])[0]!));
        expect(objects.every((o) => o.kind === 'CustomResourceDefinition')).toBe(true);
        await kubectl(['wait', '--for', 'condition=established', '--timeout=60s', ...objects.map((o) => `crd/${o.metadata.name}`)]);
      }
      for (const c of k.spec.healthChecks ?? []) {
        await kubectl(['rollout', 'status', `${String(c.kind).toLowerCase()}/${c.name}`, '-n', c.namespace, '--timeout=60s']);
      }
    }
    await appReady(appNs);
    // The CloneSet went through the runtime's validating webhook, which served before the app was applied.
    expect(cluster.admitted.some((a) => a.includes(`CloneSet ${appNs}/cache`))).toBe(true);
    expect(cluster.events.indexOf('webhooks served')).toBeLessThan(cluster.events.indexOf(`rolled out ${appNs}/web`));
  });
});

describe('cdk8s-kruise apply (plain layout)', () => {
  const runtimeNs = `kruise-apply-${id}`;
  const appNs = `app-apply-${id}`;
  let cluster: Awaited<ReturnType<typeof playCluster>>;
  beforeAll(async () => {
    cluster = await playCluster(runtimeNs, [runtimeNs, appNs]);
  });
  afterAll(async () => {
    await cluster.stop();
  });
  const uninstall = async (out: string) => {
    for (const f of ['20-app-web.yaml', '20-app-namespace.yaml', '10-runtime.yaml'])
      await kubectl(['delete', '-f', path.join(out, f), '--ignore-not-found', '--wait=false']);
  };

  it('applies CRDs, waits Established, applies the runtime, waits for its rollout, then the app; exit 0 with progress', async () => {
    writeFileSync(path.join(dir, 'apply-app.mts'), APP(runtimeNs, appNs));
    const out = path.join(dir, 'plain');
    await synth(dir, path.join(dir, 'apply-app.mts'), out, 'plain');
    const r = await runCli(['apply', out, '--kubectl', findAssets().kubectl, '--kubeconfig', kubeconfigPath(), '--timeout', '60']);
    expect(r.stderr).toMatch(/\[1\/3\] CRDs: waiting for \d+ CRD\(s\) to be Established/);
    expect(r.stderr).toMatch(new RegExp(`\\[2/3\\] runtime: waiting for Deployment ${runtimeNs}/kruise-controller-manager to roll out`));
    expect(r.stderr).toMatch(/\[3\/3\] app: done/);
    expect(r.code, r.stderr).toBe(0);
    await appReady(appNs);
    expect(cluster.admitted.some((a) => a.includes(`CloneSet ${appNs}/cache`))).toBe(true);
    await uninstall(out);
  });

  it('exits 1 naming the phase when a wait times out, and applies nothing after it', async () => {
    // A runtime namespace nobody rolls out: the harness loop does not watch it.
    const stuckNs = `kruise-stuck-${id}`;
    const appStuck = `app-stuck-${id}`;
    writeFileSync(path.join(dir, 'stuck-app.mts'), APP(stuckNs, appStuck));
    // The configurations are cluster-wide: drop the ones the previous test's runtime left (pointed at this process).
    for (const [resource, name] of WEBHOOK_CONFIGS) await rawRequest('DELETE', `/apis/admissionregistration.k8s.io/v1/${resource}/${name}`);
    const out = path.join(dir, 'stuck');
    await synth(dir, path.join(dir, 'stuck-app.mts'), out, 'plain');
    const r = await runCli([
      'apply',
      out,
      '--kubectl',
      findAssets().kubectl,
      '--kubeconfig',
      kubeconfigPath(),
      '--timeout',
      '3',
      '--quiet',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /\[2\/3\] runtime: Deployment .*kruise-controller-manager not rolled out within 3s; later phases were not applied/,
    );
    expect((await rawRequest('GET', `/api/v1/namespaces/${appStuck}`)).status).toBe(404);
    await uninstall(out);
  });
});

// `cdk8s-kruise apply` when a phase does not finish, on the real kube-apiserver: no kube-controller-manager or kubelet
// runs in the e2e project, so the runtime's Deployment never rolls out; apply must stop there with exit 1, name the
// phase, and apply nothing after it. The flows that reach a ready app (the Flux layout in dependsOn order and
// `cdk8s-kruise apply` on the plain layout, with the runtime running from its image) are proven on the real node:
// test/node/gitops-apply.test.ts.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NAMES } from '../../src/contracts/index.js';
import { findAssets, kubeconfigPath, kubectl, rawRequest } from '../harness/index.js';
import { repoRoot, runCli } from '../unit/support/cli.js';

const id = randomBytes(3).toString('hex');
const runtimeNs = `kruise-stuck-${id}`;
const appNs = `app-stuck-${id}`;

// The bundled runtime in its own namespace, and an app chart with a Namespace and a CloneSet.
const APP = `
const { App, Chart, ApiObject } = await import(${JSON.stringify(path.join(repoRoot, 'node_modules/cdk8s/lib/index.js'))});
const { KruiseRuntime, CloneSet } = await import(${JSON.stringify(path.join(repoRoot, 'constructs/index.ts'))});
const app = new App();
new KruiseRuntime(app, 'kruise', { namespace: '${runtimeNs}', daemonConfigNamespace: '${runtimeNs}-daemon' });
const ns = new Chart(app, 'namespace');
new ApiObject(ns, 'ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: '${appNs}' } });
const web = new Chart(app, 'web', { namespace: '${appNs}' });
web.addDependency(ns);
const cs = new CloneSet(web, 'cache', { metadata: { name: 'cache' }, replicas: 1 });
cs.addContainer({ name: 'redis', image: 'redis:7.2', portNumber: 6379 });
app.synth();
`;

const dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-gitops-'));
const out = path.join(dir, 'plain');

afterAll(async () => {
  // The runtime's cluster-scoped objects (ClusterRoles, bindings, webhook configurations) would outlive this file.
  for (const f of ['20-app-web.yaml', '20-app-namespace.yaml', '10-runtime.yaml'])
    await kubectl(['delete', '-f', path.join(out, f), '--ignore-not-found', '--wait=false']).catch(() => undefined);
});

describe('cdk8s-kruise apply (plain layout), a phase that never finishes', () => {
  it('exits 1 naming the phase when a wait times out, after progress lines, and applies nothing after it', async () => {
    writeFileSync(path.join(dir, 'app.mts'), APP);
    const synth = await runCli([
      'synth',
      '--app',
      `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(path.join(dir, 'app.mts'))}`,
      '-o',
      out,
      '--config',
      path.join(dir, 'none.yaml'),
      '--quiet',
    ]);
    expect(synth.code, synth.stdout + synth.stderr).toBe(0);
    // The install's cluster-scoped objects have fixed names: remove any an earlier file left, so the apply below
    // meets an empty cluster as its phases expect (else server-side apply conflicts with their field manager).
    await kubectl(['delete', '-f', path.join(out, '10-runtime.yaml'), '--ignore-not-found', '--wait=false']).catch(() => undefined);
    const r = await runCli(['apply', out, '--kubectl', findAssets().kubectl, '--kubeconfig', kubeconfigPath(), '--timeout', '3']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\[1\/3\] CRDs: waiting for \d+ CRD\(s\) to be Established/);
    expect(r.stderr).toMatch(/\[1\/3\] CRDs: done in [\d.]+ s/);
    expect(r.stderr).toContain(`[2/3] runtime: waiting for Deployment ${runtimeNs}/${NAMES.managerDeployment} to roll out`);
    expect(r.stderr).toContain(
      `[2/3] runtime: Deployment ${runtimeNs}/${NAMES.managerDeployment} not rolled out within 3s; later phases were not applied`,
    );
    // No kube-controller-manager runs here, so the cause is that no pod was ever created.
    expect(r.stderr).toContain('cause: no pod was created for the Deployment');
    expect(r.stderr).not.toContain('[3/3]');
    // The runtime phase was applied; the app's was not.
    expect((await rawRequest('GET', `/apis/apps/v1/namespaces/${runtimeNs}/deployments/${NAMES.managerDeployment}`)).status).toBe(200);
    expect((await rawRequest('GET', `/api/v1/namespaces/${appNs}`)).status).toBe(404);
  });
});

// `cdk8s-kruise apply` when a phase does not finish, on the real kube-apiserver: no kube-controller-manager or kubelet
// runs in the e2e project, so the runtime's Deployment never rolls out; apply must stop there with exit 1, name the
// phase, and apply nothing after it. The flows that reach a ready app (the Flux layout in dependsOn order and
// `cdk8s-kruise apply` on the plain layout, with the runtime running from its image) are proven on the real node:
// test/node/gitops-apply.test.ts.
//
// GitOps safety, on a private kube-apiserver (CRDs are deleted here, which the shared one must never see): a sync
// emulation with each tool's prune semantics shows that removing KruiseRuntime from an Argo CD or Flux layout
// prunes the runtime but not the CRDs, so the app's CloneSet survives; and `cdk8s-kruise uninstall` refuses while
// a CloneSet exists, then removes the runtime and the CRDs once none is left.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { NAMES } from '../../src/contracts/index.js';
import { ControlPlane, findAssets, kubeconfigPath, kubectl, rawRequest } from '../harness/index.js';
import { repoRoot, runCli } from '../unit/support/cli.js';
import { conversionNone } from './runtime/support.js';

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
  // The runtime's cluster-scoped objects (ClusterRoles, bindings, webhook configurations) would outlive this file,
  // and so would the CRDs' conversion through this runtime's (never started) webhook Service.
  for (const f of ['20-app-web.yaml', '20-app-namespace.yaml', '10-runtime.yaml'])
    await kubectl(['delete', '-f', path.join(out, f), '--ignore-not-found', '--wait=false']).catch(() => undefined);
  await conversionNone();
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
    // Likewise another file's install left in the SidecarSet CRD's conversion (another runtime namespace).
    await conversionNone();
    // Each phase waits at most 15 s: enough for the CRDs to be Established on a loaded machine (3 s was not, at load
    // average 50), while the runtime's Deployment never rolls out here.
    const r = await runCli(['apply', out, '--kubectl', findAssets().kubectl, '--kubeconfig', kubeconfigPath(), '--timeout', '15']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\[1\/3\] CRDs: waiting for \d+ CRD\(s\) to be Established/);
    expect(r.stderr).toMatch(/\[1\/3\] CRDs: done in [\d.]+ s/);
    expect(r.stderr).toContain(`[2/3] runtime: waiting for Deployment ${runtimeNs}/${NAMES.managerDeployment} to roll out`);
    expect(r.stderr).toContain(
      `[2/3] runtime: Deployment ${runtimeNs}/${NAMES.managerDeployment} not rolled out within 15s; later phases were not applied`,
    );
    // No kube-controller-manager runs here, so the cause is that no pod was ever created.
    expect(r.stderr).toContain('cause: no pod was created for the Deployment');
    expect(r.stderr).not.toContain('[3/3]');
    // The runtime phase was applied; the app's was not.
    expect((await rawRequest('GET', `/apis/apps/v1/namespaces/${runtimeNs}/deployments/${NAMES.managerDeployment}`)).status).toBe(200);
    expect((await rawRequest('GET', `/api/v1/namespaces/${appNs}`)).status).toBe(404);
  });
});

type Obj = Record<string, any>;
type Target = 'argocd' | 'flux';

/** The app with or without KruiseRuntime (its CRDs and install come with it). */
const GITOPS_APP = (withRuntime: boolean, appNs: string, runtimeNs: string) => `
const { App, Chart, ApiObject } = await import(${JSON.stringify(path.join(repoRoot, 'node_modules/cdk8s/lib/index.js'))});
const { KruiseRuntime, CloneSet } = await import(${JSON.stringify(path.join(repoRoot, 'constructs/index.ts'))});
const app = new App();
${withRuntime ? `new KruiseRuntime(app, 'kruise', { namespace: '${runtimeNs}', daemonConfigNamespace: '${runtimeNs}-daemon' });` : ''}
const ns = new Chart(app, 'namespace');
new ApiObject(ns, 'ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: '${appNs}' } });
const web = new Chart(app, 'web', { namespace: '${appNs}' });
web.addDependency(ns);
const cs = new CloneSet(web, 'cache', { metadata: { name: 'cache' }, replicas: 1 });
cs.addContainer({ name: 'redis', image: 'redis:7.2', portNumber: 6379 });
app.synth();
`;

async function synthTo(work: string, name: string, app: string, gitops: Target | 'plain'): Promise<string> {
  writeFileSync(path.join(work, `${name}.mts`), app);
  const out = path.join(work, name);
  const r = await runCli([
    'synth',
    '--app',
    `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(path.join(work, `${name}.mts`))}`,
    '-o',
    out,
    '--gitops',
    gitops,
    '--repo-path',
    `./${name}`,
    '--config',
    path.join(work, 'none.yaml'),
    '--quiet',
  ]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return out;
}

/** kubectl against the private control plane. */
function kube(plane: ControlPlane, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      findAssets().kubectl,
      ['--kubeconfig', plane.kubeconfigPath, ...args],
      { maxBuffer: 64 * 1024 * 1024 },
      (e, out, err) => (e ? reject(new Error(`kubectl ${args.join(' ')}: ${err || e.message}`)) : resolve(out)),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

const keyOf = (o: Obj) => `${o.apiVersion}|${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

/**
 * The objects a sync applies, each with its step: Argo CD's sync wave annotation, or for Flux the position of its
 * directory in dependsOn order (crds, runtime, app). ops/ is listed by no kustomization and so never synced.
 */
function desired(out: string, target: Target): Array<{ obj: Obj; step: number }> {
  const read = (dir: string) =>
    ((parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as { resources: string[] }).resources ?? []).flatMap((f) =>
      parseAllDocuments(readFileSync(path.join(dir, f), 'utf8'))
        .map((d) => d.toJS() as Obj | null)
        .filter((o): o is Obj => o !== null),
    );
  if (target === 'argocd')
    return read(out).map((obj) => ({ obj, step: Number(obj.metadata.annotations?.['argocd.argoproj.io/sync-wave'] ?? 0) }));
  return ['crds', 'runtime', 'app'].flatMap((d, step) => {
    try {
      return read(path.join(out, d)).map((obj) => ({ obj, step }));
    } catch {
      return [];
    }
  });
}

/** The tool would not prune (or delete) this live object: Argo CD `Prune=false` sync option, Flux `prune: disabled`. */
function protectedFromPrune(live: Obj, target: Target): boolean {
  const a = (live.metadata?.annotations ?? {}) as Record<string, string>;
  if (target === 'argocd')
    return (a['argocd.argoproj.io/sync-options'] ?? '')
      .split(',')
      .map((o) => o.trim())
      .includes('Prune=false');
  return a['kustomize.toolkit.fluxcd.io/prune'] === 'disabled';
}

/**
 * One sync with pruning, step by step as the tools order it: each step's objects are applied (server-side, the
 * tool's field manager), then the objects of the previous sync's inventory at that step that are no longer in Git
 * are pruned unless protected (Argo CD prunes a resource in its own wave, before later waves; Flux garbage-collects a
 * removed Kustomization's inventory, and the app's Kustomization depends on the ones before it). No kubelet runs
 * here, so the runtime can never serve its webhooks: the first sync applies the webhook configurations after the
 * app (a real sync waits for the runtime to be healthy first, which test/node/gitops-apply.test.ts shows).
 */
async function sync(
  plane: ControlPlane,
  out: string,
  target: Target,
  inventory: Map<string, { obj: Obj; step: number }>,
  webhooksLast: boolean,
): Promise<{ pruned: string[]; kept: string[] }> {
  const want = desired(out, target);
  const wanted = new Set(want.map((w) => keyOf(w.obj)));
  const gone = [...inventory.values()].filter((i) => !wanted.has(keyOf(i.obj)));
  const isWebhook = (o: Obj) => /WebhookConfiguration$/.test(o.kind);
  const steps = [...new Set([...want, ...gone].map((w) => w.step))].sort((a, b) => a - b);
  const pruned: string[] = [];
  const kept: string[] = [];
  const applyAll = async (objs: Obj[]) => {
    if (objs.length === 0) return;
    const manager = target === 'argocd' ? 'argocd-controller' : 'kustomize-controller';
    await kube(
      plane,
      ['apply', '--server-side', `--field-manager=${manager}`, '-f', '-'],
      objs.map((o) => `---\n${JSON.stringify(o)}\n`).join(''),
    );
    const crds = objs.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => `crd/${o.metadata.name}`);
    if (crds.length) await kube(plane, ['wait', '--for', 'condition=established', '--timeout=60s', ...crds]);
  };
  for (const step of steps) {
    await applyAll(want.filter((w) => w.step === step && !(webhooksLast && isWebhook(w.obj))).map((w) => w.obj));
    for (const g of gone.filter((i) => i.step === step)) {
      const o = g.obj;
      const ref = [o.kind, o.metadata.name, ...(o.metadata.namespace ? ['-n', o.metadata.namespace] : [])];
      const resource =
        `${String(o.kind).toLowerCase()}.${String(o.apiVersion).includes('/') ? String(o.apiVersion).split('/')[0] : ''}`.replace(
          /\.$/,
          '',
        );
      const live = JSON.parse(
        (await kube(plane, [
          'get',
          resource,
          o.metadata.name,
          ...(o.metadata.namespace ? ['-n', o.metadata.namespace] : []),
          '--ignore-not-found',
          '-o',
          'json',
        ])) || 'null',
      ) as Obj | null;
      if (!live) continue;
      if (protectedFromPrune(live, target)) {
        kept.push(ref.slice(0, 2).join('/'));
        continue;
      }
      await kube(plane, [
        'delete',
        resource,
        o.metadata.name,
        ...(o.metadata.namespace ? ['-n', o.metadata.namespace] : []),
        '--wait=false',
      ]);
      pruned.push(ref.slice(0, 2).join('/'));
    }
  }
  if (webhooksLast) await applyAll(want.filter((w) => isWebhook(w.obj)).map((w) => w.obj));
  inventory.clear();
  for (const w of want) inventory.set(keyOf(w.obj), w);
  return { pruned, kept };
}

describe('GitOps safety on a private kube-apiserver', () => {
  let plane: ControlPlane;
  const work = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-gitops-safety-'));

  afterAll(async () => {
    await plane?.stop();
  });

  it.each(['argocd', 'flux'] as const)(
    '%s: removing KruiseRuntime and re-syncing prunes the runtime, not the CRDs; the CloneSet survives',
    async (target) => {
      plane ??= await ControlPlane.start();
      const sid = randomBytes(3).toString('hex');
      const appNs = `app-${target}-${sid}`;
      const rtNs = `kruise-${target}-${sid}`;
      const before = await synthTo(work, `${target}-with-runtime`, GITOPS_APP(true, appNs, rtNs), target);
      // Removing KruiseRuntime, and writing to another output path: the second sync sees neither CRDs nor runtime.
      const after = await synthTo(work, `${target}-without-runtime`, GITOPS_APP(false, appNs, rtNs), target);
      const inventory = new Map<string, { obj: Obj; step: number }>();
      const first = await sync(plane, before, target, inventory, true);
      expect(first).toEqual({ pruned: [], kept: [] });
      const crds = [...inventory.values()]
        .filter((i) => i.obj.kind === 'CustomResourceDefinition')
        .map((i) => i.obj.metadata.name as string);
      expect(crds).toContain('clonesets.apps.kruise.io');
      expect(
        JSON.parse(await kube(plane, ['get', 'clonesets.apps.kruise.io', 'cache', '-n', appNs, '-o', 'json'])).metadata.uid,
      ).toBeTruthy();

      const second = await sync(plane, after, target, inventory, false);
      // Every CRD is kept; the runtime (its Deployment and webhook configurations among it) is pruned.
      expect(second.kept.sort()).toEqual(crds.map((n) => `CustomResourceDefinition/${n}`).sort());
      expect(second.pruned).toEqual(expect.arrayContaining([`Deployment/${NAMES.managerDeployment}`, `Namespace/${rtNs}`]));
      expect(second.pruned.some((p) => p.startsWith('ValidatingWebhookConfiguration/'))).toBe(true);
      expect(second.pruned.some((p) => p.startsWith('CustomResourceDefinition/'))).toBe(false);
      const live = (await kube(plane, ['get', 'crd', '-o', 'name'])).split('\n').filter(Boolean);
      for (const n of crds) expect(live).toContain(`customresourcedefinition.apiextensions.k8s.io/${n}`);
      const cs = JSON.parse(await kube(plane, ['get', 'clonesets.apps.kruise.io', 'cache', '-n', appNs, '-o', 'json'])) as Obj;
      expect(cs.metadata.deletionTimestamp).toBeUndefined();
      // Tidy for the next target: the app, then the CRDs the prune kept. They name this runtime's namespace (the
      // SidecarSet CRD's conversion Service), so the next tool's apply, under its own field manager and another
      // namespace, would conflict with them: two tools never share one cluster's CRDs.
      await kube(plane, ['delete', 'clonesets.apps.kruise.io', 'cache', '-n', appNs, '--wait=true']);
      await kube(plane, ['delete', 'crd', ...crds, '--wait=true']);
    },
    300_000,
  );

  it('uninstall refuses while a CloneSet exists, then removes the runtime and the CRDs once none is left', async () => {
    plane ??= await ControlPlane.start();
    const sid = randomBytes(3).toString('hex');
    const appNs = `app-uninstall-${sid}`;
    const rtNs = `kruise-uninstall-${sid}`;
    const out = await synthTo(work, 'uninstall', GITOPS_APP(true, appNs, rtNs), 'plain');
    // Installed as `apply` does, but with the app before the webhook configurations: no runtime can serve here.
    const files = (parse(readFileSync(path.join(out, 'kustomization.yaml'), 'utf8')) as { resources: string[] }).resources;
    const docs = files.flatMap((f) => parseAllDocuments(readFileSync(path.join(out, f), 'utf8')).map((d) => d.toJS() as Obj));
    const nonHook = docs.filter((o) => !/WebhookConfiguration$/.test(o.kind));
    await kube(
      plane,
      ['apply', '--server-side', '-f', '-'],
      nonHook
        .filter((o) => o.kind === 'CustomResourceDefinition')
        .map((o) => `---\n${JSON.stringify(o)}\n`)
        .join(''),
    );
    await kube(plane, ['wait', '--for', 'condition=established', '--timeout=60s', '--all', 'crd']);
    await kube(
      plane,
      ['apply', '--server-side', '-f', '-'],
      nonHook
        .filter((o) => o.kind !== 'CustomResourceDefinition')
        .map((o) => `---\n${JSON.stringify(o)}\n`)
        .join(''),
    );
    await kube(
      plane,
      ['apply', '--server-side', '-f', '-'],
      docs
        .filter((o) => /WebhookConfiguration$/.test(o.kind))
        .map((o) => `---\n${JSON.stringify(o)}\n`)
        .join(''),
    );
    // The CLI's default time per deletion (180 s), as users run it: the API server deleted these twelve CRDs in a
    // few seconds when idle, and in more than 60 s on a CI machine loaded by three test tiers at once.
    const args = ['uninstall', out, '--kubectl', findAssets().kubectl, '--kubeconfig', plane.kubeconfigPath];

    const refused = await runCli(args);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain('refusing to uninstall: 1 Kruise object(s) exist');
    expect(refused.stderr).toContain(`CloneSet ${appNs}/cache`);
    // Nothing was removed.
    expect(await kube(plane, ['get', 'crd', 'clonesets.apps.kruise.io', '-o', 'name'])).toContain('clonesets.apps.kruise.io');
    expect(await kube(plane, ['get', 'deployment', NAMES.managerDeployment, '-n', rtNs, '-o', 'name'])).toContain(NAMES.managerDeployment);

    await kube(plane, ['delete', 'clonesets.apps.kruise.io', 'cache', '-n', appNs, '--wait=true']);
    const done = await runCli(args);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(/\[2\/3\] runtime: deleting \d+ file\(s\)/);
    expect(done.stderr).toMatch(/\[3\/3\] CRDs: deleting \d+ CRD\(s\)/);
    const crdsLeft = (await kube(plane, ['get', 'crd', '-o', 'name'])).split('\n').filter((n) => n.endsWith('.kruise.io'));
    expect(crdsLeft).toEqual([]);
    expect(await kube(plane, ['get', 'deployment', NAMES.managerDeployment, '-n', rtNs, '--ignore-not-found', '-o', 'name'])).toBe('');
    // The app (its Namespace) is not the install's: left alone.
    expect(await kube(plane, ['get', 'namespace', appNs, '-o', 'name'])).toContain(appNs);
  }, 600_000);
});

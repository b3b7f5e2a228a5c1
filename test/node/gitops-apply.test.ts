// The GitOps layouts on the real node, from an empty cluster to a ready app: the Flux layout applied directory by
// directory in its dependsOn order with the waits Flux's `wait`/healthChecks do, and `cdk8s-kruise apply` on the plain
// layout. Then what must not happen to a running app: removing KruiseRuntime from the Flux layout and re-syncing (with
// Flux's prune) removes the runtime but not the CRDs, so the CloneSet and its running pods survive; and
// `cdk8s-kruise uninstall` refuses while a CloneSet exists and uninstalls once it is deleted. The runtime comes from the app's own KruiseRuntime, runs from its image, and makes the app ready: its
// CloneSet controller creates the CloneSet's pods (nothing else would) and its sidecar terminator, through the daemon
// and CRI, stops the Job's sidecar so the Job completes. The app's CloneSet also passes the runtime's validating
// webhook (failurePolicy Fail), which an app applied before the runtime serves would not.
//
// "Empty cluster": the node is shared by the node files of a run, one file at a time, and another file may have
// installed dist/'s runtime already. The install's cluster-scoped names (ClusterRoles and bindings, webhook
// configurations) are fixed, so a second runtime beside it would take them over. This file therefore first removes
// any cdk8s-kruise install (CRDs, runtime) and checks nothing of it is left, installs from the layout, and removes all
// it installed afterwards (before each flow and in afterAll). The next file's installRuntime() reinstalls dist/; the
// runtime image stays on the node, so only the node's images and other files' namespaces survive from before.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_RUNTIME_NAMESPACE,
  MUTATING_WEBHOOK_CONFIGURATION,
  NAMES,
  VALIDATING_WEBHOOK_CONFIGURATION,
} from '../../src/contracts/index.js';
import { findAssets, kubeconfigPath, kubectl } from '../harness/index.js';
import { importRuntimeImage } from '../harness/runtime-install.js';
import { repoRoot, runCli } from '../unit/support/cli.js';
import { node, waitFor, waitForJobComplete } from './support.js';

type Obj = Record<string, any>;

const id = randomBytes(3).toString('hex');
const CRDS = path.join(repoRoot, 'dist/00-crds.yaml');
const RUNTIME = path.join(repoRoot, 'dist/10-runtime.yaml');
const mod = (p: string) => JSON.stringify(path.join(repoRoot, p));

// The app: the bundled runtime (daemon on the node's containerd socket, which is not under /run), a Namespace, and
// an app chart with a CloneSet and a Job whose sidecar the runtime stops. The node's offline busybox image runs as
// root, so the containers name a non-root user (the constructs' defaults require one).
const APP = (appNs: string, withRuntime = true) => `
const { App, Chart, ApiObject, Size } = await import(${mod('node_modules/cdk8s/lib/index.js')});
const kplus = await import(${mod('node_modules/cdk8s-plus-27/lib/index.js')});
const { KruiseRuntime, CloneSet, CriSocket, JobSidecarTermination } = await import(${mod('constructs/index.ts')});
const image = ${JSON.stringify(node().images.busybox)};
const loop = ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];
const resources = { cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(500) }, memory: { request: Size.mebibytes(16), limit: Size.mebibytes(64) } };
const container = (name, command) => ({ name, image, imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT, command, resources, securityContext: { user: 65534, group: 65534 } });
const app = new App();
${withRuntime ? `new KruiseRuntime(app, 'kruise', { daemon: { criSocket: CriSocket.fromPath(${JSON.stringify(node().containerdSocket)}) } });` : ''}
const ns = new Chart(app, 'namespace');
new ApiObject(ns, 'ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: '${appNs}' } });
const web = new Chart(app, 'web', { namespace: '${appNs}' });
web.addDependency(ns);
new CloneSet(web, 'cache', {
  metadata: { name: 'cache' },
  replicas: 2,
  securityContext: { user: 65534, group: 65534 },
  containers: [container('cache', loop)],
});
const job = new kplus.Job(web, 'seed', {
  metadata: { name: 'seed' },
  backoffLimit: 0,
  securityContext: { user: 65534, group: 65534 },
  containers: [container('main', ['sh', '-c', 'echo main; sleep 2'])],
});
JobSidecarTermination.of(job).addSidecar(container('shipper', loop));
app.synth();
`;

function docsOf(file: string): Obj[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

async function synth(dir: string, appNs: string, gitops: 'flux' | 'plain', withRuntime = true): Promise<string> {
  const name = withRuntime ? gitops : `${gitops}-without-runtime`;
  const appFile = path.join(dir, `${name}-app.mts`);
  writeFileSync(appFile, APP(appNs, withRuntime));
  const out = path.join(dir, name);
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
    '--quiet',
  ]);
  if (r.code !== 0) throw new Error(`synth failed (${r.code}): ${r.stdout}${r.stderr}`);
  return out;
}

/** Deletes what the files list, waiting until it is gone (namespaces included). */
async function deleteFiles(files: string[]): Promise<void> {
  if (files.length > 0) await kubectl(['delete', '--ignore-not-found', '--wait', '--timeout=180s', ...files.flatMap((f) => ['-f', f])]);
}

/**
 * Removes every cdk8s-kruise install: custom resources first (through CRD deletion, while a runtime still runs to
 * release finalizers), then the runtime, then checks that no CRD, runtime namespace, webhook configuration or
 * ClusterRole of ours is left.
 */
async function emptyCluster(installed: { crds: string[]; runtime: string[] }): Promise<void> {
  await deleteFiles([CRDS, ...installed.crds]);
  await deleteFiles([RUNTIME, ...installed.runtime]);
  const left = await kubectl([
    'get',
    'crd,namespace,mutatingwebhookconfiguration,validatingwebhookconfiguration,clusterrole,clusterrolebinding',
    '-o',
    'name',
  ]);
  const ours = left
    .split('\n')
    .filter((n) =>
      [
        /\.kruise\.io$/,
        new RegExp(`^namespace/${DEFAULT_RUNTIME_NAMESPACE}$`),
        new RegExp(`/(${MUTATING_WEBHOOK_CONFIGURATION}|${VALIDATING_WEBHOOK_CONFIGURATION})$`),
        new RegExp(`^clusterrole(binding)?\\.rbac\\.authorization\\.k8s\\.io/(${NAMES.managerClusterRole}|${NAMES.daemonClusterRole})$`),
      ].some((re) => re.test(n)),
    );
  expect(ours, 'the cluster holds no cdk8s-kruise install').toEqual([]);
}

/** The app is ready: the CloneSet's pods (made by the runtime's controller) run and are Ready; the Job completed. */
async function appReady(appNs: string): Promise<void> {
  await waitFor(
    `CloneSet ${appNs}/cache ready`,
    async () => {
      const cs = JSON.parse(await kubectl(['get', 'clonesets.apps.kruise.io', 'cache', '-n', appNs, '-o', 'json'])) as Obj;
      return cs.status?.observedGeneration === cs.metadata.generation && cs.status?.readyReplicas === 2;
    },
    180_000,
    500,
  );
  const pods = JSON.parse(await kubectl(['get', 'pods', '-n', appNs, '-o', 'json'])) as Obj;
  const owned = (pods.items as Obj[]).filter((p) => p.metadata.ownerReferences?.some((o: Obj) => o.kind === 'CloneSet'));
  expect(owned.filter((p) => p.status.phase === 'Running')).toHaveLength(2);
  const job = await waitForJobComplete(appNs, 'seed', 180_000);
  expect(job.status?.succeeded).toBe(1);
  await cloneSetAdmittedByRuntime();
}

/**
 * The app's CloneSet went through the runtime's validating webhook: its configuration covers CloneSets with
 * failurePolicy Fail (so the create would have been refused without a serving runtime) and carries the caBundle the
 * runtime wrote (the manifests have none).
 */
async function cloneSetAdmittedByRuntime(): Promise<void> {
  const config = JSON.parse(
    await kubectl(['get', 'validatingwebhookconfiguration', VALIDATING_WEBHOOK_CONFIGURATION, '-o', 'json']),
  ) as Obj;
  const hook = (config.webhooks as Obj[]).find((w) => (w.rules as Obj[]).some((r) => (r.resources as string[]).includes('clonesets')));
  expect(hook?.failurePolicy).toBe('Fail');
  expect(hook?.clientConfig.service).toMatchObject({ namespace: DEFAULT_RUNTIME_NAMESPACE, name: NAMES.webhookService });
  expect(hook?.clientConfig.caBundle).toBeTruthy();
}

const keyOf = (o: Obj) => `${o.apiVersion}|${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

/** Per Kustomization directory of a Flux layout (crds, runtime, app), the objects it applies. */
function fluxInventory(out: string): Record<string, Obj[]> {
  const inventory: Record<string, Obj[]> = {};
  for (const d of ['crds', 'runtime', 'app']) {
    const file = path.join(out, d, 'kustomization.yaml');
    if (!existsSync(file)) continue;
    inventory[d] = (docsOf(file)[0]!.resources as string[]).flatMap((f) => docsOf(path.join(out, d, f)));
  }
  return inventory;
}

/** The CloneSet's pods, by name: uid, phase and restarts, to tell the same running pods from replacements. */
async function cloneSetPods(appNs: string): Promise<Array<{ name: string; uid: string; phase: string; restarts: number }>> {
  const pods = JSON.parse(await kubectl(['get', 'pods', '-n', appNs, '-o', 'json'])) as Obj;
  return (pods.items as Obj[])
    .filter((p) => p.metadata.ownerReferences?.some((o: Obj) => o.kind === 'CloneSet'))
    .map((p) => ({
      name: p.metadata.name as string,
      uid: p.metadata.uid as string,
      phase: p.status.phase as string,
      restarts: ((p.status.containerStatuses ?? []) as Obj[]).reduce((n, c) => n + (c.restartCount as number), 0),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Flux's order: each Kustomization after the ones it dependsOn. */
function dependsOnOrder(kustomizations: Obj[]): Obj[] {
  const order: Obj[] = [];
  const pending = [...kustomizations];
  while (pending.length > 0) {
    const next = pending.findIndex((k) =>
      (k.spec.dependsOn ?? []).every((d: { name: string }) => order.some((o) => o.metadata.name === d.name)),
    );
    if (next < 0) throw new Error(`dependsOn has a cycle or names a missing Kustomization: ${JSON.stringify(pending)}`);
    order.push(...pending.splice(next, 1));
  }
  return order;
}

let dir: string;
const installed = { crds: [] as string[], runtime: [] as string[], app: [] as string[] };
/** The layouts the flows below synthesized and applied, for the stories that follow each. */
const flows: { flux?: { out: string; appNs: string }; plain?: { out: string; appNs: string } } = {};

async function uninstall(): Promise<void> {
  // The app first, while the runtime still runs (its controllers own the CloneSet's pods).
  await deleteFiles(installed.app);
  await emptyCluster(installed);
  installed.crds = [];
  installed.runtime = [];
  installed.app = [];
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-gitops-node-'));
  await importRuntimeImage(node());
  await uninstall();
}, 900_000);

afterAll(async () => {
  await uninstall();
}, 600_000);

describe('from an empty cluster to a ready app', () => {
  it('Flux layout: crds → runtime → app in dependsOn order, each once the previous is healthy', async () => {
    const appNs = `app-flux-${id}`;
    const out = await synth(dir, appNs, 'flux');
    const order = dependsOnOrder(docsOf(path.join(out, 'flux/kustomizations.yaml')));
    expect(order.map((k) => path.basename(k.spec.path))).toEqual(['crds', 'runtime', 'app']);
    const waited: string[] = [];
    const took: string[] = [];
    for (const k of order) {
      const t0 = Date.now();
      const sub = path.join(out, path.basename(k.spec.path));
      const files = (docsOf(path.join(sub, 'kustomization.yaml'))[0]!.resources as string[]).map((f) => path.join(sub, f));
      installed[path.basename(sub) as keyof typeof installed].push(...files);
      await kubectl(['apply', '--server-side', '--field-manager=kustomize-controller', '-k', sub]);
      // wait: true → Flux waits for every applied object to be ready; for CRDs that is Established.
      if (k.spec.wait) {
        const objects = files.flatMap(docsOf);
        expect(objects.every((o) => o.kind === 'CustomResourceDefinition')).toBe(true);
        await kubectl(['wait', '--for', 'condition=established', '--timeout=60s', ...objects.map((o) => `crd/${o.metadata.name}`)]);
        waited.push(`${objects.length} CRDs Established`);
      }
      // healthChecks → the runtime's workloads rolled out (Ready pods: the manager's readiness includes its webhook).
      for (const c of k.spec.healthChecks ?? []) {
        await kubectl(['rollout', 'status', `${String(c.kind).toLowerCase()}/${c.name}`, '-n', c.namespace, '--timeout=300s']);
        waited.push(`${c.kind} ${c.namespace}/${c.name}`);
      }
      took.push(`${path.basename(sub)} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    expect(waited).toEqual([
      expect.stringMatching(/^\d+ CRDs Established$/),
      `Deployment ${DEFAULT_RUNTIME_NAMESPACE}/${NAMES.managerDeployment}`,
      `DaemonSet ${DEFAULT_RUNTIME_NAMESPACE}/${NAMES.daemonSet}`,
    ]);
    const t0 = Date.now();
    await appReady(appNs);
    console.log(`[gitops] flux phases: ${took.join(', ')}; app ready ${((Date.now() - t0) / 1000).toFixed(1)} s later`);
    flows.flux = { out, appNs };
  }, 900_000);

  it('Flux layout without KruiseRuntime, re-synced with prune: the runtime goes; the CRDs, the CloneSet and its pods stay', async () => {
    const { out: before, appNs } = flows.flux!;
    const podsBefore = await cloneSetPods(appNs);
    expect(podsBefore).toHaveLength(2);
    const csUid = (JSON.parse(await kubectl(['get', 'clonesets.apps.kruise.io', 'cache', '-n', appNs, '-o', 'json'])) as Obj).metadata.uid;
    const after = await synth(dir, appNs, 'flux', false);
    const now = fluxInventory(after);
    expect(Object.keys(now)).toEqual(['app']);
    const t0 = Date.now();
    // The app's Kustomization applies its (unchanged) objects. Flux garbage-collects the inventory of each
    // Kustomization that left Git (crds, runtime) and what left a remaining one's, except objects annotated
    // `kustomize.toolkit.fluxcd.io/prune: disabled`, judged on the live object.
    await kubectl(['apply', '--server-side', '--field-manager=kustomize-controller', '-k', path.join(after, 'app')]);
    const wanted = new Set(Object.values(now).flat().map(keyOf));
    const gone = Object.values(fluxInventory(before))
      .flat()
      .filter((o) => !wanted.has(keyOf(o)));
    const kept: string[] = [];
    const pruned: Obj[] = [];
    const live = JSON.parse(
      await kubectl(['get', '-f', '-', '-o', 'json'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: gone }) }),
    ) as Obj;
    const liveByKey = new Map((live.items as Obj[]).map((o) => [keyOf(o), o]));
    for (const o of gone) {
      const l = liveByKey.get(keyOf(o));
      expect(l, `${keyOf(o)} is live`).toBeDefined();
      if (l!.metadata.annotations?.['kustomize.toolkit.fluxcd.io/prune'] === 'disabled') kept.push(`${o.kind}/${o.metadata.name}`);
      else pruned.push(o);
    }
    await kubectl(['delete', '--ignore-not-found', '--wait=true', '--timeout=180s', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: pruned }),
    });
    const seconds = (Date.now() - t0) / 1000;

    const crds = fluxInventory(before).crds!.map((o) => `CustomResourceDefinition/${o.metadata.name}`);
    expect(crds).toContain('CustomResourceDefinition/clonesets.apps.kruise.io');
    expect(kept.sort()).toEqual([...crds].sort());
    expect(pruned.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(
      expect.arrayContaining([
        `Namespace/${DEFAULT_RUNTIME_NAMESPACE}`,
        `Deployment/${NAMES.managerDeployment}`,
        `DaemonSet/${NAMES.daemonSet}`,
        `MutatingWebhookConfiguration/${MUTATING_WEBHOOK_CONFIGURATION}`,
        `ValidatingWebhookConfiguration/${VALIDATING_WEBHOOK_CONFIGURATION}`,
      ]),
    );
    // The runtime is gone from the cluster ...
    expect(await kubectl(['get', 'namespace', DEFAULT_RUNTIME_NAMESPACE, '--ignore-not-found', '-o', 'name'])).toBe('');
    expect(await kubectl(['get', 'mutatingwebhookconfiguration', MUTATING_WEBHOOK_CONFIGURATION, '--ignore-not-found', '-o', 'name'])).toBe(
      '',
    );
    // ... the CRDs, the same CloneSet and the same pods, still running and never restarted, are not.
    const liveCrds = await kubectl(['get', 'crd', '-o', 'name']);
    for (const c of crds) expect(liveCrds).toContain(`customresourcedefinition.apiextensions.k8s.io/${c.split('/')[1]}`);
    const cs = JSON.parse(await kubectl(['get', 'clonesets.apps.kruise.io', 'cache', '-n', appNs, '-o', 'json'])) as Obj;
    expect(cs.metadata.uid).toBe(csUid);
    expect(cs.metadata.deletionTimestamp).toBeUndefined();
    expect(await cloneSetPods(appNs)).toEqual(podsBefore);
    console.log(
      `[gitops] flux re-sync without KruiseRuntime: ${pruned.length} objects pruned, ${kept.length} CRDs kept, in ${seconds.toFixed(1)} s; ` +
        `CloneSet and its ${podsBefore.length} pods unchanged`,
    );
    // The runtime is no longer the Flux layout's: the next flow's cleanup must not look for it there.
    installed.runtime = [];
  }, 600_000);

  it('cdk8s-kruise apply on the plain layout: three phases with progress, exit 0, a ready app', async () => {
    await uninstall();
    const appNs = `app-apply-${id}`;
    const out = await synth(dir, appNs, 'plain');
    const listed = docsOf(path.join(out, 'kustomization.yaml'))[0]!.resources as string[];
    installed.crds.push(...listed.filter((f) => f.startsWith('00-')).map((f) => path.join(out, f)));
    installed.runtime.push(...listed.filter((f) => f.startsWith('10-')).map((f) => path.join(out, f)));
    installed.app.push(...listed.filter((f) => f.startsWith('20-')).map((f) => path.join(out, f)));
    const r = await runCli(['apply', out, '--kubectl', findAssets().kubectl, '--kubeconfig', kubeconfigPath(), '--timeout', '300']);
    expect(r.code, r.stderr).toBe(0);
    const ns = DEFAULT_RUNTIME_NAMESPACE;
    expect(r.stderr).toMatch(/\[1\/3\] CRDs: waiting for \d+ CRD\(s\) to be Established/);
    expect(r.stderr).toContain(`[2/3] runtime: waiting for Deployment ${ns}/${NAMES.managerDeployment} to roll out`);
    expect(r.stderr).toContain(`[2/3] runtime: waiting for DaemonSet ${ns}/${NAMES.daemonSet} to roll out`);
    expect(r.stderr).toMatch(/\[3\/3\] app: done in [\d.]+ s/);
    const t0 = Date.now();
    await appReady(appNs);
    console.log(
      `[gitops] apply: ${r.stderr.match(/\S+: done in [\d.]+ s/g)!.join(', ')}; app ready ${((Date.now() - t0) / 1000).toFixed(1)} s later`,
    );
    flows.plain = { out, appNs };
  }, 900_000);

  it('uninstall refuses while the CloneSet exists and leaves everything running; once the listed objects are deleted, it uninstalls', async () => {
    const { out, appNs } = flows.plain!;
    const args = ['uninstall', out, '--kubectl', findAssets().kubectl, '--kubeconfig', kubeconfigPath(), '--timeout', '180'];
    const podsBefore = await cloneSetPods(appNs);
    const t0 = Date.now();
    const refused = await runCli(args);
    const refusedSeconds = (Date.now() - t0) / 1000;
    expect(refused.code, refused.stderr).toBe(1);
    // The CloneSet, and the ContainerRecreateRequest through which the runtime stopped the Job's sidecar.
    expect(refused.stderr).toContain('refusing to uninstall: 2 Kruise object(s) exist');
    const listed = [...refused.stderr.matchAll(/^ {2}(\w+) ([\w-]+)\/([\w.-]+)$/gm)].map(([, kind, ns, name]) => ({ kind, ns, name }));
    expect(listed.map((o) => `${o.kind} ${o.ns}/${o.name}`).sort()).toEqual([
      `CloneSet ${appNs}/cache`,
      expect.stringMatching(new RegExp(`^ContainerRecreateRequest ${appNs}/sidecar-termination-`)),
    ]);
    // Nothing was removed: the runtime still serves, the CRDs stay, the CloneSet's pods run on.
    await kubectl(['rollout', 'status', `deployment/${NAMES.managerDeployment}`, '-n', DEFAULT_RUNTIME_NAMESPACE, '--timeout=10s']);
    expect(await kubectl(['get', 'crd', 'clonesets.apps.kruise.io', '-o', 'name'])).toContain('clonesets.apps.kruise.io');
    expect(await cloneSetPods(appNs)).toEqual(podsBefore);

    // The app's owner deletes what the refusal lists (the CloneSet's pods go with it), then uninstall goes through.
    for (const o of listed) {
      const resource = o.kind === 'CloneSet' ? 'clonesets.apps.kruise.io' : 'containerrecreaterequests.apps.kruise.io';
      await kubectl(['delete', resource, o.name!, '-n', o.ns!, '--wait=true', '--timeout=120s']);
    }
    await waitFor('the CloneSet pods deleted', async () => (await cloneSetPods(appNs)).length === 0, 120_000, 500);
    const t1 = Date.now();
    const done = await runCli(args);
    const doneSeconds = (Date.now() - t1) / 1000;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(/\[2\/3\] runtime: deleting \d+ file\(s\)/);
    const crdCount = Number(/\[3\/3\] CRDs: deleting (\d+) CRD\(s\)/.exec(done.stderr)?.[1]);
    expect(crdCount).toBeGreaterThan(0);
    const crdsLeft = (await kubectl(['get', 'crd', '-o', 'name'])).split('\n').filter((n) => n.endsWith('.kruise.io'));
    expect(crdsLeft).toEqual([]);
    expect(
      await kubectl(['get', 'deployment', NAMES.managerDeployment, '-n', DEFAULT_RUNTIME_NAMESPACE, '--ignore-not-found', '-o', 'name']),
    ).toBe('');
    // The app's namespace (and its Job) is not the install's: left alone.
    expect(await kubectl(['get', 'job', 'seed', '-n', appNs, '-o', 'name'])).toContain('seed');
    console.log(
      `[gitops] uninstall: refused in ${refusedSeconds.toFixed(1)} s with the CloneSet present; ` +
        `after its deletion removed the runtime and ${crdCount} CRDs in ${doneSeconds.toFixed(1)} s`,
    );
    // What is left of the app is its namespace: deleted here, since its files name kinds whose CRDs are gone.
    await kubectl(['delete', 'namespace', appNs, '--wait=true', '--timeout=180s']);
    installed.crds = [];
    installed.runtime = [];
    installed.app = [];
  }, 600_000);
});

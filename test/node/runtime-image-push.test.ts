// Getting the runtime onto a real node the way a platform engineer does, in order: the app points KruiseRuntime at
// the team's registry (the node's loopback registry) before the image is there, and `cdk8s-kruise apply` stops in
// its runtime phase naming the image pull failure (the reason, the manager's pod and the image), while pods of the
// app's namespace that need no runtime feature are still created (only a pod the SidecarSet selects is refused).
// Then the image is pushed with `cdk8s-kruise image build --push` run from the packed npm package (no checkout, no
// container engine), the app is pinned to the pushed digest, and a second apply rolls the runtime out and applies
// the app: a new pod the SidecarSet selects gets its sidecar.
//
// The node is shared by the node files of a run, one file at a time. The install's cluster-scoped names are fixed,
// so this file first removes a runtime another file installed (dist/'s), and afterwards removes the one it
// installed: a later file's installRuntime() installs dist/'s runtime afresh.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { DEFAULT_RUNTIME_NAMESPACE, NAMES } from '../../src/contracts/index.js';
import { findAssets, kubeconfigPath, kubectl } from '../harness/index.js';
import { packAndInstall, userRun, type PackedPackage } from '../harness/packed-package.js';
import { repoRoot, runCli } from '../unit/support/cli.js';
import { core, namespace, node, waitFor, waitForPod } from './support.js';

const id = randomBytes(3).toString('hex');
const SET = `logtail-${id}`;
const LOOP = ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];
const mod = (p: string) => JSON.stringify(path.join(repoRoot, p));

/**
 * The app: KruiseRuntime from the team's registry (pinned to `digest` once there is one) and, in the team's
 * namespace (which exists before the app), a SidecarSet that injects a logtail sidecar into `app=web` pods. No
 * feature needs the daemon, so the runtime is the controller-manager alone.
 */
const APP = (registry: string, appNs: string, digest?: string) => `
const { App, Chart, Size } = await import(${mod('node_modules/cdk8s/lib/index.js')});
const kplus = await import(${mod('node_modules/cdk8s-plus-27/lib/index.js')});
const { KruiseRuntime, RuntimeImage, SidecarSet } = await import(${mod('constructs/index.ts')});
const app = new App();
new KruiseRuntime(app, 'kruise', { image: RuntimeImage.bundled(${JSON.stringify({ registry, ...(digest ? { digest } : {}) })}) });
const web = new Chart(app, 'web', { namespace: '${appNs}' });
new SidecarSet(web, 'logtail', {
  metadata: { name: '${SET}' },
  selector: kplus.LabelSelector.of({ labels: { app: 'web' } }),
  containers: [{
    name: 'logtail',
    image: ${JSON.stringify(node().images.busybox)},
    imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
    command: ${JSON.stringify(LOOP)},
    resources: { cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(200) }, memory: { request: Size.mebibytes(16), limit: Size.mebibytes(32) } },
    securityContext: { user: 65534, group: 65534 },
  }],
});
app.synth();
`;

let dir: string;
let out: string;
let appNs: string;
let pkg: PackedPackage;

async function synth(registry: string, digest?: string): Promise<void> {
  const appFile = path.join(dir, 'app.mts');
  writeFileSync(appFile, APP(registry, appNs, digest));
  const r = await runCli([
    'synth',
    '--app',
    `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(appFile)}`,
    '-o',
    out,
    '--config',
    path.join(dir, 'none.yaml'),
    '--quiet',
  ]);
  if (r.code !== 0) throw new Error(`synth failed (${r.code}): ${r.stdout}${r.stderr}`);
}

const applyOut = (timeout: number) =>
  runCli(['apply', out, '--kubectl', findAssets().kubectl, '--kubeconfig', kubeconfigPath(), '--timeout', String(timeout)]);

/** Removes a runtime installed from dist/ or from this file's output (ClusterRoles, webhooks, its namespace). */
async function removeRuntimes(): Promise<void> {
  for (const f of [path.join(repoRoot, 'dist/10-runtime.yaml'), path.join(out, '10-runtime.yaml')])
    await kubectl(['delete', '--ignore-not-found', '--wait=true', '--timeout=180s', '-f', f]).catch((e: Error) => {
      if (!/no such file|does not exist/i.test(e.message)) throw e;
    });
}

const pod = (name: string, labels: Record<string, string>) => ({
  metadata: { name, labels },
  spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'app', image: node().images.busybox, command: LOOP }] },
});

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-image-push-node-'));
  out = path.join(dir, 'dist');
  pkg = await packAndInstall(path.join(dir, 'package'));
  console.log(`[image-push] npm pack ${pkg.packSeconds.toFixed(1)} s, npm install of the tarball ${pkg.installSeconds.toFixed(1)} s`);
  await removeRuntimes();
  appNs = await namespace('team');
}, 900_000);

afterAll(async () => {
  await kubectl(['delete', 'sidecarsets.apps.kruise.io', SET, '--ignore-not-found']).catch(() => undefined);
  if (appNs) await kubectl(['delete', 'namespace', appNs, '--ignore-not-found', '--wait=false']).catch(() => undefined);
  if (out) await removeRuntimes();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 600_000);

describe('the runtime image, from a missing one to a pushed one', () => {
  it('apply names the pull failure while plain pods still create; the pushed image rolls out and injects', async () => {
    const registry = `${node().registry}/platform-${id}`;
    const reference = `${registry}/cdk8s-kruise:0.1.0`;
    const manager = `Deployment ${DEFAULT_RUNTIME_NAMESPACE}/${NAMES.managerDeployment}`;

    // 1. The registry does not hold the image yet: apply stops in the runtime phase and says why.
    await synth(registry);
    const stalled = await applyOut(30);
    expect(stalled.code, stalled.stderr).toBe(1);
    expect(stalled.stderr).toContain(`[2/3] runtime: ${manager} not rolled out within 30s; later phases were not applied`);
    expect(stalled.stderr).toMatch(
      new RegExp(
        `^cause: the image ${reference.replace(/[.:/]/g, '\\$&')} of container manager cannot be pulled \\((ErrImagePull|ImagePullBackOff)\\)`,
        'm',
      ),
    );
    // One line per pod and per event (each pod of the Deployment waits on the pull).
    const podLines = stalled.stderr.match(
      new RegExp(
        `^ {2}pod ${NAMES.managerDeployment}-[a-z0-9]+-[a-z0-9]+: Pending; container manager: (ErrImagePull|ImagePullBackOff)`,
        'gm',
      ),
    );
    expect(podLines?.length).toBeGreaterThan(0);
    expect(stalled.stderr).toMatch(/^ {2}event Pod\/\S+ Failed: /m);
    expect(stalled.stderr).not.toContain('[3/3]');
    console.log(
      `[image-push] stalled apply said:\n${stalled.stderr.slice(stalled.stderr.indexOf('cause:')).split('\n').slice(0, 3).join('\n')}`,
    );

    // 2. Meanwhile, in the app's namespace: a pod that needs no runtime feature is created and runs; one the
    // SidecarSet selects is refused (created without its sidecar would be worse).
    await core().createNamespacedPod({ namespace: appNs, body: pod('plain', { app: 'other' }) });
    await waitForPod(appNs, 'plain', 'Running', (p) => p.status?.phase === 'Running', 90_000);
    await expect(core().createNamespacedPod({ namespace: appNs, body: pod('web-early', { app: 'web' }) })).rejects.toThrow(/mpod\.kb\.io/);

    // 3. Push the image with the command from the package, pin the app to its digest, apply again.
    const pushed = await userRun(pkg.project, 'npx', ['--no-install', 'cdk8s-kruise', 'image', 'build', '--push', reference, '--json']);
    const result = JSON.parse(pushed.stdout) as {
      digest: string;
      compressedBytes: number;
      uncompressedBytes: number;
      buildSeconds: number;
      seconds: number;
      pushed: { reference: string };
    };
    expect(result.digest).toMatch(/^sha256:[a-f0-9]{64}$/);
    expect(result.pushed.reference).toBe(`${reference}@${result.digest}`);
    console.log(
      `[image-push] image build --push from the package: ${(result.compressedBytes / 1e6).toFixed(1)} MB compressed, ` +
        `${(result.uncompressedBytes / 1e6).toFixed(1)} MB uncompressed, built in ${result.buildSeconds.toFixed(1)} s, ` +
        `${result.seconds.toFixed(1)} s with the push`,
    );
    await synth(registry, result.digest);
    const t0 = Date.now();
    const applied = await applyOut(300);
    const seconds = (Date.now() - t0) / 1000;
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toContain(`[2/3] runtime: waiting for ${manager} to roll out`);
    expect(applied.stderr).toMatch(/\[3\/3\] app: done in [\d.]+ s/);
    const deployment = JSON.parse(
      await kubectl(['get', 'deployment', NAMES.managerDeployment, '-n', DEFAULT_RUNTIME_NAMESPACE, '-o', 'json']),
    ) as { spec: { template: { spec: { containers: Array<{ image: string }> } } }; status: { readyReplicas?: number } };
    expect(deployment.spec.template.spec.containers[0]!.image).toBe(result.pushed.reference);
    expect(deployment.status.readyReplicas).toBeGreaterThan(0);
    console.log(
      `[image-push] apply after the push: ${applied.stderr.match(/\S+: done in [\d.]+ s/g)!.join(', ')}; ${seconds.toFixed(1)} s in all`,
    );

    // 4. A new pod the SidecarSet selects gets the sidecar and runs. The webhook's SidecarSet cache may lag the
    // apply by a moment: a pod created before it is replaced (counted).
    let created = 0;
    let injected: V1Pod | undefined;
    await waitFor(
      'a new app=web pod with the logtail sidecar',
      async () => {
        const name = `web-${++created}`;
        const p = await core().createNamespacedPod({ namespace: appNs, body: pod(name, { app: 'web' }) });
        if (p.spec!.containers.some((c) => c.name === 'logtail')) {
          injected = p;
          return true;
        }
        await core().deleteNamespacedPod({ name, namespace: appNs, gracePeriodSeconds: 0 });
        return false;
      },
      60_000,
      1_000,
    );
    expect(injected!.spec!.containers.map((c) => c.name)).toEqual(['logtail', 'app']);
    expect(injected!.metadata!.annotations!['kruise.io/sidecarset-injected-list']).toBe(SET);
    await waitForPod(
      appNs,
      injected!.metadata!.name!,
      'both containers running',
      (p) => (p.status?.containerStatuses ?? []).filter((c) => c.state?.running).length === 2,
      90_000,
    );
    console.log(`[image-push] injected on pod ${created} of ${created}`);
  }, 900_000);
});

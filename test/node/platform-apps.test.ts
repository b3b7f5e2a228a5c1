// One platform install, two team apps, on a real node: the platform's app (the only KruiseRuntime with target
// BUNDLED, told the teams' union of needs: SidecarSet injection) is synthesized and applied with `cdk8s-kruise apply`,
// which installs the runtime from its image. Two team apps target PLATFORM: team A reads the platform's committed
// output (InstalledRuntime.fromFile), team B the cluster (`synth --capabilities-from-cluster`). Neither emits an
// install object; both apply in one phase and work: the runtime's CloneSet controller makes team A's pods, and its
// pod webhook injects team B's SidecarSet into team B's Deployment pods. A third app using a feature the platform
// lacks (job sidecar termination: a gate and the daemon) fails its synth and writes nothing.
//
// The node is shared by the node files of a run, one file at a time, and the install's cluster-scoped names are
// fixed: this file first removes a runtime another file installed (dist/'s), and afterwards the platform's, so a later
// file's installRuntime() installs dist/'s afresh.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { DEFAULT_RUNTIME_NAMESPACE, NAMES } from '../../src/contracts/index.js';
import { findAssets, kubeconfigPath, kubectl } from '../harness/index.js';
import { importRuntimeImage } from '../harness/runtime-install.js';
import { repoRoot, runCli, spawnCli } from '../unit/support/cli.js';
import { core, node, waitFor } from './support.js';

type Obj = Record<string, any>;

const id = randomBytes(3).toString('hex');
const TEAM_A = `team-a-${id}`;
const TEAM_B = `team-b-${id}`;
const TEAM_C = `team-c-${id}`;
const SET = `logtail-${id}`;
const mod = (p: string) => JSON.stringify(path.join(repoRoot, p));

const header = `
const { App, Chart, ApiObject, Size } = await import(${mod('node_modules/cdk8s/lib/index.js')});
const kplus = await import(${mod('node_modules/cdk8s-plus-27/lib/index.js')});
const { AppFeature, CloneSet, InstalledRuntime, JobSidecarTermination, KruiseRuntime, RuntimeTarget, SidecarSet } = await import(${mod('constructs/index.ts')});
const image = ${JSON.stringify(node().images.busybox)};
const loop = ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];
const resources = { cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(200) }, memory: { request: Size.mebibytes(16), limit: Size.mebibytes(32) } };
// The node's offline busybox runs as root; the constructs' defaults require a non-root user.
const container = (name, command = loop) => ({ name, image, imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT, command, resources, securityContext: { user: 65534, group: 65534 } });
const app = new App();
/** The team's namespace (created by its app) and a chart in it. */
const teamChart = (ns) => {
  const nsChart = new Chart(app, 'namespace');
  new ApiObject(nsChart, 'ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const chart = new Chart(app, 'team', { namespace: ns });
  chart.addDependency(nsChart);
  return chart;
};
`;

/** The platform: the runtime alone, for the union of the teams' needs (SidecarSet injection; CloneSets are served anyway). */
const PLATFORM = `${header}
new KruiseRuntime(app, 'kruise', { features: [AppFeature.SIDECARSET] });
app.synth();
`;

const platformTarget = (installed: string) =>
  `new KruiseRuntime(app, 'kruise', { target: RuntimeTarget.PLATFORM${installed ? `, installedRuntime: ${installed}` : ''} });`;

/** Team A: a CloneSet of two pods, checked against the platform's committed output. */
const TEAM_A_APP = (platformOut: string) => `${header}
${platformTarget(`InstalledRuntime.fromFile(${JSON.stringify(platformOut)})`)}
const chart = teamChart('${TEAM_A}');
new CloneSet(chart, 'cache', { metadata: { name: 'cache' }, replicas: 2, securityContext: { user: 65534, group: 65534 }, containers: [container('cache')] });
app.synth();
`;

/** Team B: a SidecarSet and a Deployment whose pods it selects, checked against the cluster. */
const TEAM_B_APP = `${header}
${platformTarget('')}
const chart = teamChart('${TEAM_B}');
new SidecarSet(chart, 'logtail', {
  metadata: { name: '${SET}' },
  selector: kplus.LabelSelector.of({ labels: { app: 'web' } }),
  containers: [container('logtail')],
});
new kplus.Deployment(chart, 'web', {
  metadata: { name: 'web' },
  replicas: 2,
  podMetadata: { labels: { app: 'web' } },
  securityContext: { user: 65534, group: 65534 },
  containers: [container('web')],
});
app.synth();
`;

/** Team C: a Job whose sidecar the runtime should stop, a feature the platform was not told about. */
const TEAM_C_APP = (platformOut: string) => `${header}
${platformTarget(`InstalledRuntime.fromFile(${JSON.stringify(platformOut)})`)}
const chart = teamChart('${TEAM_C}');
const job = new kplus.Job(chart, 'seed', { metadata: { name: 'seed' }, securityContext: { user: 65534, group: 65534 }, containers: [container('main', ['true'])] });
JobSidecarTermination.of(job).addSidecar(container('shipper'));
app.synth();
`;

let dir: string;
const outOf = (name: string) => path.join(dir, name);

async function synth(name: string, source: string, ...flags: string[]) {
  const appFile = path.join(dir, `${name}.mts`);
  writeFileSync(appFile, source);
  return runCli([
    'synth',
    '--app',
    `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(appFile)}`,
    '-o',
    outOf(name),
    '--config',
    path.join(dir, 'none.yaml'),
    '--quiet',
    ...flags,
  ]);
}

const apply = (name: string) =>
  runCli(['apply', outOf(name), '--kubectl', findAssets().kubectl, '--kubeconfig', kubeconfigPath(), '--timeout', '300']);

/** Every object a synth output lists, from every YAML file in it. */
function objectsIn(out: string): Obj[] {
  return readdirSync(out, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .flatMap((f) => parseAllDocuments(readFileSync(path.join(out, f), 'utf8')).map((d) => d.toJS() as Obj))
    .filter(Boolean);
}

/** Removes a runtime installed from dist/ or by this file's platform (ClusterRoles, webhooks, its namespace). */
async function removeRuntimes(): Promise<void> {
  for (const f of [path.join(repoRoot, 'dist/10-runtime.yaml'), path.join(outOf('platform'), '10-runtime.yaml')]) {
    if (existsSync(f)) await kubectl(['delete', '--ignore-not-found', '--wait=true', '--timeout=180s', '-f', f]);
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-platform-node-'));
  // The platform's KruiseRuntime runs the default image, the one dist/ names: built and imported once per node.
  await importRuntimeImage(node());
  await removeRuntimes();
}, 900_000);

afterAll(async () => {
  for (const ns of [TEAM_A, TEAM_B]) await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=180s']);
  await kubectl(['delete', 'sidecarsets.apps.kruise.io', SET, '--ignore-not-found']);
  if (dir) await removeRuntimes();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 600_000);

describe('one platform install, two team apps', () => {
  it('the platform installs the runtime; two team apps emit no install objects, apply and work; a missing feature fails synth', async () => {
    // The platform: synth and apply install the CRDs and the runtime, with the capabilities ConfigMap.
    const platform = await synth('platform', PLATFORM);
    expect(platform.code, platform.stderr).toBe(0);
    const p0 = Date.now();
    const installed = await apply('platform');
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stderr).toContain(
      `[2/2] runtime: waiting for Deployment ${DEFAULT_RUNTIME_NAMESPACE}/${NAMES.managerDeployment} to roll out`,
    );
    const platformSeconds = (Date.now() - p0) / 1000;
    const caps = JSON.parse(
      JSON.parse(await kubectl(['get', 'configmap', 'kruise-runtime-capabilities', '-n', DEFAULT_RUNTIME_NAMESPACE, '-o', 'json'])).data[
        'capabilities.json'
      ],
    ) as { features: string[]; podWebhook: boolean; daemon: boolean };
    expect(caps.features).toContain('SidecarSet injection');
    expect(caps.podWebhook).toBe(true);
    expect(caps.daemon).toBe(false);

    // Two team apps synthesize against it: team A from the committed output, team B from the cluster.
    const a = await synth('team-a', TEAM_A_APP(outOf('platform')));
    expect(a.code, a.stderr).toBe(0);
    const b = await synth(
      'team-b',
      TEAM_B_APP,
      '--capabilities-from-cluster',
      '--kubectl',
      findAssets().kubectl,
      '--kubeconfig',
      kubeconfigPath(),
    );
    expect(b.code, b.stderr).toBe(0);
    for (const team of ['team-a', 'team-b']) {
      const files = readdirSync(outOf(team));
      expect(
        files.filter((f) => /^(00-crds|10-runtime)\.yaml$/.test(f)),
        team,
      ).toEqual([]);
      const installObjects = objectsIn(outOf(team)).filter(
        (o) =>
          o.kind === 'CustomResourceDefinition' ||
          /WebhookConfiguration$|^ClusterRole/.test(o.kind) ||
          o.metadata?.namespace === DEFAULT_RUNTIME_NAMESPACE,
      );
      expect(installObjects, team).toEqual([]);
    }
    expect(
      objectsIn(outOf('team-a'))
        .map((o) => o.kind)
        .sort(),
    ).toEqual(['CloneSet', 'Namespace']);
    expect(
      objectsIn(outOf('team-b'))
        .map((o) => o.kind)
        .sort(),
    ).toEqual(['Deployment', 'Namespace', 'SidecarSet']);

    // Both apply in one phase (nothing to install) and work.
    const t0 = Date.now();
    for (const team of ['team-a', 'team-b']) {
      const r = await apply(team);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/\[1\/1\] app: done in [\d.]+ s/);
    }
    await waitFor(
      `CloneSet ${TEAM_A}/cache ready`,
      async () => {
        const cs = JSON.parse(await kubectl(['get', 'clonesets.apps.kruise.io', 'cache', '-n', TEAM_A, '-o', 'json'])) as Obj;
        return cs.status?.observedGeneration === cs.metadata.generation && cs.status?.readyReplicas === 2;
      },
      180_000,
      500,
    );
    const aSeconds = (Date.now() - t0) / 1000;
    // Team B's SidecarSet reached the webhook's cache a moment after the apply: a pod created before it is
    // replaced (its Deployment makes a new one), and the count says how many were.
    let replaced = 0;
    let pods: V1Pod[] = [];
    await waitFor(
      `team B's Deployment pods injected and running`,
      async () => {
        pods = (await core().listNamespacedPod({ namespace: TEAM_B, labelSelector: 'app=web' })).items.filter(
          (p) => !p.metadata?.deletionTimestamp,
        );
        for (const p of pods.filter((x) => !x.spec!.containers.some((c) => c.name === 'logtail'))) {
          await core().deleteNamespacedPod({ name: p.metadata!.name!, namespace: TEAM_B, gracePeriodSeconds: 0 });
          replaced++;
        }
        return (
          pods.length === 2 &&
          pods.every((p) => p.spec!.containers.some((c) => c.name === 'logtail')) &&
          pods.every((p) => (p.status?.containerStatuses ?? []).filter((c) => c.state?.running).length === 2)
        );
      },
      180_000,
      500,
    );
    for (const p of pods) {
      expect(p.spec!.containers.map((c) => c.name)).toEqual(['logtail', 'web']);
      expect(p.metadata!.annotations!['kruise.io/sidecarset-injected-list']).toBe(SET);
    }
    const bSeconds = (Date.now() - t0) / 1000;

    // A feature the platform lacks is a synth error naming it and the fix; nothing is written.
    // The real binary: the app's own error reaches the synth's stderr, as a user sees it.
    writeFileSync(path.join(dir, 'team-c.mts'), TEAM_C_APP(outOf('platform')));
    const c = spawnCli([
      'synth',
      '--app',
      `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(path.join(dir, 'team-c.mts'))}`,
      '-o',
      outOf('team-c'),
      '--config',
      path.join(dir, 'none.yaml'),
      '--quiet',
    ]);
    expect(c.code).toBe(1);
    expect(c.stderr).toContain(`Job ${TEAM_C}/seed (team/seed/Resource) uses job sidecar termination (kill)`);
    expect(c.stderr).toContain('feature gate SidecarTerminator is off and no node daemon runs');
    expect(c.stderr).toContain("Add AppFeature.SIDECAR_TERMINATOR_KILL to the platform KruiseRuntime's `features`");
    expect(existsSync(outOf('team-c'))).toBe(false);
    console.log(
      `[platform] platform apply ${platformSeconds.toFixed(1)} s; team A's CloneSet ready ${aSeconds.toFixed(1)} s and team B's ` +
        `pods injected and running ${bSeconds.toFixed(1)} s after the teams' applies began (${replaced} pod(s) replaced for the cache lag)`,
    );
  }, 900_000);
});

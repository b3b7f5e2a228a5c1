// The platform / app split end to end: a platform app synthesizes the bundled runtime for the union of two teams'
// needs; its capabilities ConfigMap goes into a real kube-apiserver; two team apps synthesize against it (one reading
// the cluster with --capabilities-from-cluster, one reading the platform's committed output) and emit no install
// objects; a third that uses a feature the platform lacks fails its synth with the feature, the gate and the fix.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findAssets, kubectl } from '../harness/index.js';
import { kubeconfigPath } from '../harness/cluster.js';
import { repoRoot, runCli, spawnCli } from '../unit/support/cli.js';

const require = createRequire(import.meta.url);
const cdk8s = JSON.stringify(require.resolve('cdk8s'));
const plus = JSON.stringify(require.resolve('cdk8s-plus-27'));
const constructs = JSON.stringify(path.join(repoRoot, 'constructs/index.ts'));

const header = `
import { App, Chart, ApiObject } from ${cdk8s};
import * as kplus from ${plus};
import { AppFeature, InstalledRuntime, KruiseRuntime, RuntimeTarget } from ${constructs};
const app = new App();
`;

// A namespace of its own: other tests of the shared API server apply dist/'s runtime (and its ConfigMap) to kruise-system.
const RUNTIME_NS = 'platform-split-kruise';

const PLATFORM = `${header}
// The union of what the teams declared they need.
new KruiseRuntime(app, 'kruise', { namespace: ${JSON.stringify(RUNTIME_NS)}, features: [AppFeature.SIDECAR_TERMINATOR_KILL, AppFeature.CONTAINER_RECREATE_REQUEST] });
app.synth();
`;

/** A team app: a CloneSet and a Job with a sidecar stopped when the job's main container exits. */
const TEAM = (team: string, installed: string, extra = '') => `${header}
new KruiseRuntime(app, 'kruise', { target: RuntimeTarget.PLATFORM${installed ? `, installedRuntime: ${installed}` : ''} });
const chart = new Chart(app, ${JSON.stringify(team)}, { namespace: ${JSON.stringify(team)} });
new ApiObject(chart, 'web', {
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'web' },
  spec: { replicas: 2, selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
});
const job = new kplus.Job(chart, 'migrate', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
job.addContainer({ name: 'proxy', image: 'envoyproxy/envoy:v1.31.0',
  envVariables: { KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT: kplus.EnvValue.fromValue('true') } });
${extra}
app.synth();
`;

let dir: string;
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const appCmd = (p: string) => `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(p)}`;
const synth = (app: string, out: string, ...flags: string[]) =>
  runCli(['synth', '--app', appCmd(app), '--output', path.join(dir, out), '--config', path.join(dir, 'none.yaml'), '--quiet', ...flags]);

function kindsIn(out: string): string[] {
  const kinds: string[] = [];
  for (const f of readdirSync(path.join(dir, out), { recursive: true })
    .map(String)
    .filter((x) => x.endsWith('.yaml'))
    .sort()) {
    for (const d of parseAllDocuments(readFileSync(path.join(dir, out, f), 'utf8'))) kinds.push(String(d.get('kind')));
  }
  return kinds;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-platform-split-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('platform / app split', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    const r = await synth(file('platform.ts', PLATFORM), 'platform-dist');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // The platform's runtime namespace and capabilities ConfigMap, applied to a real API server.
    const runtimeYaml = readFileSync(path.join(dir, 'platform-dist', '10-runtime.yaml'), 'utf8');
    const wanted = parseAllDocuments(runtimeYaml)
      .map((d) => d.toJS() as { kind: string; metadata: { name: string } })
      .filter((o) => (o.kind === 'Namespace' && o.metadata.name === RUNTIME_NS) || o.metadata.name === 'kruise-runtime-capabilities');
    expect(wanted.map((o) => o.kind)).toEqual(['Namespace', 'ConfigMap']);
    await kubectl(['apply', '--server-side', '--field-manager=platform-split-e2e', '-f', '-'], {
      input: wanted.map((o) => `---\n${JSON.stringify(o)}\n`).join(''),
    });
  });

  it('two team apps synth against the one install and emit no install objects', async () => {
    const fromCluster = await synth(
      file('team-a.ts', TEAM('team-a', '')),
      'team-a-dist',
      '--capabilities-from-cluster',
      '--runtime-namespace',
      RUNTIME_NS,
      '--kubectl',
      findAssets().kubectl,
      '--kubeconfig',
      kubeconfigPath(),
    );
    expect(fromCluster.stderr).toBe('');
    expect(fromCluster.code).toBe(0);
    const offline = JSON.stringify(path.join(dir, 'platform-dist'));
    const fromFile = await synth(file('team-b.ts', TEAM('team-b', `InstalledRuntime.fromFile(${offline})`)), 'team-b-dist');
    expect(fromFile.stderr).toBe('');
    expect(fromFile.code).toBe(0);
    for (const out of ['team-a-dist', 'team-b-dist']) {
      expect(readdirSync(path.join(dir, out)).filter((f) => /^(00-crds|10-runtime)\.yaml$/.test(f))).toEqual([]);
      expect(kindsIn(out).sort()).toEqual(['CloneSet', 'Job', 'Kustomization'].sort());
    }
  });

  it('fails the synth of an app that uses a feature the platform lacks, leaving its output alone', async () => {
    const pull = `new ApiObject(chart, 'warm', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', metadata: { name: 'warm' },
  spec: { image: 'nginx:1.27', completionPolicy: { type: 'Always' } } });`;
    // The real binary: the app's own error goes to the synth's stderr, as a user sees it.
    const r = spawnCli([
      'synth',
      '--app',
      appCmd(file('team-c.ts', TEAM('team-c', '', pull))),
      '--output',
      path.join(dir, 'team-c-dist'),
      '--config',
      path.join(dir, 'none.yaml'),
      '--capabilities-from-cluster',
      '--runtime-namespace',
      RUNTIME_NS,
      '--kubectl',
      findAssets().kubectl,
      '--kubeconfig',
      kubeconfigPath(),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ImagePullJob team-c/warm');
    expect(r.stderr).toContain('feature gate ImagePullJobGate is off');
    expect(r.stderr).toContain("Add AppFeature.IMAGE_PULL_JOB to the platform KruiseRuntime's `features`");
    expect(r.stderr).toContain("from the cluster's ConfigMap kruise-runtime-capabilities");
    expect(r.stderr).toContain('synth the platform and apply its output to the cluster');
    expect(readdirSync(dir)).not.toContain('team-c-dist');
  });

  it('refuses a hostile capabilities ConfigMap in the cluster, naming it and the field', async () => {
    const bad = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kruise-runtime-capabilities', namespace: 'hostile-runtime' },
      data: {
        'capabilities.json': JSON.stringify({
          apiVersion: 'kruise.cdk8s.io/v1alpha1',
          kind: 'RuntimeCapabilities',
          runtime: 'bundled\u001b[2J',
          extra: 'x'.repeat(5000),
        }),
      },
    };
    await kubectl(['apply', '--server-side', '--field-manager=platform-split-e2e', '-f', '-'], {
      input: `${JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'hostile-runtime' } })}\n---\n${JSON.stringify(bad)}\n`,
    });
    const r = await synth(
      file('team-e.ts', TEAM('team-e', '')),
      'team-e-dist',
      '--capabilities-from-cluster',
      '--runtime-namespace',
      'hostile-runtime',
      '--kubectl',
      findAssets().kubectl,
      '--kubeconfig',
      kubeconfigPath(),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('ConfigMap hostile-runtime/kruise-runtime-capabilities: unknown field(s) "extra"');
    expect(r.stderr).not.toContain('\u001b');
    expect(r.stderr.length).toBeLessThan(1000);
  });

  it('names an unreachable cluster as such', async () => {
    const kubeconfig = file(
      'unreachable.kubeconfig',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'u', user: { token: 'x' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    const r = await synth(
      file('team-f.ts', TEAM('team-f', '')),
      'team-f-dist',
      '--capabilities-from-cluster',
      '--kubectl',
      findAssets().kubectl,
      '--kubeconfig',
      kubeconfig,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--capabilities-from-cluster: cannot reach the cluster');
  });

  it('says so when the cluster has no platform runtime in the given namespace', async () => {
    const r = await synth(
      file('team-d.ts', TEAM('team-d', '')),
      'team-d-dist',
      '--capabilities-from-cluster',
      '--runtime-namespace',
      'no-such-runtime',
      '--kubectl',
      findAssets().kubectl,
      '--kubeconfig',
      kubeconfigPath(),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('ConfigMap no-such-runtime/kruise-runtime-capabilities does not exist');
  });
});

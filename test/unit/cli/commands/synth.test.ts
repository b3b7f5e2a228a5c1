import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { findAssets } from '../../../harness/assets.js';
import { cliMain, repoRoot as repo, runCli } from '../../support/cli.js';

const require = createRequire(import.meta.url);
const cdk8sLib = require.resolve('cdk8s');

/** kubectl from the control-plane build cache (test/prepare.d), else from PATH. */
function kubectl(): string {
  try {
    return findAssets().kubectl;
  } catch {
    return 'kubectl';
  }
}

/** Every file under `dir` with its SHA-256, to prove a directory did not change. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir, { recursive: true }).map(String).sort()) {
    const full = path.join(dir, f);
    try {
      out[f] = createHash('sha256').update(readFileSync(full)).digest('hex');
    } catch {
      out[f] = 'dir';
    }
  }
  return out;
}

// A cdk8s app written in plain CommonJS against the real cdk8s library: charts in an order that is NOT the apply
// order (app first), a CRD, runtime-install objects (labelled as KruiseRuntime labels them) and app objects.
const APP = (variant: 'ok' | 'bad' | 'crash') => `
const { App, Chart, ApiObject } = require(${JSON.stringify(cdk8sLib)});
const app = new App();
const web = new Chart(app, 'web');
new ApiObject(web, 'deploy', {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } } },
});
new ApiObject(web, 'pinned', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pinned', annotations: { 'argocd.argoproj.io/sync-wave': '5' } } });
const runtime = new Chart(app, 'runtime');
const part = { 'app.kubernetes.io/part-of': 'cdk8s-kruise' };
new ApiObject(runtime, 'ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kruise-system', labels: part } });
new ApiObject(runtime, 'crd', {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'imagepulljobs.apps.kruise.io', labels: part },
  spec: { group: 'apps.kruise.io', names: { kind: 'ImagePullJob', plural: 'imagepulljobs' }, scope: 'Namespaced',
    versions: [{ name: 'v1alpha1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
});
new ApiObject(runtime, 'sa', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'kruise-manager', namespace: 'kruise-system', labels: part } });
const jobs = new Chart(app, 'jobs');
new ApiObject(jobs, 'pull', {
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', metadata: { name: 'pull-nginx', namespace: 'default' },
  spec: { image: 'nginx:1.9.1', parallelism: ${variant === 'bad' ? "'50%'" : 2}, completionPolicy: { type: 'Always' } },
});
app.synth();
${variant === 'crash' ? "throw new Error('boom: the app crashed after writing');" : ''}
`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-synth-'));
  for (const v of ['ok', 'bad', 'crash'] as const) writeFileSync(path.join(dir, `app-${v}.cjs`), APP(v));
});

const node = JSON.stringify(process.execPath);
const appCmd = (v: string) => `${node} ${JSON.stringify(path.join(dir, `app-${v}.cjs`))}`;
const noConfig = () => path.join(dir, 'none.yaml');

describe('cdk8s-kruise synth', { timeout: 180_000 }, () => {
  it('writes CRDs, then the runtime, then app charts, and a kustomization.yaml kubectl kustomize renders in that order', async () => {
    const out = path.join(dir, 'dist-ok');
    const r = await runCli(['synth', '--app', appCmd('ok'), '--output', out, '--config', noConfig()]);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    // The marker file says synth created the directory (and may replace it next time).
    expect(readdirSync(out).sort()).toEqual(
      ['.cdk8s-kruise-synth', '00-crds.yaml', '10-runtime.yaml', '20-app-web.yaml', '20-app-jobs.yaml', 'kustomization.yaml'].sort(),
    );
    const kust = readFileSync(path.join(out, 'kustomization.yaml'), 'utf8');
    // App charts follow in chart-file order (cdk8s names them after the chart), after CRDs and runtime.
    expect(kust).toContain('resources:\n  - 00-crds.yaml\n  - 10-runtime.yaml\n  - 20-app-jobs.yaml\n  - 20-app-web.yaml\n');
    const rendered = execFileSync(kubectl(), ['kustomize', out], { encoding: 'utf8' });
    const kinds = parseAllDocuments(rendered).map((d) => `${String(d.get('kind'))}/${String(d.getIn(['metadata', 'name']))}`);
    expect(kinds).toEqual([
      'CustomResourceDefinition/imagepulljobs.apps.kruise.io',
      'Namespace/kruise-system',
      'ServiceAccount/kruise-manager',
      'ImagePullJob/pull-nginx',
      'Deployment/web',
      'ConfigMap/pinned',
    ]);
    // No stage directory is left beside the output.
    expect(readdirSync(dir).filter((f) => f.startsWith('.dist-ok.synth-'))).toEqual([]);
  });

  it('is deterministic: a second synth produces byte-identical files', async () => {
    const a = path.join(dir, 'det-a');
    const b = path.join(dir, 'det-b');
    expect((await runCli(['synth', '--app', appCmd('ok'), '--output', a, '--config', noConfig()])).code).toBe(0);
    expect((await runCli(['synth', '--app', appCmd('ok'), '--output', b, '--config', noConfig()])).code).toBe(0);
    expect(snapshot(a)).toEqual(snapshot(b));
    const again = snapshot(a);
    expect((await runCli(['synth', '--app', appCmd('ok'), '--output', a, '--config', noConfig()])).code).toBe(0);
    expect(snapshot(a)).toEqual(again);
  });

  it('--sync-waves annotates CRDs -2, runtime -1, app 0, keeping an explicit wave', async () => {
    const out = path.join(dir, 'dist-waves');
    expect((await runCli(['synth', '--app', appCmd('ok'), '--output', out, '--sync-waves', '--config', noConfig()])).code).toBe(0);
    const waves: Record<string, unknown> = {};
    for (const f of readdirSync(out).filter((x) => x !== 'kustomization.yaml')) {
      for (const d of parseAllDocuments(readFileSync(path.join(out, f), 'utf8'))) {
        waves[String(d.getIn(['metadata', 'name']))] = d.getIn(['metadata', 'annotations', 'argocd.argoproj.io/sync-wave']);
      }
    }
    expect(waves).toEqual({
      'imagepulljobs.apps.kruise.io': '-2',
      'kruise-system': '-1',
      'kruise-manager': '-1',
      web: '0',
      pinned: '5',
      'pull-nginx': '0',
    });
  });

  it('a failing synth (rule errors, or a crashing app) leaves an existing output directory byte-identical', async () => {
    const out = path.join(dir, 'dist-atomic');
    expect((await runCli(['synth', '--app', appCmd('ok'), '--output', out, '--config', noConfig()])).code).toBe(0);
    writeFileSync(path.join(out, 'hand-written-note.txt'), 'kept only if the directory is untouched');
    const before = snapshot(out);

    const bad = await runCli(['synth', '--app', appCmd('bad'), '--output', out, '--config', noConfig()]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/dist-atomic\/20-app-jobs\.yaml:\d+:\d+: error KRUISE-IMAGEPULLJOB-002: parallelism "50%" is a percentage/);
    expect(bad.stdout).toContain('construct jobs/pull');
    expect(bad.stderr).toContain(`synth failed with 1 error(s); ${out} was left unchanged`);
    expect(snapshot(out)).toEqual(before);

    const crash = await runCli(['synth', '--app', appCmd('crash'), '--output', out, '--config', noConfig()]);
    expect(crash.code).toBe(1);
    expect(crash.stderr).toContain('the cdk8s app failed (exit code 1)');
    expect(snapshot(out)).toEqual(before);
    expect(readdirSync(dir).filter((f) => f.startsWith('.dist-atomic.synth-'))).toEqual([]);

    // --warnings-as-errors counts too; a SARIF report is written for CI even when the synth fails.
    const sarif = path.join(dir, 'synth.sarif');
    const r = await runCli([
      'synth',
      '--app',
      appCmd('bad'),
      '--output',
      out,
      '--format',
      'sarif',
      '--report',
      sarif,
      '--config',
      noConfig(),
    ]);
    expect(r.code).toBe(1);
    expect(JSON.parse(readFileSync(sarif, 'utf8')).runs[0].results[0].ruleId).toBe('KRUISE-IMAGEPULLJOB-002');
    expect(snapshot(out)).toEqual(before);
  });

  it('creates the output directory when it does not exist, and exits 2 without an app', async () => {
    const out = path.join(dir, 'fresh', 'nested', 'dist');
    expect((await runCli(['synth', '--app', appCmd('ok'), '--output', out, '--config', noConfig()])).code).toBe(0);
    expect(existsSync(path.join(out, 'kustomization.yaml'))).toBe(true);
    const none = await runCli(['synth', '--output', out, '--config', noConfig()]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no app to run: pass --app <command> or set "app" in');
  });

  it('an interrupted synth (SIGINT while the app runs) exits 130, removes its stage and leaves the output untouched', async () => {
    const out = path.join(dir, 'dist-int');
    expect((await runCli(['synth', '--app', appCmd('ok'), '--output', out, '--config', noConfig()])).code).toBe(0);
    const before = snapshot(out);
    const slow = path.join(dir, 'app-slow.cjs');
    writeFileSync(slow, 'setTimeout(() => {}, 60000);\n');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', cliMain, 'synth', '--app', `${node} ${JSON.stringify(slow)}`, '--output', out, '--config', noConfig()],
      {
        cwd: repo,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const stages = () => readdirSync(dir).filter((f) => f.startsWith('.dist-int.synth-'));
    for (let i = 0; i < 600 && stages().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(stages()).toHaveLength(1);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code).toBe(130);
    expect(stderr).toContain(`interrupted (SIGINT); ${out} was left unchanged`);
    expect(stages()).toEqual([]);
    expect(snapshot(out)).toEqual(before);
    // The app was stopped with it: `close` fired long before the app's 60 s timer (stdio would stay open otherwise).
  });

  it('the real binary reads app and output from cdk8s.yaml in the working directory', () => {
    writeFileSync(path.join(dir, 'cdk8s.yaml'), `app: ${JSON.stringify(appCmd('ok'))}\noutput: from-config\n`);
    const tsx = path.join(repo, 'node_modules/.bin/tsx');
    const r = spawnSync(tsx, [cliMain, 'synth'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readdirSync(path.join(dir, 'from-config'))).toContain('00-crds.yaml');
  });
});

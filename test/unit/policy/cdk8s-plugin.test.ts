import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ValidationContext } from 'cdk8s-cli/plugins';
import { beforeAll, describe, expect, it } from 'vitest';
import { KruiseValidation } from '../../../src/policy/index.js';
import { CLONESET_YAML } from '../support/manifests.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const require = createRequire(import.meta.url);
const cdk8sLib = require.resolve('cdk8s');
const bundle = path.join(repo, 'lib/cdk8s-plugin.cjs');

const APP = (parallelism: string) => `
const { App, Chart, ApiObject } = require(${JSON.stringify(cdk8sLib)});
const app = new App();
const chart = new Chart(app, 'jobs');
new ApiObject(chart, 'pull', {
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', metadata: { name: 'pull-nginx', namespace: 'default' },
  spec: { image: 'nginx:1.9.1', parallelism: ${parallelism}, completionPolicy: { type: 'Always' } },
});
app.synth();
`;

const GOOD =
  'apiVersion: apps.kruise.io/v1alpha1\nkind: ImagePullJob\nmetadata: {name: pull}\nspec:\n  image: nginx:1.9.1\n  completionPolicy: {type: Always}\n';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-plugin-'));
});

describe('KruiseValidation (cdk8s validation plugin)', () => {
  it('in process: adds a violation per finding and submits failure on errors, success otherwise', async () => {
    const bad = path.join(dir, 'bad.k8s.yaml');
    const good = path.join(dir, 'good.k8s.yaml');
    writeFileSync(bad, GOOD.replace('completionPolicy: {type: Always}', 'completionPolicy: {type: Always}\n  parallelism: "10%"'));
    writeFileSync(good, GOOD);

    const failing = new ValidationContext([bad, good], 'cdk8s-kruise', '0.1.0', { pull: { path: 'app/jobs/pull' } });
    await new KruiseValidation().validate(failing);
    const report = failing.report.toJson();
    expect(report.summary.status).toBe('failure');
    expect(report.summary.metadata).toMatchObject({ objects: '2', errors: '1', warnings: '0' });
    expect(report.violations).toEqual([
      {
        ruleName: 'KRUISE-IMAGEPULLJOB-002 [error]',
        recommendation: 'parallelism "10%" is a percentage; only integers are supported',
        fix: expect.stringContaining('parallelism: 10'),
        violatingConstructs: [
          { resourceName: 'pull', locations: ['line 7 /spec/parallelism'], manifestPath: bad, constructPath: 'app/jobs/pull' },
        ],
      },
    ]);

    const passing = new ValidationContext([good], 'cdk8s-kruise', '0.1.0');
    await new KruiseValidation({ skipRules: ['KRUISE-SCHEMA-003'] }).validate(passing);
    expect(passing.report.success).toBe(true);
    expect(passing.report.toJson().violations).toEqual([]);
  });

  it('in process, with a layout: a passing check with warnings names the file each object was written to', async () => {
    const out = mkdtempSync(path.join(dir, 'layout-'));
    const chartFile = path.join(out, '0001-web.k8s.yaml');
    // A lifecycle finalizer hook without a controller raises a warning (KRUISE-CLONESET-002): the check passes.
    writeFileSync(
      chartFile,
      CLONESET_YAML.replace(
        '  replicas: 2\n',
        '  replicas: 2\n  lifecycle:\n    preNormal:\n      finalizersHandler: [example.io/blocker]\n      markPodNotReady: true\n',
      ),
    );
    const ctx = new ValidationContext([chartFile], 'cdk8s-kruise', '0.1.0');
    await new KruiseValidation({ layout: 'plain' }).validate(ctx);
    const report = ctx.report.toJson();
    expect(report.summary.status).toBe('success');
    const paths = report.violations.flatMap((v) => v.violatingConstructs.map((c) => c.manifestPath));
    expect(paths.length).toBeGreaterThan(0);
    expect(new Set(paths)).toEqual(new Set([path.join(out, '20-app-web.yaml')]));
    expect(existsSync(path.join(out, '20-app-web.yaml'))).toBe(true);
    expect(existsSync(chartFile)).toBe(false);
  });

  it('with a layout and a workload that opts into pre-pull: says no job was emitted (cdk8s removed the previous output); Flux still gets the pre-pull phase', async () => {
    const out = mkdtempSync(path.join(dir, 'pre-pull-'));
    const chartFile = path.join(out, '0001-web.k8s.yaml');
    writeFileSync(
      chartFile,
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\n  annotations: {kruise.cdk8s.io/pre-pull-changed-images: "true"}\n' +
        'spec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: "nginx:1.27"}]\n',
    );
    const ctx = new ValidationContext([chartFile], 'cdk8s-kruise', '0.1.0');
    const logged: string[] = [];
    ctx.logger.log = (m: string) => void logged.push(m);
    await new KruiseValidation({ layout: 'flux', repoPath: './dist' }).validate(ctx);
    expect(ctx.report.success).toBe(true);
    expect(logged.join('\n')).toMatch(/opt into pre-pull .* no ImagePullJob was emitted; run `cdk8s-kruise synth`/);
    expect(readFileSync(path.join(out, 'pre-pull/kustomization.yaml'), 'utf8')).toContain('resources: []');
  });

  it('a hostile repoURL or targetRevision property fails when cdk8s loads the plugin', () => {
    expect(() => new KruiseValidation({ layout: 'argocd', repoURL: 'https://x.example/r.git\n  path: /' })).toThrow(
      /repoURL .* is not a Git repository URL/,
    );
    expect(() => new KruiseValidation({ layout: 'argocd', targetRevision: 'a b' })).toThrow(
      /targetRevision "a b" is not a branch, tag or commit/,
    );
    expect(
      () => new KruiseValidation({ layout: 'argocd', repoURL: 'https://git.example.org/t/i.git', targetRevision: 'v1.2.3' }),
    ).not.toThrow();
  });

  it('in process: always submits its report, even when it cannot complete', async () => {
    const ctx = new ValidationContext([path.join(dir, 'missing.yaml')], 'cdk8s-kruise', '0.1.0');
    await expect(new KruiseValidation().validate(ctx)).rejects.toThrow(/ENOENT/);
    expect(ctx.report.success).toBe(false);
    expect(ctx.report.toJson().violations[0]!.ruleName).toBe('cdk8s-kruise internal error');
  });

  it('runs under the real `cdk8s synth` CLI from the CommonJS bundle that `npm ci` builds', { timeout: 300_000 }, () => {
    // The same command the prepare script runs on npm ci.
    execFileSync('npm', ['run', '--silent', 'build:plugin'], { cwd: repo, stdio: 'pipe' });
    expect(existsSync(bundle)).toBe(true);
    const cdk8s = path.join(repo, 'node_modules/.bin/cdk8s');
    const synth = (parallelism: string, name: string, properties = '') => {
      const app = path.join(dir, `${name}.cjs`);
      writeFileSync(app, APP(parallelism));
      const project = mkdtempSync(path.join(dir, `${name}-`));
      writeFileSync(
        path.join(project, 'cdk8s.yaml'),
        `app: ${JSON.stringify(`${process.execPath} ${app}`)}\noutput: dist\nvalidations:\n  - package: ${bundle}\n    version: 0.1.0\n    class: KruiseValidation\n${properties}`,
      );
      const r = spawnSync(cdk8s, ['synth', '--validation-reports-output-file', 'reports.json'], {
        cwd: project,
        encoding: 'utf8',
        timeout: 240_000,
        env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`, FORCE_COLOR: '0' },
      });
      const reports = JSON.parse(readFileSync(path.join(project, 'reports.json'), 'utf8')) as {
        reports: Array<{
          summary: { status: string };
          violations: Array<{ ruleName: string; violatingConstructs: Array<{ constructPath?: string }> }>;
        }>;
      };
      return { code: r.status, output: r.stdout + r.stderr, report: reports.reports[0]!, project };
    };

    const ok = synth('2', 'ok');
    expect(ok.output).toContain('Validations ended succesfully');
    expect(ok.code).toBe(0);
    expect(ok.report.summary.status).toBe('success');
    // cdk8s wrote construct-metadata.json for the plugins; once read, the plugin removes it so a directory sync
    // of the output never tries to apply it. The construct paths still reach the report (cdk8s read it first).
    expect(existsSync(path.join(ok.project, 'dist/construct-metadata.json'))).toBe(false);
    expect(existsSync(path.join(ok.project, 'dist/jobs.k8s.yaml'))).toBe(true);

    // With `layout`, cdk8s synth commits the same tree as cdk8s-kruise synth of the same app.
    const laid = synth('2', 'laid', '    properties:\n      layout: plain\n');
    expect(laid.code, laid.output).toBe(0);
    const own = path.join(dir, 'own-dist');
    const r = spawnSync(
      path.join(repo, 'node_modules/.bin/tsx'),
      [
        path.join(repo, 'src/cli/main.ts'),
        'synth',
        '--app',
        `${process.execPath} ${path.join(dir, 'laid.cjs')}`,
        '-o',
        own,
        '--config',
        path.join(dir, 'none.yaml'),
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const tree = (root: string) =>
      readdirSync(root, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
        .sort()
        .map((f) => [f, readFileSync(path.join(root, f), 'utf8')]);
    expect(tree(path.join(laid.project, 'dist'))).toEqual(tree(own));
    expect(tree(own).map(([f]) => f)).toContain('20-app-jobs.yaml');

    const bad = synth("'50%'", 'bad');
    expect(bad.code).toBe(2);
    expect(bad.output).toContain('KRUISE-IMAGEPULLJOB-002 [error]');
    expect(bad.report.summary.status).toBe('failure');
    expect(bad.report.violations[0]!.violatingConstructs[0]!.constructPath).toBe('jobs/pull');
  });
});

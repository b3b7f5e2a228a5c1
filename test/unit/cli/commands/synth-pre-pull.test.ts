import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../../support/cli.js';

const require = createRequire(import.meta.url);
const cdk8sLib = require.resolve('cdk8s');

// A cdk8s app (plain CommonJS on the real cdk8s library) whose images come from images.json beside it: `web` opts into
// pre-pull by its annotation, `api` does not.
const APP = `
const { App, Chart, ApiObject } = require(${JSON.stringify(cdk8sLib)});
const images = require(require('path').join(__dirname, 'images.json'));
const app = new App();
const chart = new Chart(app, 'shop');
const deployment = (name, image, annotations) => new ApiObject(chart, name, {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'shop', annotations },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } } },
});
deployment('web', images.web, images.optIn === false ? undefined : { 'kruise.cdk8s.io/pre-pull-changed-images': 'true' });
deployment('api', images.api);
if (images.gates !== undefined) {
  // The controller-manager of an install (as KruiseRuntime renders it), with the feature gates it was given.
  const runtime = new Chart(app, 'runtime');
  new ApiObject(runtime, 'manager', {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'kruise-controller-manager', namespace: 'kruise-system', labels: { 'app.kubernetes.io/part-of': 'cdk8s-kruise' } },
    spec: { selector: { matchLabels: { m: 'm' } }, template: { metadata: { labels: { m: 'm' } }, spec: { containers: [
      { name: 'manager', image: 'ghcr.io/cdk8s-kruise/cdk8s-kruise:0.1.0', command: ['cdk8s-kruise'], args: ['controller', '--feature-gates=' + images.gates] },
    ] } } },
  });
}
app.synth();
`;

let dir: string;
const node = JSON.stringify(process.execPath);
const app = () => `${node} ${JSON.stringify(path.join(dir, 'app.cjs'))}`;
const setImages = (web: string, api = 'api:1', gates?: string, optIn?: boolean) =>
  writeFileSync(path.join(dir, 'images.json'), JSON.stringify({ web, api, gates, optIn }));
const noConfig = () => path.join(dir, 'none.yaml');
const synth = (out: string, ...flags: string[]) => runCli(['synth', '--app', app(), '--output', out, '--config', noConfig(), ...flags]);
const files = (out: string) => readdirSync(out, { recursive: true }).map(String).sort();
const docs = (file: string) => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Record<string, any>);
const pulled = (out: string, file = '15-pre-pull.yaml') =>
  existsSync(path.join(out, file)) ? docs(path.join(out, file)).map((j) => j.spec.image) : [];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-pre-pull-'));
  writeFileSync(path.join(dir, 'app.cjs'), APP);
});

describe('cdk8s-kruise synth: pre-pull from the diff', { timeout: 180_000 }, () => {
  it('emits an ImagePullJob for the new image of an opted-in workload, applied between the runtime and the app, and keeps it on a repeated synth', async () => {
    const out = path.join(dir, 'dist');
    setImages('nginx:1.25');
    expect((await synth(out)).code).toBe(0);
    expect(files(out)).not.toContain('15-pre-pull.yaml');

    setImages('nginx:1.27', 'api:2');
    const r = await synth(out);
    expect(r.code).toBe(0);
    expect(pulled(out)).toEqual(['nginx:1.27']); // api changed too, but did not opt in
    const [job] = docs(path.join(out, '15-pre-pull.yaml'));
    expect(job).toMatchObject({
      kind: 'ImagePullJob',
      metadata: { namespace: 'shop', annotations: { 'kruise.cdk8s.io/pre-pull-for': 'Deployment.apps/web' } },
      spec: { podSelector: { matchLabels: { app: 'web' } }, completionPolicy: { ttlSecondsAfterFinished: 600 } },
    });
    expect(parse(readFileSync(path.join(out, 'kustomization.yaml'), 'utf8')).resources).toEqual(['15-pre-pull.yaml', '20-app-shop.yaml']);
    expect(r.stdout).toMatch(/KRUISE-PREPULL-001.*pulls "nginx:1.27" onto the nodes running Deployment.apps\/web's pods/s);

    const before = readFileSync(path.join(out, '15-pre-pull.yaml'), 'utf8');
    expect((await synth(out)).code).toBe(0);
    expect(readFileSync(path.join(out, '15-pre-pull.yaml'), 'utf8')).toBe(before);

    setImages('nginx:1.28', 'api:2');
    expect((await synth(out)).code).toBe(0);
    expect(pulled(out)).toEqual(['nginx:1.28']);
  });

  it('--pre-pull takes every workload; --previous compares with another directory', async () => {
    const old = path.join(dir, 'old');
    setImages('nginx:1.25', 'api:1');
    expect((await synth(old)).code).toBe(0);
    setImages('nginx:1.27', 'api:2');
    const out = path.join(dir, 'all');
    expect((await synth(out, '--pre-pull', '--previous', old)).code).toBe(0);
    expect(pulled(out).sort()).toEqual(['api:2', 'nginx:1.27']);
  });

  it('--pre-pull with an install that does not run ImagePullJobs: the jobs fail the gate rule, the output is left as it was', async () => {
    const out = path.join(dir, 'gated');
    setImages('nginx:1.25', 'api:1', 'SidecarTerminator=true', false);
    const first = await synth(out);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    setImages('nginx:1.27', 'api:1', 'SidecarTerminator=true', false);
    const before = files(out);
    const r = await synth(out, '--pre-pull');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/15-pre-pull\.yaml:\d+:\d+: error KRUISE-GATE-001: ImagePullJob needs feature gate ImagePullJobGate/);
    expect(files(out)).toEqual(before);
    setImages('nginx:1.27', 'api:1', 'SidecarTerminator=true,ImagePullJobGate=true', false);
    expect((await synth(out, '--pre-pull')).code).toBe(0);
    expect(pulled(out)).toEqual(['nginx:1.27']);
  });

  it('Argo CD: the jobs are Sync hooks of wave -1; Flux: a pre-pull Kustomization between the others, there even with no job', async () => {
    const old = path.join(dir, 'old-gitops');
    setImages('nginx:1.25');
    expect((await synth(old)).code).toBe(0);
    setImages('nginx:1.27');
    const argo = path.join(dir, 'argo');
    const ra = await synth(argo, '--gitops', 'argocd', '--repo-path', './dist', '--previous', old);
    expect(ra.code, ra.stderr + ra.stdout).toBe(0);
    expect(docs(path.join(argo, '15-pre-pull.yaml'))[0]!.metadata.annotations).toMatchObject({
      'argocd.argoproj.io/sync-wave': '-1',
      'argocd.argoproj.io/hook': 'Sync',
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation,HookSucceeded',
    });
    expect(readFileSync(path.join(argo, 'argocd/argocd-cm-health.yaml'), 'utf8')).toContain('apps.kruise.io_ImagePullJob');

    const flux = path.join(dir, 'flux');
    expect((await synth(flux, '--gitops', 'flux', '--repo-path', './dist', '--previous', old)).code).toBe(0);
    const [job] = docs(path.join(flux, 'pre-pull/15-pre-pull.yaml'));
    expect(job!.spec.completionPolicy).not.toHaveProperty('ttlSecondsAfterFinished');
    const ks = docs(path.join(flux, 'flux/kustomizations.yaml'));
    expect(ks.map((k) => [k.metadata.name, k.spec.dependsOn?.[0]?.name])).toEqual([
      ['cdk8s-kruise-pre-pull', undefined],
      ['cdk8s-kruise-app', 'cdk8s-kruise-pre-pull'],
    ]);
    expect(ks[0]!.spec).toMatchObject({ wait: true, healthCheckExprs: [{ kind: 'ImagePullJob', current: 'has(status.completionTime)' }] });

    const quiet = path.join(dir, 'flux-quiet');
    expect((await synth(quiet, '--gitops', 'flux', '--repo-path', './dist')).code).toBe(0); // a first synth: nothing to compare with
    expect(parse(readFileSync(path.join(quiet, 'pre-pull/kustomization.yaml'), 'utf8')).resources).toEqual([]);
  });

  it('--previous reads the output directory at a Git commit; a name that is neither a directory nor a commit is a usage error', () => {
    const repo = mkdtempSync(path.join(tmpdir(), 'kruise-pre-pull-git-'));
    try {
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: repo });
      git('init', '-q');
      setImages('nginx:1.25');
      const cli = (...flags: string[]) =>
        spawnCli(['synth', '--app', app(), '--output', 'deploy/dist', '--config', noConfig(), ...flags], { cwd: repo });
      const first = cli();
      expect(first.code, first.stderr).toBe(0);
      git('add', '-A');
      git('commit', '-q', '-m', 'v1');
      rmSync(path.join(repo, 'deploy'), { recursive: true });
      setImages('nginx:1.27');
      const r = cli('--previous', 'HEAD', '--verbose');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/pre-pull: compared with HEAD:deploy\/dist: 1 ImagePullJob/);
      expect(pulled(path.join(repo, 'deploy/dist'))).toEqual(['nginx:1.27']);

      for (const bad of ['no-such-ref', '--help', 'HEAD~99']) {
        const b = cli('--previous', bad);
        expect(b.code, bad).toBe(2);
        expect(b.stderr).toMatch(/--previous ".*" is neither a directory nor a Git commit/);
      }
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

// Output users commit and sync: file names from chart ids (adding a chart renames nothing), findings located in
// the committed files (file:line:col + construct path, in text and in SARIF valid against the 2.1.0 schema),
// one-shot operations outside the synced tree, and the Argo CD / Flux layouts.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import AjvDraft04Module from 'ajv-draft-04';
import addFormatsModule from 'ajv-formats';
import { parse, parseAllDocuments } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { ARGOCD_HEALTH_LUA } from '../../../src/policy/argocd-health.js';
import { chartIdOf, layout, type SynthDoc } from '../../../src/policy/output-layout.js';
import { cliMain, repoRoot } from '../support/cli.js';
import { CLONESET_YAML } from '../support/manifests.js';

const require = createRequire(import.meta.url);
const cdk8sLib = require.resolve('cdk8s');
type SchemaValidator = ((data: unknown) => boolean) & { errors?: unknown };
const AjvDraft04 = ((AjvDraft04Module as unknown as { default?: unknown }).default ?? AjvDraft04Module) as new (
  opts: Record<string, unknown>,
) => { compile(schema: unknown): SchemaValidator };
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: unknown) => void;

// A CloneSet with a lifecycle hook that raises a warning (KRUISE-CLONESET-002), so the synth writes its output and
// the finding's location can be checked against the file it wrote.
const WARNED = parse(
  CLONESET_YAML.replace(
    '  replicas: 2\n',
    '  replicas: 2\n  lifecycle:\n    preNormal:\n      finalizersHandler: [example.io/blocker]\n      markPodNotReady: true\n',
  ),
) as Record<string, unknown>;

/** A cdk8s app whose charts depend on each other (so cdk8s numbers its files), optionally with one more chart first. */
const APP = (extraChart: boolean) => `
const { App, Chart, ApiObject } = require(${JSON.stringify(cdk8sLib)});
const app = new App();
const part = { 'app.kubernetes.io/part-of': 'cdk8s-kruise' };
${extraChart ? "const extra = new Chart(app, 'added'); new ApiObject(extra, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'added' } });" : ''}
const runtime = new Chart(app, 'kruise');
new ApiObject(runtime, 'ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kruise-system', labels: part } });
const web = new Chart(app, 'web');
web.addDependency(runtime);
new ApiObject(web, 'cs', ${JSON.stringify(WARNED)});
const ops = new Chart(app, 'restart');
ops.addDependency(web);
new ApiObject(ops, 'pod', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'default' }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] } });
new ApiObject(ops, 'crr', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: { name: 'restart-web-0', namespace: 'default' }, spec: { podName: 'web-0', containers: [{ name: 'app' }] } });
app.synth();
`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-layout-'));
  writeFileSync(path.join(dir, 'app.cjs'), APP(false));
  writeFileSync(path.join(dir, 'app-added.cjs'), APP(true));
});

/** The real binary in `cwd` (so output paths are reported relative to it, as in a repository checkout). */
function synth(cwd: string, args: string[]) {
  const tsx = path.join(repoRoot, 'node_modules/.bin/tsx');
  return spawnSync(tsx, [cliMain, 'synth', '--config', 'none.yaml', ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
}

function tree(root: string): Map<string, string> {
  return new Map(
    readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
      .sort()
      .map((f) => [f, readFileSync(path.join(root, f), 'utf8')]),
  );
}

describe('stable layout', { timeout: 240_000 }, () => {
  it('chart ids name the files: the dependency-order prefix cdk8s adds is dropped', () => {
    expect(chartIdOf('0002-my-app.k8s.yaml')).toBe('my-app');
    expect(chartIdOf('my-app.k8s.yaml')).toBe('my-app');
    expect(chartIdOf('0003-nested/0001-inner.k8s.yaml')).toBe('nested_inner');
  });

  it('adding a chart renames no existing file and changes none of their bytes', () => {
    const a = synth(dir, ['--app', `node app.cjs`, '-o', 'dist-a']);
    expect(a.status, a.stderr).toBe(0);
    const b = synth(dir, ['--app', `node app-added.cjs`, '-o', 'dist-b']);
    expect(b.status, b.stderr).toBe(0);
    const before = tree(path.join(dir, 'dist-a'));
    const after = tree(path.join(dir, 'dist-b'));
    expect([...before.keys()]).toEqual(
      ['.cdk8s-kruise-synth', '10-runtime.yaml', '20-app-web.yaml', '20-app-restart.yaml', 'kustomization.yaml', 'ops/restart.yaml'].sort(),
    );
    for (const [file, content] of before) if (file !== 'kustomization.yaml') expect(after.get(file), file).toBe(content);
    expect([...after.keys()]).toContain('20-app-added.yaml');
  });

  it('one-shot operations go to ops/, which no kustomization lists; the pod they name stays in the synced tree', () => {
    const out = tree(path.join(dir, 'dist-a'));
    expect(out.get('ops/restart.yaml')).toMatch(/kind: ContainerRecreateRequest/);
    expect(out.get('20-app-restart.yaml')).toMatch(/kind: Pod\n[\s\S]*name: web-0/);
    expect(out.get('20-app-restart.yaml')).not.toMatch(/ContainerRecreateRequest/);
    expect((parse(out.get('kustomization.yaml')!) as { resources: string[] }).resources).toEqual([
      '10-runtime.yaml',
      '20-app-web.yaml',
      '20-app-restart.yaml',
    ]);
  });

  it('findings name the committed file (relative to the working directory), line:col and the construct path', () => {
    const r = synth(dir, ['--app', `node app.cjs`, '-o', 'dist-text']);
    expect(r.status, r.stderr).toBe(0);
    const m =
      /^(dist-text\/20-app-web\.yaml):(\d+):(\d+): warning KRUISE-CLONESET-002: .*\n {2}at CloneSet default\/web, construct web\/cs, field (\S+)/m.exec(
        r.stdout,
      );
    expect(m, r.stdout).not.toBeNull();
    const [, file, line, col] = m!;
    // The line and column point at the field in the file synth wrote.
    const text = readFileSync(path.join(dir, file!), 'utf8').split('\n')[Number(line) - 1]!;
    expect(text.slice(Number(col) - 1)).toMatch(/^markPodNotReady: true/);
  });

  it('SARIF: physical location in the committed file, logical locations for the resource and the construct path; valid 2.1.0', () => {
    const r = synth(dir, ['--app', `node app.cjs`, '-o', 'dist-sarif', '--format', 'sarif', '--report', 'kruise.sarif']);
    expect(r.status, r.stderr).toBe(0);
    const log = JSON.parse(readFileSync(path.join(dir, 'kruise.sarif'), 'utf8'));
    const schema = JSON.parse(readFileSync(require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8'));
    // The published schema has a pattern that is invalid with the unicode flag, so unicodeRegExp is off.
    const ajv = new AjvDraft04({ strict: false, allErrors: true, unicodeRegExp: false });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    const [result] = log.runs[0].results;
    expect(result).toMatchObject({
      ruleId: 'KRUISE-CLONESET-002',
      level: 'warning',
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: 'dist-sarif/20-app-web.yaml' },
            region: { startLine: expect.any(Number), startColumn: expect.any(Number) },
          },
          logicalLocations: [
            { kind: 'resource', fullyQualifiedName: expect.stringMatching(/^CloneSet\/default\/web\//) },
            { kind: 'declaration', fullyQualifiedName: 'web/cs', name: 'cs' },
          ],
        },
      ],
    });
  });
});

const doc = (chartFile: string, object: Record<string, unknown>): SynthDoc => ({ chartFile, object, text: JSON.stringify(object) });
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'clonesets.apps.kruise.io', labels: { 'app.kubernetes.io/part-of': 'cdk8s-kruise' } },
  spec: { group: 'apps.kruise.io', names: { kind: 'CloneSet' } },
};
const MANAGER = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'kruise-controller-manager', namespace: 'kruise-system', labels: { 'app.kubernetes.io/part-of': 'cdk8s-kruise' } },
};
const DOCS = [
  doc('0000-kruise-crds.k8s.yaml', CRD),
  doc('0001-kruise.k8s.yaml', MANAGER),
  doc('0002-web.k8s.yaml', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'web' } }),
  doc('0002-web.k8s.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' } }),
  doc('0003-ops.k8s.yaml', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: { name: 'r' } }),
];

describe('synth paths and the Argo CD source (real binary)', { timeout: 240_000 }, () => {
  it('--clean takes over a directory holding only what `cdk8s synth` writes; without it the refusal says so', () => {
    const out = path.join(dir, 'dist-cdk8s');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, '0000-web.k8s.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}\n');
    writeFileSync(path.join(out, 'construct-metadata.json'), '{}');
    const refused = synth(dir, ['--app', 'node app.cjs', '-o', 'dist-cdk8s']);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/holds the output of `cdk8s synth` \(2 file\(s\), no \.cdk8s-kruise-synth\); pass --clean/);
    const taken = synth(dir, ['--app', 'node app.cjs', '-o', 'dist-cdk8s', '--clean']);
    expect(taken.status, taken.stderr).toBe(0);
    expect([...tree(out).keys()]).toEqual([...tree(path.join(dir, 'dist-a')).keys()]);
    // Anything else in the directory (a hand-written file) still makes it not synth's to replace, --clean or not.
    const mixed = path.join(dir, 'dist-mixed');
    mkdirSync(mixed, { recursive: true });
    writeFileSync(path.join(mixed, '0000-web.k8s.yaml'), 'kind: ConfigMap\n');
    writeFileSync(path.join(mixed, 'notes.txt'), 'mine\n');
    const kept = synth(dir, ['--app', 'node app.cjs', '-o', 'dist-mixed', '--clean']);
    expect(kept.status).toBe(2);
    expect(kept.stderr).toMatch(/did not create/);
    expect(readFileSync(path.join(mixed, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it("the Application's repoURL/targetRevision: from the KruiseValidation entry in cdk8s.yaml, a flag overrides, a hostile one is refused", () => {
    writeFileSync(
      path.join(dir, 'cdk8s-argo.yaml'),
      [
        'app: node app.cjs',
        'validations:',
        '  - package: cdk8s-kruise/lib/cdk8s-plugin.cjs',
        '    version: 0.1.0',
        '    class: KruiseValidation',
        '    properties: { layout: argocd, repoURL: "https://git.example.org/team/infra.git", targetRevision: release-1 }',
        '',
      ].join('\n'),
    );
    const source = (out: string) =>
      (parse(readFileSync(path.join(dir, out, 'argocd/application.yaml'), 'utf8')) as Record<string, any>).spec.source;
    const fromConfig = synth(dir, ['--config', 'cdk8s-argo.yaml', '--gitops', 'argocd', '-o', 'dist-argo']);
    expect(fromConfig.status, fromConfig.stderr).toBe(0);
    expect(source('dist-argo')).toEqual({
      repoURL: 'https://git.example.org/team/infra.git',
      targetRevision: 'release-1',
      path: 'dist-argo',
    });
    const flagged = synth(dir, [
      '--config',
      'cdk8s-argo.yaml',
      '--gitops',
      'argocd',
      '-o',
      'dist-argo',
      '--repo-url',
      'git@git.example.org:t/i.git',
    ]);
    expect(flagged.status, flagged.stderr).toBe(0);
    expect(source('dist-argo')).toEqual({ repoURL: 'git@git.example.org:t/i.git', targetRevision: 'release-1', path: 'dist-argo' });
    const hostile = synth(dir, ['--config', 'cdk8s-argo.yaml', '--gitops', 'argocd', '-o', 'dist-argo', '--target-revision', 'main\nx: 1']);
    expect(hostile.status).toBe(2);
    expect(hostile.stderr).toMatch(/targetRevision "main\\nx: 1" is not a branch, tag or commit/);
  });
});

describe('GitOps targets', () => {
  it('flux: crds/, runtime/, app/ each with a kustomization, and Flux Kustomizations chained by dependsOn with health checks', () => {
    const files = new Map(layout(DOCS, { gitops: 'flux', repoPath: './deploy/dist' }).map((f) => [f.name, f.content]));
    expect([...files.keys()].sort()).toEqual(
      [
        'crds/00-crds.yaml',
        'crds/kustomization.yaml',
        'runtime/10-runtime.yaml',
        'runtime/kustomization.yaml',
        'app/20-app-web.yaml',
        'app/kustomization.yaml',
        'ops/ops.yaml',
        'flux/kustomizations.yaml',
      ].sort(),
    );
    expect((parse(files.get('app/kustomization.yaml')!) as { resources: string[] }).resources).toEqual(['20-app-web.yaml']);
    const ks = parseAllDocuments(files.get('flux/kustomizations.yaml')!).map((d) => d.toJS() as Record<string, any>);
    expect(ks.map((k) => [k.metadata.name, k.spec.path, k.spec.dependsOn?.[0]?.name, k.spec.wait])).toEqual([
      // Flux ignores healthChecks under wait: true, so only the CRDs wait; the runtime is judged by its health checks.
      ['cdk8s-kruise-crds', './deploy/dist/crds', undefined, true],
      ['cdk8s-kruise-runtime', './deploy/dist/runtime', 'cdk8s-kruise-crds', undefined],
      ['cdk8s-kruise-app', './deploy/dist/app', 'cdk8s-kruise-runtime', undefined],
    ]);
    expect(ks[1]!.spec.healthChecks).toEqual([
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'kruise-controller-manager', namespace: 'kruise-system' },
    ]);
    expect(ks.every((k) => k.apiVersion === 'kustomize.toolkit.fluxcd.io/v1' && k.spec.sourceRef.kind === 'GitRepository')).toBe(true);
  });

  it('argocd: sync waves, SkipDryRunOnMissingResource on custom resources whose CRD the sync creates, and an Application with ignoreDifferences', () => {
    const files = new Map(layout(DOCS, { gitops: 'argocd', repoPath: './dist' }).map((f) => [f.name, f.content]));
    const app = parseAllDocuments(files.get('20-app-web.yaml')!).map((d) => d.toJS() as Record<string, any>);
    expect(app[0]!.metadata.annotations).toEqual({
      'argocd.argoproj.io/sync-wave': '0',
      'argocd.argoproj.io/sync-options': 'SkipDryRunOnMissingResource=true',
    });
    expect(app[1]!.metadata.annotations).toEqual({ 'argocd.argoproj.io/sync-wave': '0' });
    expect((parse(files.get('kustomization.yaml')!) as { resources: string[] }).resources).not.toContain('argocd/application.yaml');
    const application = parse(files.get('argocd/application.yaml')!) as Record<string, any>;
    expect(application.kind).toBe('Application');
    expect(application.spec.source.path).toBe('dist');
    expect(application.spec.syncPolicy.syncOptions).toContain('RespectIgnoreDifferences=true');
    expect(application.spec.ignoreDifferences).toEqual([
      expect.objectContaining({ kind: 'MutatingWebhookConfiguration', jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle'] }),
      expect.objectContaining({ kind: 'ValidatingWebhookConfiguration', jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle'] }),
      {
        group: 'apiextensions.k8s.io',
        kind: 'CustomResourceDefinition',
        name: 'sidecarsets.apps.kruise.io',
        jsonPointers: ['/spec/conversion/webhook/clientConfig/caBundle'],
      },
      { group: '', kind: 'Secret', name: 'kruise-webhook-certs', namespace: 'kruise-system', jsonPointers: ['/data'] },
    ]);
  });

  it('CRDs carry prune/delete protection per target: Argo CD Prune=false,Delete=false, Flux prune disabled, plain none', () => {
    const crdOf = (gitops: 'plain' | 'argocd' | 'flux', file: string) =>
      parse(new Map(layout(DOCS, { gitops, repoPath: './dist' }).map((f) => [f.name, f.content])).get(file)!) as Record<string, any>;
    expect(crdOf('argocd', '00-crds.yaml').metadata.annotations).toEqual({
      'argocd.argoproj.io/sync-wave': '-2',
      'argocd.argoproj.io/sync-options': 'Prune=false,Delete=false',
    });
    expect(crdOf('flux', 'crds/00-crds.yaml').metadata.annotations).toEqual({ 'kustomize.toolkit.fluxcd.io/prune': 'disabled' });
    expect(crdOf('plain', '00-crds.yaml').metadata.annotations).toBeUndefined();
    // The runtime and the app stay prunable: removing KruiseRuntime removes the runtime, not the CRDs.
    const runtime = parse(
      new Map(layout(DOCS, { gitops: 'flux', repoPath: './dist' }).map((f) => [f.name, f.content])).get('runtime/10-runtime.yaml')!,
    );
    expect((runtime as Record<string, any>).metadata.annotations).toBeUndefined();
  });

  it('argocd: repoURL and targetRevision are set from the options, and hostile values are refused', () => {
    const appOf = (opts: { repoURL?: string; targetRevision?: string }) =>
      parse(
        new Map(layout(DOCS, { gitops: 'argocd', repoPath: './deploy', ...opts }).map((f) => [f.name, f.content])).get(
          'argocd/application.yaml',
        )!,
      ) as Record<string, any>;
    expect(appOf({}).spec.source).toEqual({ repoURL: 'https://git.example.com/your/repo.git', targetRevision: 'HEAD', path: 'deploy' });
    expect(appOf({ repoURL: 'git@github.com:team/infra.git', targetRevision: 'release/1.2' }).spec.source).toEqual({
      repoURL: 'git@github.com:team/infra.git',
      targetRevision: 'release/1.2',
      path: 'deploy',
    });
    expect(appOf({ repoURL: 'https://git.example.org/a/b.git' }).spec.source.repoURL).toBe('https://git.example.org/a/b.git');
    for (const repoURL of ['', 'not a url', 'https://x.example/a\n  targetRevision: evil', 'file:///etc/passwd', 'https://'])
      expect(() => appOf({ repoURL }), repoURL).toThrow(/repoURL .* is not a Git repository URL/);
    for (const targetRevision of ['', 'main\nfoo', 'a b', 'a..b', 'x'.repeat(256)])
      expect(() => appOf({ targetRevision }), targetRevision).toThrow(/targetRevision .* is not a branch, tag or commit/);
  });

  it('argocd: health checks in an argocd-cm ConfigMap for exactly the Kruise kinds the app uses', () => {
    const files = new Map(layout(DOCS, { gitops: 'argocd', repoPath: './dist' }).map((f) => [f.name, f.content]));
    const cm = parse(files.get('argocd/argocd-cm-health.yaml')!) as Record<string, any>;
    expect(cm).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'argocd-cm', namespace: 'argocd' } });
    // The CloneSet of the app and the ContainerRecreateRequest of ops/; not SidecarSet or ImagePullJob, which it does not use.
    expect(Object.keys(cm.data)).toEqual([
      'resource.customizations.health.apps.kruise.io_CloneSet',
      'resource.customizations.health.apps.kruise.io_ContainerRecreateRequest',
    ]);
    expect(cm.data['resource.customizations.health.apps.kruise.io_CloneSet']).toBe(ARGOCD_HEALTH_LUA.CloneSet);
    expect(cm.data['resource.customizations.health.apps.kruise.io_ContainerRecreateRequest']).toBe(
      ARGOCD_HEALTH_LUA.ContainerRecreateRequest,
    );
    // No kustomization lists it (it goes to the argocd namespace, not the app's sync), and no Kruise kind → no file.
    expect((parse(files.get('kustomization.yaml')!) as { resources: string[] }).resources).not.toContain('argocd/argocd-cm-health.yaml');
    const plainDocs = DOCS.filter((d) => !String(d.object.apiVersion).startsWith('apps.kruise.io'));
    expect(layout(plainDocs, { gitops: 'argocd', repoPath: './dist' }).map((f) => f.name)).not.toContain('argocd/argocd-cm-health.yaml');
    expect(layout(DOCS, { gitops: 'flux', repoPath: './dist' }).map((f) => f.name)).not.toContain('argocd/argocd-cm-health.yaml');
  });

  it('two charts whose ids map to one file name are refused with both names', () => {
    expect(() =>
      layout([
        doc('0001-web.k8s.yaml', { kind: 'ConfigMap', apiVersion: 'v1' }),
        doc('0002-web.k8s.yaml', { kind: 'ConfigMap', apiVersion: 'v1' }),
      ]),
    ).toThrow(/charts "0001-web.k8s.yaml" and "0002-web.k8s.yaml" would both be written to 20-app-web.yaml/);
  });
});

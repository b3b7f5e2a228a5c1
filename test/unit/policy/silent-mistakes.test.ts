// Two mistakes nothing used to report: an image reference the API server or the kubelet refuses (KRUISE-IMAGE-001,
// through the one validator in src/contracts/validators.ts) and a SidecarSet whose selector matches none of the pod
// templates validated with it (KRUISE-SIDECARSET-007). Pure tables first, then the real paths: validate (several
// files), synth, the cdk8s plugin, validateManifests, and the examples staying clean.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Testing } from 'cdk8s';
import { ValidationContext } from 'cdk8s-cli/plugins';
import * as kplus from 'cdk8s-plus-27';
import { beforeAll, describe, expect, it } from 'vitest';
import { CloneSet, ImagePullJob, JobSidecarTermination, SidecarSet, SidecarUpgradeStrategy } from '../../../constructs/index.js';
import { imageReferenceError, imageReferenceProblem } from '../../../src/contracts/validators.js';
import { validateInputs, validateManifests } from '../../../src/policy/engine.js';
import { KruiseValidation } from '../../../src/policy/index.js';
import { repoRoot, runCli } from '../support/cli.js';

type Obj = Record<string, unknown>;

const HEX64 = 'a'.repeat(64);

describe('image references (src/contracts/validators.ts)', () => {
  it.each([
    'nginx',
    'nginx:1.27',
    'nginx:V1.27-RC_1', // a tag may hold upper case
    'library/nginx:1.27',
    'docker.io/library/nginx:1.27',
    'Registry.Example.com/team/app:1', // a registry host is case-insensitive
    'localhost:5000/app',
    '[::1]:5000/app:1',
    'MyOrg/app:1', // an upper-case first component is a registry host to the reference parser
    `nginx@sha256:${HEX64}`,
    `registry.example.com:5000/team/nginx:1.9.1@sha256:${HEX64}`,
    `nginx@sha512:${'0'.repeat(128)}`,
  ])('%s is valid', (ref) => {
    expect(imageReferenceProblem(ref)).toBeUndefined();
    expect(imageReferenceError(ref)).toBeUndefined();
  });

  it.each<[unknown, { reason: RegExp; fix?: string; whitespace?: boolean; upperCaseRepository?: string }]>([
    [
      'NGINX:1.27 ',
      {
        reason:
          /^it has leading or trailing whitespace, and the repository name "NGINX" has upper case \(repository names are lower case\)$/,
        fix: 'nginx:1.27',
        whitespace: true,
        upperCaseRepository: 'NGINX',
      },
    ],
    [' nginx:1.27', { reason: /^it has leading or trailing whitespace$/, fix: 'nginx:1.27', whitespace: true }],
    ['nginx:1.27\n', { reason: /^it has leading or trailing whitespace$/, fix: 'nginx:1.27', whitespace: true }],
    ['NGINX', { reason: /repository name "NGINX" has upper case/, fix: 'nginx', whitespace: false, upperCaseRepository: 'NGINX' }],
    ['Nginx:V1', { reason: /repository name "Nginx" has upper case/, fix: 'nginx:V1', upperCaseRepository: 'Nginx' }],
    [
      'registry.example.com/Team/App:1.0',
      { reason: /repository name "Team\/App"/, fix: 'registry.example.com/team/app:1.0', upperCaseRepository: 'Team/App' },
    ],
    ['MyOrg/App:1', { reason: /repository name "MyOrg\/App"/, fix: 'myorg/app:1', upperCaseRepository: 'MyOrg/App' }],
    ['localhost:5000/App', { reason: /repository name "App"/, fix: 'localhost:5000/app' }],
    [`nginx@sha256:${'A'.repeat(64)}`, { reason: /^the digest has upper-case hex digits$/, fix: `nginx@sha256:${HEX64}` }],
    ['nginx@sha256:abc', { reason: /does not match \[registry\/\]repository\[:tag\]\[@digest\]/ }],
    [`nginx@md5:${'a'.repeat(32)}`, { reason: /does not match/ }],
    ['nginx::1', { reason: /^it does not match/ }],
    ['NGINX::1', { reason: /upper case.*, and it does not match/ }],
    ['nginx :1.27', { reason: /^it does not match/, whitespace: false }],
    [`nginx:${'a'.repeat(129)}`, { reason: /does not match/ }],
    [HEX64, { reason: /image ID, not a reference/ }],
    ['', { reason: /empty/ }],
    ['   ', { reason: /only whitespace/, whitespace: true }],
    [42, { reason: /empty/ }],
  ])('%j is invalid', (ref, want) => {
    const p = imageReferenceProblem(ref)!;
    expect(p.reason).toMatch(want.reason);
    expect(p.fix).toBe(want.fix);
    if (want.whitespace !== undefined) expect(p.whitespace).toBe(want.whitespace);
    if (want.upperCaseRepository !== undefined) expect(p.upperCaseRepository).toBe(want.upperCaseRepository);
    expect(imageReferenceError(ref)).toBe(p.reason);
  });

  it('quotes a huge repository name bounded', () => {
    const p = imageReferenceProblem(`A${'a'.repeat(5000)}:1`)!;
    expect(p.reason.length).toBeLessThan(300);
  });
});

const containers = (image: string) => [{ name: 'app', image }];
const template = (image: string, labels: Obj = { app: 'web' }) => ({ metadata: { labels }, spec: { containers: containers(image) } });
const imageFindings = (objects: Obj[]) => validateManifests(objects, { rules: ['KRUISE-IMAGE-001'] });

describe('KRUISE-IMAGE-001: every container image the compiler sees', () => {
  const BAD = 'NGINX:1.27 ';
  it.each<[string, Obj, string]>([
    [
      'Pod containers',
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: containers(BAD) } },
      '/spec/containers/0/image',
    ],
    [
      'Pod initContainers',
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { containers: containers('nginx'), initContainers: containers(BAD) },
      },
      '/spec/initContainers/0/image',
    ],
    [
      'Pod ephemeralContainers',
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { containers: containers('nginx'), ephemeralContainers: containers(BAD) },
      },
      '/spec/ephemeralContainers/0/image',
    ],
    [
      'Deployment',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template: template(BAD) } },
      '/spec/template/spec/containers/0/image',
    ],
    [
      'StatefulSet',
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's' }, spec: { template: template(BAD) } },
      '/spec/template/spec/containers/0/image',
    ],
    [
      'DaemonSet',
      { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd' }, spec: { template: template(BAD) } },
      '/spec/template/spec/containers/0/image',
    ],
    [
      'ReplicaSet',
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'r' }, spec: { template: template(BAD) } },
      '/spec/template/spec/containers/0/image',
    ],
    [
      'Job',
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: template(BAD) } },
      '/spec/template/spec/containers/0/image',
    ],
    [
      'CronJob (nested template)',
      { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c' }, spec: { jobTemplate: { spec: { template: template(BAD) } } } },
      '/spec/jobTemplate/spec/template/spec/containers/0/image',
    ],
    [
      'CloneSet',
      { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'c' }, spec: { template: template(BAD) } },
      '/spec/template/spec/containers/0/image',
    ],
    [
      'Advanced StatefulSet',
      { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', metadata: { name: 's' }, spec: { template: template(BAD) } },
      '/spec/template/spec/containers/0/image',
    ],
    [
      'Advanced DaemonSet',
      { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'DaemonSet', metadata: { name: 'd' }, spec: { template: template(BAD) } },
      '/spec/template/spec/containers/0/image',
    ],
    [
      'SidecarSet containers',
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: 's' },
        spec: { selector: { matchLabels: { app: 'web' } }, containers: containers(BAD) },
      },
      '/spec/containers/0/image',
    ],
    [
      'SidecarSet initContainers',
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: 's' },
        spec: { selector: { matchLabels: { app: 'web' } }, initContainers: containers(BAD) },
      },
      '/spec/initContainers/0/image',
    ],
    [
      'SidecarSet hot-upgrade empty image',
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: 's' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          containers: [{ name: 'agent', image: 'agent:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: BAD } }],
        },
      },
      '/spec/containers/0/upgradeStrategy/hotUpgradeEmptyImage',
    ],
  ])('%s', (_what, object, pointer) => {
    const findings = imageFindings([object]);
    expect(findings.map((f) => [f.severity, f.jsonPointer])).toEqual([['error', pointer]]);
    expect(findings[0]!.message).toMatch(
      /^image "NGINX:1\.27 " .*is not a valid image reference: it has leading or trailing whitespace, and the repository name "NGINX" has upper case/,
    );
    expect(findings[0]!.hint).toBe('Write "nginx:1.27".');
  });

  it('says who refuses it: the API server for whitespace, the kubelet for the rest', () => {
    const [ws] = imageFindings([
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: containers('nginx:1.27 ') } },
    ]);
    expect(ws!.message).toBe(
      'image "nginx:1.27 " of container "app" is not a valid image reference: it has leading or trailing whitespace; the API server refuses any pod with it',
    );
    const [upper] = imageFindings([
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: containers('Nginx:V1') } },
    ]);
    expect(upper!.message).toMatch(
      /repository name "Nginx" has upper case.*; the kubelet cannot parse it \(InvalidImageName\), so the container never starts$/,
    );
    expect(upper!.hint).toBe('Write "nginx:V1".');
    const [broken] = imageFindings([
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: containers('nginx::1') } },
    ]);
    expect(broken!.hint).toMatch(/^Use a reference such as nginx:1\.27/);
  });

  it('accepts valid references, and leaves empty images and ImagePullJob images to their own rules', () => {
    expect(
      imageFindings([
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template: template(`nginx:V1@sha256:${HEX64}`) } },
      ]),
    ).toEqual([]);
    expect(imageFindings([{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: containers('') } }])).toEqual([]);
    const pull = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: { name: 'p', namespace: 'd' },
      spec: { image: 'NGINX' },
    };
    expect(imageFindings([pull])).toEqual([]);
    expect(validateManifests([pull]).map((f) => f.ruleId)).toContain('KRUISE-IMAGEPULLJOB-005');
  });
});

const deployment = (name: string, labels: Obj, namespace?: string, extra: Obj = {}): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, ...(namespace ? { namespace } : {}), ...extra },
  spec: { selector: { matchLabels: labels }, template: template('nginx:1.27', labels) },
});
const sidecarSet = (selector: Obj, spec: Obj = {}): Obj => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'logtail' },
  spec: { selector, containers: [{ name: 'logtail', image: 'busybox:1.36' }], ...spec },
});
const namespace = (name: string, labels: Obj = {}): Obj => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const selectorFindings = (objects: Obj[]) => validateManifests(objects, { rules: ['KRUISE-SIDECARSET-007'] });
const RUNTIME = { labels: { 'app.kubernetes.io/part-of': 'cdk8s-kruise' } };

describe('KRUISE-SIDECARSET-007: a SidecarSet selector matching no pod template of the inputs', () => {
  it('warns about a label value typo and names the closest label', () => {
    const [f, ...rest] = selectorFindings([
      deployment('web', { app: 'webserver' }, 'default'),
      sidecarSet({ matchLabels: { app: 'webserer' } }),
    ]);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      severity: 'warning',
      jsonPointer: '/spec/selector',
      message:
        'selector {app: webserer} does not match the one pod template in these inputs, so its sidecars are injected into none of them',
      hint: 'Did you mean app: webserver? If the SidecarSet targets pods created elsewhere, skip this rule with --skip-rule KRUISE-SIDECARSET-007.',
    });
  });

  it.each<[string, Obj[], RegExp | undefined, string?]>([
    [
      'a key typo',
      [deployment('web', { app: 'webserver' }), sidecarSet({ matchLabels: { ap: 'webserver' } })],
      /one pod template/,
      'app: webserver',
    ],
    ['a match', [deployment('web', { app: 'webserver' }), sidecarSet({ matchLabels: { app: 'webserver' } })], undefined],
    [
      'several templates, none close',
      [deployment('a', { app: 'api' }), deployment('b', { app: 'db' }), sidecarSet({ matchLabels: { app: 'webserver' } })],
      /matches none of the 2 pod templates in these inputs/,
    ],
    ['no pod template at all', [sidecarSet({ matchLabels: { app: 'webserer' } })], undefined],
    [
      "only the runtime's own templates",
      [
        namespace('kruise-system', RUNTIME.labels),
        deployment('kruise-controller-manager', { c: 'm' }, 'kruise-system', RUNTIME),
        sidecarSet({ matchLabels: { app: 'web' } }),
      ],
      undefined,
    ],
    [
      'an app template in the runtime namespace (no pod webhook there)',
      [
        namespace('kruise-system', RUNTIME.labels),
        deployment('mine', { app: 'x' }, 'kruise-system'),
        sidecarSet({ matchLabels: { app: 'web' } }),
      ],
      undefined,
    ],
    [
      'only kube-system templates',
      [deployment('dns', { k8s: 'dns' }, 'kube-system'), sidecarSet({ matchLabels: { app: 'web' } })],
      undefined,
    ],
    [
      'only a PodTemplate object (it creates no pod)',
      [
        { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 't' }, template: template('nginx', { app: 'x' }) },
        sidecarSet({ matchLabels: { app: 'web' } }),
      ],
      undefined,
    ],
    ['an empty selector (KRUISE-SIDECARSET-004 reports it)', [deployment('web', { app: 'web' }), sidecarSet({})], undefined],
    [
      'spec.namespace with templates only elsewhere',
      [deployment('web', { app: 'other' }, 'dev'), sidecarSet({ matchLabels: { app: 'web' } }, { namespace: 'prod' })],
      undefined,
    ],
    [
      'spec.namespace and a template there that does not match',
      [deployment('web', { app: 'other' }, 'prod'), sidecarSet({ matchLabels: { app: 'web' } }, { namespace: 'prod' })],
      /does not match the one pod template in these inputs in namespace "prod"/,
    ],
    [
      'spec.namespace, and a matching template in another namespace',
      [
        deployment('api', { app: 'api' }, 'prod'),
        deployment('web', { app: 'web' }, 'dev'),
        sidecarSet({ matchLabels: { app: 'web' } }, { namespace: 'prod' }),
      ],
      /in namespace "prod"; Deployment dev\/web matches it but lies outside its namespace scope/,
    ],
    [
      'spec.namespace and a template without a namespace (it may be applied there)',
      [deployment('web', { app: 'other' }), sidecarSet({ matchLabels: { app: 'web' } }, { namespace: 'prod' })],
      undefined,
    ],
    [
      'no namespace scope and a template without a namespace',
      [deployment('web', { app: 'other' }), sidecarSet({ matchLabels: { app: 'web' } })],
      /does not match the one pod template/,
    ],
    [
      'spec.namespace and a matching template without a namespace',
      [deployment('web', { app: 'web' }), sidecarSet({ matchLabels: { app: 'web' } }, { namespace: 'prod' })],
      undefined,
    ],
    [
      'namespaceSelector: a selected Namespace of the inputs',
      [
        namespace('a1', { team: 'a' }),
        namespace('b1', { team: 'b' }),
        deployment('x', { app: 'x' }, 'a1'),
        deployment('y', { app: 'web' }, 'b1'),
        sidecarSet({ matchLabels: { app: 'web' } }, { namespaceSelector: { matchLabels: { team: 'a' } } }),
      ],
      /does not match the one pod template in these inputs in the namespaces its namespaceSelector selects; Deployment b1\/y matches it/,
    ],
    [
      'namespaceSelector: only unselected Namespaces hold templates',
      [
        namespace('b1', { team: 'b' }),
        deployment('x', { app: 'x' }, 'b1'),
        sidecarSet({ matchLabels: { app: 'web' } }, { namespaceSelector: { matchLabels: { team: 'a' } } }),
      ],
      undefined,
    ],
    [
      'namespaceSelector by name, without the Namespace object',
      [
        deployment('x', { app: 'x' }, 'prod'),
        sidecarSet(
          { matchLabels: { app: 'web' } },
          { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['prod'] }] } },
        ),
      ],
      /one pod template/,
    ],
    [
      'namespaceSelector with NotIn, without the Namespace object (its labels are unknown)',
      [
        deployment('x', { app: 'x' }, 'prod'),
        sidecarSet(
          { matchLabels: { app: 'web' } },
          { namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev'] }] } },
        ),
      ],
      undefined,
    ],
    [
      'matchExpressions In with a typo',
      [
        deployment('web', { tier: 'frontend' }),
        sidecarSet({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['fronted', 'edge'] }] }),
      ],
      /\{tier In \(fronted, edge\)\}/,
      'tier: frontend',
    ],
    [
      'matchExpressions In that matches',
      [deployment('web', { tier: 'frontend' }), sidecarSet({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['frontend'] }] })],
      undefined,
    ],
    [
      'matchExpressions NotIn excluding every template',
      [
        deployment('web', { tier: 'frontend' }),
        sidecarSet({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['frontend'] }] }),
      ],
      /\{tier NotIn \(frontend\)\}/,
    ],
    [
      'matchExpressions Exists with a key typo',
      [
        deployment('web', { 'sidecar.example.io/logs': 'on' }),
        sidecarSet({ matchExpressions: [{ key: 'sidecar.example.io/log', operator: 'Exists' }] }),
      ],
      /\{sidecar\.example\.io\/log Exists\}/,
      'the key sidecar.example.io/logs',
    ],
    [
      'matchExpressions DoesNotExist of a label every template has',
      [deployment('web', { app: 'web' }), sidecarSet({ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] })],
      /\{app DoesNotExist\}/,
    ],
    [
      'the pod templates of CronJobs, CloneSets and Advanced StatefulSets count',
      [
        {
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          metadata: { name: 'c' },
          spec: { jobTemplate: { spec: { template: template('busybox', { app: 'cron' }) } } },
        },
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'CloneSet',
          metadata: { name: 'c' },
          spec: { template: template('busybox', { app: 'clone' }) },
        },
        {
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'StatefulSet',
          metadata: { name: 's' },
          spec: { template: template('busybox', { app: 'sts' }) },
        },
        sidecarSet({ matchLabels: { app: 'clones' } }),
      ],
      /matches none of the 3 pod templates/,
      'app: clone',
    ],
    [
      "a CronJob's nested template matches",
      [
        {
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          metadata: { name: 'c' },
          spec: { jobTemplate: { spec: { template: template('busybox', { app: 'cron' }) } } },
        },
        sidecarSet({ matchLabels: { app: 'cron' } }),
      ],
      undefined,
    ],
  ])('%s', (_what, objects, message, suggestion) => {
    const findings = selectorFindings(objects);
    if (!message) {
      expect(findings).toEqual([]);
      return;
    }
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toMatch(message);
    if (suggestion)
      expect(findings[0]!.hint).toBe(
        `Did you mean ${suggestion}? If the SidecarSet targets pods created elsewhere, skip this rule with --skip-rule KRUISE-SIDECARSET-007.`,
      );
    else
      expect(findings[0]!.hint).toBe(
        'Fix the selector or the pod labels; if the SidecarSet targets pods created elsewhere, skip this rule with --skip-rule KRUISE-SIDECARSET-007.',
      );
  });
});

const DEPLOYMENT_YAML = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: webserver, namespace: default}
spec:
  selector: {matchLabels: {app: webserver}}
  template:
    metadata: {labels: {app: webserver}}
    spec:
      containers:
        - name: nginx
          image: "${image}"
`;
const SIDECARSET_YAML = (app: string) => `apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: logtail}
spec:
  selector:
    matchLabels: {app: ${app}}
  containers:
    - {name: logtail, image: "busybox:1.36"}
`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-silent-'));
});

describe('through validate, synth and the cdk8s plugin', () => {
  it('validate reports both across files, with file, line and the fix; --skip-rule silences the selector warning', async () => {
    const deploy = path.join(dir, 'deploy.yaml');
    const sets = path.join(dir, 'sidecarset.yaml');
    writeFileSync(deploy, DEPLOYMENT_YAML('NGINX:1.27 '));
    writeFileSync(sets, SIDECARSET_YAML('webserer'));
    const r = await runCli(['validate', deploy, sets]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `${deploy}:11:11: error KRUISE-IMAGE-001: image "NGINX:1.27 " of container "nginx" is not a valid image reference: it has leading or trailing whitespace, and the repository name "NGINX" has upper case (repository names are lower case); the API server refuses any pod with it, and even trimmed the kubelet could not parse it\n` +
        '  at Deployment default/webserver, field /spec/template/spec/containers/0/image\n' +
        '  fix: Write "nginx:1.27".\n',
    );
    expect(r.stdout).toContain(
      `${sets}:5:3: warning KRUISE-SIDECARSET-007: selector {app: webserer} does not match the one pod template in these inputs, so its sidecars are injected into none of them\n` +
        '  at SidecarSet logtail, field /spec/selector\n' +
        '  fix: Did you mean app: webserver? If the SidecarSet targets pods created elsewhere, skip this rule with --skip-rule KRUISE-SIDECARSET-007.\n',
    );
    expect(r.stdout).toMatch(/1 error\(s\), 1 warning\(s\)/);

    writeFileSync(deploy, DEPLOYMENT_YAML('nginx:1.27'));
    const skipped = await runCli(['validate', '--skip-rule', 'KRUISE-SIDECARSET-007', deploy, sets]);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toMatch(/^0 error\(s\), 0 warning\(s\)/m);
    const warned = await runCli(['validate', '--warnings-as-errors', '--format', 'json', deploy, sets]);
    expect(warned.code).toBe(1);
    expect(JSON.parse(warned.stdout).findings.map((f: { ruleId: string }) => f.ruleId)).toEqual(['KRUISE-SIDECARSET-007']);
  });

  it('synth fails on the image and warns about the selector, naming the output files', { timeout: 120_000 }, async () => {
    const cdk8sLib = createRequire(import.meta.url).resolve('cdk8s');
    const app = (image: string) => `
const { App, Chart, ApiObject } = require(${JSON.stringify(cdk8sLib)});
const app = new App();
new ApiObject(new Chart(app, 'web'), 'deploy', {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'webserver', namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'webserver' } }, template: { metadata: { labels: { app: 'webserver' } }, spec: { containers: [{ name: 'nginx', image: ${JSON.stringify(image)} }] } } },
});
new ApiObject(new Chart(app, 'sidecars'), 'logtail', {
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'logtail' },
  spec: { selector: { matchLabels: { app: 'webserer' } }, containers: [{ name: 'logtail', image: 'busybox:1.36' }] },
});
app.synth();
`;
    const cmd = (name: string, image: string) => {
      const file = path.join(dir, `${name}.cjs`);
      writeFileSync(file, app(image));
      return `${JSON.stringify(process.execPath)} ${JSON.stringify(file)}`;
    };
    const none = path.join(dir, 'none.yaml');
    const failed = await runCli(['synth', '--app', cmd('bad', 'NGINX:1.27 '), '--output', path.join(dir, 'out-bad'), '--config', none]);
    expect(failed.code).toBe(1);
    const out = failed.stdout + failed.stderr;
    expect(out).toMatch(/20-app-web\.yaml:\d+:\d+: error KRUISE-IMAGE-001: image "NGINX:1\.27 "/);
    expect(out).toMatch(/20-app-sidecars\.yaml:\d+:\d+: warning KRUISE-SIDECARSET-007: selector \{app: webserer\}/);

    const good = path.join(dir, 'out-good');
    const passed = await runCli(['synth', '--app', cmd('good', 'nginx:1.27'), '--output', good, '--config', none]);
    expect(passed.code).toBe(0);
    expect(passed.stdout + passed.stderr).toContain('Did you mean app: webserver?');
    expect(readdirSync(good)).toContain('20-app-sidecars.yaml');
  });

  it('the cdk8s plugin reports the selector warning across chart files, and the image as a failure', async () => {
    const deploy = path.join(dir, 'plugin-web.k8s.yaml');
    const sets = path.join(dir, 'plugin-sidecars.k8s.yaml');
    writeFileSync(deploy, DEPLOYMENT_YAML('nginx:1.27'));
    writeFileSync(sets, SIDECARSET_YAML('webserer'));
    const warned = new ValidationContext([deploy, sets], 'cdk8s-kruise', '0.1.0');
    await new KruiseValidation().validate(warned);
    const report = warned.report.toJson();
    expect(report.summary.status).toBe('success');
    expect(report.violations.map((v) => v.ruleName)).toEqual(['KRUISE-SIDECARSET-007 [warning]']);
    expect(report.violations[0]!.fix).toContain('Did you mean app: webserver?');

    writeFileSync(deploy, DEPLOYMENT_YAML('NGINX:1.27 '));
    const failed = new ValidationContext([deploy, sets], 'cdk8s-kruise', '0.1.0');
    await new KruiseValidation({ skipRules: ['KRUISE-SIDECARSET-007'] }).validate(failed);
    expect(failed.report.toJson().summary.status).toBe('failure');
    expect(failed.report.toJson().violations.map((v) => v.ruleName)).toEqual(['KRUISE-IMAGE-001 [error]']);
  });

  it('the examples (dist/, which a test keeps equal to a fresh synth) raise neither finding, nor any other but two notes', () => {
    const distDir = path.join(repoRoot, 'dist');
    const inputs = readdirSync(distDir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.yaml') && !f.endsWith('kustomization.yaml'))
      .sort()
      .map((f) => ({ file: `dist/${f}`, content: readFileSync(path.join(distDir, f), 'utf8') }));
    expect(inputs.some((i) => i.file.endsWith('20-app-sidecarset-logtail.yaml'))).toBe(true);
    // The examples keep the runtime's default image (they are built and pushed by each user), so synth's note
    // that the default may be unpublished is expected, and so is the note naming how a launch order was carried
    // out (one example's order is lowered to native sidecars); nothing else is.
    expect(validateInputs(inputs).findings.map((f) => `${f.ruleId} ${f.severity}`)).toEqual([
      'KRUISE-IMAGE-002 info',
      'KRUISE-LAUNCHPRIO-002 info',
    ]);
  });
});

describe('the constructs refuse such an image when they are given it', () => {
  const selector = kplus.LabelSelector.of({ labels: { app: 'web' } });
  const BAD =
    /"NGINX:1\.27 " is not a valid image reference \(it has leading or trailing whitespace, and the repository name "NGINX" has upper case \(repository names are lower case\)\); use "nginx:1\.27"/;

  it('CloneSet: containers and init containers, given as props or added later', () => {
    const chart = Testing.chart();
    expect(() => new CloneSet(chart, 'a', { containers: [{ name: 'web', image: 'NGINX:1.27 ' }] })).toThrow(
      /\[test\/a\] container "web" image: /,
    );
    expect(() => new CloneSet(chart, 'b', { containers: [{ name: 'web', image: 'NGINX:1.27 ' }] })).toThrow(BAD);
    const ok = new CloneSet(chart, 'c', { containers: [{ name: 'web', image: 'nginx:V1' }] });
    expect(() => ok.addInitContainer({ name: 'init', image: 'NGINX:1.27 ' })).toThrow(/init container "init" image: .*use "nginx:1\.27"/);
    expect(() => ok.addContainer({ name: 'side', image: 'Busybox' })).toThrow(/container "side" image: .*use "busybox"/);
  });

  it('SidecarSet: containers, init containers and the hot-upgrade empty image', () => {
    const chart = Testing.chart();
    expect(() => new SidecarSet(chart, 'a', { selector, containers: [{ name: 'logtail', image: 'NGINX:1.27 ' }] })).toThrow(
      /\[test\/a\] containers: container "logtail" image: /,
    );
    const set = new SidecarSet(chart, 'b', { selector, containers: [{ name: 'logtail', image: 'busybox:1.36' }] });
    expect(() => set.addInitContainer({ name: 'init', image: 'NGINX:1.27 ' })).toThrow(BAD);
    expect(() => SidecarUpgradeStrategy.hotUpgrade('Empty:1')).toThrow(/emptyImage: .*use "empty:1"/);
  });

  it('JobSidecarTermination.addSidecar and ImagePullJob', () => {
    const chart = Testing.chart();
    const job = new kplus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
    expect(() => JobSidecarTermination.of(job).addSidecar({ name: 'envoy', image: 'NGINX:1.27 ' })).toThrow(
      /addSidecar "envoy" image: .*use "nginx:1\.27"/,
    );
    expect(() => new ImagePullJob(chart, 'pull', { image: 'NGINX:1.27 ' })).toThrow(BAD);
  });
});

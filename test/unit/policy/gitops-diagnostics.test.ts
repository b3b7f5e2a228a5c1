// Counted diagnostics (issue: every warning flows through one report): runtime-support findings are policy rules,
// so they are counted in text, JSON and SARIF, fail `-W`, and reach the cdk8s plugin; the tool's own output (an
// empty chart, a KruiseRuntime under target openkruise, the README's KruiseRuntime example) raises nothing.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiObject, App, Chart, Testing } from 'cdk8s';
import { ValidationContext } from 'cdk8s-cli/plugins';
import { beforeAll, describe, expect, it } from 'vitest';
import { KruiseRuntime } from '../../../constructs/index.js';
import { AppFeature, BUNDLED_RUNTIME_GATES, FEATURES } from '../../../src/contracts/features.js';
import { KruiseValidation, validateManifests } from '../../../src/policy/index.js';
import { repoRoot, runCli } from '../support/cli.js';
import { advancedCronJob } from '../support/manifests.js';

const require = createRequire(import.meta.url);
const cdk8sLib = require.resolve('cdk8s');
const constructsEntry = path.join(repoRoot, 'constructs/index.ts');
// An AdvancedCronJob (a kind the bundled runtime does not serve) stands for "a feature the bundled runtime does not
// carry out". Should that change, the first test below fails and names the stand-in to replace.
const UNSUPPORTED_FEATURE = AppFeature.ADVANCED_CRON_JOB;
const UNSUPPORTED_OBJECT = advancedCronJob();
// cdk8s-kruise does not model the stand-in's kind, so KRUISE-SCHEMA-003 warns about it too. The counting tests skip
// that rule, so the one warning they count is the runtime-support one.
const SCHEMA_UNMODELLED = 'KRUISE-SCHEMA-003';

function allObjects(app: App): unknown[] {
  return app.charts.flatMap((c) => c.toJson() as unknown[]);
}

describe('runtime-support findings are policy rules', () => {
  it('KRUISE-RUNTIME-001: a use the bundled runtime does not carry out, only when the output holds the bundled runtime', () => {
    const app = Testing.app();
    new KruiseRuntime(app, 'kruise');
    const chart = new Chart(app, 'app');
    new ApiObject(chart, 'nightly', UNSUPPORTED_OBJECT);
    const findings = validateManifests(allObjects(app)).filter((f) => f.ruleId === 'KRUISE-RUNTIME-001');
    expect(FEATURES[UNSUPPORTED_FEATURE].carriedOutBy.bundled, `pick another unsupported stand-in than ${UNSUPPORTED_FEATURE}`).toBe(false);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ severity: 'warning', resource: { kind: 'AdvancedCronJob', name: 'nightly' } });
    // Without the bundled runtime in the output nothing is judged (upstream installs are checked at synth).
    expect(validateManifests(chart.toJson()).filter((f) => f.ruleId === 'KRUISE-RUNTIME-001')).toEqual([]);
  });

  it('KRUISE-RUNTIME-002: a forced gate the bundled runtime does not know is kept on the Deployment and reported', () => {
    const unknown = Object.keys(FEATURES)
      .flatMap((f) => FEATURES[f as AppFeature].gates)
      .find((g) => !(g in BUNDLED_RUNTIME_GATES))!;
    const app = Testing.app();
    new KruiseRuntime(app, 'kruise', { featureGates: { [unknown]: true } });
    const findings = validateManifests(allObjects(app)).filter((f) => f.ruleId === 'KRUISE-RUNTIME-002');
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toContain(`${unknown}=true`);

    const known = Object.keys(BUNDLED_RUNTIME_GATES)[0]!;
    const ok = Testing.app();
    new KruiseRuntime(ok, 'kruise', { featureGates: { [known]: true } });
    expect(validateManifests(allObjects(ok)).filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it("the README's KruiseRuntime example forces only gates the bundled runtime knows", () => {
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const example = /new KruiseRuntime\(app, 'kruise', \{[\s\S]*?\n\}\);/.exec(readme)?.[0];
    expect(example).toBeDefined();
    const gates = /featureGates: \{([^}]*)\}/.exec(example!)?.[1] ?? '';
    const names = [...gates.matchAll(/(\w+):/g)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(0);
    for (const g of names) expect(Object.keys(BUNDLED_RUNTIME_GATES)).toContain(g);
  });
});

// An app with the bundled runtime, an empty chart (as `cdk8s init` creates) and, optionally, a use of a feature the
// bundled runtime does not carry out. Run with tsx so it imports the constructs from source.
const APP = (opts: { target?: 'openkruise'; unsupported?: boolean }) => `
const cdk8s = await import(${JSON.stringify(cdk8sLib)});
const { KruiseRuntime, RuntimeTarget } = await import(${JSON.stringify(constructsEntry)});
const app = new cdk8s.App();
new KruiseRuntime(app, 'kruise'${opts.target ? ', { target: RuntimeTarget.OPENKRUISE }' : ''});
new cdk8s.Chart(app, 'empty');
const chart = new cdk8s.Chart(app, 'web');
new cdk8s.ApiObject(chart, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: 'b' } });
${opts.unsupported ? `new cdk8s.ApiObject(chart, 'nightly', ${JSON.stringify(UNSUPPORTED_OBJECT)});` : ''}
app.synth();
`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-diag-'));
  writeFileSync(path.join(dir, 'clean.mts'), APP({}));
  writeFileSync(path.join(dir, 'upstream.mts'), APP({ target: 'openkruise' }));
  writeFileSync(path.join(dir, 'unsupported.mts'), APP({ unsupported: true }));
});
const appCmd = (name: string) => `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(path.join(dir, name))}`;
const none = () => path.join(dir, 'none.yaml');

describe('synth: one report counts every warning', { timeout: 240_000 }, () => {
  it('-W passes on an app with an empty chart, under the bundled target and under target openkruise', async () => {
    for (const app of ['clean.mts', 'upstream.mts']) {
      const r = await runCli([
        'synth',
        '-W',
        '--format',
        'json',
        '--app',
        appCmd(app),
        '-o',
        path.join(dir, `out-${app}`),
        '--config',
        none(),
      ]);
      expect(r.stderr).not.toMatch(/warning/i);
      expect(JSON.parse(r.stdout).summary).toMatchObject({ errors: 0, warnings: 0 });
      expect(r.code).toBe(0);
    }
  });

  it('a runtime-support warning is counted in text, JSON and SARIF and fails -W', async () => {
    const args = (fmt: string, out: string) => [
      'synth',
      '--format',
      fmt,
      '--app',
      appCmd('unsupported.mts'),
      '-o',
      out,
      '--config',
      none(),
      '--skip-rule',
      SCHEMA_UNMODELLED,
    ];
    const json = await runCli([...args('json', path.join(dir, 'u-json')), '-W']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).summary).toMatchObject({ errors: 0, warnings: 1 });
    const text = await runCli(args('text', path.join(dir, 'u-text')));
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/warning KRUISE-RUNTIME-001/);
    expect(text.stdout).toMatch(/0 error\(s\), 1 warning\(s\)/);
    const sarif = await runCli(args('sarif', path.join(dir, 'u-sarif')));
    const results = (JSON.parse(sarif.stdout) as { runs: Array<{ results: Array<{ ruleId: string; level: string }> }> }).runs[0]!.results;
    // Notes (the unpublished default runtime image, KRUISE-IMAGE-002) are not warnings.
    expect(results.filter((r) => r.level !== 'note').map((r) => [r.ruleId, r.level])).toEqual([['KRUISE-RUNTIME-001', 'warning']]);
  });

  it('the cdk8s plugin counts it too (and skips the empty chart file cdk8s writes)', async () => {
    const app = new App({ outdir: path.join(dir, 'plugin') });
    new KruiseRuntime(app, 'kruise');
    new Chart(app, 'empty');
    const chart = new Chart(app, 'web');
    new ApiObject(chart, 'nightly', UNSUPPORTED_OBJECT);
    app.synth();
    const files = app.charts.map((c) =>
      path.join(app.outdir, `${app.charts.indexOf(c).toString().padStart(4, '0')}-${c.node.id}.k8s.yaml`),
    );
    const ctx = new ValidationContext(files, 'cdk8s-kruise', '0.1.0');
    await new KruiseValidation({ warningsAsErrors: true, skipRules: [SCHEMA_UNMODELLED] }).validate(ctx);
    const report = ctx.report.toJson();
    expect(report.summary.metadata).toMatchObject({ errors: '0', warnings: '1' });
    expect(report.summary.status).toBe('failure');
    const ruleNames = report.violations.map((v: { ruleName: string }) => v.ruleName);
    expect(ruleNames.filter((n: string) => !n.endsWith('[info]'))).toEqual(['KRUISE-RUNTIME-001 [warning]']);
  });
});

describe('-W on the examples', { timeout: 240_000 }, () => {
  it('fails only for feature uses the feature table says the bundled runtime does not carry out (passes once it does)', async () => {
    const out = path.join(dir, 'examples-w');
    const r = await runCli(['synth', '-W', '--format', 'json', '-o', out]);
    const report = JSON.parse(r.stdout) as {
      summary: { errors: number; warnings: number };
      findings: Array<{ ruleId: string; message: string; severity: string }>;
    };
    expect(report.summary.errors).toBe(0);
    const unsupported = Object.values(AppFeature).filter((f) => !FEATURES[f].carriedOutBy.bundled);
    // Notes never fail -W (the examples run the default runtime image: KRUISE-IMAGE-002).
    for (const f of report.findings.filter((x) => x.severity !== 'info')) {
      expect(f.ruleId).toBe('KRUISE-RUNTIME-001');
      expect(
        unsupported.some((u) => f.message.startsWith(`uses ${u}`)),
        f.message,
      ).toBe(true);
    }
    expect(r.code).toBe(report.summary.warnings > 0 ? 1 : 0);
  });
});

import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import AjvDraft04Module from 'ajv-draft-04';
import addFormatsModule from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { RULES } from '../../../../src/policy/rules/index.js';
import { runCli, spawnCli } from '../../support/cli.js';
import { CLONESET_YAML } from '../../support/manifests.js';

const require = createRequire(import.meta.url);
// Both are CommonJS with a default export; under NodeNext the callable sits on .default.
type SchemaValidator = ((data: unknown) => boolean) & { errors?: unknown };
const AjvDraft04 = ((AjvDraft04Module as unknown as { default?: unknown }).default ?? AjvDraft04Module) as new (
  opts: Record<string, unknown>,
) => {
  compile(schema: unknown): SchemaValidator;
};
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: unknown) => void;

const noStackTrace = (s: string) => expect(s).not.toMatch(/\n\s+at .+:\d+:\d+/);

const VALID = CLONESET_YAML;
const TYPO = VALID.replace('  replicas: 2\n', '  replicas: 2\n  updateStrategy:\n    maxUnavaliable: 1\n');
const WARNING_ONLY = VALID.replace(
  '  replicas: 2\n',
  '  replicas: 2\n  lifecycle:\n    preNormal:\n      finalizersHandler: [example.io/blocker]\n      markPodNotReady: true\n',
);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-cli-'));
  writeFileSync(path.join(dir, 'valid.yaml'), VALID);
  writeFileSync(path.join(dir, 'typo.yaml'), TYPO);
  writeFileSync(path.join(dir, 'warn.yaml'), WARNING_ONLY);
  writeFileSync(path.join(dir, 'malformed.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [x\n');
  writeFileSync(path.join(dir, 'binary.yaml'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]));
  writeFileSync(path.join(dir, 'empty.yaml'), '');
  mkdirSync(path.join(dir, 'tree/nested'), { recursive: true });
  writeFileSync(path.join(dir, 'tree/a.yaml'), VALID);
  writeFileSync(path.join(dir, 'tree/nested/b.yml'), TYPO);
  writeFileSync(path.join(dir, 'tree/nested/notes.txt'), 'not a manifest');
});

describe('cdk8s-kruise validate', { timeout: 180_000 }, () => {
  it('exit 0 and a summary for valid manifests', async () => {
    const r = spawnCli(['validate', path.join(dir, 'valid.yaml')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('0 error(s), 0 warning(s), 0 note(s) in 1 object(s) from 1 input(s)');
  });

  it('exit 1 with file:line:column, rule id, field and fix for errors', async () => {
    const file = path.join(dir, 'typo.yaml');
    const r = spawnCli(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${file}:7:5: error KRUISE-SCHEMA-001: unknown field "maxUnavaliable"`);
    expect(r.stdout).toContain('at CloneSet default/web, field /spec/updateStrategy/maxUnavaliable');
    expect(r.stdout).toContain('fix: Did you mean "maxUnavailable"?');
  });

  it('exit 2 for usage and I/O errors, with a one-line message and no stack trace', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['validate', path.join(dir, 'missing.yaml')], /cannot read .*missing\.yaml.*no such file/],
      [['validate', '--rule', 'KRUISE-NOPE-001', path.join(dir, 'valid.yaml')], /unknown rule id "KRUISE-NOPE-001"/],
      [['validate', '--format', 'xml', path.join(dir, 'valid.yaml')], /argument 'xml' is invalid/],
      [['validate', '--no-such-flag', path.join(dir, 'valid.yaml')], /unknown option '--no-such-flag'/],
      [['validate'], /missing required argument 'paths'/],
    ];
    for (const [i, [args, message]] of cases.entries()) {
      const r = i === 0 ? spawnCli(args) : await runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      noStackTrace(r.stderr);
    }
  });

  it('--warnings-as-errors turns warnings into exit 1', async () => {
    const file = path.join(dir, 'warn.yaml');
    const plain = await runCli(['validate', file]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('warning KRUISE-CLONESET-002');
    expect((await runCli(['validate', '--warnings-as-errors', file])).code).toBe(1);
  });

  it('--rule and --skip-rule select rules', async () => {
    const file = path.join(dir, 'typo.yaml');
    expect((await runCli(['validate', '--skip-rule', 'KRUISE-SCHEMA-001', file])).code).toBe(0);
    const only = await runCli(['validate', '--rule', 'KRUISE-CLONESET-001,KRUISE-SCHEMA-001', '--format', 'json', file]);
    expect(JSON.parse(only.stdout).findings.map((f: { ruleId: string }) => f.ruleId)).toEqual(['KRUISE-SCHEMA-001']);
  });

  it('reads standard input with -', async () => {
    const r = spawnCli(['validate', '-', '--format', 'json'], { input: TYPO });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.findings[0]).toMatchObject({ file: '<stdin>', line: 7, ruleId: 'KRUISE-SCHEMA-001' });
  });

  it('reports malformed, binary and empty input clearly (exit 1 / warning), never a stack trace', async () => {
    const r = await runCli([
      'validate',
      path.join(dir, 'malformed.yaml'),
      path.join(dir, 'binary.yaml'),
      path.join(dir, 'empty.yaml'),
      path.join(dir, 'valid.yaml'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/malformed\.yaml:\d+:\d+: error KRUISE-INPUT-001: malformed YAML in document 1/);
    expect(r.stdout).toMatch(/binary\.yaml: error KRUISE-INPUT-001: binary input/);
    expect(r.stdout).toMatch(/empty\.yaml: warning KRUISE-INPUT-002: the input holds no documents/);
    expect(r.stdout).toContain('in 1 object(s) from 4 input(s)');
    noStackTrace(r.stdout + r.stderr);
    writeFileSync(path.join(dir, 'unknown-kind.yaml'), 'apiVersion: apps.kruise.io/v1alpha1\nkind: ClonSet\nmetadata: {name: x}\n');
    const unknownKind = await runCli(['validate', path.join(dir, 'unknown-kind.yaml')]);
    expect(unknownKind.code).toBe(1);
    expect(unknownKind.stdout).toContain('Did you mean kind: CloneSet?');
  });

  it('walks directories for *.yaml, *.yml and *.json in sorted order', async () => {
    const r = await runCli(['validate', '--format', 'json', path.join(dir, 'tree')]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.summary).toMatchObject({ errors: 1, documents: 2, files: 2 });
    expect(report.findings[0].file).toBe(path.join(dir, 'tree/nested/b.yml'));
  });

  it('--format json is a stable machine-readable report', async () => {
    const r = await runCli(['validate', '--format', 'json', path.join(dir, 'typo.yaml'), path.join(dir, 'warn.yaml')]);
    const report = JSON.parse(r.stdout);
    expect(report.version).toBe(1);
    expect(report.summary).toEqual({ errors: 1, warnings: 1, infos: 0, documents: 2, files: 2 });
    expect(report.findings[0]).toEqual({
      ruleId: 'KRUISE-SCHEMA-001',
      severity: 'error',
      file: path.join(dir, 'typo.yaml'),
      line: 7,
      column: 5,
      resource: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', namespace: 'default' },
      jsonPointer: '/spec/updateStrategy/maxUnavaliable',
      message: 'unknown field "maxUnavaliable"',
      hint: expect.stringContaining('maxUnavailable'),
    });
  });

  it('--format sarif produces a SARIF 2.1.0 log valid against the official schema', async () => {
    const schema = JSON.parse(readFileSync(require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8'));
    // The published schema has a pattern that is invalid with the unicode flag, so unicodeRegExp is off.
    const ajv = new AjvDraft04({ strict: false, allErrors: true, unicodeRegExp: false });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    const out = path.join(dir, 'report.sarif');
    const r = spawnCli(['validate', '--format', 'sarif', '--output', out, path.join(dir, 'typo.yaml'), path.join(dir, 'warn.yaml'), '-'], {
      input: TYPO,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const log = JSON.parse(readFileSync(out, 'utf8'));
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    expect(log.version).toBe('2.1.0');
    const sarifRun = log.runs[0];
    expect(sarifRun.tool.driver.rules.map((x: { id: string }) => x.id)).toEqual(RULES.map((x) => x.id));
    expect(sarifRun.results).toHaveLength(3);
    expect(sarifRun.results[0]).toMatchObject({
      ruleId: 'KRUISE-SCHEMA-001',
      level: 'error',
      locations: [
        { physicalLocation: { artifactLocation: { uri: expect.stringMatching(/typo\.yaml$/) }, region: { startLine: 7, startColumn: 5 } } },
      ],
    });
    expect(sarifRun.results[1]).toMatchObject({ ruleId: 'KRUISE-CLONESET-002', level: 'warning' });
    // stdin has no artifact: only the logical location (Kind/ns/name + pointer).
    expect(sarifRun.results[2].locations[0].physicalLocation).toBeUndefined();
    expect(sarifRun.results[2].locations[0].logicalLocations[0].fullyQualifiedName).toBe(
      'CloneSet/default/web/spec/updateStrategy/maxUnavaliable',
    );
    // A clean run is a valid log too.
    const clean = await runCli(['validate', '--format', 'sarif', path.join(dir, 'valid.yaml')]);
    expect(clean.code).toBe(0);
    expect(validate(JSON.parse(clean.stdout))).toBe(true);
  });
});

describe('cdk8s-kruise explain', () => {
  it('prints a rule doc, lists all rules, and exits 2 for an unknown id', async () => {
    const one = await runCli(['explain', 'kruise-sidecar-001']);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^KRUISE-SIDECAR-001 \(error\): Job sidecar marker on a pod whose restartPolicy is Always\n\n/);
    const all = await runCli(['explain']);
    expect(all.stdout.trim().split('\n')).toHaveLength(RULES.length);
    const bad = await runCli(['explain', 'KRUISE-SIDECAR-1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown rule id "KRUISE-SIDECAR-1" \(did you mean KRUISE-SIDECAR-001/);
  });
});

describe('cdk8s-kruise schema', { timeout: 60_000 }, () => {
  it('writes one draft-07 JSON Schema per kind that accepts valid and rejects mistyped manifests', async () => {
    const out = path.join(dir, 'schemas');
    const r = await runCli(['schema', '--out', out]);
    expect(r.code).toBe(0);
    const { KINDS, jsonSchemaFileName } = await import('../../../../src/api/index.js');
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const compiled = new Map<string, SchemaValidator>();
    for (const def of KINDS) {
      const schema = JSON.parse(readFileSync(path.join(out, jsonSchemaFileName(def)), 'utf8'));
      expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
      compiled.set(def.kind, ajv.compile(schema));
    }
    const { parse } = await import('yaml');
    const clone = compiled.get('CloneSet')!;
    expect(clone(parse(VALID))).toBe(true);
    expect(clone(parse(TYPO))).toBe(false);
    const stdout = await runCli(['schema']);
    expect(Object.keys(JSON.parse(stdout.stdout))).toEqual(KINDS.map((d) => `${d.group}/${d.version}/${d.kind}`));
  });
});

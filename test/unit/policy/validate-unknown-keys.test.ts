// Objects with many unknown fields (issue 28): the unknown-field findings are capped per object with one finding
// counting the rest, every finding still names its file, line and JSON pointer, the work stays linear (no lookup
// per finding over all of them), and nothing crashes or reports a place other than the real file.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_UNKNOWN_FIELDS_LISTED, validateObject } from '../../../src/api/validate.js';
import {
  checkInputStreamWindow,
  checkParsed,
  checkParsedWindow,
  parseInputs,
  selectRules,
  validateManifests,
} from '../../../src/policy/engine.js';
import { formatText } from '../../../src/policy/format/text.js';
import { DocumentLocator } from '../../../src/policy/locate.js';
import { parseText } from '../../../src/policy/parse.js';
import type { Rule } from '../../../src/policy/types.js';
import { runCli } from '../support/cli.js';
import { CLONESET_YAML } from '../support/manifests.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-unknown-keys-'));
});

/** CLONESET_YAML with `n` unknown keys under /spec (the first one a typo of a known field), one per line from line 10. */
function wideCloneSet(n: number): string {
  const lines = ['  replicsa: 3\n'];
  for (let i = 1; i < n; i++) lines.push(`  unknownField${i}: ${i}\n`);
  return CLONESET_YAML + lines.join('');
}
const FIRST_UNKNOWN_LINE = CLONESET_YAML.split('\n').length; // the line after the template

const wideObject = (n: number) => parseText(wideCloneSet(n), 'wide.yaml').manifests[0]!.object;

describe('unknown fields are listed up to a cap per object, and the rest counted in one finding', () => {
  it('lists the first fields in key order with their hints, then one issue counting the rest at the first unlisted field', () => {
    const { issues } = validateObject(wideObject(1000));
    expect(MAX_UNKNOWN_FIELDS_LISTED).toBe(20);
    expect(issues).toHaveLength(MAX_UNKNOWN_FIELDS_LISTED + 1);
    expect(issues[0]).toEqual({
      jsonPointer: '/spec/replicsa',
      keyword: 'additionalProperties',
      message: 'unknown field "replicsa"',
      hint: 'did you mean "replicas"? (the API server would drop "replicsa" silently)',
    });
    const listed = issues.filter((i) => i.message.startsWith('unknown field')).map((i) => i.jsonPointer);
    expect(new Set(listed)).toEqual(new Set(['/spec/replicsa', ...Array.from({ length: 19 }, (_, i) => `/spec/unknownField${i + 1}`)]));
    const rest = issues.find((i) => !i.message.startsWith('unknown field'))!;
    expect(rest).toMatchObject({
      jsonPointer: '/spec/unknownField20',
      keyword: 'additionalProperties',
      message: '… and 980 more unknown fields under /spec (not listed, from "unknownField20" on; the API server would drop them silently)',
    });
    expect(rest.hint).toMatch(/^known fields here: replicas, selector, template/);
  });

  it('caps each object on its own, and lists everything when under the cap', () => {
    const obj = wideObject(25);
    const meta = obj.metadata as Record<string, unknown>;
    for (let i = 0; i < 30; i++) meta[`extra${i}`] = i;
    const issues = validateObject(obj).issues;
    expect(issues.filter((i) => i.jsonPointer.startsWith('/metadata/'))).toHaveLength(21);
    expect(issues.filter((i) => i.jsonPointer.startsWith('/spec/'))).toHaveLength(21);
    expect(issues.map((i) => i.message)).toContain(
      '… and 10 more unknown fields under /metadata (not listed, from "extra20" on; the API server would drop them silently)',
    );
    expect(issues.map((i) => i.message)).toContain(
      '… and 5 more unknown fields under /spec (not listed, from "unknownField20" on; the API server would drop them silently)',
    );
    expect(validateObject(wideObject(20)).issues).toHaveLength(20);
    expect(validateObject(wideObject(21)).issues.find((i) => i.jsonPointer === '/spec/unknownField20')!.message).toMatch(
      /^… and 1 more unknown field under \/spec /,
    );
  });

  it('in process (validateManifests): the same capped findings, with pointers and no file', () => {
    const findings = validateManifests([wideObject(5000)], { rules: ['KRUISE-SCHEMA-001'] });
    expect(findings).toHaveLength(21);
    expect(findings.every((f) => f.file === undefined && f.resource.kind === 'CloneSet')).toBe(true);
    expect(findings.map((f) => f.message)).toContain(
      '… and 4,980 more unknown fields under /spec (not listed, from "unknownField20" on; the API server would drop them silently)',
    );
  });
});

describe('findings of a wide object name the file, line and pointer', () => {
  it('through the CLI: listed fields at their own lines, the count at the first unlisted one, in text and JSON', async () => {
    const file = path.join(dir, 'wide.yaml');
    writeFileSync(file, wideCloneSet(2000));
    const text = await runCli(['validate', file]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(
      `${file}:${FIRST_UNKNOWN_LINE}:3: error KRUISE-SCHEMA-001: unknown field "replicsa"\n  at CloneSet default/web, field /spec/replicsa\n  fix: Did you mean "replicas"?`,
    );
    expect(text.stdout).toContain(
      `${file}:${FIRST_UNKNOWN_LINE + 19}:3: error KRUISE-SCHEMA-001: unknown field "unknownField19" (the API server would drop it silently)`,
    );
    expect(text.stdout).toContain(
      `${file}:${FIRST_UNKNOWN_LINE + 20}:3: error KRUISE-SCHEMA-001: … and 1,980 more unknown fields under /spec (not listed, from "unknownField20" on; the API server would drop them silently)\n  at CloneSet default/web, field /spec/unknownField20`,
    );
    expect(text.stdout).toContain('21 error(s), 0 warning(s), 0 note(s) in 1 object(s) from 1 input(s)');
    const json = JSON.parse((await runCli(['validate', '--format', 'json', file])).stdout) as {
      findings: Array<{ file: string; line: number; column: number; jsonPointer: string; ruleId: string }>;
    };
    expect(json.findings).toHaveLength(21);
    for (const [i, f] of json.findings.entries()) {
      expect(f).toMatchObject({ ruleId: 'KRUISE-SCHEMA-001', file, line: FIRST_UNKNOWN_LINE + i, column: 3 });
      expect(f.jsonPointer).toBe(i === 0 ? '/spec/replicsa' : `/spec/unknownField${i}`);
    }
  });

  // Before the fix, spreading the findings of one object into push() overflowed the stack above ~130,000 of them,
  // and the failure was reported at no file (`<in-memory>`).
  it('150,000 unknown keys: no stack overflow, the report names the file (never <in-memory>)', async () => {
    const file = path.join(dir, 'very-wide.yaml');
    writeFileSync(file, wideCloneSet(150_000));
    const r = await runCli(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('<in-memory>');
    expect(r.stdout).not.toContain('internal error');
    expect(r.stdout).toContain(`${file}:${FIRST_UNKNOWN_LINE}:3: error KRUISE-SCHEMA-001: unknown field "replicsa"`);
    expect(r.stdout).toContain(
      `${file}:${FIRST_UNKNOWN_LINE + 20}:3: error KRUISE-SCHEMA-001: … and 149,980 more unknown fields under /spec (not listed, from "unknownField20" on;`,
    );
    expect(r.stdout).toContain('21 error(s), 0 warning(s), 0 note(s) in 1 object(s) from 1 input(s)');
    expect(r.stderr).toBe('');
  }, 60_000);
});

describe('the locator', () => {
  it('finds every key of a wide mapping in any order, and quoted keys, block scalars and flow items where they are written', () => {
    const n = 3000;
    const source = parseText(wideCloneSet(n), 'wide.yaml').manifests[0]!.source!;
    const loc = new DocumentLocator(source);
    for (let i = n - 1; i >= 1; i -= 7) expect(loc.locate(`/spec/unknownField${i}`)).toEqual({ line: FIRST_UNKNOWN_LINE + i, column: 3 });
    expect(loc.locate('/spec/replicsa')).toEqual({ line: FIRST_UNKNOWN_LINE, column: 3 });
    expect(loc.locate('/spec/nope/deeper')).toEqual({ line: 4, column: 1 });
    const text =
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "x", labels: {"a b": c}}\ndata:\n  "quoted": 1\n  yes: 2\n  list:\n  - |\n    block\n  - [1, {d: e}]\n';
    const l = new DocumentLocator(parseText(text, 'c.yaml').manifests[0]!.source!);
    expect(l.locate('/metadata/labels/a b')).toEqual({ line: 3, column: 32 });
    expect(l.locate('/data/quoted')).toEqual({ line: 5, column: 3 });
    expect(l.locate('/data/true')).toEqual({ line: 6, column: 3 });
    expect(l.locate('/data/list/0')).toEqual({ line: 8, column: 5 });
    expect(l.locate('/data/list/1/1/d')).toEqual({ line: 10, column: 10 });
  });
});

describe('the findings window with many findings in one document', () => {
  it('lists exactly the first findings of the full report when thousands of them tie on one document', () => {
    const items = Array.from(
      { length: 1500 },
      (_, i) =>
        `- apiVersion: apps.kruise.io/v1alpha1\n  kind: ImagePullJob\n  metadata: {name: pull-${i}, namespace: default}\n  spec:\n    image: "nginx:1.${i}:bad"\n    completionPolicy: {type: Always}\n`,
    );
    const inputs = [{ file: 'list.yaml', content: `apiVersion: v1\nkind: List\nitems:\n${items.join('')}` }];
    const parsed = parseInputs(inputs);
    const rules = selectRules();
    const full = checkParsed(parsed, rules, ['list.yaml']);
    // Past 2 × limit + 1024 entries the window trims, and cannot drop entries tied with the last listed one.
    expect(full.length).toBeGreaterThanOrEqual(1500);
    for (const limit of [0, 5, 700]) expect(checkParsedWindow(parsed, rules, ['list.yaml'], limit).shown).toEqual(full.slice(0, limit));
  });
});

describe('failures name the file', () => {
  // A rule with a real crash (unbounded recursion) on one object: the failure is reported at that object's file and
  // line, and not at the objects it checks without failing.
  const overflowing: Rule = {
    id: 'TEST-OVERFLOW',
    severity: 'error',
    title: 'overflows the stack on objects named boom',
    doc: '',
    check(manifests) {
      const recurse = (n: number): number => recurse(n + 1) + 1;
      return manifests.flatMap((m) => {
        const name = (m.object.metadata as { name?: string } | undefined)?.name;
        if (name === 'boom') recurse(0);
        return [{ manifest: m, jsonPointer: '/metadata/name', message: `checked ${name}`, hint: '' }];
      });
    },
  };
  const cm = (name: string) => `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;

  it('a stack overflow in a rule is reported against the object that causes it, in its file', async () => {
    const content = cm('a') + cm('boom') + cm('c');
    const window = await checkInputStreamWindow(
      (async function* () {
        yield { file: 'objects.yaml', content };
      })(),
      [overflowing],
      Infinity,
    );
    expect(window.shown).toHaveLength(1);
    const failure = window.shown[0]!;
    expect(failure).toMatchObject({
      ruleId: 'TEST-OVERFLOW',
      file: 'objects.yaml',
      line: 6,
      resource: { kind: 'ConfigMap', name: 'boom' },
    });
    expect(failure.message).toMatch(/^internal error in rule TEST-OVERFLOW: Maximum call stack size exceeded/);
    expect(formatText(window.shown, { documents: 3, files: 1 })).toMatch(/^objects\.yaml:6: error TEST-OVERFLOW: internal error/);
  });

  it('deeply nested input is refused before any rule walks it, naming the file and line', async () => {
    let block = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata:\n';
    for (let i = 0, indent = '  '; i < 3000; i++, indent += '  ') block += `${indent}a:\n`;
    const json = `{"apiVersion": "v1", "kind": "ConfigMap", "data": ${'{"a": '.repeat(50_000)}1${'}'.repeat(50_000)}}`;
    const inputs = [
      { file: 'deep.yaml', content: block },
      { file: 'deep-flow.yaml', content: `${cm('first')}---\nx: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n` },
      { file: 'deep-json.yaml', content: `${cm('first')}---\n${json}\n` },
    ];
    const { findings } = parseInputs(inputs);
    expect(findings.map((f) => [f.file, f.line, f.message])).toEqual([
      ['deep.yaml', expect.any(Number), 'document 1 nests deeper than 100 levels'],
      ['deep-flow.yaml', 7, 'document 2 nests deeper than 100 levels'],
      ['deep-json.yaml', 6, 'document 2 nests deeper than 100 levels'],
    ]);
    expect(findings[0]!.line).toBeGreaterThan(100);
    expect(findings.every((f) => f.ruleId === 'KRUISE-INPUT-001')).toBe(true);
  });
});

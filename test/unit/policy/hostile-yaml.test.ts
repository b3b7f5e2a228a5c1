// YAML streams read as YAML defines them and scalars read as kubectl's decoder reads them, consistently in the fast
// path (js-yaml, parse.ts) and the line recovery (`yaml`, locate.ts); plus a seeded, bounded property-based fuzz of
// the whole input path: parsing and every rule never throw or hang and always yield objects or findings.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateInputs } from '../../../src/policy/engine.js';
import { plainKey, resolvePlainScalar } from '../../../src/policy/kube-yaml.js';
import { documentSpans, parseText } from '../../../src/policy/parse.js';

const CLONESET = (extra: string, env = 'value: "1"') => `apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
${extra}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: app
          image: nginx:1.25
          env:
            - name: FEATURE
              ${env}
`;

describe('plain scalars as kubectl reads them (YAML 1.1, go-yaml v2)', () => {
  it('resolvePlainScalar table', () => {
    const table: Array<[string, unknown]> = [
      ['yes', true],
      ['Yes', true],
      ['YES', true],
      ['y', true],
      ['Y', true],
      ['on', true],
      ['ON', true],
      ['true', true],
      ['True', true],
      ['no', false],
      ['n', false],
      ['off', false],
      ['Off', false],
      ['false', false],
      ['FALSE', false],
      ['yEs', 'yEs'],
      ['tRue', 'tRue'],
      ['', null],
      ['~', null],
      ['null', null],
      ['Null', null],
      ['NULL', null],
      ['nULL', 'nULL'],
      ['0', 0],
      ['12', 12],
      ['-12', -12],
      ['+12', 12],
      ['0755', 493],
      ['0o17', 15],
      ['0x1F', 31],
      ['-0x1F', -31],
      ['0b101', 5],
      ['1_000', 1000],
      ['08', 8],
      ['1.5', 1.5],
      ['1e3', 1000],
      ['-1.5e-3', -0.0015],
      ['.5', 0.5],
      ['1.', 1],
      ['.inf', Infinity],
      ['-.Inf', -Infinity],
      ['.NaN', NaN],
      ['1e400', '1e400'],
      ['0x', '0x'],
      ['1:20', '1:20'],
      ['2001-12-14', '2001-12-14'],
      ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05Z'],
      ['+', '+'],
      ['-', '-'],
      ['.', '.'],
      ['_1', '_1'],
      ['12abc', '12abc'],
      ['nginx:1.25', 'nginx:1.25'],
      ['100m', '100m'],
    ];
    for (const [source, expected] of table) expect(resolvePlainScalar(source), source).toEqual(expected);
    expect(plainKey('yes')).toBe('true');
    expect(plainKey('0x10')).toBe('16');
    expect(plainKey('name')).toBe('name');
  });

  it('`value: yes` in an env var is the boolean the API server rejects, reported at that pointer and line', () => {
    const r = validateInputs([{ file: 'env.yaml', content: CLONESET('  replicas: 1', 'value: yes') }]);
    expect(r.findings).toEqual([
      expect.objectContaining({
        ruleId: 'KRUISE-SCHEMA-001',
        jsonPointer: '/spec/template/spec/containers/0/env/0/value',
        line: 15,
        message: 'expected a string, got the boolean true',
      }),
    ]);
    expect(r.findings[0]!.hint).toMatch(/quote the value/i);
    // Quoted, it is the string it looks like.
    expect(validateInputs([{ file: 'env.yaml', content: CLONESET('  replicas: 1', 'value: "yes"') }]).findings).toEqual([]);
  });

  it('`disablePVCReuse: yes` is accepted as true, `replicas: 0x2` as 2', () => {
    const r = validateInputs([{ file: 'pvc.yaml', content: CLONESET('  replicas: 0x2\n  scaleStrategy: {disablePVCReuse: yes}') }]);
    expect(r.findings).toEqual([]);
    expect(
      parseText(CLONESET('  replicas: 0x2\n  scaleStrategy: {disablePVCReuse: yes}'), 'p.yaml').manifests[0]!.object.spec,
    ).toMatchObject({ replicas: 2, scaleStrategy: { disablePVCReuse: true } });
  });

  it('keys are read the same way by the fast path and the line recovery (`on:` is the key "true")', () => {
    const text = CLONESET('  replicas: 1\n  updateStrategy:\n    on: 1');
    const r = validateInputs([{ file: 'k.yaml', content: text }]);
    expect(r.findings).toEqual([expect.objectContaining({ jsonPointer: '/spec/updateStrategy/true', line: 8, column: 5 })]);
  });
});

describe('YAML streams: document markers and directives', () => {
  it('`...` ends a document, a bare document may follow, and directives belong to the next document', () => {
    const text = [
      '%YAML 1.2',
      '%TAG !k! tag:yaml.org,2002:',
      '---',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: a}',
      'data: {num: !k!str 12, n: 1}',
      '...',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: b}',
      '...',
      '%YAML 1.1',
      '--- # comment',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: c, labels: {x: [1}',
      '...',
      '',
    ].join('\n');
    const out = parseText(text, 's.yaml');
    expect(out.manifests.map((m) => [(m.object.metadata as { name: string }).name, m.source!.startLine, m.source!.docIndex])).toEqual([
      ['a', 1, 0],
      ['b', 9, 1],
    ]);
    // `n:` is the key "false" to kubectl (YAML 1.1), the tag handle declared by %TAG resolves.
    expect(out.manifests[0]!.object.data).toEqual({ num: '12', false: 1 });
    // A real syntax error in the third document is reported in it, at its line, and does not hide the others.
    expect(out.findings).toEqual([
      expect.objectContaining({ ruleId: 'KRUISE-INPUT-001', line: 17, message: expect.stringContaining('malformed YAML in document 3') }),
    ]);
  });

  it('a valid stream is never malformed: empty documents, lone markers, comments between documents', () => {
    for (const text of [
      '---\n---\napiVersion: v1\nkind: A\n...\n...\n# trailing\n',
      '...\napiVersion: v1\nkind: A\n',
      'apiVersion: v1\nkind: A\n...\n---\napiVersion: v1\nkind: B\n',
      '# only a comment\n---\napiVersion: v1\nkind: A\n--- |\n  text\n',
      'apiVersion: v1\nkind: A\ndata:\n  s: |\n    ...not a marker when indented\n',
    ]) {
      const out = parseText(text, 'v.yaml');
      expect(
        out.findings.filter((f) => /malformed/.test(f.message)),
        text,
      ).toEqual([]);
      expect(out.manifests.length, text).toBeGreaterThan(0);
    }
    expect(documentSpans('a: 1\n...\nb: 2\n').map((s) => s.explicit)).toEqual([false, false]);
  });

  it('lines of findings after `...` and directives stay right', () => {
    const text =
      '%YAML 1.2\n---\napiVersion: v1\nkind: ConfigMap\n...\n' + CLONESET('  replicas: 1\n  updateStrategy: {maxUnavaliable: 1}');
    const r = validateInputs([{ file: 'l.yaml', content: text }]);
    expect(r.findings).toEqual([expect.objectContaining({ jsonPointer: '/spec/updateStrategy/maxUnavaliable', line: 12 })]);
  });
});

describe('fuzz: the YAML input path never throws, never hangs, always answers', () => {
  // YAML-ish fragments that hit the tricky parts: markers, directives, anchors/aliases, flow and block collections,
  // tags, quotes, merge keys, YAML 1.1 scalars, and Kruise kinds so the rules run on what parses.
  const fragment = fc.constantFrom(
    '---',
    '...',
    '%YAML 1.2',
    '%TAG !e! tag:example.com,2000:',
    '# c',
    '',
    ' ',
    '\t',
    ':',
    '- ',
    '? ',
    '|',
    '>',
    '"',
    "'",
    '{',
    '}',
    '[',
    ']',
    ',',
    '&a',
    '*a',
    '!!str',
    '!e!x',
    '<<: *a',
    'yes',
    'on',
    '0755',
    '0x1F',
    '.inf',
    '~',
    '\u001b[31m',
    '::error::x',
    'apiVersion: apps.kruise.io/v1alpha1',
    'kind: CloneSet',
    'kind: SidecarSet',
    'kind: ImagePullJob',
    'kind: ContainerRecreateRequest',
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata: {name: x, namespace: default}',
    'spec:',
    '  template:',
    '    spec:',
    '      containers:',
    '        - name: app',
    '          image: nginx',
    '  selector: {matchLabels: {a: b}}',
    '  containers: [{name: s, image: "b:1"}]',
    '  image: "nginx:1"',
    '  parallelism: 50%',
    'metadata:',
    '  annotations:',
    '    kruise.io/container-exit-priority: \'{"x":1}\'',
  );
  const document = fc
    .array(fc.oneof({ weight: 4, arbitrary: fragment }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }), { maxLength: 40 })
    .map((parts) => parts.join('\n'));

  it('parse → rules on generated streams', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(fc.array(document, { minLength: 1, maxLength: 4 }), (docs) => {
        const text = docs.join('\n');
        const t0 = performance.now();
        const r = validateInputs([{ file: 'fuzz.yaml', content: text }]);
        expect(performance.now() - t0).toBeLessThan(5000);
        // Always an answer: objects were checked, or a finding says why nothing was.
        expect(r.documents > 0 || r.findings.length > 0).toBe(true);
        for (const f of r.findings) {
          expect(f.message).not.toMatch(/^internal error/);
          expect(f.message.length).toBeLessThanOrEqual(2001);
        }
      }),
      { seed: 20261124, numRuns: 300 },
    );
  });

  it('raw bytes and JSON-ish text', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
          fc.json({ maxDepth: 4 }),
          fc.string({ maxLength: 200 }),
        ),
        (content) => {
          const r = validateInputs([{ file: 'fuzz.json', content }]);
          expect(r.documents > 0 || r.findings.length > 0).toBe(true);
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });
});

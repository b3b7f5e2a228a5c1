import { Testing, Chart, ApiObject } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { decodeInput, parseText } from '../../../src/policy/parse.js';
import { DocumentLocator } from '../../../src/policy/locate.js';
import { validateInputs, validateManifests } from '../../../src/policy/index.js';

const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;

describe('parseText', () => {
  it('splits multi-document YAML and records each document start line', () => {
    const text = `# header comment\n${cm('a')}---\n${cm('b')}--- # trailing comment\n${cm('c')}`;
    const out = parseText(text, 'm.yaml');
    expect(out.findings).toEqual([]);
    expect(out.manifests.map((m) => (m.object.metadata as { name: string }).name)).toEqual(['a', 'b', 'c']);
    expect(out.manifests.map((m) => m.source!.startLine)).toEqual([1, 6, 11]);
    expect(out.manifests.map((m) => m.source!.docIndex)).toEqual([0, 1, 2]);
  });

  it('skips empty documents and keeps going after a malformed one, reporting its line and column', () => {
    const text = `${cm('a')}---\n---\nkind: [\n---\n${cm('c')}`;
    const out = parseText(text, 'm.yaml');
    expect(out.manifests).toHaveLength(2);
    expect(out.findings).toHaveLength(1);
    expect(out.findings[0]).toMatchObject({ ruleId: 'KRUISE-INPUT-001', severity: 'error', file: 'm.yaml', line: 8 });
    expect(out.findings[0]!.message).toMatch(/^malformed YAML in document 3: /);
    expect(out.findings[0]!.message).not.toMatch(/\n\s+at /);
  });

  it('reads JSON objects, JSON arrays and v1 List objects, with pointers into the list', () => {
    expect(parseText(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'j' } }), 'a.json').manifests).toHaveLength(1);
    const list = parseText(
      JSON.stringify(
        {
          apiVersion: 'v1',
          kind: 'List',
          items: [
            { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
            { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'y' } },
          ],
        },
        null,
        2,
      ),
      'l.json',
    );
    expect(list.manifests.map((m) => m.source!.pointerPrefix)).toEqual(['/items/0', '/items/1']);
    const arr = parseText(`[${JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })}]`, 'arr.json');
    expect(arr.manifests[0]!.source!.pointerPrefix).toBe('/0');
  });

  it('locates findings inside List items of a JSON file', () => {
    const list = JSON.stringify(
      {
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } },
          {
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'ImagePullJob',
            metadata: { name: 'p' },
            spec: { image: 'nginx:1.9.1', parallelism: '50%' },
          },
        ],
      },
      null,
      2,
    );
    const r = validateInputs([{ file: 'list.json', content: list }], { rules: ['KRUISE-IMAGEPULLJOB-002'] });
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]!.line).toBe(list.split('\n').findIndex((l) => l.includes('"parallelism"')) + 1);
    expect(r.findings[0]!.jsonPointer).toBe('/spec/parallelism');
  });

  it('reads JSON leniently like kubectl (as YAML) and reports real syntax errors with their line', () => {
    expect(
      parseText('{\n  "apiVersion": "v1",\n  "kind": ConfigMap,\n  "metadata": {"name": "x"}\n}\n', 'lenient.json').manifests,
    ).toHaveLength(1);
    const out = parseText('{\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n  "metadata": {"name": "x"\n', 'bad.json');
    expect(out.findings[0]).toMatchObject({ ruleId: 'KRUISE-INPUT-001', file: 'bad.json' });
    expect(out.findings[0]!.line).toBeGreaterThanOrEqual(4);
    expect(out.findings[0]!.message).toMatch(/^malformed YAML in document 1/);
  });

  it('reports documents that are not objects or lack apiVersion/kind', () => {
    const out = parseText('just a string\n---\n- 1\n---\nmetadata: {name: x}\n', 's.yaml');
    expect(out.manifests).toEqual([]);
    expect(out.findings.map((f) => f.message)).toEqual([
      expect.stringMatching(/document 1 is a string/),
      expect.stringMatching(/document 2 at \/0 is a number/),
      expect.stringMatching(/document 3 has no apiVersion and no kind/),
    ]);
  });

  it('warns about empty and comment-only input', () => {
    for (const text of ['', '   \n', '# only a comment\n', '---\n...\n']) {
      const out = parseText(text, 'e.yaml');
      expect(out.manifests).toEqual([]);
      expect(out.findings).toEqual([expect.objectContaining({ ruleId: 'KRUISE-INPUT-002', severity: 'warning' })]);
    }
  });

  it('handles CRLF line endings and inline content after ---', () => {
    const out = parseText(
      cm('a').replace(/\n/g, '\r\n') +
        '---\r\n' +
        cm('b').replace(/\n/g, '\r\n') +
        '--- {apiVersion: v1, kind: Secret, metadata: {name: c}}\r\n',
      'crlf.yaml',
    );
    expect(out.findings).toEqual([]);
    expect(out.manifests.map((m) => m.object.kind)).toEqual(['ConfigMap', 'ConfigMap', 'Secret']);
  });

  it('resolves anchors, aliases and merge keys like kubectl', () => {
    const out = parseText(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\nx: &base {a: "1"}\ndata:\n  <<: *base\n  b: "2"\n',
      'merge.yaml',
    );
    expect(out.manifests[0]!.object.data).toEqual({ a: '1', b: '2' });
  });

  it("keeps YAML timestamps as strings but reads yes/no as booleans, as kubectl's YAML 1.1 decoder does", () => {
    const out = parseText(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t, creationTimestamp: 2024-01-02T03:04:05Z}\ndata: {a: yes}\n',
      't.yaml',
    );
    const obj = out.manifests[0]!.object as { metadata: { creationTimestamp: unknown }; data: { a: unknown } };
    expect(obj.metadata.creationTimestamp).toBe('2024-01-02T03:04:05Z');
    expect(obj.data.a).toBe(true);
  });
});

describe('decodeInput', () => {
  it('refuses binary, UTF-16 and invalid UTF-8 input with a clear finding', () => {
    const bin = decodeInput(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]), 'a.out');
    expect(bin).toMatchObject({ ruleId: 'KRUISE-INPUT-001', file: 'a.out', message: expect.stringMatching(/binary input/) });
    expect(decodeInput(new Uint8Array([0xff, 0xfe, 0x61, 0]), 'u16.yaml')).toMatchObject({ message: expect.stringMatching(/UTF-16/) });
    expect(decodeInput(new Uint8Array([0x61, 0xc3, 0x28]), 'latin.yaml')).toMatchObject({
      message: expect.stringMatching(/not valid UTF-8/),
    });
    expect(decodeInput(new TextEncoder().encode('\ufeffkind: x'), 'bom.yaml')).toBe('kind: x');
  });
});

describe('DocumentLocator', () => {
  const text = `${cm('first')}---\n# comment\napiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata:\n  name: web\nspec:\n  updateStrategy:\n    maxUnavaliable: 1\n  template:\n    spec:\n      containers:\n        - name: a\n        - name: b\n          image: nginx\n`;
  const second = parseText(text, 'x.yaml').manifests[1]!;

  it('locates keys (for unknown fields), list items and missing fields (deepest existing ancestor)', () => {
    const loc = new DocumentLocator(second.source!);
    expect(loc.locate('/spec/updateStrategy/maxUnavaliable')).toEqual({ line: 13, column: 5 });
    expect(loc.locate('/spec/template/spec/containers/1/image')).toEqual({ line: 19, column: 11 });
    expect(loc.locate('/spec/template/spec/containers/1')).toEqual({ line: 18, column: 11 });
    expect(loc.locate('/spec/replicas')).toEqual({ line: 11, column: 1 });
    expect(loc.locate('')).toEqual({ line: 7, column: 1 });
  });

  it('unescapes ~1 and ~0 in pointers', () => {
    const src = parseText('apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:\n    a/b~c: x\n', 'p.yaml').manifests[0]!.source!;
    expect(new DocumentLocator(src).locate('/metadata/annotations/a~1b~0c').line).toBe(5);
  });
});

describe('in-process API', () => {
  it('validateManifests checks objects from Testing.synth (no file or line)', () => {
    const chart = new Chart(Testing.app(), 'test');
    new ApiObject(chart, 'pull', {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: { name: 'pull' },
      spec: { image: 'nginx:1.9.1', parallelism: '50%', completionPolicy: { type: 'Always' } },
    });
    const findings = validateManifests(Testing.synth(chart));
    expect(findings.map((f) => f.ruleId)).toContain('KRUISE-IMAGEPULLJOB-002');
    const f = findings.find((x) => x.ruleId === 'KRUISE-IMAGEPULLJOB-002')!;
    expect(f).toMatchObject({ jsonPointer: '/spec/parallelism', resource: { kind: 'ImagePullJob', name: 'pull' } });
    expect(f.file).toBeUndefined();
    expect(validateManifests(Testing.synth(chart), { skipRules: ['KRUISE-IMAGEPULLJOB-002', 'KRUISE-SCHEMA-001'] })).toEqual([]);
  });

  it('rejects unknown rule ids with a suggestion', () => {
    expect(() => validateInputs([], { rules: ['KRUISE-SIDECAR-01'] })).toThrow(
      /unknown rule id "KRUISE-SIDECAR-01".*did you mean KRUISE-SIDECAR-001/,
    );
  });

  it('recovers lines only through the fast path parse: many clean documents, one finding at the right line', () => {
    const docs = Array.from({ length: 500 }, (_, i) => cm(`c${i}`)).join('---\n');
    const bad =
      'apiVersion: apps.kruise.io/v1alpha1\nkind: ImagePullJob\nmetadata: {name: p}\nspec:\n  image: nginx:1.9.1\n  parallelism: "5%"\n';
    const result = validateInputs([{ file: 'big.yaml', content: `${docs}---\n${bad}` }], { rules: ['KRUISE-IMAGEPULLJOB-002'] });
    expect(result.documents).toBe(501);
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]!.line).toBe(500 * 5 + 6);
  });
});

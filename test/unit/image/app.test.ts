import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleCli, outputOf, outputsLoaded, packageRootOf, staticallyLoaded, thirdPartyLicenses } from '../../../src/image/app.js';
import { APP_MAIN, NODE_PATH } from '../../../src/image/spec.js';
import { findRepoRoot } from '../../../src/image/build.js';

describe('packageRootOf', () => {
  it.each([
    ['node_modules/yaml/dist/index.js', 'node_modules/yaml'],
    ['node_modules/@grpc/grpc-js/build/src/index.js', 'node_modules/@grpc/grpc-js'],
    ['node_modules/a/node_modules/@s/b/lib/x.js', 'node_modules/a/node_modules/@s/b'],
    ['src/cli/main.ts', undefined],
  ])('%s -> %s', (input, root) => {
    expect(packageRootOf(input)).toBe(root);
  });
});

describe('thirdPartyLicenses', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdk8s-kruise-licenses-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const pkg = (root: string, json: object, files: Record<string, string>) => {
    mkdirSync(join(dir, root), { recursive: true });
    writeFileSync(join(dir, root, 'package.json'), JSON.stringify(json));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, root, name), text);
  };
  pkg('node_modules/zeta', { name: 'zeta', version: '1.0.0', license: 'MIT' }, { 'LICENSE.md': 'MIT text of zeta' });
  pkg('node_modules/@s/alpha', { name: '@s/alpha', version: '2.0.0', license: 'ISC' }, { license: 'ISC text of alpha' });
  pkg('node_modules/bare', { name: 'bare', version: '0.1.0', license: 'Unlicense' }, {});

  it('collects one notice per bundled package, sorted, with the licence text or what package.json declares', () => {
    const text = thirdPartyLicenses(dir, [
      'node_modules/zeta/index.js',
      'node_modules/zeta/lib/more.js',
      'node_modules/bare/index.js',
      'node_modules/@s/alpha/a.js',
      'src/cli/main.ts',
    ]).toString();
    const headings = text.match(/^\S+@\S+ \(.*\)$/gm);
    expect(headings).toEqual(['@s/alpha@2.0.0 (ISC)', 'bare@0.1.0 (Unlicense)', 'zeta@1.0.0 (MIT)']);
    expect(text).toContain('ISC text of alpha');
    expect(text).toContain('MIT text of zeta');
    expect(text).toContain('(the package ships no licence file; package.json declares "Unlicense")');
  });
});

describe('bundleCli', () => {
  it('bundles ASCII only (Node keeps it one byte per character), without client-node generated classes, undici or an ES import of node:http, licence comments in the notices', async () => {
    const { files, licenses } = await bundleCli(findRepoRoot());
    const code = files.map((f) => f.content.toString()).join('\n');
    for (const f of files)
      expect(
        f.content.findIndex((b) => b > 0x7f),
        f.path,
      ).toBe(-1);
    // The generated models carry a static attributeTypeMap each; the runtime's client needs none of them.
    expect(code).not.toContain('attributeTypeMap');
    expect(code).toContain('createConfiguration');
    // node:http only through require: an ES import would load Node's own undici through its lazy exports.
    expect(code).not.toMatch(/\bfrom\s*["'](node:)?http["']/);
    expect(code).not.toMatch(/\bimport\s*\(\s*["'](node:)?http["']/);
    expect(code).toContain('__require("node:http")');
    // The runtime's client sends through node:https; client-node's undici transport is left out.
    expect(code).not.toContain('node_modules/undici/');
    expect(code).toContain('undici is not in the cdk8s-kruise bundle');
    const notices = licenses.toString();
    expect(notices).toContain('Licence comments of the bundled sources');
    expect(notices).toContain('@license');
  }, 60_000);

  it('splits into the main file and chunks next to it that load as ES modules: shebang on the main file only, the require shim in each', async () => {
    const { files, metafile } = await bundleCli(findRepoRoot());
    expect(files[0]!.path).toBe(APP_MAIN);
    const chunks = files.slice(1);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks)
      expect(c.path, 'chunks live below the main file, named by content hash').toMatch(/^\/app\/bin\/chunks\/[\w-]+-[A-Z0-9]{8}\.mjs$/);
    const shim =
      "import { createRequire as __cdk8sKruiseCreateRequire } from 'node:module';\nconst require = __cdk8sKruiseCreateRequire(import.meta.url);";
    expect(files[0]!.content.toString().startsWith(`#!${NODE_PATH}\n${shim}`)).toBe(true);
    for (const c of chunks) expect(c.content.toString().startsWith(shim), c.path).toBe(true);
    // Every relative import (static or import()) in the code names a file of the bundle, resolved from the
    // importing file, and they are the imports esbuild recorded for that file.
    const paths = new Set(files.map((f) => f.path));
    let imports = 0;
    for (const f of files) {
      const specifiers = [...f.content.toString().matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)"(\.{1,2}\/[^"]+)"/g)].map(
        (m) => m[1]!,
      );
      const resolved = new Set(specifiers.map((s) => posix.join(posix.dirname(f.path), s)));
      for (const r of resolved) expect(paths, `${f.path} imports ${r}`).toContain(r);
      const recorded = metafile.outputs[f.path.slice(1)]!.imports.filter((i) => !i.external).map((i) => `/${i.path}`);
      expect(resolved, f.path).toEqual(new Set(recorded));
      imports += resolved.size;
    }
    expect(imports).toBeGreaterThan(files.length);
  }, 60_000);

  it('keeps what an idle manager never runs out of what it loads at start (bench/memory-peer.bench.ts)', async () => {
    const { files, metafile } = await bundleCli(findRepoRoot());
    // The controller command loads the manager through import(); the manager then loads what it loads.
    const loaded = [...staticallyLoaded(metafile, ['src/cli/main.ts', 'src/runtime/manager/manager.ts'])];
    expect(loaded).toContain('src/runtime/core/webhook/certmanager.ts');
    // The X.509 builder loads only when a certificate must be issued; a good Secret needs node:crypto alone.
    expect(loaded.filter((i) => i.includes('node_modules/@peculiar/') || i.includes('cert-issuer'))).toEqual([]);
    // The API model's schemas (and the schema library) load with the admission rules, on their first request.
    expect(loaded.filter((i) => i.includes('node_modules/@sinclair/typebox') || i === 'src/api/registry.ts')).toEqual([]);
    // The node daemon's CRI client is not the manager's.
    expect(loaded.filter((i) => i.includes('node_modules/@grpc/'))).toEqual([]);

    // The files the manager reads (the main file, the manager's chunk and what they import statically) hold
    // none of that code either: Node keeps the source text of every file it loads for the process's life.
    const main = APP_MAIN.slice(1);
    const read = outputsLoaded(metafile, [main, outputOf(metafile, 'src/runtime/manager/manager.ts')]);
    expect(read).toContain(main);
    const inputsRead = [...read].flatMap((o) => Object.keys(metafile.outputs[o]!.inputs));
    expect(inputsRead).toContain('src/runtime/core/webhook/certmanager.ts');
    const notForTheManager = [
      'node_modules/@grpc/', // the daemon's CRI client
      'node_modules/protobufjs/',
      'node_modules/yaml/', // validate / synth
      'node_modules/ajv',
      'node_modules/@sinclair/typebox/', // the admission rules' schemas
      'node_modules/@peculiar/', // the certificate issuer
      'src/runtime/cri/',
      'src/cli/commands/synth-run.ts',
      'src/cli/commands/apply-run.ts',
    ];
    expect(inputsRead.filter((i) => notForTheManager.some((p) => i.startsWith(p)))).toEqual([]);
    // The split is what makes the difference: the manager reads well under half of the bundle's bytes.
    const bytes = (paths: Iterable<string>) => [...paths].reduce((n, p) => n + metafile.outputs[p]!.bytes, 0);
    const all = files.reduce((n, f) => n + f.content.length, 0);
    expect(bytes(read) / all).toBeLessThan(0.4);
  }, 60_000);
});

describe('thirdPartyLicenses with licence comments', () => {
  it('appends the comments esbuild kept out of the bundle after the package notices', () => {
    const text = thirdPartyLicenses(findRepoRoot(), [], '/*! a comment by J\u00e4rting */').toString();
    expect(text).toMatch(/Licence comments of the bundled sources .*\n\n\/\*! a comment by J\u00e4rting \*\/\n$/);
  });
});

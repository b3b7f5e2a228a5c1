import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleCli, packageRootOf, staticallyLoaded, thirdPartyLicenses } from '../../src/image/app.js';
import { findRepoRoot } from '../../src/image/build.js';

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
    const { code, licenses } = await bundleCli(findRepoRoot());
    expect(code.findIndex((b) => b > 0x7f)).toBe(-1);
    // The generated models carry a static attributeTypeMap each; the runtime's client needs none of them.
    expect(code.toString()).not.toContain('attributeTypeMap');
    expect(code.toString()).toContain('createConfiguration');
    // node:http only through require: an ES import would load Node's own undici through its lazy exports.
    expect(code.toString()).not.toMatch(/\bfrom\s*["'](node:)?http["']/);
    expect(code.toString()).toContain('__require("node:http")');
    // The runtime's client sends through node:https; client-node's undici transport is left out.
    expect(code.toString()).not.toContain('node_modules/undici/');
    expect(code.toString()).toContain('undici is not in the cdk8s-kruise bundle');
    const notices = licenses.toString();
    expect(notices).toContain('Licence comments of the bundled sources');
    expect(notices).toContain('@license');
  }, 60_000);

  it('keeps what an idle manager never runs out of what it loads at start (bench/memory-peer.bench.ts)', async () => {
    const { metafile } = await bundleCli(findRepoRoot());
    // The controller command loads the manager through import(); the manager then loads what it loads.
    const loaded = [...staticallyLoaded(metafile, ['src/cli/main.ts', 'src/runtime/manager/manager.ts'])];
    expect(loaded).toContain('src/runtime/core/webhook/certmanager.ts');
    // The X.509 builder loads only when a certificate must be issued; a good Secret needs node:crypto alone.
    expect(loaded.filter((i) => i.includes('node_modules/@peculiar/') || i.includes('cert-issuer'))).toEqual([]);
    // The API model's schemas (and the schema library) load with the admission rules, on their first request.
    expect(loaded.filter((i) => i.includes('node_modules/@sinclair/typebox') || i === 'src/api/registry.ts')).toEqual([]);
    // The node daemon's CRI client is not the manager's.
    expect(loaded.filter((i) => i.includes('node_modules/@grpc/'))).toEqual([]);
  }, 60_000);
});

describe('thirdPartyLicenses with licence comments', () => {
  it('appends the comments esbuild kept out of the bundle after the package notices', () => {
    const text = thirdPartyLicenses(findRepoRoot(), [], '/*! a comment by J\u00e4rting */').toString();
    expect(text).toMatch(/Licence comments of the bundled sources .*\n\n\/\*! a comment by J\u00e4rting \*\/\n$/);
  });
});

// The constructs entries load their optional cdk8s-plus peer through the loaders the package build writes
// (scripts/build-package.ts, constructs/internal/plus-peer.ts): an app that has only the other cdk8s-plus, or
// none, is told which entry point to import, by `require` and by `import` alike; an app that has the right one
// gets that copy's classes. The library is built into a temporary app's node_modules (no packing).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLUS, PLUS_VARIANTS, buildLibrary } from '../../scripts/build-package.js';
import {
  PLUS_ENTRY_POINTS,
  missingPlusPeerError,
  missingPlusPeerMessage,
  type PeerResolver,
  type PlusPackage,
} from '../../constructs/internal/plus-peer.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
};
const PLUS = Object.keys(PLUS_ENTRY_POINTS) as PlusPackage[];

const ON_27 =
  "cdk8s-kruise/constructs is built against cdk8s-plus-27, which is not installed; this app has cdk8s-plus-33: import from 'cdk8s-kruise/constructs/plus-33'";
const ON_33 =
  "cdk8s-kruise/constructs/plus-33 is built against cdk8s-plus-33, which is not installed; this app has cdk8s-plus-27: import from 'cdk8s-kruise/constructs'";

let app: string;

/** Leaves exactly `installed` of the cdk8s-plus packages in the app's node_modules. */
function installPlus(...installed: PlusPackage[]): void {
  for (const plus of PLUS) {
    const at = path.join(app, 'node_modules', plus);
    rmSync(at, { force: true });
    if (installed.includes(plus)) symlinkSync(path.join(repoRoot, 'node_modules', plus), at, 'dir');
  }
}

/** Runs `code` in the app, as CommonJS or as an ES module. */
function run(code: string, format: 'cjs' | 'esm') {
  const args = format === 'esm' ? ['--input-type=module', '-e', code] : ['-e', code];
  return spawnSync(process.execPath, args, { cwd: app, encoding: 'utf8' });
}

const load = (entry: string, format: 'cjs' | 'esm') =>
  run(format === 'esm' ? `await import(${JSON.stringify(entry)});` : `require(${JSON.stringify(entry)});`, format);

/** Whether the entry's CloneSet extends the Workload of `plus` as the app loads it (one copy of cdk8s-plus). */
const extendsAppsWorkload = (entry: string, plus: string, format: 'cjs' | 'esm') =>
  run(
    format === 'esm'
      ? `const k = await import(${JSON.stringify(entry)}); const p = await import(${JSON.stringify(plus)}); console.log(Object.getPrototypeOf(k.CloneSet) === p.Workload);`
      : `const k = require(${JSON.stringify(entry)}); const p = require(${JSON.stringify(plus)}); console.log(Object.getPrototypeOf(k.CloneSet) === p.Workload);`,
    format,
  );

beforeAll(async () => {
  app = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-plus-peer-'));
  const installed = path.join(app, 'node_modules', 'cdk8s-kruise');
  mkdirSync(installed, { recursive: true });
  copyFileSync(path.join(repoRoot, 'package.json'), path.join(installed, 'package.json'));
  await buildLibrary(path.join(installed, 'lib'));
  for (const name of [...Object.keys(pkg.dependencies), 'cdk8s', 'constructs']) {
    mkdirSync(path.dirname(path.join(app, 'node_modules', name)), { recursive: true });
    symlinkSync(path.join(repoRoot, 'node_modules', name), path.join(app, 'node_modules', name), 'dir');
  }
}, 120_000);

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

describe('a missing cdk8s-plus peer', () => {
  it('the message names the entry point built against the cdk8s-plus the app has', () => {
    expect(missingPlusPeerMessage('cdk8s-plus-27', ['cdk8s-plus-33'])).toBe(ON_27);
    expect(missingPlusPeerMessage('cdk8s-plus-33', ['cdk8s-plus-27'])).toBe(ON_33);
    expect(missingPlusPeerMessage('cdk8s-plus-27', [])).toBe(
      "cdk8s-kruise/constructs is built against cdk8s-plus-27, which is not installed, nor is any other cdk8s-plus: install it (npm install cdk8s-plus-27), or use cdk8s-plus-33 and 'cdk8s-kruise/constructs/plus-33'",
    );
  });

  it('other load failures pass through unchanged (a broken peer, a missing dependency of it)', () => {
    const notFound = Object.assign(new Error("Cannot find module 'cdk8s-plus-27'"), { code: 'MODULE_NOT_FOUND' });
    const resolver = (present: string[]): PeerResolver => ({
      resolve: (id) => {
        if (present.includes(id)) return `/app/node_modules/${id}/lib/index.js`;
        throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
      },
    });
    expect((missingPlusPeerError('cdk8s-plus-27', notFound, resolver(['cdk8s-plus-33'])) as Error).message).toBe(ON_27);
    expect((missingPlusPeerError('cdk8s-plus-27', notFound, resolver(['cdk8s-plus-33'])) as Error).cause).toBe(notFound);
    // The peer is there, something it requires is not.
    const nested = Object.assign(new Error("Cannot find module 'minimatch'"), { code: 'MODULE_NOT_FOUND' });
    expect(missingPlusPeerError('cdk8s-plus-27', nested, resolver(['cdk8s-plus-27']))).toBe(nested);
    const syntax = new SyntaxError('Unexpected token');
    expect(missingPlusPeerError('cdk8s-plus-27', syntax, resolver([]))).toBe(syntax);
    expect(missingPlusPeerError('left-pad', notFound, resolver([]))).toBe(notFound);
  });

  it('PLUS_ENTRY_POINTS names the package exports the build makes for each cdk8s-plus', () => {
    const built: Record<string, string> = { [DEFAULT_PLUS]: './lib/cjs/constructs.cjs' };
    for (const [plus, name] of Object.entries(PLUS_VARIANTS)) built[plus] = `./lib/cjs/${name}.cjs`;
    expect(Object.keys(built).sort()).toEqual([...PLUS].sort());
    for (const [plus, entry] of Object.entries(PLUS_ENTRY_POINTS)) {
      const sub = `.${entry.slice('cdk8s-kruise'.length)}`;
      expect((pkg.exports[sub] as Record<string, string>).require, `${entry} is built against ${plus}`).toBe(built[plus]);
    }
  });

  for (const format of ['cjs', 'esm'] as const) {
    it(`${format}: an app with only cdk8s-plus-33 is sent to 'cdk8s-kruise/constructs/plus-33', which loads its copy`, () => {
      installPlus('cdk8s-plus-33');
      const wrong = load('cdk8s-kruise/constructs', format);
      expect(wrong.status).not.toBe(0);
      expect(wrong.stderr).toContain(`Error: ${ON_27}\n`);
      expect(extendsAppsWorkload('cdk8s-kruise/constructs/plus-33', 'cdk8s-plus-33', format)).toMatchObject({
        status: 0,
        stdout: 'true\n',
      });
    });

    it(`${format}: an app with only cdk8s-plus-27 is sent to 'cdk8s-kruise/constructs', which loads its copy`, () => {
      installPlus('cdk8s-plus-27');
      const wrong = load('cdk8s-kruise/constructs/plus-33', format);
      expect(wrong.status).not.toBe(0);
      expect(wrong.stderr).toContain(`Error: ${ON_33}\n`);
      expect(extendsAppsWorkload('cdk8s-kruise/constructs', 'cdk8s-plus-27', format)).toMatchObject({ status: 0, stdout: 'true\n' });
    });

    it(`${format}: an app with no cdk8s-plus is told to install one; the root entry loads without any`, () => {
      installPlus();
      const wrong = load('cdk8s-kruise/constructs', format);
      expect(wrong.stderr).toContain(
        'Error: cdk8s-kruise/constructs is built against cdk8s-plus-27, which is not installed, nor is any other',
      );
      expect(run(format === 'esm' ? "await import('cdk8s-kruise');" : "require('cdk8s-kruise');", format)).toMatchObject({ status: 0 });
    });
  }
});

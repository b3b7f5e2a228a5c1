// The package's entry points (package.json main/exports/bin) against the sources they are built from: the
// documented names exist, the root entry loads no cdk8s, and everything the shipped code imports is a
// dependency or peer (a devDependency would install fine here but break `npm install cdk8s-kruise`).
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  main: string; types: string; bin: Record<string, string>; exports: Record<string, string>; files: string[];
  scripts: Record<string, string>; dependencies: Record<string, string>; peerDependencies: Record<string, string>;
};

/** `lib/src/x.js` -> `src/x.ts` (tsc's rootDir is the repo root, outDir lib). */
const sourceOf = (target: string) => target.replace(/^\.\//, '').replace(/^lib\//, '').replace(/\.js$/, '.ts');

/** Bare package names an entry imports (transitively through our own modules), by esbuild's module graph. */
async function packagesImportedBy(entry: string): Promise<Set<string>> {
  const result = await build({
    entryPoints: [path.join(repoRoot, entry)], bundle: true, write: false, metafile: true,
    platform: 'node', format: 'esm', packages: 'external', logLevel: 'silent',
  });
  const names = new Set<string>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imp of input.imports) {
      if (!imp.external || imp.path.startsWith('node:') || builtinModules.includes(imp.path)) continue;
      names.add(imp.path.startsWith('@') ? imp.path.split('/').slice(0, 2).join('/') : imp.path.split('/')[0]!);
    }
  }
  return names;
}

describe('package entry points', () => {
  it('root (cdk8s-kruise) exports the documented API', () => {
    for (const name of [
      // API model
      'validateObject', 'KINDS', 'toCustomResourceDefinition', 'jsonSchemaFor',
      // policy engine, in process
      'validateManifests', 'validateInputs', 'selectRules', 'summarize', 'RULES', 'findRule', 'KruiseValidation',
      'formatSarif', 'formatJson', 'formatText',
      // feature-gate model
      'FEATURE_GATES', 'requiredGates', 'resolveGates',
      'packageVersion',
    ]) {
      expect(root, name).toHaveProperty(name);
    }
    expect(root.validateManifests([{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'x' }, spec: { replicas: 'two' } }])
      .some((f) => f.severity === 'error')).toBe(true);
  });

  it('main, types, exports and bin point at files built from existing sources and shipped in `files`', () => {
    expect(pkg.main).toBe(pkg.exports['.']?.replace(/^\.\//, ''));
    expect(pkg.types).toBe(pkg.main.replace(/\.js$/, '.d.ts'));
    const shipped = (p: string) => pkg.files.some((f) => !f.startsWith('!') && (p === f || p.startsWith(`${f}/`)));
    for (const [sub, target] of Object.entries(pkg.exports)) {
      const rel = target.replace(/^\.\//, '');
      if (sub === './package.json') continue;
      expect(shipped(rel), `${sub} -> ${rel} is in "files"`).toBe(true);
      if (rel.endsWith('.cjs')) {
        // Bundled by esbuild, not tsc: `npm run build` must produce it.
        expect(pkg.scripts['build:plugin']).toContain(`--outfile=${rel}`);
        expect(pkg.scripts.build).toContain('npm run build:plugin');
      } else {
        expect(existsSync(path.join(repoRoot, sourceOf(rel))), `${sub} -> ${rel} is built from ${sourceOf(rel)}`).toBe(true);
      }
    }
    for (const target of Object.values(pkg.bin)) {
      expect(shipped(target), `bin ${target} is in "files"`).toBe(true);
      expect(existsSync(path.join(repoRoot, sourceOf(target)))).toBe(true);
    }
  });

  it('the root entry loads no cdk8s (manifests can be checked without the peers installed)', async () => {
    const imported = await packagesImportedBy('src/index.ts');
    for (const peer of ['cdk8s', 'cdk8s-plus-27', 'constructs']) expect(imported).not.toContain(peer);
  });

  it('everything the shipped entry points import is a dependency or a peer dependency', async () => {
    const declared = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]);
    const entries = [...Object.values(pkg.exports), ...Object.values(pkg.bin)]
      .map((t) => t.replace(/^\.\//, ''))
      .filter((t) => t.endsWith('.js'))
      .map(sourceOf);
    entries.push('src/policy/cdk8s-plugin.ts');
    const undeclared: string[] = [];
    for (const entry of entries) {
      for (const name of await packagesImportedBy(entry)) if (!declared.has(name)) undeclared.push(`${entry}: ${name}`);
    }
    expect(undeclared).toEqual([]);
  });
});

// The package's entry points (package.json main/exports/bin) against the build that produces them: the
// documented names exist, the root entry loads no cdk8s, and everything the library entries import is a
// dependency or peer (a devDependency would install fine here but break `npm install cdk8s-kruise`), while
// the runtime's libraries stay devDependencies (bundled, never installed into apps).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import { LIBRARY_ENTRIES } from '../../scripts/build-package.js';
import { MIN_CLI_NODE, MIN_RUNTIME_NODE, nodeAtLeast, unsupportedNodeMessage } from '../../src/cli/node-support.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  version: string;
  main: string;
  types: string;
  bin: Record<string, string>;
  files: string[];
  engines: { node: string };
  exports: Record<string, string | Record<string, string>>;
  typesVersions: Record<string, Record<string, string[]>>;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Bare package names an entry imports (transitively through our own modules), by esbuild's module graph. */
async function packagesImportedBy(entry: string): Promise<Set<string>> {
  const result = await build({
    entryPoints: [path.join(repoRoot, entry)],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
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
      'validateObject',
      'KINDS',
      'toCustomResourceDefinition',
      'jsonSchemaFor',
      // policy engine, in process
      'validateManifests',
      'validateChart',
      'errorsOf',
      'validateInputs',
      'selectRules',
      'summarize',
      'RULES',
      'findRule',
      'KruiseValidation',
      'formatSarif',
      'formatJson',
      'formatText',
      // feature-gate model
      'FEATURE_GATES',
      'requiredGates',
      'resolveGates',
      'packageVersion',
    ]) {
      expect(root, name).toHaveProperty(name);
    }
    expect(
      root
        .validateManifests([
          { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'x' }, spec: { replicas: 'two' } },
        ])
        .some((f) => f.severity === 'error'),
    ).toBe(true);
  });

  it('main, types, exports and bin point at outputs of the package build, all shipped in `files`', () => {
    const shipped = (p: string) => pkg.files.some((f) => p === f || p.startsWith(`${f}/`));
    const targets: string[] = [pkg.main, pkg.types, ...Object.values(pkg.bin)];
    for (const [sub, target] of Object.entries(pkg.exports)) {
      if (sub === './package.json') continue;
      if (typeof target === 'string') targets.push(target);
      else targets.push(...Object.values(target));
    }
    for (const target of targets) expect(shipped(target.replace(/^\.\//, '')), `${target} is in "files"`).toBe(true);
    // Every library entry is built for import and require, with typings for both, from LIBRARY_ENTRIES.
    for (const [name, source] of Object.entries(LIBRARY_ENTRIES)) {
      const sub = name === 'index' ? '.' : `./${name}`;
      const typesPath = `./lib/types/${source.replace(/\.ts$/, '.d.ts')}`;
      expect(pkg.exports[sub]).toEqual({ types: typesPath, import: `./lib/esm/${name}.js`, require: `./lib/cjs/${name}.cjs` });
      expect(existsSync(path.join(repoRoot, source))).toBe(true);
    }
    // node10 resolution (the `cdk8s init` app) reads main/types and typesVersions, not exports.
    expect(pkg.main).toBe('lib/cjs/index.cjs');
    expect(pkg.types).toBe('lib/types/src/index.d.ts');
    expect(pkg.typesVersions['*']!.constructs).toEqual(['lib/types/constructs/index.d.ts']);
    expect(pkg.bin['cdk8s-kruise']).toBe('lib/cli/cdk8s-kruise.mjs');
    expect(pkg.scripts.prepare).toBe('npm run build');
    expect(pkg.scripts.build).toContain('scripts/build-package.ts');
  });

  it('engines states the oldest Node the compiler commands support, the one bin.ts checks', () => {
    expect(pkg.engines.node).toBe(`>=${MIN_CLI_NODE}`);
    expect(nodeAtLeast('v20.19.0', MIN_CLI_NODE)).toBe(true);
    expect(nodeAtLeast('v18.20.4', MIN_CLI_NODE)).toBe(false);
    expect(unsupportedNodeMessage('cdk8s-kruise', 'v18.20.4', MIN_CLI_NODE)).toMatch(
      /needs Node\.js >= 20\.19\.0, but this is Node\.js v18\.20\.4/,
    );
    expect(unsupportedNodeMessage('`cdk8s-kruise controller`', 'v22.12.0', MIN_RUNTIME_NODE)).toMatch(/controller.*needs Node\.js >= 24/);
    expect(unsupportedNodeMessage('cdk8s-kruise', 'v24.21.0', MIN_RUNTIME_NODE)).toBeUndefined();
  });

  it('the binary answers --version as the full CLI does, without loading the parser or any command', async () => {
    // The modules bin.ts loads before it can answer: its static imports, transitively (what it imports
    // dynamically, main.ts and the commands, loads only for other arguments).
    const result = await build({
      entryPoints: [path.join(repoRoot, 'src/cli/bin.ts')],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'silent',
    });
    const inputs = result.metafile.inputs;
    const loaded = new Set<string>();
    const visit = (file: string) => {
      if (loaded.has(file)) return;
      loaded.add(file);
      for (const imp of inputs[file]?.imports ?? []) if (imp.kind === 'import-statement') visit(imp.path);
    };
    visit('src/cli/bin.ts');
    expect([...loaded].filter((f) => !f.startsWith('node:')).sort()).toEqual([
      'src/cli/bin.ts',
      'src/cli/node-support.ts',
      'src/version.ts',
    ]);
    const run = (args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli/bin.ts'), ...args], { cwd: repoRoot, encoding: 'utf8' });
    const full = spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli/main.ts'), '--version'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    expect(full.stdout).toBe(`${pkg.version}\n`);
    for (const flag of ['--version', '-V']) expect(run([flag])).toMatchObject({ status: 0, stdout: full.stdout, stderr: '' });
    // Anything else goes to the full CLI.
    expect(run(['--help'])).toMatchObject({ status: 0, stdout: expect.stringMatching(/validate \[options\] <paths\.\.\.>/) });
  });

  it('the root entry loads no cdk8s (manifests can be checked without the peers installed)', async () => {
    const imported = await packagesImportedBy('src/index.ts');
    for (const peer of ['cdk8s', 'cdk8s-plus-27', 'constructs']) expect(imported).not.toContain(peer);
  });

  it('everything the library entries import is a dependency or a peer dependency', async () => {
    const declared = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]);
    const undeclared: string[] = [];
    for (const entry of [...Object.values(LIBRARY_ENTRIES), 'src/policy/cdk8s-plugin.ts']) {
      for (const name of await packagesImportedBy(entry)) if (!declared.has(name)) undeclared.push(`${entry}: ${name}`);
    }
    expect(undeclared).toEqual([]);
  });

  it('the runtime-only libraries are devDependencies, bundled into the CLI and the image, never installed into apps', async () => {
    const runtimeOnly = [
      '@kubernetes/client-node',
      '@grpc/grpc-js',
      '@grpc/proto-loader',
      'protobufjs',
      'pino',
      'prom-client',
      '@peculiar/x509',
      'commander',
    ];
    for (const name of runtimeOnly) {
      expect(pkg.dependencies, name).not.toHaveProperty(name);
      expect(pkg.devDependencies, name).toHaveProperty(name);
    }
    // The library entries reach none of them, not even through a type the published typings would name.
    for (const entry of Object.values(LIBRARY_ENTRIES)) {
      const imported = await packagesImportedBy(entry);
      for (const name of runtimeOnly.filter((n) => n !== 'commander')) expect(imported, `${entry} imports ${name}`).not.toContain(name);
    }
  });
});

/**
 * Builds what the npm package ships into `lib/` (run by `npm run build`, hence by `prepare` on `npm ci`,
 * `npm pack`, `npm publish` and git installs):
 *
 * - `lib/esm/` — the library entries (`cdk8s-kruise`, `cdk8s-kruise/constructs`, `…/constructs/plus-33`) as ES
 *   modules; dependencies and peers stay imports, so an app has one copy of cdk8s and constructs. Each entry
 *   holds only its own module and the modules that depend on its cdk8s-plus; every other module is built once,
 *   into `lib/esm/shared/` (one file per module an entry imports, sharing chunks), and imported from there
 *   ({@link libraryLayout}). The package then carries one copy of the library code, not one per entry.
 * - `lib/cjs/` — the same entries as CommonJS, for apps that `require()` (the `cdk8s init` TypeScript app
 *   runs ts-node and jest in CommonJS), split the same way: the shared modules are CommonJS cores
 *   (`lib/cjs/shared*.cjs`) that the entries and the plugin require. The JSON documents the shared modules
 *   import are in `lib/cjs/data/`, once, and both formats require them from there.
 * - `lib/{esm,cjs}/peers/` — how the constructs entries load their optional cdk8s-plus peer: a missing one
 *   fails with a message naming the entry point for the cdk8s-plus the app has (`constructs/internal/plus-peer.ts`).
 * - `lib/types/` — declarations from tsc (`stripInternal`), one tree for both formats: it is marked
 *   CommonJS, which `require` consumers need under node16/nodenext resolution, and ES module consumers may
 *   import named exports from CommonJS typings.
 * - `lib/cli/` — the `cdk8s-kruise` binary: one bundle with every library it needs (it loads in tens of
 *   milliseconds instead of resolving hundreds of modules) and the kind validators precompiled, split so the runtime commands' libraries live in
 *   chunks loaded only by `controller` and `daemon`. Those libraries are devDependencies: a constructs/CLI
 *   user never installs them.
 * - `lib/cdk8s-plugin.cjs` — the cdk8s validation plugin (CommonJS as cdk8s-cli requires): its own module,
 *   requiring the rest from `lib/cjs/shared.cjs`.
 * - `lib/image/` — the image kit `cdk8s-kruise image build` builds the runtime image from: the app layer as
 *   the project's image build writes it (gzip blob) and what the base layer and the config need
 *   (src/image/kit.ts). About 0.8 MB; read only by that command.
 * - `lib/schemas/<version>/` — a JSON Schema per kind the compiler models, Kruise and core kinds, named as
 *   kubeconform looks them up (src/api/schema-files.ts), for editors (`yaml.schemas`) and kubeconform.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, transformSync, type BuildOptions, type Plugin } from 'esbuild';
import { CORE_KIND_VALIDATORS_FILE, coreKindValidatorsSource, precompiledValidatorsSource } from '../src/api/validate-standalone.js';
import { PLUS_ENTRY_POINTS, plusPeerLoaderSource, type PlusPackage } from '../constructs/internal/plus-peer.js';
import { KIT_DIR_IN_PACKAGE } from '../src/image/kit.js';
import { SCHEMA_SET_VERSION, schemaFiles } from '../src/api/schema-files.js';
import { writeImageKit } from '../src/image/kit-write.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lib = path.join(repoRoot, 'lib');

interface PackageJson {
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}
const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as PackageJson;

/** Packages an installed app provides: our dependencies and peers (and their subpaths). */
export const providedPackages = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})];
/** A cdk8s-plus import: the library entries load it through {@link plusPeerPlugin}, never directly. */
const PLUS_IMPORT = /^cdk8s-plus-\d+$/;
const external = providedPackages.filter((name) => !PLUS_IMPORT.test(name)).flatMap((name) => [name, `${name}/*`]);

/** The library entry points, by output name. */
export const LIBRARY_ENTRIES = {
  index: 'src/index.ts',
  constructs: 'constructs/index.ts',
} as const;

/**
 * The constructs built once more against the newest cdk8s-plus (the sources import cdk8s-plus-27, the
 * default; this entry rewrites that import), so `CloneSet` extends that version's `Workload` and the props
 * take its types: `cdk8s-kruise/constructs/plus-33`.
 */
export const PLUS_VARIANTS = { 'cdk8s-plus-33': 'constructs-plus-33' } as const satisfies Partial<Record<PlusPackage, string>>;
export const DEFAULT_PLUS: PlusPackage = 'cdk8s-plus-27';

/** Where, beside each library entry, the loaders of the cdk8s-plus peers are (`peers/<cdk8s-plus>.cjs`). */
const PLUS_PEER_DIR = 'peers';
const PLUS_PEER_CHECK = 'missing-plus-peer.cjs';
/** The modules that re-export a cdk8s-plus peer's loader (see {@link plusPeerPlugin}). */
const PLUS_PEER_NAMESPACE = 'cdk8s-kruise-plus-peer';

/** The oldest Node the compiler side targets (package.json `engines`). */
const LIBRARY_TARGET = 'node20';

// CommonJS dependencies bundled into the CLI call `require` for Node built-ins; an ES module has no
// `require` unless one is made from its own URL.
const REQUIRE_SHIM =
  "import { createRequire as __cdk8sKruiseCreateRequire } from 'node:module';\nconst require = __cdk8sKruiseCreateRequire(import.meta.url);";
// In CommonJS output `import.meta.url` is empty; version.ts reads package.json relative to it.
const IMPORT_META_URL_SHIM = "const __cdk8sKruiseImportMetaUrl = require('node:url').pathToFileURL(__filename).href;";

const common: BuildOptions = {
  absWorkingDir: repoRoot,
  bundle: true,
  platform: 'node',
  logLevel: 'warning',
  // Class names stay readable in error messages and stack traces.
  keepNames: true,
  legalComments: 'none',
};

/**
 * Sends every cdk8s-plus import of the sources (they import cdk8s-plus-27) to the loader of `plus` beside the
 * entry (`./peers/<plus>.cjs`, written by {@link writePlusPeers}) through a module that re-exports it: the output
 * then imports only the loader's namespace, never a named export, since a named import of a CommonJS module
 * that cannot load fails when Node links the module graph, before the loader's check could run.
 */
export function plusPeerPlugin(plus: PlusPackage): Plugin {
  const namespace = PLUS_PEER_NAMESPACE;
  return {
    name: 'plus-peer',
    setup(b) {
      b.onResolve({ filter: PLUS_IMPORT }, (args) =>
        args.namespace === namespace ? { path: `./${PLUS_PEER_DIR}/${plus}.cjs`, external: true } : { path: plus, namespace },
      );
      b.onLoad({ filter: /.*/, namespace }, () => ({ contents: `export * from ${JSON.stringify(plus)};`, loader: 'js' }));
    },
  };
}

/** The loaders of every cdk8s-plus peer and their shared check, into `<dir>/peers/`. */
async function writePlusPeers(dir: string): Promise<void> {
  const peers = path.join(dir, PLUS_PEER_DIR);
  await build({
    ...common,
    entryPoints: ['constructs/internal/plus-peer.ts'],
    format: 'cjs',
    target: LIBRARY_TARGET,
    outfile: path.join(peers, PLUS_PEER_CHECK),
  });
  for (const plus of Object.keys(PLUS_ENTRY_POINTS) as PlusPackage[]) {
    writeFileSync(path.join(peers, `${plus}.cjs`), plusPeerLoaderSource(plus, `./${PLUS_PEER_CHECK}`));
  }
}

/**
 * Every output below `dir` loads cdk8s-plus only through a loader that exists beside it (code moved into a
 * chunk of another directory would point nowhere; a direct import would fail with a bare "Cannot find module").
 */
function checkPlusPeerImports(dir: string): void {
  const problems: string[] = [];
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!/\.c?js$/.test(file) || file.startsWith(`${PLUS_PEER_DIR}${path.sep}`)) continue;
    const text = readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/(?:\bfrom\s*|\brequire\()"([^"]+)"/g)) {
      const spec = m[1]!;
      if (PLUS_IMPORT.test(spec)) problems.push(`${file} imports ${spec} directly`);
      else if (spec.startsWith(`./${PLUS_PEER_DIR}/`) && !existsSync(path.resolve(path.dirname(path.join(dir, file)), spec)))
        problems.push(`${file} imports ${spec}, which is not beside it`);
    }
  }
  if (problems.length > 0) throw new Error(`cdk8s-plus peer imports in ${dir}:\n${problems.join('\n')}`);
}

/** The cdk8s validation plugin's module, built beside the library entries from the same shared code. */
const PLUGIN_ENTRY = 'src/policy/cdk8s-plugin.ts';
/** The CommonJS cores (`lib/cjs/`): what the root entry and the plugin load, and what only the constructs add. */
const CJS_CORE = 'shared.cjs';
const CJS_CONSTRUCTS_CORE = 'shared-constructs.cjs';
/** Where, in `lib/esm/`, the ES modules every entry imports are. */
const ESM_SHARED_DIR = 'shared';
const SHARED_NAMESPACE = 'cdk8s-kruise-shared';

/**
 * How the library code splits between what every entry shares and what depends on the cdk8s-plus an entry is
 * built against: a module that imports cdk8s-plus, or imports such a module, is built into each constructs entry
 * once per cdk8s-plus (its classes extend that version's); every other module is built once, into the shared
 * core, and the entries import it from there. The CommonJS core is two files, so that requiring the root entry
 * or the plugin loads only the modules they need (no cdk8s: manifests can be checked without the peers); the ES
 * modules split by themselves. Paths are absolute.
 */
export interface LibraryLayout {
  readonly plusDependent: ReadonlySet<string>;
  /** Modules the root entry or the plugin load. */
  readonly rootReachable: ReadonlySet<string>;
  /** Each shared module imported from outside its core, by its name in the core. */
  readonly shared: ReadonlyMap<string, string>;
}

export async function libraryLayout(): Promise<LibraryLayout> {
  const result = await build({
    ...common,
    entryPoints: [...Object.values(LIBRARY_ENTRIES), PLUGIN_ENTRY],
    format: 'esm',
    target: LIBRARY_TARGET,
    write: false,
    metafile: true,
    outdir: path.join(repoRoot, 'lib', '.layout'),
    external,
    plugins: [plusPeerPlugin(DEFAULT_PLUS)],
  });
  const inputs = result.metafile.inputs;
  const importers = new Map<string, string[]>();
  for (const [file, input] of Object.entries(inputs)) {
    for (const imp of input.imports) {
      if (imp.external) continue;
      importers.set(imp.path, [...(importers.get(imp.path) ?? []), file]);
    }
  }
  // Every module that reaches a cdk8s-plus peer, walking the imports backwards from the peers.
  const dependent = new Set(Object.keys(inputs).filter((file) => file.startsWith(`${PLUS_PEER_NAMESPACE}:`)));
  const queue = [...dependent];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    for (const importer of importers.get(file) ?? []) {
      if (!dependent.has(importer)) {
        dependent.add(importer);
        queue.push(importer);
      }
    }
  }
  const rootReachable = new Set([LIBRARY_ENTRIES.index, PLUGIN_ENTRY]);
  const forward = [...rootReachable];
  for (let file = forward.pop(); file !== undefined; file = forward.pop()) {
    for (const imp of inputs[file]?.imports ?? []) {
      if (!imp.external && !rootReachable.has(imp.path)) {
        rootReachable.add(imp.path);
        forward.push(imp.path);
      }
    }
  }
  const isShareable = (file: string) => !dependent.has(file) && !file.includes(':') && /\.[cm]?[jt]s$/.test(file);
  const entries = new Set<string>([...Object.values(LIBRARY_ENTRIES), PLUGIN_ENTRY]);
  const shared = new Map<string, string>();
  for (const [file, input] of Object.entries(inputs)) {
    for (const imp of input.imports) {
      if (imp.external || !isShareable(imp.path)) continue;
      // An entry's or a cdk8s-plus-dependent module's import, or a constructs-only module's import of the root core.
      if (!entries.has(file) && !dependent.has(file) && (rootReachable.has(file) || !rootReachable.has(imp.path))) continue;
      const target = path.join(repoRoot, imp.path);
      const name = imp.path.replace(/\.[cm]?[jt]s$/, '').replace(/[^A-Za-z0-9]+/g, '_');
      const other = [...shared].find(([f, n]) => n === name && f !== target);
      if (other) throw new Error(`the shared modules ${imp.path} and ${other[0]} would both be named ${name}`);
      shared.set(target, name);
    }
  }
  const absolute = (files: Iterable<string>) => new Set([...files].filter((f) => !f.includes(':')).map((f) => path.join(repoRoot, f)));
  return { plusDependent: absolute(dependent), rootReachable: absolute(rootReachable), shared };
}

/**
 * Sends imports of shared modules that are not `local` (built into this output) to the core they are in (`from`,
 * relative to this output), so an entry holds only its own code and the code that depends on its cdk8s-plus.
 */
function sharedCorePlugin(
  layout: LibraryLayout,
  exportsOf: SharedExports,
  format: 'esm' | 'cjs',
  local: (file: string) => boolean,
  from: (file: string) => string,
): Plugin {
  const skip = Symbol('resolving');
  return {
    name: 'shared-core',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (args.kind === 'entry-point' || args.namespace !== 'file' || args.pluginData === skip) return undefined;
        const resolved = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: skip,
        });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        if (resolved.external || local(resolved.path) || !/\.[cm]?[jt]s$/.test(resolved.path)) return undefined;
        const name = layout.shared.get(resolved.path);
        if (name === undefined) throw new Error(`${resolved.path} (imported by ${args.importer}) is not in the shared core`);
        return { path: name, namespace: SHARED_NAMESPACE, pluginData: from(resolved.path) };
      });
      b.onResolve({ filter: /.*/, namespace: SHARED_NAMESPACE }, (args) => ({ path: args.path, external: true }));
      // The names are listed (not `export *`) so the entry's own exports stay static: esbuild turns a re-export
      // of everything from an external module, below the entry, into a copy made at run time, which ES module
      // importers and Node's CommonJS export detection cannot see.
      b.onLoad({ filter: /.*/, namespace: SHARED_NAMESPACE }, (args) => {
        const names = exportsOf.get(args.path);
        if (names === undefined) throw new Error(`no exports known for the shared module ${args.path}`);
        const spec = JSON.stringify(args.pluginData as string);
        const contents =
          format === 'esm'
            ? `export { ${names.join(', ')} } from ${spec};`
            : `const core = require(${spec})[${JSON.stringify(args.path)}];\nexport const { ${names.join(', ')} } = core;`;
        return { contents, loader: 'js' };
      });
    },
  };
}

/** The names each shared module exports, by its name in the core. */
type SharedExports = ReadonlyMap<string, readonly string[]>;

/** The shared modules as ES modules, one file each under `<out>/esm/shared/`, sharing chunks. */
async function buildSharedEsm(layout: LibraryLayout, out: string): Promise<SharedExports> {
  const result = await build({
    ...common,
    entryPoints: Object.fromEntries([...layout.shared].map(([file, name]) => [`${ESM_SHARED_DIR}/${name}`, file])),
    format: 'esm',
    target: LIBRARY_TARGET,
    splitting: true,
    outdir: path.join(out, 'esm'),
    chunkNames: 'chunks/[name]-[hash]',
    external,
    metafile: true,
    plugins: [sharedJsonPlugin('esm', out, `../../cjs/${JSON_DIR}`)],
  });
  const exportsOf = new Map<string, readonly string[]>();
  for (const output of Object.values(result.metafile.outputs)) {
    const name = [...layout.shared].find(
      ([file]) => output.entryPoint !== undefined && path.join(repoRoot, output.entryPoint) === file,
    )?.[1];
    if (name !== undefined) exportsOf.set(name, output.exports);
  }
  return exportsOf;
}

/** Where, in `lib/cjs/`, the JSON documents the shared modules read are: one copy, read by both formats. */
const JSON_DIR = 'data';
const JSON_NAMESPACE = 'cdk8s-kruise-json';

/**
 * Leaves the JSON documents the shared modules import (the core Kubernetes definitions, about 0.3 MB) out of the
 * bundles: each is written once, minified, into `<out>/cjs/data/`, and both the ES module and the CommonJS
 * builds read it with `require` (its default export; Node caches it once per process). Only for the shared
 * builds: their outputs sit at a known depth (`lib/cjs/` and `lib/esm/{shared,chunks}/`), which `from` gives.
 */
function sharedJsonPlugin(format: 'esm' | 'cjs', out: string, from: string): Plugin {
  const skip = Symbol('resolving');
  return {
    name: 'shared-json',
    setup(b) {
      b.onResolve({ filter: /\.json$/ }, async (args) => {
        if (args.namespace !== 'file' || args.pluginData === skip) return undefined;
        const resolved = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: skip,
        });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        if (resolved.external || !resolved.path.startsWith(path.join(repoRoot, 'src') + path.sep)) return undefined;
        return { path: resolved.path, namespace: JSON_NAMESPACE };
      });
      b.onResolve({ filter: /.*/, namespace: JSON_NAMESPACE }, (args) => ({ path: args.path, external: true }));
      b.onLoad({ filter: /.*/, namespace: JSON_NAMESPACE }, (args) => {
        const name = path.basename(args.path);
        const target = path.join(out, 'cjs', JSON_DIR, name);
        const minified = JSON.stringify(JSON.parse(readFileSync(args.path, 'utf8')));
        if (existsSync(target) && readFileSync(target, 'utf8') !== minified) throw new Error(`two JSON documents would be ${target}`);
        mkdirSync(path.dirname(target), { recursive: true });
        writeFileSync(target, minified);
        const spec = JSON.stringify(`${from}/${name}`);
        const contents =
          format === 'esm'
            ? `import { createRequire } from 'node:module';\nexport default createRequire(import.meta.url)(${spec});`
            : `module.exports = require(${spec});`;
        return { contents, loader: 'js', resolveDir: repoRoot };
      });
    },
  };
}

/** The CommonJS core a shared module is in, relative to `lib/cjs/`. */
function cjsCoreOf(layout: LibraryLayout, file: string): string {
  return `./${layout.rootReachable.has(file) ? CJS_CORE : CJS_CONSTRUCTS_CORE}`;
}

/**
 * The shared modules as two CommonJS modules exporting each by its name (`<out>/cjs/shared*.cjs`); the
 * constructs' core requires what it uses of the root's.
 */
async function buildSharedCjs(layout: LibraryLayout, exportsOf: SharedExports, out: string): Promise<void> {
  for (const [core, root] of [
    [CJS_CORE, true],
    [CJS_CONSTRUCTS_CORE, false],
  ] as const) {
    const modules = [...layout.shared].filter(([file]) => layout.rootReachable.has(file) === root);
    await build({
      ...common,
      stdin: {
        contents: modules.map(([file, name]) => `export * as ${name} from ${JSON.stringify(file)};`).join('\n'),
        resolveDir: repoRoot,
        loader: 'ts',
        sourcefile: core.replace(/\.cjs$/, '.ts'),
      },
      format: 'cjs',
      target: LIBRARY_TARGET,
      outfile: path.join(out, 'cjs', core),
      external,
      plugins: [
        sharedJsonPlugin('cjs', out, `./${JSON_DIR}`),
        ...(root
          ? []
          : [
              sharedCorePlugin(
                layout,
                exportsOf,
                'cjs',
                (file) => !layout.rootReachable.has(file),
                (file) => cjsCoreOf(layout, file),
              ),
            ]),
      ],
      banner: { js: IMPORT_META_URL_SHIM },
      define: { 'import.meta.url': '__cdk8sKruiseImportMetaUrl' },
    });
  }
}

/** Every library entry, each cdk8s-plus variant of the constructs included, by output name and cdk8s-plus. */
function libraryEntries(): { name: string; entry: string; plus: PlusPackage }[] {
  return [
    ...Object.entries(LIBRARY_ENTRIES).map(([name, entry]) => ({ name, entry, plus: DEFAULT_PLUS })),
    ...(Object.entries(PLUS_VARIANTS) as [PlusPackage, string][]).map(([plus, name]) => ({
      name,
      entry: LIBRARY_ENTRIES.constructs,
      plus,
    })),
  ];
}

export async function buildLibraryEsm(layout: LibraryLayout, exportsOf: SharedExports, out = lib): Promise<void> {
  const local = (file: string) => layout.plusDependent.has(file);
  for (const { name, entry, plus } of libraryEntries()) {
    await build({
      ...common,
      entryPoints: { [name]: entry },
      format: 'esm',
      target: LIBRARY_TARGET,
      outdir: path.join(out, 'esm'),
      external,
      plugins: [
        plusPeerPlugin(plus),
        sharedCorePlugin(layout, exportsOf, 'esm', local, (file) => `./${ESM_SHARED_DIR}/${layout.shared.get(file)}.js`),
      ],
    });
  }
}

/**
 * The typings of the constructs for a cdk8s-plus variant: the default tree with the package name swapped,
 * in a sibling directory so its relative imports of `../src/…` still resolve.
 */
function buildPlusVariantTypes(): void {
  const from = path.join(lib, 'types', 'constructs');
  for (const [plus, name] of Object.entries(PLUS_VARIANTS)) {
    const to = path.join(lib, 'types', name);
    for (const file of readdirSync(from, { recursive: true, encoding: 'utf8' })) {
      const src = path.join(from, file);
      if (!statSync(src).isFile()) continue;
      mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
      writeFileSync(path.join(to, file), readFileSync(src, 'utf8').replaceAll(`'${DEFAULT_PLUS}'`, `'${plus}'`));
    }
  }
}

export async function buildLibraryCjs(layout: LibraryLayout, exportsOf: SharedExports, out = lib): Promise<void> {
  await buildSharedCjs(layout, exportsOf, out);
  const local = (file: string) => layout.plusDependent.has(file);
  for (const { name, entry, plus } of libraryEntries()) {
    await build({
      ...common,
      entryPoints: [entry],
      format: 'cjs',
      target: LIBRARY_TARGET,
      outfile: path.join(out, 'cjs', `${name}.cjs`),
      external,
      plugins: [plusPeerPlugin(plus), sharedCorePlugin(layout, exportsOf, 'cjs', local, (file) => cjsCoreOf(layout, file))],
      banner: { js: IMPORT_META_URL_SHIM },
      define: { 'import.meta.url': '__cdk8sKruiseImportMetaUrl' },
    });
  }
}

/**
 * The cdk8s validation plugin (`<out>/cdk8s-plugin.cjs`, CommonJS as cdk8s-cli requires): its own module, the
 * rest required from the CommonJS core.
 */
export async function buildPlugin(layout: LibraryLayout, exportsOf: SharedExports, out = lib): Promise<void> {
  await build({
    ...common,
    entryPoints: [PLUGIN_ENTRY],
    format: 'cjs',
    target: LIBRARY_TARGET,
    outfile: path.join(out, 'cdk8s-plugin.cjs'),
    external,
    plugins: [
      sharedCorePlugin(
        layout,
        exportsOf,
        'cjs',
        () => false,
        (file) => `./cjs/${cjsCoreOf(layout, file).slice(2)}`,
      ),
    ],
    banner: { js: IMPORT_META_URL_SHIM },
    define: { 'import.meta.url': '__cdk8sKruiseImportMetaUrl' },
  });
}

/** The library entries, both formats, every cdk8s-plus variant, the peer loaders and the plugin, into `<out>`. */
export async function buildLibrary(out = lib): Promise<void> {
  const layout = await libraryLayout();
  const exportsOf = await buildSharedEsm(layout, out);
  await Promise.all([
    buildLibraryEsm(layout, exportsOf, out),
    buildLibraryCjs(layout, exportsOf, out),
    buildPlugin(layout, exportsOf, out),
  ]);
  for (const format of ['esm', 'cjs']) {
    await writePlusPeers(path.join(out, format));
    checkPlusPeerImports(path.join(out, format));
    checkJsonRequires(path.join(out, format));
  }
}

/** Every JSON document an output below `dir` requires is where it looks for it (see {@link sharedJsonPlugin}). */
function checkJsonRequires(dir: string): void {
  const missing: string[] = [];
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!/\.c?js$/.test(file)) continue;
    const text = readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/(?:\brequire|createRequire\(import\.meta\.url\))\("(\.[^"]+\.json)"\)/g)) {
      if (!existsSync(path.resolve(path.dirname(path.join(dir, file)), m[1]!)))
        missing.push(`${file} requires ${m[1]}, which is not there`);
    }
  }
  if (missing.length > 0) throw new Error(`JSON documents in ${dir}:\n${missing.join('\n')}`);
}

/**
 * Replaces `src/api/precompiled-validators.ts` with ajv standalone code of every kind's validator, so the
 * CLI does not compile schemas at start (most of a one-file `validate`). Only the CLI gets it: the
 * generated code is about 1.5 MB, and library users (tests, the plugin) pay the compile once per process.
 * The generated module also stands in for the compiler (`compileValidator`), so the CLI does not load ajv's
 * compiler or the core definitions either.
 */
export function precompiledValidatorsPlugin(): Plugin {
  return {
    name: 'precompiled-validators',
    setup(b) {
      b.onLoad({ filter: /[\\/]src[\\/]api[\\/]precompiled-validators\.ts$/ }, () => ({
        contents: precompiledValidatorsSource(),
        loader: 'js',
        resolveDir: repoRoot,
      }));
    },
  };
}

export async function buildCli(): Promise<void> {
  await build({
    plugins: [precompiledValidatorsPlugin()],
    ...common,
    entryPoints: { 'cdk8s-kruise': 'src/cli/bin.ts' },
    format: 'esm',
    target: LIBRARY_TARGET,
    splitting: true,
    outdir: path.join(lib, 'cli'),
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    minify: true,
    banner: { js: REQUIRE_SHIM },
  });
  // The core kinds' validators, required by the CLI only when a run meets a core kind (cold start unchanged);
  // minified like the rest of the CLI.
  const coreKinds = transformSync(coreKindValidatorsSource(), { minify: true, loader: 'js', format: 'cjs', target: LIBRARY_TARGET });
  writeFileSync(path.join(lib, 'cli', CORE_KIND_VALIDATORS_FILE), coreKinds.code);
}

export function buildTypes(): void {
  const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repoRoot, stdio: 'inherit' });
  writeFileSync(path.join(lib, 'types', 'package.json'), '{ "type": "commonjs" }\n');
}

/** The image kit (`lib/image/`), from the same sources and with the same timestamps as `npm run image`. */
export async function buildImageKit(): Promise<void> {
  await writeImageKit(repoRoot, path.join(repoRoot, KIT_DIR_IN_PACKAGE));
}

/** The JSON Schemas (`lib/schemas/<version>/`), from the definitions `validate` compiles. Minified: editors and kubeconform parse them. */
export function buildSchemas(schemasDir: string = path.join(lib, 'schemas')): string {
  const dir = path.join(schemasDir, SCHEMA_SET_VERSION);
  mkdirSync(dir, { recursive: true });
  for (const f of schemaFiles()) writeFileSync(path.join(dir, f.file), JSON.stringify(f.schema));
  return dir;
}

async function main(): Promise<void> {
  // `--library`: only the library entries and the cdk8s plugin that requires their CommonJS core (what a test of
  // the plugin needs), not the CLI, types or image kit.
  if (process.argv.includes('--library')) {
    for (const dir of ['esm', 'cjs']) rmSync(path.join(lib, dir), { recursive: true, force: true });
    mkdirSync(lib, { recursive: true });
    await buildLibrary();
    return;
  }
  for (const dir of ['esm', 'cjs', 'cli', 'types', 'image', 'schemas']) rmSync(path.join(lib, dir), { recursive: true, force: true });
  mkdirSync(lib, { recursive: true });
  buildSchemas();
  await Promise.all([buildLibrary(), buildCli(), buildImageKit()]);
  buildTypes();
  buildPlusVariantTypes();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    process.stderr.write(`build failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}

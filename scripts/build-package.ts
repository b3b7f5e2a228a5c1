/**
 * Builds what the npm package ships into `lib/` (run by `npm run build`, hence by `prepare` on `npm ci`,
 * `npm pack`, `npm publish` and git installs):
 *
 * - `lib/esm/` — the library entries (`cdk8s-kruise`, `cdk8s-kruise/constructs`) as ES modules sharing
 *   chunks; dependencies and peers stay imports, so an app has one copy of cdk8s and constructs.
 * - `lib/cjs/` — the same entries as CommonJS, for apps that `require()` (the `cdk8s init` TypeScript app
 *   runs ts-node and jest in CommonJS).
 * - `lib/{esm,cjs}/peers/` — how the constructs entries load their optional cdk8s-plus peer: a missing one
 *   fails with a message naming the entry point for the cdk8s-plus the app has (`constructs/internal/plus-peer.ts`).
 * - `lib/types/` — declarations from tsc (`stripInternal`), one tree for both formats: it is marked
 *   CommonJS, which `require` consumers need under node16/nodenext resolution, and ES module consumers may
 *   import named exports from CommonJS typings.
 * - `lib/cli/` — the `cdk8s-kruise` binary: one bundle with every library it needs (it loads in tens of
 *   milliseconds instead of resolving hundreds of modules) and the kind validators precompiled, split so the runtime commands' libraries live in
 *   chunks loaded only by `controller` and `daemon`. Those libraries are devDependencies: a constructs/CLI
 *   user never installs them.
 * - `lib/cdk8s-plugin.cjs` — the cdk8s validation plugin (`npm run build:plugin`, CommonJS as cdk8s-cli
 *   requires).
 * - `lib/image/` — the image kit `cdk8s-kruise image build` builds the runtime image from: the app layer as
 *   the project's image build writes it (gzip blob) and what the base layer and the config need
 *   (src/image/kit.ts). About 0.8 MB; read only by that command.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, transformSync, type BuildOptions, type Plugin } from 'esbuild';
import { CORE_KIND_VALIDATORS_FILE, coreKindValidatorsSource, precompiledValidatorsSource } from '../src/api/validate-standalone.js';
import { PLUS_ENTRY_POINTS, plusPeerLoaderSource, type PlusPackage } from '../constructs/internal/plus-peer.js';
import { KIT_DIR_IN_PACKAGE } from '../src/image/kit.js';
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
  const namespace = 'cdk8s-kruise-plus-peer';
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

export async function buildLibraryEsm(out = lib): Promise<void> {
  await build({
    ...common,
    entryPoints: LIBRARY_ENTRIES,
    format: 'esm',
    target: LIBRARY_TARGET,
    splitting: true,
    outdir: path.join(out, 'esm'),
    outExtension: { '.js': '.js' },
    chunkNames: 'chunks/[name]-[hash]',
    external,
    plugins: [plusPeerPlugin(DEFAULT_PLUS)],
  });
}

export async function buildPlusVariants(out = lib): Promise<void> {
  for (const [plus, name] of Object.entries(PLUS_VARIANTS) as [PlusPackage, string][]) {
    await build({
      ...common,
      entryPoints: { [name]: LIBRARY_ENTRIES.constructs },
      format: 'esm',
      target: LIBRARY_TARGET,
      outdir: path.join(out, 'esm'),
      external,
      plugins: [plusPeerPlugin(plus)],
    });
    await build({
      ...common,
      entryPoints: [LIBRARY_ENTRIES.constructs],
      format: 'cjs',
      target: LIBRARY_TARGET,
      outfile: path.join(out, 'cjs', `${name}.cjs`),
      external,
      plugins: [plusPeerPlugin(plus)],
      banner: { js: IMPORT_META_URL_SHIM },
      define: { 'import.meta.url': '__cdk8sKruiseImportMetaUrl' },
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

export async function buildLibraryCjs(out = lib): Promise<void> {
  for (const [name, entry] of Object.entries(LIBRARY_ENTRIES)) {
    await build({
      ...common,
      entryPoints: [entry],
      format: 'cjs',
      target: LIBRARY_TARGET,
      outfile: path.join(out, 'cjs', `${name}.cjs`),
      external,
      plugins: [plusPeerPlugin(DEFAULT_PLUS)],
      banner: { js: IMPORT_META_URL_SHIM },
      define: { 'import.meta.url': '__cdk8sKruiseImportMetaUrl' },
    });
  }
}

/** The library entries, both formats, every cdk8s-plus variant and the peer loaders, into `<out>/esm` and `<out>/cjs`. */
export async function buildLibrary(out = lib): Promise<void> {
  await Promise.all([buildLibraryEsm(out), buildLibraryCjs(out), buildPlusVariants(out)]);
  for (const format of ['esm', 'cjs']) {
    await writePlusPeers(path.join(out, format));
    checkPlusPeerImports(path.join(out, format));
  }
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

export function buildPlugin(): void {
  execFileSync('npm', ['run', '--silent', 'build:plugin'], { cwd: repoRoot, stdio: 'inherit' });
}

/** The image kit (`lib/image/`), from the same sources and with the same timestamps as `npm run image`. */
export async function buildImageKit(): Promise<void> {
  await writeImageKit(repoRoot, path.join(repoRoot, KIT_DIR_IN_PACKAGE));
}

async function main(): Promise<void> {
  for (const dir of ['esm', 'cjs', 'cli', 'types', 'image']) rmSync(path.join(lib, dir), { recursive: true, force: true });
  mkdirSync(lib, { recursive: true });
  await Promise.all([buildLibrary(), buildCli(), buildImageKit()]);
  buildTypes();
  buildPlusVariantTypes();
  buildPlugin();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    process.stderr.write(`build failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}

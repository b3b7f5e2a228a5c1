import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import type { LayerEntry } from './layer.js';
import { APP_DIR, APP_MAIN, ENTRYPOINT_PATH, NODE_PATH } from './spec.js';

/** The CLI entry that becomes the image's entrypoint. */
const CLI_ENTRY = 'src/cli/main.ts';

// Some dependencies are CommonJS and call `require` for Node built-ins; an ESM bundle has no `require`
// unless one is made from the bundle's own URL.
const REQUIRE_SHIM =
  "import { createRequire as __cdk8sKruiseCreateRequire } from 'node:module';\nconst require = __cdk8sKruiseCreateRequire(import.meta.url);";

/**
 * client-node's kubeconfig module imports its generated index for two helpers (createConfiguration,
 * ServerConfiguration). The runtime's client reaches it through a dynamic import, where esbuild cannot
 * tree-shake, so every generated API class and model (~1,000 classes, a tenth of the bundle) would be
 * bundled and evaluated when the manager starts (memory; bench/memory-peer.bench.ts). Point that one
 * import at a module exporting just the two; a helper missing from it fails the build.
 */
const CLIENT_NODE_CONFIG = /node_modules\/@kubernetes\/client-node\/dist\/config\.js$/;
const GEN_SUBSET = 'client-node-gen-subset';
const clientNodeConfigWithoutGeneratedApis: Plugin = {
  name: 'client-node-config-without-generated-apis',
  setup(b) {
    b.onResolve({ filter: /^\.\/gen\/index\.js$/ }, (args) =>
      CLIENT_NODE_CONFIG.test(args.importer)
        ? { path: '@kubernetes/client-node/dist/gen/index.js', namespace: GEN_SUBSET, pluginData: dirname(args.importer) }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: GEN_SUBSET }, (args) => ({
      contents: "export { createConfiguration } from './gen/configuration.js';\nexport { ServerConfiguration } from './gen/servers.js';\n",
      resolveDir: args.pluginData as string,
      loader: 'js',
    }));
  },
};

/**
 * `node:http` reached by `require`, never by an ES import: building the ES namespace of `node:http`
 * reads every export, including its lazy WebSocket/MessageEvent/CloseEvent getters, which load Node's
 * own copy of undici and web streams (+13 MiB RSS in an idle process; bench/memory-peer.bench.ts). The
 * runtime never uses those exports. esbuild's CommonJS interop reads exports only when used.
 */
const NODE_HTTP = /^(node:)?http$/;
const HTTP_BY_REQUIRE = 'node-http-by-require';
const nodeHttpByRequire: Plugin = {
  name: 'node-http-by-require',
  setup(b) {
    b.onResolve({ filter: NODE_HTTP }, (args) =>
      args.kind === 'import-statement' || args.kind === 'dynamic-import'
        ? { path: 'node:http', namespace: HTTP_BY_REQUIRE }
        : { path: 'node:http', external: true },
    );
    b.onLoad({ filter: /.*/, namespace: HTTP_BY_REQUIRE }, () => ({ contents: "module.exports = require('node:http');\n", loader: 'js' }));
  },
};

/**
 * client-node imports undici for the transport of its own API classes (a per-request Agent, fetch); the
 * runtime's client sends through Node's http client instead (src/runtime/core/client.ts) and never calls
 * that path, so undici (~1 MiB of CommonJS, never tree-shaken, evaluated at start) stays out of the
 * bundle (manager RSS; bench/memory-peer.bench.ts). Were it ever called, it fails with a clear error.
 */
const CLIENT_NODE_DIST = /node_modules\/@kubernetes\/client-node\/dist\//;
const UNDICI_SHIM = 'undici-not-bundled';
const clientNodeWithoutUndici: Plugin = {
  name: 'client-node-without-undici',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, (args) =>
      CLIENT_NODE_DIST.test(args.importer) ? { path: 'undici', namespace: UNDICI_SHIM } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: UNDICI_SHIM }, () => ({
      contents:
        "const missing = () => { throw new Error('undici is not in the cdk8s-kruise bundle: the runtime sends through node:https (src/runtime/core/client.ts)'); };\n" +
        'export class Agent { constructor() { missing(); } }\nexport class ProxyAgent { constructor() { missing(); } }\nexport const fetch = () => missing();\n',
      loader: 'js',
    }));
  },
};

interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly license?: string;
}

export function readPackageJson(repoRoot: string): PackageJson {
  return JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as PackageJson;
}

/** One file of the bundled CLI, at its path in the image. */
export interface BundleFile {
  /** Absolute path inside the image: {@link APP_MAIN} or a chunk below `chunks/` next to it. */
  readonly path: string;
  readonly content: Buffer;
}

/** The bundled CLI: the main file first, then its chunks sorted by path. */
export interface CliBundle {
  readonly files: readonly BundleFile[];
  /** The licence texts of everything bundled (THIRD-PARTY-LICENSES.txt). */
  readonly licenses: Buffer;
  readonly metafile: Metafile;
}

/** Where the chunks go, relative to the main file's directory. */
const CHUNK_NAMES = 'chunks/[name]-[hash]';

/**
 * Bundles the CLI with every production dependency into ES modules, so the image ships no node_modules
 * (smaller, and nothing a dev dependency could slip into). Split: every `import()` target (the
 * controller's manager, the daemon, the admission rules, the certificate issuer, validate/synth, ...)
 * becomes its own chunk, so a process reads and holds the source text of the code it loads only. Node
 * keeps each module's source as a string for its whole life (one 3 MB string for a single-file bundle,
 * most of it code an idle manager never runs; bench/memory-peer.bench.ts). Chunk names carry a content
 * hash and paths in the output are relative to the repository root, so the bytes do not depend on where
 * the checkout lives.
 */
export async function bundleCli(repoRoot: string): Promise<CliBundle> {
  const outdir = dirname(APP_MAIN).slice(1);
  const mainName = basename(APP_MAIN, '.mjs');
  const result = await build({
    metafile: true,
    absWorkingDir: repoRoot,
    entryPoints: { [mainName]: CLI_ENTRY },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    write: false,
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: CHUNK_NAMES,
    // Module ids inside the bundle are paths relative to the checkout; keep them so when node_modules
    // is a link (CI caches, the reproducibility test's snapshots) instead of resolving to its target.
    preserveSymlinks: true,
    minifyWhitespace: true,
    minifySyntax: true,
    // Class and function names stay readable in stack traces and error messages.
    keepNames: true,
    // Licence comments go to their own output (appended to THIRD-PARTY-LICENSES.txt), not into the
    // bundle: one non-ASCII byte in them (an author's name) made Node hold the whole 4.6 MB source as a
    // two-byte string on the V8 heap instead of an external one-byte string, +12 MiB manager RSS
    // (bench/memory-peer.bench.ts). esbuild already escapes non-ASCII in code (charset ascii).
    legalComments: 'external',
    // On every output file: each chunk is its own module, and the runtime helpers' `__require` lives in
    // whichever chunk esbuild puts them.
    banner: { js: REQUIRE_SHIM },
    plugins: [clientNodeConfigWithoutGeneratedApis, clientNodeWithoutUndici, nodeHttpByRequire],
    logLevel: 'silent',
  });
  if (result.errors.length > 0) {
    throw new Error(`esbuild could not bundle ${CLI_ENTRY}: ${result.errors.map((e) => e.text).join('; ')}`);
  }
  const inImage = (f: { path: string }) => `/${relative(repoRoot, f.path).split(sep).join('/')}`;
  const code = result.outputFiles.filter((f) => f.path.endsWith('.mjs'));
  const main = code.find((f) => inImage(f) === APP_MAIN);
  if (!main) throw new Error(`esbuild produced no ${APP_MAIN.slice(1)} for ${CLI_ENTRY}`);
  for (const out of code) {
    // The bytes before the first non-ASCII one are one character each, so the offset indexes the text too.
    const nonAscii = out.contents.findIndex((b) => b > 0x7f);
    if (nonAscii >= 0) {
      throw new Error(
        `esbuild output ${inImage(out)} for ${CLI_ENTRY} has a non-ASCII byte at offset ${nonAscii} (after "${out.text.slice(Math.max(0, nonAscii - 40), nonAscii)}"): ` +
          'keep the bundle ASCII (Node holds a non-ASCII source as a two-byte string, doubling its memory); escape the character or move the comment out',
      );
    }
  }
  // One .LEGAL.txt per output file that had licence comments; joined in path order so the notices are stable.
  const legal = result.outputFiles
    .filter((f) => f.path.endsWith('.LEGAL.txt'))
    .sort((a, b) => (inImage(a) < inImage(b) ? -1 : 1))
    .map((f) => f.text.trim())
    .filter(Boolean)
    .join('\n\n');
  // esbuild hoists main.ts's `#!/usr/bin/env node` to line 1 of the main file; the image has no
  // /usr/bin/env, so the kernel must start Node by its absolute path instead.
  const body = main.text.startsWith('#!') ? main.text.slice(main.text.indexOf('\n') + 1) : main.text;
  const chunks = code
    .filter((f) => f !== main)
    .map((f) => ({ path: inImage(f), content: Buffer.from(f.contents) }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  return {
    files: [{ path: APP_MAIN, content: Buffer.from(`#!${NODE_PATH}\n${body}`) }, ...chunks],
    licenses: thirdPartyLicenses(repoRoot, Object.keys(result.metafile.inputs), legal),
    metafile: result.metafile,
  };
}

/**
 * The bundle's output files (paths as in the metafile, e.g. `app/bin/chunks/x-HASH.mjs`) a process reads
 * once it has loaded `roots` (output paths): the roots and every file they import statically, not through
 * `import()`.
 */
export function outputsLoaded(metafile: Metafile, roots: readonly string[]): Set<string> {
  return staticClosure(metafile.outputs, roots, 'an output');
}

/** The output file (metafile path) that `import()` of the source `input` loads. */
export function outputOf(metafile: Metafile, input: string): string {
  const found = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint === input);
  if (!found) throw new Error(`${input} is not an entry point or import() target of the bundle`);
  return found[0];
}

/**
 * The bundle's inputs a process evaluates once `roots` are loaded: everything reached through static
 * imports and requires, not through `import()`. What is left out loads only when first needed, which is
 * how the manager keeps code it rarely runs out of its idle memory.
 */
export function staticallyLoaded(metafile: Metafile, roots: readonly string[]): Set<string> {
  return staticClosure(metafile.inputs, roots, 'an input');
}

/** `roots` and everything they import statically in one of the metafile's import graphs. */
function staticClosure(
  graph: Readonly<Record<string, { readonly imports: readonly { path: string; kind: string; external?: boolean }[] }>>,
  roots: readonly string[],
  what: string,
): Set<string> {
  const seen = new Set<string>();
  const todo = [...roots];
  for (let path = todo.pop(); path !== undefined; path = todo.pop()) {
    if (seen.has(path)) continue;
    const entry = graph[path];
    if (!entry) throw new Error(`${path} is not ${what} of the bundle`);
    seen.add(path);
    for (const i of entry.imports) if (!i.external && i.kind !== 'dynamic-import') todo.push(i.path);
  }
  return seen;
}

/** `node_modules/a/node_modules/@s/b/lib/x.js` -> `node_modules/a/node_modules/@s/b` (the innermost package). */
export function packageRootOf(input: string): string | undefined {
  const parts = input.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at < 0 || at + 1 >= parts.length) return undefined;
  const width = parts[at + 1]!.startsWith('@') ? 3 : 2;
  return parts.slice(0, at + width).join('/');
}

const LICENSE_FILE = /^(licen[cs]e|copying)(\.(md|txt|markdown))?$/i;

/**
 * The licence texts of every npm package esbuild put into the bundle, sorted by package, so the image
 * carries the notices its MIT/ISC/Apache dependencies require (most have no inline licence comment).
 */
export function thirdPartyLicenses(repoRoot: string, inputs: readonly string[], legalComments = ''): Buffer {
  const roots = [...new Set(inputs.map(packageRootOf).filter((r): r is string => r !== undefined))];
  const sections = roots.map((root) => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, root, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      license?: string;
    };
    const file = readdirSync(join(repoRoot, root))
      .sort()
      .find((f) => LICENSE_FILE.test(f));
    const text = file
      ? readFileSync(join(repoRoot, root, file), 'utf8').trim()
      : `(the package ships no licence file; package.json declares "${pkg.license ?? 'nothing'}")`;
    return { id: `${pkg.name}@${pkg.version}`, text: `${pkg.name}@${pkg.version} (${pkg.license ?? 'no license field'})\n\n${text}\n` };
  });
  const unique = [...new Map(sections.map((s) => [s.id, s.text])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const header = 'Third-party software bundled into app/bin/cdk8s-kruise.mjs and its chunks, with its licence texts.\n';
  const comments = legalComments.trim()
    ? [`Licence comments of the bundled sources (kept out of the bundle itself):\n\n${legalComments.trim()}\n`]
    : [];
  return Buffer.from([header, ...unique.map(([, text]) => text), ...comments].join(`\n${'='.repeat(78)}\n\n`));
}

/**
 * The application files: the bundle (main file and chunks), a package.json carrying the version `--version` prints, the
 * licences of the bundled packages and the `cdk8s-kruise` entrypoint symlink. Shared by the offline image and the Dockerfile's build stage.
 */
export async function appEntries(repoRoot: string): Promise<LayerEntry[]> {
  const pkg = readPackageJson(repoRoot);
  const manifest = { name: pkg.name, version: pkg.version, license: pkg.license, type: 'module', private: true };
  const bundle = await bundleCli(repoRoot);
  return [
    { kind: 'file', path: `${APP_DIR}/package.json`, mode: 0o644, content: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`) },
    // The main file is the entrypoint's target and executable; the chunks are only imported.
    ...bundle.files.map((f): LayerEntry => ({ kind: 'file', path: f.path, mode: f.path === APP_MAIN ? 0o755 : 0o644, content: f.content })),
    { kind: 'file', path: `${APP_DIR}/THIRD-PARTY-LICENSES.txt`, mode: 0o644, content: bundle.licenses },
    { kind: 'symlink', path: ENTRYPOINT_PATH, target: APP_MAIN },
  ];
}

/**
 * Writes entries below `dir` as a root filesystem fragment (for `COPY --from=build /stage/ /`). The
 * directory is emptied first so a stale file can never reach the image.
 */
export function stageEntries(entries: readonly LayerEntry[], dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const entry of entries) {
    const target = join(dir, entry.path);
    if (entry.kind === 'dir') {
      mkdirSync(target, { recursive: true, mode: entry.mode });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    if (entry.kind === 'file') writeFileSync(target, entry.content, { mode: entry.mode });
    else symlinkSync(entry.target, target);
  }
}

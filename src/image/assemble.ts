import type { Layer, LayerEntry } from './layer.js';
import { buildImage, type Image } from './oci.js';
import { IMAGE_ENTRYPOINT, IMAGE_ENV, IMAGE_NAME, IMAGE_USER, IMAGE_WORKDIR } from './spec.js';

// Kept apart from build.ts (which bundles with esbuild): the CLI's `image build` assembles the image from
// the package's kit with this module and never loads the bundler.

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

/**
 * Everything about the image besides the two layers' contents. A checkout's build and the npm package's
 * `cdk8s-kruise image build` fill it in (from git and package.json, or from the package's image kit) and
 * share {@link assembleRuntimeImage}, so the same values give the same digest.
 */
export interface ImageMetadata {
  /** The package version: the image tag and the `version` label. */
  readonly version: string;
  readonly license?: string;
  /** The commit the image was built from (`revision` label); none outside a git checkout. */
  readonly revision?: string;
  readonly sourceDateEpoch: number;
  /** OCI architecture (`amd64`, `arm64`), the Node binary's. */
  readonly architecture: string;
  /** The shipped Node's version, e.g. `v24.21.0`. */
  readonly nodeVersion: string;
}

/** The app layer as its entries (a checkout bundles them) or already written (the package ships the blob). */
export type AppLayer = readonly LayerEntry[] | Layer;

const APP_CREATED_BY = (meta: ImageMetadata) =>
  `cdk8s-kruise image: app (esbuild bundle of src/cli/main.ts, ${IMAGE_NAME}@${meta.version})`;

/** The image from its metadata, the base layer's entries and the app layer. */
export async function assembleRuntimeImage(meta: ImageMetadata, base: readonly LayerEntry[], app: AppLayer): Promise<Image> {
  const labels: Record<string, string> = {
    'org.opencontainers.image.title': IMAGE_NAME,
    'org.opencontainers.image.version': meta.version,
    'org.opencontainers.image.licenses': meta.license ?? 'NOASSERTION',
    'org.opencontainers.image.base.name': 'scratch',
    ...(meta.revision ? { 'org.opencontainers.image.revision': meta.revision } : {}),
  };
  return buildImage({
    name: IMAGE_NAME,
    tag: meta.version,
    architecture: meta.architecture,
    created: new Date(meta.sourceDateEpoch * 1000),
    runtime: { User: IMAGE_USER, Entrypoint: IMAGE_ENTRYPOINT, Env: IMAGE_ENV, WorkingDir: IMAGE_WORKDIR, Labels: labels },
    layers: [
      {
        entries: base,
        createdBy: `cdk8s-kruise image: base (Node ${meta.nodeVersion} from npm, stripped; shared libraries, CA certificates, nonroot user)`,
      },
      'digest' in app ? { layer: app, createdBy: APP_CREATED_BY(meta) } : { entries: app, createdBy: APP_CREATED_BY(meta) },
    ],
  });
}

/** The sizes and digests a build reports, for an assembled image. */
export function describeImage(
  image: Image,
  paths: { layoutDir: string; archivePath: string },
  epoch: number,
  seconds: number,
): BuildResult {
  return {
    manifestDigest: image.manifestDigest,
    reference: `${image.name}:${image.tag}`,
    layoutDir: paths.layoutDir,
    archivePath: paths.archivePath,
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
}

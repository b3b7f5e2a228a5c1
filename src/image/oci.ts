import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildLayer, sha256, writeTar, type Layer, type LayerEntry } from './layer.js';

const MEDIA = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

/** An OCI content descriptor. */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Record<string, string>;
  readonly platform?: { readonly architecture: string; readonly os: string };
}

/** The runtime part of the OCI image config (`config` in the config blob). */
export interface RuntimeConfig {
  readonly User: string;
  readonly Entrypoint: readonly string[];
  readonly Env: readonly string[];
  readonly WorkingDir: string;
  readonly Labels: Record<string, string>;
}

/**
 * One layer, with the history line image tools show for it: entries to write, or a layer already
 * written (the app layer the npm package ships, whose bytes must not depend on the zlib of the Node
 * that assembles the image).
 */
export type LayerSpec =
  { readonly entries: readonly LayerEntry[]; readonly createdBy: string } | { readonly layer: Layer; readonly createdBy: string };

/** A finished image: every blob in memory, keyed by digest. */
export interface Image {
  readonly manifestDigest: string;
  readonly manifest: Descriptor;
  readonly config: Descriptor;
  readonly layers: readonly Layer[];
  readonly blobs: ReadonlyMap<string, Buffer>;
  /** Repository and tag, e.g. `cdk8s-kruise` and `0.1.0`. */
  readonly name: string;
  readonly tag: string;
}

/** JSON with sorted keys so the bytes (and digests) never depend on property insertion order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}

export interface ImageInputs {
  readonly name: string;
  readonly tag: string;
  readonly architecture: string;
  /** Every timestamp in the image (file mtimes, `created`). */
  readonly created: Date;
  readonly runtime: RuntimeConfig;
  readonly layers: readonly LayerSpec[];
}

export async function buildImage(inputs: ImageInputs): Promise<Image> {
  const blobs = new Map<string, Buffer>();
  const layers: Layer[] = [];
  for (const spec of inputs.layers) {
    const layer = 'layer' in spec ? spec.layer : await buildLayer(spec.entries, inputs.created);
    layers.push(layer);
    blobs.set(layer.digest, layer.blob);
  }
  const created = inputs.created.toISOString();
  const configBlob = Buffer.from(
    canonicalJson({
      created,
      architecture: inputs.architecture,
      os: 'linux',
      config: inputs.runtime,
      rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
      history: inputs.layers.map((l) => ({ created, created_by: l.createdBy })),
    }),
  );
  const config: Descriptor = { mediaType: MEDIA.config, digest: sha256(configBlob), size: configBlob.length };
  blobs.set(config.digest, configBlob);
  const manifestBlob = Buffer.from(
    canonicalJson({
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config,
      layers: layers.map((l): Descriptor => ({ mediaType: MEDIA.layer, digest: l.digest, size: l.blob.length })),
      annotations: { 'org.opencontainers.image.created': created },
    }),
  );
  const manifestDigest = sha256(manifestBlob);
  blobs.set(manifestDigest, manifestBlob);
  const manifest: Descriptor = {
    mediaType: MEDIA.manifest,
    digest: manifestDigest,
    size: manifestBlob.length,
    platform: { architecture: inputs.architecture, os: 'linux' },
    annotations: {
      'org.opencontainers.image.ref.name': inputs.tag,
      'io.containerd.image.name': `docker.io/library/${inputs.name}:${inputs.tag}`,
    },
  };
  return { manifestDigest, manifest, config, layers, blobs, name: inputs.name, tag: inputs.tag };
}

/** The files of an OCI image layout (relative path -> bytes), in a fixed order. */
export function layoutFiles(image: Image): Array<[string, Buffer]> {
  const files: Array<[string, Buffer]> = [
    ['oci-layout', Buffer.from(canonicalJson({ imageLayoutVersion: '1.0.0' }))],
    ['index.json', Buffer.from(canonicalJson({ schemaVersion: 2, mediaType: MEDIA.index, manifests: [image.manifest] }))],
  ];
  for (const digest of [...image.blobs.keys()].sort()) files.push([blobPath(digest), image.blobs.get(digest)!]);
  return files;
}

function blobPath(digest: string): string {
  return `blobs/${digest.replace(':', '/')}`;
}

/** Writes the OCI image layout directory (replacing whatever was there). */
export function writeLayout(image: Image, dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  for (const [rel, bytes] of layoutFiles(image)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), bytes);
  }
}

/**
 * The docker-archive tarball: the OCI layout plus Docker's `manifest.json` pointing at the same blobs
 * (the format `docker save` writes since Docker 25), so `docker load`, `skopeo copy docker-archive:` and
 * `skopeo copy oci-archive:` all read it. Both loaders accept gzip layers.
 */
export async function dockerArchive(image: Image, mtime: Date): Promise<Buffer> {
  const dockerManifest = [
    {
      Config: blobPath(image.config.digest),
      RepoTags: [`${image.name}:${image.tag}`],
      Layers: image.layers.map((l) => blobPath(l.digest)),
    },
  ];
  const files: Array<[string, Buffer]> = [...layoutFiles(image), ['manifest.json', Buffer.from(JSON.stringify(dockerManifest))]];
  const { bytes } = await writeTar(
    files.map(([rel, content]): LayerEntry => ({ kind: 'file', path: `/${rel}`, mode: 0o644, content })),
    mtime,
  );
  return bytes;
}

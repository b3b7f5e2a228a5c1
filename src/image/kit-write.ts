import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appEntries } from './app.js';
import { checkoutMetadata, npmNodeBinary } from './build.js';
import { KIT_APP_LAYER, KIT_FILE, KIT_FORMAT, nodeNpmPackage, type ImageKit } from './kit.js';
import { buildLayer } from './layer.js';
import { nodeLicense } from './rootfs.js';
import { npmPackagesFromLicenses } from './sbom.js';

const hex = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Builds the kit from a checkout into `dir` (replacing it): kit.json and the app layer blob. */
export async function writeImageKit(repoRoot: string, dir: string, options: { sourceDateEpoch?: number } = {}): Promise<ImageKit> {
  const metadata = checkoutMetadata(repoRoot, options);
  const node = npmNodeBinary(repoRoot);
  const entries = await appEntries(repoRoot);
  const app = await buildLayer(entries, new Date(metadata.sourceDateEpoch * 1000));
  const licenses = entries.find((e) => e.kind === 'file' && e.path.endsWith('/THIRD-PARTY-LICENSES.txt'));
  if (licenses?.kind !== 'file') throw new Error('the app layer has no THIRD-PARTY-LICENSES.txt');
  const kit: ImageKit = {
    format: KIT_FORMAT,
    metadata,
    node: {
      npmPackage: nodeNpmPackage(metadata.nodeVersion, metadata.architecture),
      binarySha256: hex(readFileSync(node.path)),
      licenseSha256: hex(nodeLicense(repoRoot, node.version)),
    },
    appLayer: { digest: app.digest, diffId: app.diffId, size: app.blob.length, tarSize: app.tarSize, paths: app.paths },
    bundledPackages: npmPackagesFromLicenses(licenses.content.toString('utf8')).map(({ type: _type, ...p }) => p),
  };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, KIT_APP_LAYER), app.blob);
  writeFileSync(join(dir, KIT_FILE), `${JSON.stringify(kit, null, 2)}\n`);
  return kit;
}

import type { ImageMetadata } from './assemble.js';
import { canonicalJson, type Image } from './oci.js';
import { sha256, type LayerEntry } from './layer.js';
import { IMAGE_NAME } from './spec.js';

/** A software package the image carries. */
export interface SbomPackage {
  readonly name: string;
  readonly version: string;
  /** `npm`, `deb` or `generic` (Node itself). */
  readonly type: 'npm' | 'deb' | 'generic';
  readonly license?: string;
}

export const SBOM_MEDIA_TYPE = 'application/spdx+json';
const EMPTY_CONFIG = { mediaType: 'application/vnd.oci.empty.v1+json', content: Buffer.from('{}') } as const;

/** The Debian packages the base layer records under /var/lib/dpkg/status.d/ (see rootfs.ts). */
export function debPackages(base: readonly LayerEntry[]): SbomPackage[] {
  const out: SbomPackage[] = [];
  for (const e of base) {
    if (e.kind !== 'file' || !e.path.startsWith('/var/lib/dpkg/status.d/')) continue;
    const text = e.content.toString('utf8');
    const field = (name: string) => new RegExp(`^${name}: (.+)$`, 'm').exec(text)?.[1]?.trim();
    const name = field('Package');
    const version = field('Version');
    if (name && version) out.push({ name, version, type: 'deb' });
  }
  return out;
}

/**
 * The npm packages of the app bundle, from the header line of each section of THIRD-PARTY-LICENSES.txt
 * (`name@version (license)`, written by thirdPartyLicenses in app.ts).
 */
export function npmPackagesFromLicenses(text: string): SbomPackage[] {
  const out: SbomPackage[] = [];
  for (const section of text.split(/\n={78}\n\n/).slice(1)) {
    const m = /^((?:@[^/\s]+\/)?[^@\s]+)@(\S+) \((.*)\)$/m.exec(section.split('\n')[0] ?? '');
    if (m) out.push({ name: m[1]!, version: m[2]!, type: 'npm', ...(m[3] && m[3] !== 'no license field' ? { license: m[3] } : {}) });
  }
  return out;
}

const purl = (p: SbomPackage) =>
  p.type === 'npm'
    ? `pkg:npm/${p.name.startsWith('@') ? `%40${p.name.slice(1)}` : p.name}@${p.version}`
    : p.type === 'deb'
      ? `pkg:deb/debian/${p.name}@${encodeURIComponent(p.version)}`
      : `pkg:generic/${p.name}@${p.version}`;

/**
 * An SPDX 2.3 JSON document of the image: the image itself, Node, the Debian packages of the base layer and
 * the npm packages bundled into the app layer. Deterministic (no wall-clock time: `created` is the image's).
 */
export function spdxDocument(image: Image, meta: ImageMetadata, packages: readonly SbomPackage[]): Buffer {
  const created = new Date(meta.sourceDateEpoch * 1000).toISOString().replace('.000Z', 'Z');
  const spdxId = (p: SbomPackage, i: number) => `SPDXRef-Package-${p.type}-${i}`;
  const all: SbomPackage[] = [{ name: 'node', version: meta.nodeVersion.replace(/^v/, ''), type: 'generic', license: 'MIT' }, ...packages];
  const doc = {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: `${IMAGE_NAME}:${meta.version}`,
    documentNamespace: `https://spdx.org/spdxdocs/${IMAGE_NAME}-${meta.version}-${image.manifestDigest.slice(7)}`,
    creationInfo: { created, creators: [`Tool: ${IMAGE_NAME}-${meta.version}`] },
    packages: [
      {
        SPDXID: 'SPDXRef-Image',
        name: IMAGE_NAME,
        versionInfo: meta.version,
        downloadLocation: 'NOASSERTION',
        licenseConcluded: 'NOASSERTION',
        licenseDeclared: meta.license ?? 'NOASSERTION',
        checksums: [{ algorithm: 'SHA256', checksumValue: image.manifestDigest.slice(7) }],
        externalRefs: [
          {
            referenceCategory: 'PACKAGE-MANAGER',
            referenceType: 'purl',
            referenceLocator: `pkg:oci/${IMAGE_NAME}@${encodeURIComponent(image.manifestDigest)}?arch=${meta.architecture}`,
          },
        ],
      },
      ...all.map((p, i) => ({
        SPDXID: spdxId(p, i),
        name: p.name,
        versionInfo: p.version,
        downloadLocation: 'NOASSERTION',
        licenseConcluded: 'NOASSERTION',
        licenseDeclared: p.license && /^[\w.+-]+(?: (?:OR|AND) [\w.+-]+)*$/.test(p.license) ? p.license : 'NOASSERTION',
        externalRefs: [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: purl(p) }],
      })),
    ],
    relationships: [
      { spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: 'SPDXRef-Image' },
      ...all.map((p, i) => ({ spdxElementId: 'SPDXRef-Image', relationshipType: 'CONTAINS', relatedSpdxElement: spdxId(p, i) })),
    ],
  };
  return Buffer.from(`${JSON.stringify(doc, null, 2)}\n`);
}

/**
 * The SBOM as an OCI artifact that refers to the image (`subject`): found through the referrers API where
 * the registry has one, and under the tag `sha256-<hex>.sbom` (the referrers tag-schema fallback's
 * naming) where it has not.
 */
export function sbomArtifact(image: Image, sbom: Buffer): { manifest: Buffer; mediaType: string; blobs: Map<string, Buffer>; tag: string } {
  const sbomDigest = sha256(sbom);
  const configDigest = sha256(EMPTY_CONFIG.content);
  const manifestBlob = image.blobs.get(image.manifestDigest)!;
  const manifest = Buffer.from(
    canonicalJson({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      artifactType: SBOM_MEDIA_TYPE,
      config: { mediaType: EMPTY_CONFIG.mediaType, digest: configDigest, size: EMPTY_CONFIG.content.length },
      layers: [{ mediaType: SBOM_MEDIA_TYPE, digest: sbomDigest, size: sbom.length }],
      subject: { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: image.manifestDigest, size: manifestBlob.length },
    }),
  );
  return {
    manifest,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    blobs: new Map([
      [configDigest, EMPTY_CONFIG.content],
      [sbomDigest, sbom],
    ]),
    tag: `${image.manifestDigest.replace(':', '-')}.sbom`,
  };
}

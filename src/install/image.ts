import { packageVersion } from '../version.js';

/** Default registry of the bundled runtime image (the runtime image is published there as `cdk8s-kruise:<version>`). */
export const DEFAULT_REGISTRY = 'ghcr.io/cdk8s-kruise';
export const IMAGE_REPOSITORY = 'cdk8s-kruise';

// Reference grammar from distribution/reference, reduced to what we need to reject typos early.
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const NAME = `(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = 'sha256:[a-f0-9]{64}';
const REGISTRY_RE = new RegExp(`^${DOMAIN}(?:/${PATH_COMPONENT})*$`);
const TAG_RE = new RegExp(`^${TAG}$`);
const DIGEST_RE = new RegExp(`^${DIGEST}$`);
const REFERENCE_RE = new RegExp(`^${NAME}(?::${TAG})?(?:@${DIGEST})?$`);

/** Options for the bundled image reference. */
export interface BundledImageOptions {
  /**
   * Registry (and optional path prefix) the image was pushed to, e.g. `registry.example.com/platform`.
   * @default "ghcr.io/cdk8s-kruise"
   */
  readonly registry?: string;
  /**
   * Tag of the image.
   * @default the cdk8s-kruise package version
   */
  readonly tag?: string;
  /**
   * Content digest (`sha256:<64 hex>`). When set the reference is pinned to it (`repo:tag@digest`),
   * which is what GitOps users should do after pushing the archive (see README).
   * @default - no digest
   */
  readonly digest?: string;
}

/**
 * The image the controller-manager and the daemon run. Both run the same image, in different modes.
 */
export class RuntimeImage {
  /**
   * The bundled runtime image `<registry>/cdk8s-kruise:<tag>[@digest]`; the tag defaults to this
   * package's version so the manifests and the image stay in step.
   */
  public static bundled(options: BundledImageOptions = {}): RuntimeImage {
    const registry = (options.registry ?? DEFAULT_REGISTRY).replace(/\/+$/, '');
    if (!REGISTRY_RE.test(registry)) {
      throw new Error(
        `image.registry "${options.registry}" is not a registry host with an optional path (e.g. "registry.example.com/platform")`,
      );
    }
    const tag = options.tag ?? packageVersion();
    if (!TAG_RE.test(tag))
      throw new Error(`image.tag "${tag}" is not a valid tag (letters, digits, "_", "." and "-", at most 128 characters)`);
    if (options.digest !== undefined && !DIGEST_RE.test(options.digest)) {
      throw new Error(`image.digest "${options.digest}" is not a sha256 digest ("sha256:" followed by 64 lowercase hex digits)`);
    }
    return new RuntimeImage(`${registry}/${IMAGE_REPOSITORY}:${tag}${options.digest ? `@${options.digest}` : ''}`);
  }

  /** Any image reference, e.g. a mirror: `mirror.example.com/cdk8s-kruise@sha256:...`. */
  public static fromReference(reference: string): RuntimeImage {
    if (!REFERENCE_RE.test(reference)) {
      throw new Error(`image reference "${reference}" is not valid (expected [registry/]repository[:tag][@sha256:<64 hex>])`);
    }
    return new RuntimeImage(reference);
  }

  private constructor(
    /** The full image reference. */
    public readonly reference: string,
  ) {}

  /** True when the reference carries a digest, so a pull can never yield different bits. */
  public get pinned(): boolean {
    return this.reference.includes('@sha256:');
  }
}

import { IMAGE_REPOSITORY } from '../install/image.js';

/**
 * What the runtime image is, in one place: the offline builder (src/image/build.ts) writes these values
 * into the OCI config and the root Dockerfile declares the same ones on top of distroless; a unit test
 * (test/unit/image/dockerfile.test.ts) keeps the two equal.
 */

/** The distroless nonroot user; uid and gid are both 65532. */
export const NONROOT = { uid: 65532, gid: 65532, name: 'nonroot', home: '/home/nonroot' } as const;

/** `USER` of the image. */
export const IMAGE_USER = `${NONROOT.uid}:${NONROOT.gid}`;

/** Where the Node binary lives; the distroless Node images put it here, so the Dockerfile needs no copy. */
export const NODE_PATH = '/nodejs/bin/node';

/**
 * The bundled CLI (esbuild output of src/cli/main.ts): the main file, with its chunks in `chunks/` next to
 * it; `../package.json` gives `--version`.
 */
export const APP_DIR = '/app';
export const APP_MAIN = `${APP_DIR}/bin/cdk8s-kruise.mjs`;

/** The entrypoint: a symlink to the bundle, which starts with `#!/nodejs/bin/node` (no shell needed). */
export const ENTRYPOINT_PATH = '/usr/local/bin/cdk8s-kruise';
export const IMAGE_ENTRYPOINT: readonly string[] = [ENTRYPOINT_PATH];

/** Working directory: the nonroot home, the only writable place besides /tmp. */
export const IMAGE_WORKDIR = NONROOT.home;

/** CA bundle Node and OpenSSL find through `SSL_CERT_FILE` (same path and variable as distroless). */
export const CA_BUNDLE_PATH = '/etc/ssl/certs/ca-certificates.crt';

/** Environment; equal to what distroless sets, so both images behave alike. */
export const IMAGE_ENV: readonly string[] = [
  'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  `SSL_CERT_FILE=${CA_BUNDLE_PATH}`,
];

/** Repository name used for the default tag and the docker-archive `RepoTags` (the install's default image). */
export const IMAGE_NAME = IMAGE_REPOSITORY;

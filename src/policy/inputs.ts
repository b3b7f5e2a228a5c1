import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { TextInput } from './engine.js';
import { UsageError } from './engine.js';
import { decodeInput, inputFinding } from './parse.js';
import type { Finding } from './types.js';

const MANIFEST_EXT = /\.(ya?ml|json)$/i;

/** Largest input file read by default: far above any real manifest file, far below what exhausts memory. */
export const DEFAULT_MAX_FILE_SIZE = 64 * 1024 * 1024;

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};

/** Parses a size such as `64MiB`, `200MB`, `1G` or `1048576` (bytes); a UsageError says what is accepted. */
export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined || Number(m[1]) <= 0) {
    throw new UsageError(`invalid size "${text.slice(0, 40)}": use bytes or a number with KiB, MiB or GiB (e.g. 256MiB)`);
  }
  return Math.floor(Number(m[1]) * unit);
}

export interface ReadOptions {
  /** Bytes read at most per file (and from standard input); larger inputs are reported, not read. */
  readonly maxFileSize?: number;
  readonly stdin?: NodeJS.ReadableStream;
}

/** One input as the reader yields it: its text, or a finding saying why it was not read. */
export type InputItem = TextInput | { readonly file: string; readonly finding: Finding };

function describeKind(st: Stats): string {
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  if (st.isDirectory()) return 'a directory';
  return 'not a regular file';
}

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${bytes} bytes`;
}

function tooLarge(file: string, limit: number): Finding {
  return inputFinding(
    file,
    `the input is larger than the ${sizeText(limit)} limit, so it was not read`,
    'Split the manifests into several files, or raise the limit with --max-file-size (e.g. --max-file-size 256MiB).',
  );
}

/**
 * Reads one regular file, at most `limit` bytes. The type and size are checked on the opened descriptor (a path
 * swapped after the check cannot redirect the read), and the read stops one byte past the limit in case the file
 * grows meanwhile. FIFOs, devices (a symlink to /dev/zero) and sockets are refused: reading them may never end.
 */
async function readRegular(file: string, limit: number): Promise<InputItem> {
  let handle;
  try {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer forever (regular files ignore it).
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new UsageError(
      `cannot read "${file}": ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`,
    );
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) {
      return {
        file,
        finding: inputFinding(
          file,
          `the input is ${describeKind(st)}, not a regular file, so it was not read`,
          'Pass manifest files or directories; use - to read standard input.',
        ),
      };
    }
    if (st.size > limit) return { file, finding: tooLarge(file, limit) };
    const buf = Buffer.allocUnsafe(Math.min(st.size, limit) + 1);
    let got = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
      if (got === buf.length) break;
    }
    if (got > limit) return { file, finding: tooLarge(file, limit) };
    return decoded(file, buf.subarray(0, got));
  } catch (e) {
    throw new UsageError(`cannot read "${file}": ${(e as Error).message}`);
  } finally {
    await handle.close();
  }
}

/**
 * Yields the inputs named on the command line one at a time, so a caller can parse each and let its bytes go:
 * files, directories (recursively, *.yaml/*.yml/*.json, sorted, hidden entries and node_modules skipped) and `-`
 * for standard input. Symbolic links inside a directory are followed (a directory reached twice, e.g. through a
 * link cycle, is scanned once); a link to something that is not a regular file is reported, never dropped. A path
 * that does not exist is a UsageError.
 */
export async function* iterateInputs(paths: readonly string[], opts: ReadOptions = {}): AsyncGenerator<InputItem> {
  const limit = opts.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
  for (const p of paths) {
    if (p === '-') {
      yield await readStdin(opts.stdin ?? process.stdin, limit);
      continue;
    }
    let st;
    try {
      st = await stat(p);
    } catch (e) {
      throw new UsageError(
        `cannot read "${p}": ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`,
      );
    }
    if (st.isDirectory()) {
      let any = false;
      for await (const entry of walk(p, new Set())) {
        any = true;
        yield typeof entry === 'string' ? await readRegular(entry, limit) : entry;
      }
      if (!any) yield { file: p, content: '' };
    } else {
      yield await readRegular(p, limit);
    }
  }
}

/** All inputs at once (small inputs, tests); `validate` iterates instead. */
export async function readInputs(
  paths: readonly string[],
  stdin: NodeJS.ReadableStream = process.stdin,
  opts: ReadOptions = {},
): Promise<InputItem[]> {
  const out: InputItem[] = [];
  for await (const item of iterateInputs(paths, { ...opts, stdin })) out.push(item);
  return out;
}

/** Files to read (paths) and entries that cannot be read (findings), in sorted order. */
async function* walk(dir: string, seen: Set<string>): AsyncGenerator<string | InputItem> {
  let real: string;
  try {
    real = await realpath(dir);
  } catch (e) {
    throw new UsageError(`cannot read "${dir}": ${(e as Error).message}`);
  }
  if (seen.has(real)) return;
  seen.add(real);
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      yield* walk(full, seen);
      continue;
    }
    if (e.isSymbolicLink()) {
      let target: Stats | undefined;
      try {
        target = await stat(full);
      } catch {
        target = undefined;
      }
      if (target?.isDirectory()) {
        yield* walk(full, seen);
        continue;
      }
      if (!MANIFEST_EXT.test(e.name)) continue;
      if (target?.isFile()) yield full;
      else {
        yield {
          file: full,
          finding: inputFinding(
            full,
            target
              ? `the symbolic link points to ${describeKind(target)}, not a regular file, so it was not read`
              : 'the symbolic link is broken (its target does not exist), so it was not read',
            'Point the link at a manifest file, or remove it from the directory.',
          ),
        };
      }
      continue;
    }
    if (!MANIFEST_EXT.test(e.name)) continue;
    if (e.isFile()) yield full;
    else
      yield {
        file: full,
        finding: inputFinding(
          full,
          `the entry is ${e.isFIFO() ? 'a named pipe (FIFO)' : e.isCharacterDevice() ? 'a character device' : e.isSocket() ? 'a socket' : 'not a regular file'}, so it was not read`,
          'Keep only manifest files in the directory.',
        ),
      };
  }
}

async function readStdin(stream: NodeJS.ReadableStream, limit: number): Promise<InputItem> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > limit) {
      // Stop reading: whatever follows is not held in memory.
      (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      return { file: '<stdin>', finding: tooLarge('<stdin>', limit) };
    }
    chunks.push(b);
  }
  return decoded('<stdin>', Buffer.concat(chunks));
}

/**
 * The input as text, or a finding for binary and non-UTF-8 bytes. Decoded here, as soon as it is read, so the
 * bytes are garbage before parsing starts: a caller parsing a large file then holds its text, not its text and
 * its bytes.
 */
function decoded(file: string, bytes: Uint8Array): InputItem {
  const text = decodeInput(bytes, file);
  return typeof text === 'string' ? { file, content: text } : { file, finding: text };
}

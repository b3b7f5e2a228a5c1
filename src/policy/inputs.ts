import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { TextInput } from './engine.js';
import { UsageError } from './engine.js';

const MANIFEST_EXT = /\.(ya?ml|json)$/i;

/**
 * Reads the inputs named on the command line: files, directories (recursively, *.yaml/*.yml/*.json, sorted, hidden
 * entries and node_modules skipped) and `-` for standard input. A path that does not exist is a UsageError.
 */
export async function readInputs(paths: readonly string[], stdin: NodeJS.ReadableStream = process.stdin): Promise<TextInput[]> {
  const out: TextInput[] = [];
  for (const p of paths) {
    if (p === '-') {
      out.push({ file: '<stdin>', content: await readStream(stdin) });
      continue;
    }
    let st;
    try {
      st = await stat(p);
    } catch (e) {
      throw new UsageError(`cannot read "${p}": ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`);
    }
    if (st.isDirectory()) {
      const files = await walk(p);
      if (files.length === 0) out.push({ file: p, content: '' });
      for (const f of files) out.push({ file: f, content: await readOrThrow(f) });
    } else {
      out.push({ file: p, content: await readOrThrow(p) });
    }
  }
  return out;
}

async function readOrThrow(file: string): Promise<Uint8Array> {
  try {
    return await readFile(file);
  } catch (e) {
    throw new UsageError(`cannot read "${file}": ${(e as Error).message}`);
  }
}

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: string[] = [];
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(full)));
    else if (e.isFile() && MANIFEST_EXT.test(e.name)) out.push(full);
  }
  return out;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

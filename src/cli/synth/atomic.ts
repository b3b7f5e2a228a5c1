import { mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { OutputFile } from './layout.js';

/** A private directory beside `outDir` (same filesystem, so the final rename is atomic). */
export async function makeStage(outDir: string): Promise<string> {
  const abs = path.resolve(outDir);
  await mkdir(path.dirname(abs), { recursive: true });
  return mkdtemp(path.join(path.dirname(abs), `.${path.basename(abs)}.synth-`));
}

/**
 * Writes `files` into `stage/out`, then swaps it in for `outDir` with renames: the old directory is moved into
 * the stage and the new one takes its name. Readers see the old tree or the new one, never a partly written one;
 * if the second rename fails the old tree is moved back. The stage is removed at the end.
 */
export async function replaceDirectory(stage: string, outDir: string, files: readonly OutputFile[]): Promise<void> {
  const abs = path.resolve(outDir);
  const next = path.join(stage, 'out');
  await mkdir(next, { recursive: true });
  for (const f of files) {
    await mkdir(path.dirname(path.join(next, f.name)), { recursive: true });
    await writeFile(path.join(next, f.name), f.content);
  }
  const old = path.join(stage, 'old');
  const hadOld = await exists(abs);
  if (hadOld) await rename(abs, old);
  try {
    await rename(next, abs);
  } catch (e) {
    if (hadOld) await rename(old, abs);
    throw e;
  }
  await rm(stage, { recursive: true, force: true });
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

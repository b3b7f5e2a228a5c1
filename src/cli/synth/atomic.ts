import { mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { OutputFile } from '../../policy/output-layout.js';
import { OUTPUT_MARKER, OUTPUT_MARKER_CONTENT } from './output-guard.js';

/** A private directory beside `outDir` (same filesystem, so the final rename is atomic). */
export async function makeStage(outDir: string): Promise<string> {
  const abs = path.resolve(outDir);
  await mkdir(path.dirname(abs), { recursive: true });
  return mkdtemp(path.join(path.dirname(abs), `.${path.basename(abs)}.synth-`));
}

/**
 * Holds back termination signals while a critical section runs. The handler given to the constructor is what the
 * signals normally do; while `hold` runs they are only recorded, and the first one is handled once the section
 * has finished. Install `handle` as the process's signal listener.
 */
export class SignalGate {
  private holding = false;
  private pending: NodeJS.Signals | undefined;
  /** True once a held section has finished without throwing (for synth: the new output is in place). */
  completed = false;

  constructor(private readonly onSignal: (signal: NodeJS.Signals) => void) {}

  readonly handle = (signal: NodeJS.Signals): void => {
    if (this.holding) {
      this.pending ??= signal;
      return;
    }
    this.onSignal(signal);
  };

  async hold<T>(section: () => Promise<T>): Promise<T> {
    this.holding = true;
    try {
      const result = await section();
      this.completed = true;
      return result;
    } finally {
      this.holding = false;
      const signal = this.pending;
      this.pending = undefined;
      if (signal) this.onSignal(signal);
    }
  }
}

export interface SwapOptions {
  /** Runs the two renames with signals held back (see SignalGate); without it they run unguarded. */
  readonly gate?: SignalGate;
  /** Called between the two renames, the swap's most fragile point; tests use it to deliver signals there. */
  readonly betweenRenames?: () => Promise<void>;
}

/**
 * Writes `files` and the output marker into `stage/out`, then swaps it in for `outDir` with renames: the old
 * directory is moved into the stage and the new one takes its name. Readers see the old tree or the new one, never
 * a partly written one (for the instant between the renames they see no directory: Node has no atomic exchange of
 * two directories, and a symlink swap would turn a committed output directory into a link). Termination signals
 * are held back across the renames, so an interrupted synth never leaves the old tree only in the stage it then
 * deletes; if the second rename fails the old tree is moved back. The stage is removed at the end.
 */
export async function replaceDirectory(stage: string, outDir: string, files: readonly OutputFile[], opts: SwapOptions = {}): Promise<void> {
  const abs = path.resolve(outDir);
  const next = path.join(stage, 'out');
  await mkdir(next, { recursive: true });
  for (const f of files) {
    await mkdir(path.dirname(path.join(next, f.name)), { recursive: true });
    await writeFile(path.join(next, f.name), f.content);
  }
  await writeFile(path.join(next, OUTPUT_MARKER), OUTPUT_MARKER_CONTENT);
  const old = path.join(stage, 'old');
  const swap = async () => {
    const hadOld = await exists(abs);
    if (hadOld) await rename(abs, old);
    try {
      await opts.betweenRenames?.();
      await rename(next, abs);
    } catch (e) {
      if (hadOld) await rename(old, abs);
      throw e;
    }
  };
  await (opts.gate ? opts.gate.hold(swap) : swap());
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

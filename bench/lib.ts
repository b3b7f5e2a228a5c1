// What the benches share: flags, interleaved warm-up + repetitions, medians/percentiles and ratios, and a
// base commit's code checked out beside this tree.
// Every figure a bench reports is a ratio to a baseline measured in the same run, so all variants go
// through the same loop (same warm-up, same interleaving, a GC before each call when --expose-gc is on).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

type NumberFlags<N extends string> = { readonly [K in N]: number };
type FlagValue<O> = O extends { type: 'boolean' } ? boolean : string;
type ExtraValues<E extends ParseArgsOptionsConfig> = {
  readonly [K in keyof E]: E[K] extends { default: unknown } ? FlagValue<E[K]> : FlagValue<E[K]> | undefined;
};

/**
 * Parses `--<flag> N` for each numeric flag (with the bench's default), `--json`, and any `extra` string
 * flags (as node:util parseArgs options). Unknown flags and non-numbers are errors naming the flag.
 */
export function benchArgs<N extends string, const E extends ParseArgsOptionsConfig = Record<never, never>>(
  numbers: NumberFlags<N>,
  extra?: E,
): NumberFlags<N> & { readonly json: boolean; readonly extra: ExtraValues<E> } {
  const options: ParseArgsOptionsConfig = { json: { type: 'boolean', default: false }, ...extra };
  for (const [flag, def] of Object.entries<number>(numbers)) options[flag] = { type: 'string', default: String(def) };
  const { values } = parseArgs({ options });
  const out: Record<string, unknown> = { json: values.json, extra: values };
  for (const flag of Object.keys(numbers)) {
    const n = Number(values[flag]);
    if (!Number.isFinite(n)) throw new Error(`--${flag}: "${String(values[flag])}" is not a number (e.g. --${flag} ${numbers[flag as N]})`);
    out[flag] = n;
  }
  return out as never;
}

export interface RepeatOptions {
  readonly warmup: number;
  readonly reps: number;
  /**
   * 'fixed': every round runs the variants in their given order. 'rotate': round i starts at variant i
   * (mod count), so drift on a shared machine hits every variant alike.
   */
  readonly order?: 'fixed' | 'rotate';
}

function roundOrder<K>(names: readonly K[], round: number, order: RepeatOptions['order']): K[] {
  return order === 'rotate' ? names.map((_, k) => names[(k + round) % names.length]!) : [...names];
}

/**
 * Runs `measure` for every variant, warm-up rounds first (results dropped), then `reps` recorded rounds,
 * interleaved; returns what each recorded call returned, per variant.
 */
export function repeat<K extends string, M>(names: readonly K[], opts: RepeatOptions, measure: (name: K) => M): Record<K, M[]> {
  const out = Object.fromEntries(names.map((n) => [n, [] as M[]])) as Record<K, M[]>;
  for (let round = 0; round < opts.warmup + opts.reps; round++) {
    for (const name of roundOrder(names, round, opts.order)) {
      const m = measure(name);
      if (round >= opts.warmup) out[name].push(m);
    }
  }
  return out;
}

/** `repeat` for asynchronous measurements (one at a time, never overlapping). */
export async function repeatAsync<K extends string, M>(
  names: readonly K[],
  opts: RepeatOptions,
  measure: (name: K) => Promise<M>,
): Promise<Record<K, M[]>> {
  const out = Object.fromEntries(names.map((n) => [n, [] as M[]])) as Record<K, M[]>;
  for (let round = 0; round < opts.warmup + opts.reps; round++) {
    for (const name of roundOrder(names, round, opts.order)) {
      const m = await measure(name);
      if (round >= opts.warmup) out[name].push(m);
    }
  }
  return out;
}

/** Collects garbage first when the process runs with --expose-gc, so one call's garbage is not billed to the next. */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Wall milliseconds of one call. */
export function timeMs(f: () => unknown): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

/** Wall milliseconds of each variant, `repeat`ed, with a GC before each call. */
export function timeVariants<K extends string>(variants: Readonly<Record<K, () => unknown>>, opts: RepeatOptions): Record<K, number[]> {
  return repeat(Object.keys(variants) as K[], opts, (name) => {
    collectGarbage();
    return timeMs(variants[name]);
  });
}

/** CPU milliseconds (user + system) of this process: robust to other processes on a shared machine. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export function median(xs: readonly number[]): number {
  if (!xs.length) throw new Error('median of no samples');
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** Nearest-rank percentile, q in (0, 1]: the smallest sample with at least q of the samples at or below it. */
export function percentile(xs: readonly number[], q: number): number {
  if (!xs.length) throw new Error('percentile of no samples');
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

/** `a / b` rounded to `digits` decimals, as a number (for JSON output). */
export function ratio(a: number, b: number, digits = 2): number {
  return Number((a / b).toFixed(digits));
}

/** A ratio for text output: `1.23x`. */
export function formatRatio(r: number, digits = 2): string {
  return `${r.toFixed(digits)}x`;
}

/**
 * A base commit checked out in a temporary git worktree that shares this checkout's node_modules, for a bench
 * that runs the code before a change beside this tree's in the same run. `remove()` deletes the worktree.
 */
export interface BaseWorktree {
  /** The base commit, short. */
  readonly baseCommit: string;
  /** This checkout's HEAD, short. */
  readonly head: string;
  /** Imports a module of the base commit by its repository path (e.g. `src/runtime/core/informer.ts`). */
  importModule<T>(repoPath: string): Promise<T>;
  remove(): void;
}

export function checkoutBase(base: string, tempPrefix: string): BaseWorktree {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const dir = mkdtempSync(path.join(tmpdir(), tempPrefix));
  rmSync(dir, { recursive: true });
  execFileSync('git', ['worktree', 'add', '--detach', '--quiet', dir, base], { cwd: root });
  const remove = () => execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root });
  try {
    symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
    const shortHead = (cwd: string) => execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
    return {
      baseCommit: shortHead(dir),
      head: shortHead(root),
      importModule: async <T>(repoPath: string) => (await import(pathToFileURL(path.join(dir, repoPath)).href)) as T,
      remove,
    };
  } catch (err) {
    remove();
    throw err;
  }
}

// Kept free of the policy engine: every command module imports this at start-up (--version, --help).
import { UsageError } from '../policy/usage-error.js';
import { escapeControl } from '../api/quote.js';
import type { Command } from 'commander';

export const FORMATS = ['text', 'json', 'sarif'] as const;
export type Format = (typeof FORMATS)[number];

export function parseFormat(v: string): Format {
  if (!(FORMATS as readonly string[]).includes(v)) throw new UsageError(`unknown format "${v}"; use one of ${FORMATS.join(', ')}`);
  return v as Format;
}

/** Findings listed in a report by default; the summary always counts all of them. */
export const DEFAULT_MAX_FINDINGS = 1000;

/** Parses --max-findings: a positive integer, or 0 for no limit. */
export function parseMaxFindings(v: string): number {
  if (!/^\d{1,9}$/.test(v.trim()))
    throw new UsageError(`--max-findings must be a whole number (0 lists every finding), got "${escapeControl(v.slice(0, 40))}"`);
  const n = Number(v);
  return n === 0 ? Infinity : n;
}

/** Progress and timing go to stderr, and only when a person is watching (a TTY) or --verbose is given; never with --quiet. */
export function progress(verbose: boolean | undefined, quiet?: boolean): (msg: string) => void {
  const on = !quiet && (verbose ?? process.stderr.isTTY === true);
  return on ? (msg) => process.stderr.write(`cdk8s-kruise: ${msg}\n`) : () => {};
}

/** The part of a stream a ticker needs (stderr in the CLI; a fake in tests). */
export interface TickerStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(chunk: string): boolean;
}

/**
 * A one-line status redrawn in place while long work runs (files read, objects checked). Only on a terminal and
 * without --quiet: CI logs and pipes get no carriage returns. Redraws at most every `intervalMs`.
 */
export function ticker(quiet: boolean | undefined, stream: TickerStream = process.stderr, intervalMs = 100) {
  const on = !quiet && stream.isTTY === true;
  let last = 0;
  let shown = false;
  return {
    tick(msg: string): void {
      if (!on) return;
      const now = performance.now();
      if (shown && now - last < intervalMs) return;
      last = now;
      shown = true;
      const width = Math.max(20, (stream.columns ?? 80) - 1);
      stream.write(`\r\x1b[2K${escapeControl(`cdk8s-kruise: ${msg}`).slice(0, width)}`);
    },
    /** Removes the line, so the report or the next message starts on a clean line. */
    clear(): void {
      if (on && shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}

/**
 * Exit codes: usage mistakes (unknown option, bad argument, missing path) exit 2 like IO errors, not commander's
 * default 1, which means "findings" here. Help and --version still exit 0.
 */
export function usageExitCodes(cmd: Command): Command {
  return cmd.exitOverride((err) => {
    if (err.exitCode === 0) process.exit(0);
    process.exit(2);
  });
}

/** Runs a command action, turning UsageError and IO errors into a one-line message and exit code 2. */
export function guarded<A extends unknown[]>(action: (...args: A) => Promise<number>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      process.exitCode = await action(...args);
    } catch (e) {
      const msg = e instanceof UsageError ? e.message : `${(e as Error).message ?? String(e)}`;
      process.stderr.write(`cdk8s-kruise: error: ${escapeControl(msg)}\n`);
      process.exitCode = 2;
    }
  };
}

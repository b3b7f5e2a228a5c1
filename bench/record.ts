// The current figure of every bench lives in one table, docs/benchmarks.md, between two markers. Each bench
// calls `recordBench` at the end of a run to replace its own rows there (the rows whose first cell names its npm
// script), so the table always shows the latest run and git keeps the history. The run's conditions (date,
// commit, load, cores, Node, flags) are filled in here so every row says how it was measured.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';

export const BENCHMARKS_DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/benchmarks.md');
export const TABLE_START = '<!-- benchmarks:start (rows are written by the bench scripts: bench/record.ts) -->';
export const TABLE_END = '<!-- benchmarks:end -->';

/** One figure of a bench: what it measures, the figure, and how it compares with the peer or baseline of the same run. */
export interface BenchFigure {
  readonly measure: string;
  readonly figure: string;
  /** The ratio to the peer or baseline measured in the same run, with the peer named (e.g. `0.60x upstream`). */
  readonly peer: string;
}

/** The cell text with table-breaking characters escaped and whitespace collapsed. */
export function cell(text: string): string {
  return text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
}

/** The first cell of a row: the npm script that regenerates it. */
export function scriptCell(script: string): string {
  if (!/^bench:[a-z0-9-]+$/.test(script)) throw new Error(`bench script name "${script}" is not of the form bench:<name>`);
  return `\`npm run ${script}\``;
}

/** The table rows of one run of `script`. */
export function benchRows(script: string, figures: readonly BenchFigure[], conditions: string): string[] {
  if (figures.length === 0) throw new Error(`${script}: a run records at least one figure`);
  return figures.map((f) => `| ${scriptCell(script)} | ${cell(f.measure)} | ${cell(f.figure)} | ${cell(f.peer)} | ${cell(conditions)} |`);
}

/**
 * `doc` with the rows of `script` replaced by `rows`: in place of the first old row, or appended to the table when
 * the script had none. Rows of other scripts and everything outside the markers are left as they are.
 */
export function replaceBenchRows(doc: string, script: string, rows: readonly string[]): string {
  const lines = doc.split('\n');
  const start = lines.indexOf(TABLE_START);
  const end = lines.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`the benchmarks document has no table between "${TABLE_START}" and "${TABLE_END}"`);
  // Prettier pads the first column, so a row of the script is `| <script cell>` then spaces then `|`.
  const prefix = `| ${scriptCell(script)}`;
  const isRow = (l: string) => l.startsWith(prefix) && l.slice(prefix.length).trimStart().startsWith('|');
  const table = lines.slice(start + 1, end);
  const first = table.findIndex(isRow);
  const kept = table.filter((l) => !isRow(l));
  // A script with no rows yet goes after the table's last row (Prettier keeps blank lines beside the markers).
  const at = first >= 0 ? first : kept.findLastIndex((l) => l.startsWith('|')) + 1;
  kept.splice(at, 0, ...rows);
  return [...lines.slice(0, start + 1), ...kept, ...lines.slice(end)].join('\n');
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty ? `${head} + local changes` : head;
  } catch {
    return 'no git commit';
  }
}

/** `1-minute load a–b during the run` from the samples a bench took, for its conditions. */
export function loadDuringRun(samples: readonly number[]): string {
  if (samples.length === 0) return 'no load samples';
  return `1-minute load ${Math.min(...samples).toFixed(1)}–${Math.max(...samples).toFixed(1)} during the run`;
}

/** Date, commit, 1-minute load, cores, Node and the flags the bench ran with, plus what the bench adds. */
export function runConditions(extra?: string): string {
  const flags = process.argv.slice(2).join(' ');
  return [
    new Date().toISOString().slice(0, 10),
    commit(),
    `load ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`,
    `Node ${process.version}`,
    flags ? `flags \`${flags}\`` : 'default flags',
    ...(extra ? [extra] : []),
  ].join('; ');
}

/**
 * Replaces the rows of `script` in docs/benchmarks.md with this run's figures, formatted as the repository's
 * Prettier settings format it (so the format check passes on a regenerated table).
 */
export async function recordBench(
  script: string,
  figures: readonly BenchFigure[],
  opts: { conditions?: string; file?: string } = {},
): Promise<void> {
  const file = opts.file ?? BENCHMARKS_DOC;
  const rows = benchRows(script, figures, runConditions(opts.conditions));
  const text = replaceBenchRows(readFileSync(file, 'utf8'), script, rows);
  writeFileSync(file, await format(text, { ...(await resolveConfig(file)), filepath: file }));
  process.stderr.write(`${script}: ${rows.length} figure(s) recorded in ${path.relative(process.cwd(), file)}\n`);
}

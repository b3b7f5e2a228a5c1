// The previous output synth compares the app with, for pre-pull and for the InPlaceOnly change check: a directory (by default the output directory as it
// is before synth replaces it, i.e. the committed `dist/`), or the output directory at a Git commit.
import { execFile } from 'node:child_process';
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { escapeControl } from '../../api/quote.js';
import { parseInputs, UsageError } from '../../policy/engine.js';
import { OUTPUT_MARKER } from './output-guard.js';

type Obj = Record<string, unknown>;

/** A previous output larger than this is refused rather than read into memory. */
export const MAX_PREVIOUS_BYTES = 256 * 1024 * 1024;

export interface PreviousOutput {
  /** Where it was read from, as printed. */
  readonly from: string;
  readonly objects: Obj[];
}

const isYaml = (f: string) => /\.ya?ml$/i.test(f);

/**
 * The previous output: `spec` names a directory or a Git commit (branch, tag, `HEAD~1`); without it, `outDir` when
 * synth wrote it (its marker is there). Undefined when there is none: a first synth has nothing to compare with.
 */
export async function readPreviousOutput(spec: string | undefined, outDir: string): Promise<PreviousOutput | undefined> {
  if (spec === undefined) {
    if (!(await isDirectory(outDir)) || !(await exists(path.join(outDir, OUTPUT_MARKER)))) return undefined;
    return { from: outDir, objects: parse(await readDirectory(outDir)) };
  }
  if (await isDirectory(spec)) return { from: spec, objects: parse(await readDirectory(spec)) };
  const commit = await resolveCommit(spec);
  return { from: `${spec}:${outDir}`, objects: parse(await readCommit(commit, outDir)) };
}

function parse(files: Array<{ file: string; content: string }>): Obj[] {
  // What the old output held is read as data only; a document that does not parse is simply not compared.
  return parseInputs(files).manifests.map((m) => m.object);
}

async function exists(p: string): Promise<boolean> {
  return lstat(p).then(
    () => true,
    () => false,
  );
}

async function isDirectory(p: string): Promise<boolean> {
  return lstat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** The YAML files under `dir` (symbolic links are not followed: the output holds none). */
async function readDirectory(dir: string): Promise<Array<{ file: string; content: string }>> {
  const entries = (await readdir(dir, { recursive: true })).map(String).filter(isYaml).sort();
  const out: Array<{ file: string; content: string }> = [];
  let total = 0;
  for (const rel of entries) {
    const file = path.join(dir, rel);
    const st = await lstat(file);
    if (!st.isFile()) continue;
    total += st.size;
    if (total > MAX_PREVIOUS_BYTES) throw tooLarge(dir);
    out.push({ file, content: await readFile(file, 'utf8') });
  }
  return out;
}

function tooLarge(where: string): UsageError {
  return new UsageError(
    `the previous output ${escapeControl(where)} holds more than ${MAX_PREVIOUS_BYTES / 1024 / 1024} MiB of YAML; pass --previous with the output directory of an earlier synth`,
  );
}

function git(args: string[], maxBuffer = 16 * 1024 * 1024): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { maxBuffer, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new UsageError('--previous names no directory, and git, needed to read a commit, is not installed'));
        return;
      }
      if (error && /maxBuffer/i.test(String(error.message))) {
        reject(tooLarge('at that commit'));
        return;
      }
      resolve({ ok: !error, stdout, stderr });
    });
  });
}

/** The commit `spec` names; refused when it names none (or would be read as an option). */
async function resolveCommit(spec: string): Promise<string> {
  const shown = escapeControl(spec.slice(0, 80));
  if (spec === '' || spec.startsWith('-') || [...spec].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    throw new UsageError(`--previous "${shown}" is neither a directory nor a Git commit`);
  const r = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${spec}^{commit}`]);
  if (!r.ok || !/^[0-9a-f]{40,64}\n?$/.test(r.stdout))
    throw new UsageError(
      `--previous "${shown}" is neither a directory nor a Git commit of the repository here (e.g. --previous HEAD~1, --previous main, --previous ./old-dist)`,
    );
  return r.stdout.trim();
}

/** The YAML files of `outDir` (relative to the working directory) at `commit`. */
async function readCommit(commit: string, outDir: string): Promise<Array<{ file: string; content: string }>> {
  const rel = path.relative(process.cwd(), path.resolve(outDir)).split(path.sep).join('/');
  if (rel.startsWith('..') || path.isAbsolute(rel))
    throw new UsageError(
      `--output ${escapeControl(outDir)} is outside the working directory, so it has no path in the repository to read at a commit`,
    );
  const listed = await git(['ls-tree', '-r', '-z', '-l', '--end-of-options', commit, '--', rel || '.']);
  if (!listed.ok)
    throw new UsageError(`cannot list ${escapeControl(outDir)} at ${commit.slice(0, 12)}: ${escapeControl(listed.stderr.trim())}`);
  // Each entry: "<mode> <type> <object> <size>\t<path>".
  const blobs = listed.stdout
    .split('\0')
    .map((line) => /^\d+ blob ([0-9a-f]+) +(\d+)\t(.*)$/s.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && isYaml(m[3]!));
  const total = blobs.reduce((n, m) => n + Number(m[2]), 0);
  if (total > MAX_PREVIOUS_BYTES) throw tooLarge(`${outDir} at ${commit.slice(0, 12)}`);
  const out: Array<{ file: string; content: string }> = [];
  for (const m of blobs) {
    const blob = await git(['cat-file', 'blob', m[1]!], Number(m[2]) + 1024);
    if (!blob.ok) throw new UsageError(`cannot read ${escapeControl(m[3]!)} at ${commit.slice(0, 12)}`);
    out.push({ file: `${commit.slice(0, 12)}:${m[3]}`, content: blob.stdout });
  }
  return out;
}

import { closeSync, mkdirSync, openSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { lstat, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../../policy/engine.js';

// The marker is declared with the layout, which the cdk8s plugin writes too.
import { OUTPUT_MARKER } from '../../policy/output-layout.js';
export { OUTPUT_MARKER, OUTPUT_MARKER_CONTENT } from '../../policy/output-layout.js';

/** What `cdk8s synth` writes into its output directory by itself: chart files and the plugins' construct metadata. */
const CDK8S_OUTPUT_FILE = /^(\d{4}-)?[^/\\]+\.k8s\.ya?ml$|^construct-metadata\.json$/;

/** True when every entry is a regular file `cdk8s synth` writes (so `--clean` may take the directory over). */
async function isCdk8sOutput(abs: string, entries: readonly string[]): Promise<boolean> {
  for (const e of entries) {
    if (!CDK8S_OUTPUT_FILE.test(e)) return false;
    if (!(await lstat(path.join(abs, e))).isFile()) return false;
  }
  return true;
}

/**
 * Why `outDir` must not be replaced, or undefined when synth may replace (or create) it. Pure apart from reads.
 * With `takeOverCdk8s` (`synth --clean`), a directory holding only `cdk8s synth`'s own files is replaced too.
 */
export async function refusalReason(outDir: string, cwd: string, takeOverCdk8s = false): Promise<string | undefined> {
  const abs = path.resolve(cwd, outDir);
  const fromOut = path.relative(abs, path.resolve(cwd));
  if (fromOut === '' || (!fromOut.startsWith('..') && !path.isAbsolute(fromOut))) {
    return `--output "${outDir}" is the working directory or one of its parents; synth replaces the whole output directory, so it must be a dedicated directory such as dist`;
  }
  let st;
  try {
    st = await lstat(abs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return `cannot inspect --output "${outDir}": ${(e as Error).message}`;
  }
  if (st.isSymbolicLink())
    return `--output "${outDir}" is a symbolic link; synth replaces only a real directory it created. Point --output at the directory itself`;
  if (!st.isDirectory())
    return `--output "${outDir}" exists and is not a directory; synth will not replace a file. Choose a directory path for --output`;
  const entries = await readdir(abs);
  if (entries.length === 0) return undefined;
  let marker;
  try {
    marker = await lstat(path.join(abs, OUTPUT_MARKER));
  } catch {
    marker = undefined;
  }
  if (marker?.isFile()) return undefined;
  if (await isCdk8sOutput(abs, entries)) {
    if (takeOverCdk8s) return undefined;
    return (
      `--output "${outDir}" holds the output of \`cdk8s synth\` (${entries.length} file(s), no ${OUTPUT_MARKER}); pass --clean to ` +
      `replace it with this synth's layout, or give the cdk8s plugin a layout so both write the same tree`
    );
  }
  return (
    `--output "${outDir}" is a directory cdk8s-kruise synth did not create (it has no ${OUTPUT_MARKER} file and is not empty); ` +
    `synth replaces only its own output. Choose another --output, or empty that directory yourself`
  );
}

/** Throws a UsageError when `outDir` must not be replaced. */
export async function assertReplaceable(outDir: string, cwd = process.cwd(), takeOverCdk8s = false): Promise<void> {
  const why = await refusalReason(outDir, cwd, takeOverCdk8s);
  if (why) throw new UsageError(why);
}

/** The lock file beside `outDir` that serializes synth runs into one output directory. */
export function lockPathOf(outDir: string): string {
  const abs = path.resolve(outDir);
  return path.join(path.dirname(abs), `.${path.basename(abs)}.synth.lock`);
}

export interface OutputLock {
  /** Removes the lock file; synchronous so that a signal handler can call it before exiting. Idempotent. */
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock of `outDir` (an exclusively created file holding our pid). A second synth into the same directory
 * fails at once with the holder's pid instead of interleaving its swap with ours. A lock left by a process that no
 * longer runs (killed with SIGKILL) is taken over, and an output that process had moved aside is put back first.
 */
export async function lockOutput(outDir: string): Promise<OutputLock> {
  const lock = lockPathOf(outDir);
  mkdirSync(path.dirname(lock), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(lock, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new UsageError(`cannot create the synth lock ${lock}: ${(e as Error).message}`);
      const pid = Number.parseInt(safeRead(lock), 10);
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
        throw new UsageError(`another cdk8s-kruise synth (pid ${pid}) is writing ${outDir}; wait for it to finish (its lock is ${lock})`);
      }
      // The holder is gone: it can have left its output moved aside in a stage directory.
      await recoverInterruptedSwap(outDir);
      rmSync(lock, { force: true });
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        try {
          unlinkSync(lock);
        } catch {
          // already removed
        }
      },
    };
  }
  throw new UsageError(`cannot take the synth lock ${lock}: another synth keeps creating it; retry`);
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(0, 32);
  } catch {
    return '';
  }
}

/**
 * After a synth died between the two renames of its swap (only SIGKILL can do that: other signals are deferred),
 * the previous output sits in `<stage>/old`. Puts it back when the output directory is missing, then removes the
 * dead run's stage directories. Called only while holding the lock.
 */
export async function recoverInterruptedSwap(outDir: string): Promise<void> {
  const abs = path.resolve(outDir);
  const parent = path.dirname(abs);
  const prefix = `.${path.basename(abs)}.synth-`;
  let entries: string[];
  try {
    entries = await readdir(parent);
  } catch {
    return;
  }
  for (const name of entries.filter((n) => n.startsWith(prefix)).sort()) {
    const stage = path.join(parent, name);
    const old = path.join(stage, 'old');
    const outMissing = await lstat(abs).then(
      () => false,
      () => true,
    );
    const oldIsOutput = await lstat(path.join(old, OUTPUT_MARKER)).then(
      (s) => s.isFile(),
      () => false,
    );
    if (outMissing && oldIsOutput) await rename(old, abs);
    await rm(stage, { recursive: true, force: true });
  }
}

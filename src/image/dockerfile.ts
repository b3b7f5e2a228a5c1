/**
 * Reads what the final stage of a Dockerfile declares about the running container, so a test can hold
 * the root Dockerfile and the offline image (src/image/spec.ts) to the same entrypoint, user, working
 * directory and environment. Supports the instructions our Dockerfile uses, in exec (JSON) form.
 */

/** The runtime-relevant declarations of the last stage. */
export interface DockerfileRuntime {
  /** `FROM` image of the last stage. */
  readonly base: string;
  readonly user?: string;
  readonly workdir?: string;
  readonly entrypoint?: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** `COPY` instructions of the last stage, as written after `COPY`. */
  readonly copies: readonly string[];
  /** `RUN` instructions of every stage, in order (the build recipe). */
  readonly runs: readonly string[];
}

interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly line: number;
}

function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) line = `${line.slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
    const match = /^([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!match) throw new Error(`Dockerfile line ${start}: cannot read instruction "${line}"`);
    out.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: start });
  }
  return out;
}

function execForm(ins: Instruction): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(ins.args);
  } catch {
    throw new Error(`Dockerfile line ${ins.line}: ${ins.keyword} must use the exec form ["..."], got ${ins.args}`);
  }
  if (!Array.isArray(parsed) || !parsed.every((s) => typeof s === 'string')) {
    throw new Error(`Dockerfile line ${ins.line}: ${ins.keyword} must be a JSON array of strings`);
  }
  return parsed;
}

function envPairs(ins: Instruction): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const re = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g;
  for (const m of ins.args.matchAll(re)) {
    const raw = m[2]!;
    pairs.push([m[1]!, raw.startsWith('"') ? (JSON.parse(raw) as string) : raw]);
  }
  if (pairs.length === 0) throw new Error(`Dockerfile line ${ins.line}: ENV must use the KEY=value form`);
  return pairs;
}

export function parseDockerfile(text: string): DockerfileRuntime {
  const all = instructions(text);
  const froms = all.map((ins, i) => (ins.keyword === 'FROM' ? i : -1)).filter((i) => i >= 0);
  if (froms.length === 0) throw new Error('Dockerfile has no FROM instruction');
  const lastFrom = froms[froms.length - 1]!;
  const base = all[lastFrom]!.args.split(/\s+/)[0]!;
  let user: string | undefined;
  let workdir: string | undefined;
  let entrypoint: string[] | undefined;
  const env: Record<string, string> = {};
  const copies: string[] = [];
  for (const ins of all.slice(lastFrom + 1)) {
    if (ins.keyword === 'USER') user = ins.args;
    else if (ins.keyword === 'WORKDIR') workdir = ins.args;
    else if (ins.keyword === 'ENTRYPOINT') entrypoint = execForm(ins);
    else if (ins.keyword === 'ENV') for (const [k, v] of envPairs(ins)) env[k] = v;
    else if (ins.keyword === 'COPY') copies.push(ins.args);
  }
  const runs = all.filter((ins) => ins.keyword === 'RUN').map((ins) => ins.args);
  return { base, user, workdir, entrypoint, env, copies, runs };
}

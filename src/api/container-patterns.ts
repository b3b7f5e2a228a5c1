/**
 * Container patterns (ours, not upstream's): pod annotations that name containers by exact name, name pattern or
 * image pattern instead of by a marker on the container, so they also reach containers another admission webhook
 * adds after synth (a mesh proxy, a secret agent). One parser and one matcher for the constructs, `validate`, the
 * pod webhook, the manager and the node daemon.
 *
 * - `kruise.cdk8s.io/terminate-sidecars`: `[{"name"|"namePattern"|"imagePattern": "...", "ignoreExitCode"?: bool,
 *   "shutdown"?: {"exec": {"command": [...]}} | {"httpPost": {"port": n, "path": "/..."}}}]`
 * - `kruise.cdk8s.io/container-exit-priority-patterns`: `[{"name"|"namePattern"|"imagePattern": "...", "priority": n}]`
 *
 * Patterns are JavaScript regular expressions without flags, searched anywhere in the name or image (anchor with ^
 * and $). Only patterns that match in linear-ish time are accepted: the runtime matches them on every pod it admits
 * or watches, so a pattern that backtracks exponentially would stall it.
 *
 * @module
 */
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS,
  ANNOTATION_TERMINATE_SIDECARS,
  ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
} from '../contracts/keys.js';
import { quoteValue } from './quote.js';

/** Which containers one entry means: exactly one of an exact name, a name pattern or an image pattern. */
export type ContainerMatch = { readonly name: string } | { readonly namePattern: string } | { readonly imagePattern: string };

/** A clean shutdown the node daemon tries before SIGTERM. */
export type SidecarShutdown =
  /** A command run in the container through CRI (for endpoints that only answer on the pod's loopback). */
  | { readonly exec: { readonly command: readonly string[] } }
  /** An HTTP POST the daemon sends to the pod's IP on its own node (for endpoints that listen on the pod IP). */
  | { readonly httpPost: { readonly port: number; readonly path: string } };

/** One entry of `kruise.cdk8s.io/terminate-sidecars`. */
export interface TerminatedSidecarPattern {
  readonly match: ContainerMatch;
  readonly ignoreExitCode: boolean;
  readonly shutdown?: SidecarShutdown;
}

/** One entry of `kruise.cdk8s.io/container-exit-priority-patterns`. */
export interface ExitPriorityPattern {
  readonly match: ContainerMatch;
  readonly priority: number;
}

/** A problem in one of these annotations. `entry` is the index of the entry, absent for the whole value. */
export interface PatternIssue {
  readonly entry?: number;
  /** `unusable`: the value cannot be read at all; `never-matches`: the entry is left out; `shutdown`: SIGTERM instead. */
  readonly kind: 'unusable' | 'never-matches' | 'shutdown' | 'priority';
  readonly message: string;
}

export interface PatternParse<T> {
  readonly entries: readonly T[];
  readonly issues: readonly PatternIssue[];
}

/** Most entries one annotation may hold. */
export const MAX_PATTERN_ENTRIES = 32;
/** Longest pattern source, in characters. */
export const MAX_PATTERN_LENGTH = 128;
/** Most unbounded quantifiers (`*`, `+`, `{n,}`) in one pattern: each can multiply the backtracking by the input length. */
export const MAX_UNBOUNDED_QUANTIFIERS = 3;
/** Images longer than this are never matched by an image pattern (bounds the matching time). */
export const MAX_MATCHED_IMAGE_LENGTH = 512;
/** Most words of an exec shutdown, and the longest word or HTTP path. */
const MAX_COMMAND_WORDS = 16;
const MAX_WORD_LENGTH = 1024;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** An HTTP path as the shutdown POST sends it: a leading slash, then printable ASCII without spaces. */
export const HTTP_PATH = /^\/[!-~]*$/;

/**
 * Why `source` cannot be used as a container pattern, else undefined: empty (it would match every container), too
 * long, not a valid regular expression, a backreference, a repeated group that itself repeats or alternates (the
 * shapes that backtrack exponentially), or more than {@link MAX_UNBOUNDED_QUANTIFIERS} unbounded quantifiers.
 */
export function patternProblem(source: string): string | undefined {
  if (source.length === 0) return 'is empty (it would match every container)';
  if (source.length > MAX_PATTERN_LENGTH) return `is longer than ${MAX_PATTERN_LENGTH} characters`;
  try {
    new RegExp(source);
  } catch (e) {
    return `is not a valid regular expression (${(e as Error).message})`;
  }
  // Groups open at this point: whether each holds a quantifier or an alternation so far.
  const groups: { risky: boolean }[] = [];
  let unbounded = 0;
  let lastGroupRisky = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    const afterGroup = lastGroupRisky;
    lastGroupRisky = false;
    if (ch === '\\') {
      const next = source[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return 'uses a backreference';
      i++;
      continue;
    }
    if (ch === '[') {
      // A character class: skip to its closing bracket (escapes inside included).
      for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
      continue;
    }
    if (ch === '(') {
      groups.push({ risky: false });
      continue;
    }
    if (ch === ')') {
      const g = groups.pop();
      lastGroupRisky = g?.risky ?? false;
      if (g?.risky && groups.length > 0) groups[groups.length - 1]!.risky = true;
      continue;
    }
    if (ch === '|') {
      if (groups.length > 0) groups[groups.length - 1]!.risky = true;
      continue;
    }
    const brace = ch === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i)) : null;
    const repeats = ch === '*' || ch === '+' || (brace !== null && (brace[2] !== undefined ? brace[3] !== '1' : Number(brace[1]) > 1));
    if (!repeats && ch !== '?') continue;
    if (brace) i += brace[0].length - 1;
    if (repeats && afterGroup) return 'repeats a group that itself repeats or alternates (it can take exponential time to match)';
    if (ch === '*' || ch === '+' || (brace !== null && brace[2] !== undefined && brace[3] === '')) unbounded++;
    if (groups.length > 0) groups[groups.length - 1]!.risky = true;
  }
  if (unbounded > MAX_UNBOUNDED_QUANTIFIERS) return `has more than ${MAX_UNBOUNDED_QUANTIFIERS} unbounded quantifiers (*, +, {n,})`;
  return undefined;
}

/** Compiled matchers, one per pattern source (the runtime matches the same few patterns on every pod). */
const compiled = new Map<string, RegExp>();
const COMPILED_CACHE_MAX = 1024;

function regexOf(source: string): RegExp {
  let re = compiled.get(source);
  if (!re) {
    re = new RegExp(source);
    if (compiled.size >= COMPILED_CACHE_MAX) compiled.clear();
    compiled.set(source, re);
  }
  return re;
}

/** Whether `match` (an entry that parsed without a never-matches issue) means `container`. */
export function matchesContainer(match: ContainerMatch, container: { readonly name: string; readonly image?: string }): boolean {
  if ('name' in match) return container.name === match.name;
  if ('namePattern' in match) return regexOf(match.namePattern).test(container.name);
  const image = container.image ?? '';
  return image.length <= MAX_MATCHED_IMAGE_LENGTH && regexOf(match.imagePattern).test(image);
}

/** The match as a human reads it: `name "x"`, `name pattern /x/`, `image pattern /x/`. */
export function describeMatch(match: ContainerMatch): string {
  if ('name' in match) return `name ${quoteValue(match.name)}`;
  if ('namePattern' in match) return `name pattern /${match.namePattern}/`;
  return `image pattern /${match.imagePattern}/`;
}

const MATCH_KEYS = ['name', 'namePattern', 'imagePattern'] as const;

function readMatch(entry: Record<string, unknown>): { match?: ContainerMatch; problem?: string } {
  const present = MATCH_KEYS.filter((k) => entry[k] !== undefined);
  if (present.length !== 1) return { problem: `needs exactly one of ${MATCH_KEYS.join(', ')} (has ${present.length})` };
  const key = present[0]!;
  const value = entry[key];
  if (typeof value !== 'string') return { problem: `${key} must be a string, got ${quoteValue(value)}` };
  if (key === 'name') {
    if (!DNS_LABEL.test(value) || value.length > 63) return { problem: `name ${quoteValue(value)} is not a valid container name` };
    return { match: { name: value } };
  }
  const problem = patternProblem(value);
  if (problem) return { problem: `${key} ${quoteValue(value)} ${problem}` };
  return { match: key === 'namePattern' ? { namePattern: value } : { imagePattern: value } };
}

function readShutdown(raw: unknown): { shutdown?: SidecarShutdown; problem?: string } {
  if (raw === undefined) return {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { problem: 'shutdown must be an object' };
  const s = raw as Record<string, unknown>;
  const kinds = ['exec', 'httpPost'].filter((k) => s[k] !== undefined);
  if (kinds.length !== 1) return { problem: 'shutdown needs exactly one of exec, httpPost' };
  if (s.exec !== undefined) {
    const command = (s.exec as { command?: unknown } | null)?.command;
    if (
      !Array.isArray(command) ||
      command.length === 0 ||
      command.length > MAX_COMMAND_WORDS ||
      !command.every((w) => typeof w === 'string' && w.length > 0 && w.length <= MAX_WORD_LENGTH)
    ) {
      return {
        problem: `shutdown.exec.command must be 1 to ${MAX_COMMAND_WORDS} non-empty strings of at most ${MAX_WORD_LENGTH} characters`,
      };
    }
    return { shutdown: { exec: { command: command as string[] } } };
  }
  const post = s.httpPost as { port?: unknown; path?: unknown } | null;
  const port = post?.port;
  const path = post?.path;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    return { problem: `shutdown.httpPost.port must be a TCP port (1-65535), got ${quoteValue(port)}` };
  }
  if (typeof path !== 'string' || !HTTP_PATH.test(path) || path.length > MAX_WORD_LENGTH) {
    return { problem: `shutdown.httpPost.path must start with "/" and hold no whitespace or control characters, got ${quoteValue(path)}` };
  }
  return { shutdown: { httpPost: { port, path } } };
}

function readList(raw: string, annotation: string): { list?: unknown[]; issue?: PatternIssue } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    return { issue: { kind: 'unusable', message: `annotation ${annotation} is not valid JSON (${(e as Error).message})` } };
  }
  if (!Array.isArray(parsed)) return { issue: { kind: 'unusable', message: `annotation ${annotation} must be a JSON list of entries` } };
  if (parsed.length > MAX_PATTERN_ENTRIES) {
    return {
      issue: { kind: 'unusable', message: `annotation ${annotation} has ${parsed.length} entries, more than ${MAX_PATTERN_ENTRIES}` },
    };
  }
  return { list: parsed };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Reads the entries of one pattern annotation: each must be an object whose match can ever succeed; `rest` reads
 * what the annotation adds to the match, reporting into `issues`, and returns the entry or undefined to leave it out.
 */
function parseEntries<T>(
  raw: string,
  annotation: string,
  rest: (item: Record<string, unknown>, match: ContainerMatch, entry: number, issues: PatternIssue[]) => T | undefined,
): PatternParse<T> {
  const { list, issue } = readList(raw, annotation);
  if (!list) return { entries: [], issues: [issue!] };
  const entries: T[] = [];
  const issues: PatternIssue[] = [];
  list.forEach((item, entry) => {
    if (!isObject(item)) {
      issues.push({ entry, kind: 'never-matches', message: `entry ${entry} must be an object` });
      return;
    }
    const { match, problem } = readMatch(item);
    if (!match) {
      issues.push({ entry, kind: 'never-matches', message: `entry ${entry} never matches: ${problem}` });
      return;
    }
    const read = rest(item, match, entry, issues);
    if (read !== undefined) entries.push(read);
  });
  return { entries, issues };
}

/**
 * Parses `kruise.cdk8s.io/terminate-sidecars`. An entry that can never match is left out; a bad shutdown leaves the
 * entry in with SIGTERM; a bad ignoreExitCode leaves it at false. Each is reported.
 */
export function parseTerminateSidecars(raw: string): PatternParse<TerminatedSidecarPattern> {
  return parseEntries(raw, ANNOTATION_TERMINATE_SIDECARS, (item, match, entry, issues) => {
    const ignore = item.ignoreExitCode;
    if (ignore !== undefined && typeof ignore !== 'boolean') {
      issues.push({ entry, kind: 'shutdown', message: `entry ${entry}: ignoreExitCode must be true or false, got ${quoteValue(ignore)}` });
    }
    const sd = readShutdown(item.shutdown);
    if (sd.problem)
      issues.push({ entry, kind: 'shutdown', message: `entry ${entry} (${describeMatch(match)}): ${sd.problem}; SIGTERM is used` });
    return { match, ignoreExitCode: ignore === true, ...(sd.shutdown ? { shutdown: sd.shutdown } : {}) };
  });
}

/** Parses `kruise.cdk8s.io/container-exit-priority-patterns`; entries that cannot be used are left out and reported. */
export function parseExitPriorityPatterns(raw: string): PatternParse<ExitPriorityPattern> {
  return parseEntries(raw, ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS, (item, match, entry, issues) => {
    const p = item.priority;
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 0 || p > 2147483647) {
      issues.push({
        entry,
        kind: 'priority',
        message: `entry ${entry} (${describeMatch(match)}): priority must be a non-negative integer, got ${quoteValue(p)}`,
      });
      return undefined;
    }
    return { match, priority: p };
  });
}

/** A container the way the matching reads it. */
export interface MatchedContainer {
  readonly name: string;
  readonly image?: string;
  readonly env?: readonly { readonly name: string; readonly value?: string }[];
}

/** How one container is to be stopped at Job exit, when it is declared as a terminated sidecar. */
export interface TerminationDecl {
  readonly ignoreExitCode: boolean;
  readonly shutdown?: SidecarShutdown;
}

function carriesEnvMarker(c: MatchedContainer): boolean {
  return (c.env ?? []).some(
    (e) =>
      e.name === ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT ||
      e.name === ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE ||
      e.name === ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
  );
}

/**
 * The containers the pod's `kruise.cdk8s.io/terminate-sidecars` declares (name → how to stop it), first matching entry
 * first. A container with an upstream env marker keeps its marker's meaning and is not matched. When the entries would
 * match every container no main container would remain, so none is taken (the declaration is reported by `validate`).
 */
export function declaredTerminatedSidecars(
  annotations: Readonly<Record<string, string>> | undefined,
  containers: readonly MatchedContainer[],
): ReadonlyMap<string, TerminationDecl> {
  const raw = annotations?.[ANNOTATION_TERMINATE_SIDECARS];
  const out = new Map<string, TerminationDecl>();
  if (typeof raw !== 'string') return out;
  const { entries } = parseTerminateSidecars(raw);
  if (entries.length === 0) return out;
  for (const c of containers) {
    if (carriesEnvMarker(c)) continue;
    const hit = entries.find((e) => matchesContainer(e.match, c));
    if (hit) out.set(c.name, { ignoreExitCode: hit.ignoreExitCode, ...(hit.shutdown ? { shutdown: hit.shutdown } : {}) });
  }
  const mainsLeft = containers.some((c) => !out.has(c.name) && !carriesEnvMarker(c));
  return mainsLeft ? out : new Map();
}

/**
 * The exit priority of each container the pod's `kruise.cdk8s.io/container-exit-priority-patterns` matches and
 * `explicit` (the `kruise.io/container-exit-priority` map) does not name; the first matching entry wins.
 */
export function exitPrioritiesFromPatterns(
  annotations: Readonly<Record<string, string>> | undefined,
  containers: readonly MatchedContainer[],
  explicit: Readonly<Record<string, number>>,
): Record<string, number> {
  const raw = annotations?.[ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS];
  const out: Record<string, number> = {};
  if (typeof raw !== 'string') return out;
  const { entries } = parseExitPriorityPatterns(raw);
  for (const c of containers) {
    if (Object.prototype.hasOwnProperty.call(explicit, c.name)) continue;
    const hit = entries.find((e) => matchesContainer(e.match, c));
    if (hit) out[c.name] = hit.priority;
  }
  return out;
}

/** Formats entries as the annotation value (the constructs' output; keys in a fixed order). */
export function formatTerminateSidecars(entries: readonly TerminatedSidecarPattern[]): string {
  return JSON.stringify(
    entries.map((e) => ({
      ...e.match,
      ...(e.ignoreExitCode ? { ignoreExitCode: true } : {}),
      ...(e.shutdown ? { shutdown: e.shutdown } : {}),
    })),
  );
}

/** Formats entries as the exit-priority-patterns annotation value. */
export function formatExitPriorityPatterns(entries: readonly ExitPriorityPattern[]): string {
  return JSON.stringify(entries.map((e) => ({ ...e.match, priority: e.priority })));
}

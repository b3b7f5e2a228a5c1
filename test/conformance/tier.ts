// The upstream conformance tier's bookkeeping, kept free of I/O on the cluster: reading the checked-in
// expectations (test/conformance/expectations.yaml), the ginkgo arguments of one spec file's run, and the
// comparison of a ginkgo JSON report with the expectations. test/node/conformance.test.ts runs the suite.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

export type Expect = 'pass' | 'expected-fail';

export interface SpecExpectation {
  /** The spec's full text as ginkgo reports it: container texts and the It text, joined by spaces. */
  readonly spec: string;
  readonly expect: Expect;
  /** Why the spec fails against the bundled runtime or on this harness (required for expected-fail). */
  readonly reason?: string;
  /** Part of the subset `npm test` runs (the whole tier runs with `npm run test:conformance`). */
  readonly ci?: boolean;
  /**
   * Why an expected-fail spec sometimes passes on this harness (a race the runtime still loses in some runs). Its
   * pass is reported, not counted as a regression of the list, and it cannot be part of the CI subset.
   */
  readonly unstable?: string;
}

export interface FileExpectation {
  /** Upstream spec file under test/e2e, e.g. `apps/v1alpha1/cloneset.go` (the `--ginkgo.focus-file` value). */
  readonly file: string;
  /** Runs alone, not beside other files (its specs act on node-wide state). */
  readonly serial?: boolean;
  /** Why the CI subset leaves the whole file out (only when no spec of it can be judged stably). */
  readonly ciExcluded?: string;
  readonly specs: readonly SpecExpectation[];
}

export interface Expectations {
  readonly files: readonly FileExpectation[];
}

export const EXPECTATIONS_PATH = path.join(import.meta.dirname, 'expectations.yaml');

/** Parses and checks the expectations file; hostile or malformed content is refused with the offending entry named. */
export function parseExpectations(text: string, source = 'expectations'): Expectations {
  const doc = YAML.parse(text) as unknown;
  const fail = (what: string): never => {
    throw new Error(`${source}: ${what}`);
  };
  if (!isRecord(doc) || !Array.isArray(doc.files)) fail('expected a mapping with a `files` list');
  const files: FileExpectation[] = [];
  const seenFiles = new Set<string>();
  for (const [i, entry] of ((doc as Record<string, unknown>).files as unknown[]).entries()) {
    if (!isRecord(entry)) fail(`files[${i}] is not a mapping`);
    const f = entry as Record<string, unknown>;
    if (typeof f.file !== 'string' || !/^(apps|policy)\/v1(alpha1|beta1)\/[a-z0-9_]+\.go$/.test(f.file))
      fail(`files[${i}].file must name an upstream spec file such as apps/v1alpha1/cloneset.go (got ${JSON.stringify(f.file)})`);
    const file = f.file as string;
    if (seenFiles.has(file)) fail(`${file} is listed twice`);
    seenFiles.add(file);
    if (f.serial !== undefined && typeof f.serial !== 'boolean') fail(`${file}: serial must be true or false`);
    if (!Array.isArray(f.specs) || f.specs.length === 0) fail(`${file}: specs must be a non-empty list`);
    const specs: SpecExpectation[] = [];
    const seen = new Set<string>();
    for (const [j, raw] of (f.specs as unknown[]).entries()) {
      if (!isRecord(raw)) fail(`${file} specs[${j}] is not a mapping`);
      const s = raw as Record<string, unknown>;
      const where = `${file} specs[${j}]`;
      if (typeof s.spec !== 'string' || !s.spec.trim()) fail(`${where}: spec must be the spec's full text`);
      const spec = s.spec as string;
      if (seen.has(spec)) fail(`${where}: ${JSON.stringify(spec)} is listed twice`);
      seen.add(spec);
      if (s.expect !== 'pass' && s.expect !== 'expected-fail')
        fail(`${where} (${spec}): expect must be pass or expected-fail (got ${JSON.stringify(s.expect)})`);
      if (s.expect === 'expected-fail' && (typeof s.reason !== 'string' || s.reason.trim().length < 10))
        fail(`${where} (${spec}): an expected-fail needs a specific reason`);
      if (s.reason !== undefined && typeof s.reason !== 'string') fail(`${where}: reason must be text`);
      if (s.ci !== undefined && typeof s.ci !== 'boolean') fail(`${where}: ci must be true or false`);
      if (s.unstable !== undefined) {
        if (typeof s.unstable !== 'string' || s.unstable.trim().length < 10) fail(`${where}: unstable needs a specific reason`);
        if (s.expect !== 'expected-fail') fail(`${where}: only an expected-fail spec may be unstable (a pass spec must pass every run)`);
        if (s.ci === true) fail(`${where}: an unstable spec cannot be part of the CI subset`);
      }
      for (const key of Object.keys(s))
        if (!['spec', 'expect', 'reason', 'ci', 'unstable'].includes(key)) fail(`${where}: unknown key ${JSON.stringify(key)}`);
      specs.push({
        spec,
        expect: s.expect as Expect,
        reason: s.reason as string | undefined,
        ci: s.ci as boolean | undefined,
        unstable: s.unstable as string | undefined,
      });
    }
    if (f.ciExcluded !== undefined) {
      if (typeof f.ciExcluded !== 'string' || f.ciExcluded.trim().length < 10) fail(`${file}: ciExcluded needs a specific reason`);
      if (specs.some((s) => s.ci)) fail(`${file}: ciExcluded but a spec is marked ci: true`);
    }
    for (const key of Object.keys(f))
      if (!['file', 'serial', 'ciExcluded', 'specs'].includes(key)) fail(`${file}: unknown key ${JSON.stringify(key)}`);
    files.push({ file, serial: f.serial as boolean | undefined, ciExcluded: f.ciExcluded as string | undefined, specs });
  }
  return { files };
}

export function loadExpectations(file = EXPECTATIONS_PATH): Expectations {
  return parseExpectations(readFileSync(file, 'utf8'), path.basename(file));
}

/** RE2 (Go regexp) escape: ginkgo compiles focus strings with Go's regexp package. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Which specs a run judges: `ci` the specs marked `ci: true`, `all` every spec, `{ focus }` the specs whose text
 * contains the focus string, or one of its `|`-separated parts (case-insensitive; `CDK8S_KRUISE_CONFORMANCE_FOCUS`,
 * for working on one difference, or on a few across files in one run).
 */
export type Mode = 'ci' | 'all' | { readonly focus: string };

/** Whether a run in `mode` runs and judges spec `s`. */
export function selected(s: SpecExpectation, mode: Mode): boolean {
  if (mode === 'all') return true;
  if (mode === 'ci') return s.ci === true;
  const spec = s.spec.toLowerCase();
  return mode.focus
    .split('|')
    .map((part) => part.trim().toLowerCase())
    .some((part) => part.length > 0 && spec.includes(part));
}

/**
 * The e2e binary's arguments for one spec file: the file as focus (v1alpha1 and v1beta1 specs share names),
 * unless every spec runs each chosen spec's whole text as a focus (ginkgo ORs them), and the reports.
 */
export function ginkgoArgs(file: FileExpectation, mode: Mode, reports: { json: string; junit: string }, timeout: string): string[] {
  const args = [
    `--ginkgo.focus-file=/test/e2e/${escapeRegExp(file.file)}$`,
    `--ginkgo.json-report=${reports.json}`,
    `--ginkgo.junit-report=${reports.junit}`,
    `--ginkgo.timeout=${timeout}`,
    '--ginkgo.no-color',
    '--ginkgo.v',
  ];
  if (mode !== 'all') {
    const chosen = file.specs.filter((s) => selected(s, mode));
    if (chosen.length === 0)
      throw new Error(
        mode === 'ci'
          ? `${file.file}: no spec is marked ci: true, so CI would not cover this file`
          : `${file.file}: no spec contains "${mode.focus}"`,
      );
    // ginkgo matches focus against "<suite description> <spec text>": the spec's text is anchored at its end and
    // at a word start, which the suite description before it leaves free.
    for (const s of chosen) args.push(`--ginkgo.focus=(^| )${escapeRegExp(s.spec)}$`);
  }
  return args;
}

/** What the tier needs from a ginkgo v2 JSON report (an array of suite reports). */
interface GinkgoSpecReport {
  readonly ContainerHierarchyTexts?: readonly string[] | null;
  readonly LeafNodeText?: string;
  readonly LeafNodeType?: string;
  readonly LeafNodeLocation?: { readonly FileName?: string };
  readonly State?: string;
  readonly RunTime?: number;
  readonly Failure?: { readonly Message?: string; readonly Location?: { FileName?: string; LineNumber?: number } };
}

export interface SpecResult {
  readonly spec: string;
  /** ginkgo's state: passed, failed, skipped, pending, panicked, timedout, interrupted, aborted. */
  readonly state: string;
  readonly seconds: number;
  readonly failure?: string;
}

/** The It specs of a JSON report that come from `file` (suite-level nodes left out). */
export function specResults(reportJson: string, file: string): SpecResult[] {
  const suites = JSON.parse(reportJson) as unknown;
  if (!Array.isArray(suites)) throw new Error('a ginkgo JSON report is an array of suite reports');
  const results: SpecResult[] = [];
  for (const suite of suites as { SpecReports?: GinkgoSpecReport[] | null }[]) {
    for (const r of suite.SpecReports ?? []) {
      if (r.LeafNodeType !== 'It') continue;
      if (!r.LeafNodeLocation?.FileName?.endsWith(`/test/e2e/${file}`)) continue;
      const failure = r.Failure?.Message
        ? `${r.Failure.Message.trim().split('\n').slice(0, 6).join('\n')}${r.Failure.Location?.FileName ? ` (${path.basename(r.Failure.Location.FileName)}:${r.Failure.Location.LineNumber})` : ''}`
        : undefined;
      results.push({
        spec: [...(r.ContainerHierarchyTexts ?? []), r.LeafNodeText ?? ''].join(' '),
        state: r.State ?? 'unknown',
        seconds: Math.round((r.RunTime ?? 0) / 1e9),
        failure,
      });
    }
  }
  return results;
}

export interface Comparison {
  /** Each a reason the tier fails. */
  readonly problems: string[];
  readonly ran: number;
  readonly passed: number;
}

/**
 * Compares one file's results with its expectations. The tier fails when a `pass` spec did not pass, when an
 * `expected-fail` spec passed (the list only shrinks), when the suite has a spec the file does not list, and when
 * a spec that should have run did not appear (a renamed or removed spec).
 */
export function compare(file: FileExpectation, results: readonly SpecResult[], mode: Mode): Comparison {
  const problems: string[] = [];
  const byName = new Map(results.map((r) => [r.spec, r]));
  const expected = new Map(file.specs.map((s) => [s.spec, s]));
  let ran = 0;
  let passed = 0;
  for (const r of results) {
    if (!expected.has(r.spec)) problems.push(`${file.file}: "${r.spec}" is not in the expectations file (add it as pass or expected-fail)`);
  }
  for (const s of file.specs) {
    const shouldRun = selected(s, mode);
    const r = byName.get(s.spec);
    if (!r) {
      problems.push(`${file.file}: "${s.spec}" is listed but the suite has no such spec`);
      continue;
    }
    if (!shouldRun) continue;
    if (r.state !== 'skipped' && r.state !== 'pending') ran++;
    if (r.state === 'passed') passed++;
    if (s.expect === 'pass' && r.state !== 'passed')
      problems.push(`${file.file}: "${s.spec}" should pass but ${r.state}${r.failure ? `:\n${indent(r.failure)}` : ''}`);
    if (s.expect === 'expected-fail' && r.state === 'passed' && !s.unstable)
      problems.push(
        `${file.file}: "${s.spec}" is listed as expected-fail (${s.reason}) but passed: change it to pass in the expectations file`,
      );
  }
  return { problems, ran, passed };
}

/** One table row per spec, for the run's log and the docs. */
export function resultTable(file: FileExpectation, results: readonly SpecResult[]): string {
  const expected = new Map(file.specs.map((s) => [s.spec, s]));
  return results
    .filter((r) => r.state !== 'skipped')
    .map((r) => `| ${file.file} | ${r.spec} | ${r.state} | ${r.seconds} s | ${expected.get(r.spec)?.expect ?? 'unlisted'} |`)
    .join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

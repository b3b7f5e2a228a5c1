import { DocumentLocator } from './locate.js';
import { decodeInput, inputFinding, parseText, parseTextInBatches, resourceRef } from './parse.js';
import { findRule, RULES } from './rules/index.js';
import { escapeControl, truncate } from '../api/quote.js';
import type { Finding, Manifest, PreviousLookup, Rule, RuleContext, RuleFinding, Severity, SourceRef } from './types.js';

const MAX_POINTER = 1024;
const MAX_MESSAGE = 2000;

/** A mistake in how the engine was called (unknown rule id...): the CLI maps it to exit code 2. */
// Defined apart so the CLI can recognize usage errors without loading the engine and its rules.
import { UsageError } from './usage-error.js';
export { UsageError };

export interface RuleSelection {
  /** Run only these rule ids (default: all). */
  readonly rules?: readonly string[];
  /** Do not run these rule ids. */
  readonly skipRules?: readonly string[];
}

/** Resolves --rule/--skip-rule to rules, rejecting unknown ids with the closest known ones. */
export function selectRules(selection: RuleSelection = {}): Rule[] {
  const resolve = (ids: readonly string[] | undefined) =>
    (ids ?? [])
      .flatMap((raw) => raw.split(','))
      .map((s) => s.trim())
      .filter(Boolean)
      .map((id) => {
        const rule = findRule(id);
        if (!rule) throw new UsageError(`unknown rule id "${id}"${suggest(id)}. Run \`cdk8s-kruise explain\` to list the rules.`);
        return rule;
      });
  const only = resolve(selection.rules);
  const skip = new Set(resolve(selection.skipRules).map((r) => r.id));
  return (only.length > 0 ? only : [...RULES]).filter((r) => !skip.has(r.id));
}

function suggest(id: string): string {
  const up = id.toUpperCase();
  const close = RULES.map((r) => r.id).filter((r) => r.startsWith(up.split('-').slice(0, 2).join('-')) || levenshtein(r, up) <= 3);
  return close.length > 0 ? ` (did you mean ${close.slice(0, 3).join(', ')}?)` : '';
}

export function levenshtein(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/**
 * Runs rules over parsed manifests and returns findings with file and line filled in for manifests that came
 * from text. Line recovery re-parses only the documents that have findings.
 */
export function runRules(manifests: readonly Manifest[], rules: readonly Rule[] = RULES, previousOf?: PreviousLookup): Finding[] {
  const { failures, raw } = collectRuleFindings(manifests, rules, previousOf);
  return [...failures, ...materialize(raw)];
}

/** A rule's finding before its line is recovered. */
interface RawFinding {
  readonly rule: Rule;
  readonly finding: RuleFinding;
}

function collectRuleFindings(
  manifests: readonly Manifest[],
  rules: readonly Rule[],
  previousOf?: PreviousLookup,
): { failures: Finding[]; raw: RawFinding[] } {
  const ctx: RuleContext = previousOf ? { manifests, previousOf } : { manifests };
  const raw: RawFinding[] = [];
  const failures: Finding[] = [];
  for (const rule of rules) {
    let found;
    try {
      found = rule.check(manifests, ctx);
    } catch (e) {
      isolateFailure(rule, manifests, e, failures, raw, previousOf);
      continue;
    }
    for (const finding of found) raw.push({ rule, finding });
  }
  return { failures, raw };
}

/**
 * A rule that threw (a bug, or a crash such as a stack overflow) is run again on each object alone, so the failure
 * is reported against the objects that cause it, with their file and line, and a per-document rule still reports
 * the other objects' findings. A failure no object causes alone is reported against the first object checked.
 */
function isolateFailure(
  rule: Rule,
  manifests: readonly Manifest[],
  error: unknown,
  failures: Finding[],
  raw: RawFinding[],
  previousOf?: PreviousLookup,
): void {
  let blamed = 0;
  if (manifests.length > 1) {
    const perDocument = PER_DOCUMENT_RULES.has(rule.id);
    for (const m of manifests) {
      let found;
      try {
        found = rule.check([m], previousOf ? { manifests: [m], previousOf } : { manifests: [m] });
      } catch (e) {
        failures.push(ruleFailure(rule, e, m));
        blamed++;
        continue;
      }
      if (perDocument) for (const finding of found) raw.push({ rule, finding });
    }
  }
  if (blamed === 0) failures.push(ruleFailure(rule, error, manifests[0], manifests.length));
}

function ruleFailure(rule: Rule, error: unknown, manifest: Manifest | undefined, together = 1): Finding {
  const src = manifest?.source;
  const reason = escapeControl(error instanceof Error ? error.message : String(error)).slice(0, 200);
  return {
    ruleId: rule.id,
    severity: 'error',
    ...(src ? { file: src.file, line: src.startLine } : {}),
    resource: manifest ? resourceRef(manifest.object) : { kind: '', name: '' },
    jsonPointer: '',
    message: `internal error in rule ${rule.id}${together > 1 ? ` (on ${together} objects together, not on any alone)` : ''}: ${reason}`,
    hint: 'This is a bug in cdk8s-kruise; skip the rule with --skip-rule meanwhile and report it.',
  };
}

/**
 * Turns rule findings into reported findings with file and line. Lines are recovered one document at a time
 * (keyed by span: items of one List share their document), and each document's position index is dropped before
 * the next is built, so memory does not grow with the findings.
 */
function materialize(raw: readonly RawFinding[]): Finding[] {
  const positions: Array<{ line: number; column: number } | undefined> = new Array<{ line: number; column: number } | undefined>(
    raw.length,
  );
  const byDocument = new Map<string, number[]>();
  raw.forEach(({ finding }, i) => {
    const src = finding.manifest.source;
    if (!src) return;
    const key = `${src.file}\0${src.start}`;
    let list = byDocument.get(key);
    if (!list) byDocument.set(key, (list = []));
    list.push(i);
  });
  for (const indexes of byDocument.values()) {
    const src = raw[indexes[0]!]!.finding.manifest.source!;
    try {
      const locator = new DocumentLocator({ ...src, pointerPrefix: '' });
      for (const i of indexes) {
        const f = raw[i]!.finding;
        positions[i] = locator.locate(f.manifest.source!.pointerPrefix + f.jsonPointer);
      }
    } catch {
      // The document parsed, so this is not expected; its findings still name the file, at the document's start.
      for (const i of indexes) positions[i] ??= { line: src.startLine, column: 1 };
    }
  }
  return raw.map(({ rule, finding: f }, i) => {
    const src = f.manifest.source;
    const position = positions[i];
    return {
      ruleId: rule.id,
      severity: rule.severity,
      ...(src ? { file: src.file, line: position?.line, column: position?.column } : {}),
      resource: resourceRef(f.manifest.object),
      // Bounded: a pointer holds user keys, and a message may quote several user values.
      jsonPointer: truncate(f.jsonPointer, MAX_POINTER),
      message: truncate(f.message, MAX_MESSAGE),
      hint: truncate(f.hint, MAX_MESSAGE),
    };
  });
}

/** One input: a name for reports and its bytes or text. */
export interface TextInput {
  readonly file: string;
  readonly content: string | Uint8Array;
}

export interface ValidationResult {
  readonly findings: Finding[];
  /** Objects checked. */
  readonly documents: number;
  readonly files: number;
}

/** Parsed inputs: the objects found and the findings of the input parser (unreadable documents, empty files). */
export interface ParsedInputs {
  readonly manifests: Manifest[];
  readonly findings: Finding[];
}

/** Parses every input with the fast path; never throws for bad content. */
export function parseInputs(inputs: readonly TextInput[]): ParsedInputs {
  const manifests: Manifest[] = [];
  const findings: Finding[] = [];
  for (const input of inputs) {
    const text = typeof input.content === 'string' ? input.content : decodeInput(input.content, input.file);
    if (typeof text !== 'string') {
      findings.push(text);
      continue;
    }
    const parsed = parseText(text, input.file);
    for (const m of parsed.manifests) manifests.push(m);
    for (const f of parsed.findings) findings.push(f);
  }
  return { manifests, findings };
}

/** Input items as the streaming reader yields them: bytes to parse, or a finding saying why an input was not read. */
export type ParsableInput = TextInput | { readonly file: string; readonly finding: Finding };

/**
 * Runs the selected rules over parsed inputs; parser findings are kept when their rule is selected. With
 * `previousOf`, the rules that judge a change compare each object with its previous version.
 */
export function checkParsed(
  parsed: ParsedInputs,
  rules: readonly Rule[],
  fileOrder: readonly string[],
  previousOf?: PreviousLookup,
): Finding[] {
  const selected = new Set(rules.map((r) => r.id));
  return sortFindings(
    [...parsed.findings.filter((f) => selected.has(f.ruleId)), ...runRules(parsed.manifests, rules, previousOf)],
    fileOrder,
  );
}

/** The findings a report lists (the first ones in report order) and the counts of all of them. */
export interface FindingWindow {
  readonly shown: readonly Finding[];
  readonly total: Summary;
  /** Counts of the findings not listed. */
  readonly omitted: Summary;
}

/** The first `limit` findings in report order and the counts of the rest. */
export function windowOf(findings: readonly Finding[] | FindingWindow, limit = Infinity): FindingWindow {
  if (!Array.isArray(findings)) return findings as FindingWindow;
  const all = findings as readonly Finding[];
  const shown = all.length > limit ? all.slice(0, limit) : all;
  return { shown, total: summarize(all), omitted: summarize(all.slice(shown.length)) };
}

/**
 * Like checkParsed, but keeps only the first `limit` findings in report order and counts the rest, so a flood of
 * findings costs counters instead of memory, and lines are recovered only for the documents that are listed.
 * Documents are ordered by (file, first line) before any line is recovered; only the documents that hold the first
 * `limit` findings are located and sorted exactly.
 */
export function checkParsedWindow(
  parsed: ParsedInputs,
  rules: readonly Rule[],
  fileOrder: readonly string[],
  limit: number,
): FindingWindow {
  const run = new WindowedRun(rules, limit);
  for (const f of fileOrder) run.addFile(f);
  run.addParserFindings(parsed.findings);
  for (let i = 0; i < parsed.manifests.length; i += RULE_BATCH) run.addManifests(parsed.manifests.slice(i, i + RULE_BATCH));
  return run.finish(fileOrder);
}

/**
 * checkParsedWindow over inputs as the streaming reader yields them: each file is parsed in batches, the
 * per-document rules run on each batch, and only what the cross-document rules retain (`Rule.retain`) outlives
 * its batch, so memory follows the findings listed and the cross-document facts, not the size of the input.
 */
export async function checkInputStreamWindow(
  items: AsyncIterable<ParsableInput>,
  rules: readonly Rule[],
  limit: number,
  batchSize = RULE_BATCH,
): Promise<FindingWindow & { readonly documents: number; readonly files: readonly string[] }> {
  const run = new WindowedRun(rules, limit);
  const files: string[] = [];
  let documents = 0;
  for await (const item of items) {
    files.push(item.file);
    run.addFile(item.file);
    if ('finding' in item) {
      run.addParserFindings([item.finding]);
      continue;
    }
    try {
      const text = typeof item.content === 'string' ? item.content : decodeInput(item.content, item.file);
      if (typeof text !== 'string') {
        run.addParserFindings([text]);
        continue;
      }
      parseTextInBatches(text, item.file, batchSize, (batch) => {
        documents += batch.manifests.length;
        run.addParserFindings(batch.findings);
        run.addManifests(batch.manifests);
      });
    } catch (e) {
      // Rule failures are caught per rule; this is the last resort, so that even a crash names the input.
      run.addFailure(
        inputFinding(
          item.file,
          `internal error while checking this input: ${escapeControl(e instanceof Error ? e.message : String(e)).slice(0, 200)}`,
          'This is a bug in cdk8s-kruise; report it with the input that causes it.',
        ),
      );
    }
  }
  return { ...run.finish(files), documents, files };
}

/** One windowed run: per-document rules batch by batch, cross-document rules at the end over what they retained. */
class WindowedRun {
  private readonly selected: Set<string>;
  private readonly order = new Map<string, number>();
  private readonly window: CoarseWindow;
  private readonly failures: Finding[] = [];
  private readonly perDocument: Rule[];
  private readonly crossDocument: Array<{ rule: Rule; retained: RetainedManifests; active: boolean }>;

  constructor(rules: readonly Rule[], limit: number) {
    this.selected = new Set(rules.map((r) => r.id));
    this.window = new CoarseWindow(limit);
    this.perDocument = rules.filter((r) => PER_DOCUMENT_RULES.has(r.id));
    this.crossDocument = rules
      .filter((r) => !PER_DOCUMENT_RULES.has(r.id))
      .map((rule) => ({ rule, retained: new RetainedManifests(), active: !rule.activatedBy }));
  }

  addFile(file: string): void {
    if (!this.order.has(file)) this.order.set(file, this.order.size);
  }

  /** A finding added whatever rules are selected (an input that could not be checked). */
  addFailure(f: Finding): void {
    this.window.add({ file: this.fileIndex(f.file), line: f.line ?? 0, parser: f, severity: f.severity });
  }

  addParserFindings(findings: readonly Finding[]): void {
    for (const f of findings) {
      if (this.selected.has(f.ruleId))
        this.window.add({ file: this.fileIndex(f.file), line: f.line ?? 0, parser: f, severity: f.severity });
    }
  }

  addManifests(manifests: readonly Manifest[]): void {
    this.addRaw(collectRuleFindings(manifests, this.perDocument));
    for (const cross of this.crossDocument) if (!cross.active) cross.active = manifests.some(cross.rule.activatedBy!);
    for (const m of manifests) {
      // Rules that retain the same object (the whole manifest, mostly) share its compact form.
      const shared = new Map<Record<string, unknown>, string | undefined>();
      for (const { rule, retained } of this.crossDocument) {
        const object = rule.retain ? rule.retain(m) : m.object;
        if (!object) continue;
        const item = object === m.object ? m : { object, ...(m.source ? { source: m.source } : {}) };
        if (!shared.has(object)) shared.set(object, RetainedManifests.compactForm(item));
        retained.push(item, shared.get(object));
      }
    }
  }

  finish(fileOrder: readonly string[]): FindingWindow {
    // One rule's retained manifests are revived at a time, and dropped once it has run.
    // A rule no manifest activated finds nothing (Rule.activatedBy): what it retained is dropped unrevived.
    for (const { rule, retained, active } of this.crossDocument) {
      const manifests = retained.take(active);
      if (active) this.addRaw(collectRuleFindings(manifests, [rule]));
    }
    // An internal failure of a batched rule is reported once, not once per batch.
    const uniqueFailures = [...new Map(this.failures.map((f) => [f.message, f])).values()];
    const limit = this.window.limit;
    const chosen = this.window.entries();
    const located = [
      ...chosen.filter((e) => e.parser).map((e) => e.parser!),
      ...materialize(chosen.filter((e) => e.raw).map((e) => e.raw!)),
    ];
    const shown = sortFindings([...uniqueFailures, ...located], fileOrder).slice(0, limit);
    const total = { ...this.window.total };
    total.errors += uniqueFailures.length;
    const shownSummary = summarize(shown);
    return {
      shown,
      total,
      omitted: {
        errors: total.errors - shownSummary.errors,
        warnings: total.warnings - shownSummary.warnings,
        infos: total.infos - shownSummary.infos,
      },
    };
  }

  private fileIndex(file: string | undefined): number {
    return this.order.get(file ?? '') ?? -1;
  }

  private addRaw({ failures, raw }: { failures: Finding[]; raw: RawFinding[] }): void {
    // A failure on an object from a file is listed and counted like any finding; one on objects without a file
    // (given in process) is reported once, however many batches hit it.
    for (const f of failures) {
      if (f.file !== undefined) this.addFailure(f);
      else this.failures.push(f);
    }
    for (const r of raw) {
      const src = r.finding.manifest.source;
      this.window.add({ file: src ? this.fileIndex(src.file) : -1, line: src?.startLine ?? 0, raw: r, severity: r.rule.severity });
    }
  }
}

/**
 * What a cross-document rule retains while a large input streams by, kept compact until the rule runs: each
 * object as JSON text with its source position (a tenth of the heap of the object graph, which for 100k workloads
 * was most of the live heap and, through the garbage collector's headroom, several times that in RSS). The file
 * text itself is shared, never copied. An object JSON cannot carry exactly (a non-finite number, `undefined`, a
 * non-plain object) is kept as it is.
 */
class RetainedManifests {
  private readonly compact: string[] = [];
  private readonly compactSources: Array<number> = [];
  private readonly whole: Manifest[] = [];
  private readonly order: Array<0 | 1> = [];
  private readonly texts: Array<Pick<SourceRef, 'file' | 'fileText'>> = [];
  private readonly textIndex = new Map<string, number>();

  /** The manifest as one JSON string (object and source position), or undefined when JSON cannot carry it exactly. */
  static compactForm(m: Manifest): string | undefined {
    const src = m.source;
    // One JSON.stringify of the whole record gives one flat string (concatenating would keep its parts).
    return exactJson(src ? [m.object, src.docIndex, src.startLine, src.start, src.end, src.pointerPrefix] : [m.object]);
  }

  /** Retains `m`, as `json` (its compactForm) when given. */
  push(m: Manifest, json = RetainedManifests.compactForm(m)): void {
    const src = m.source;
    if (json === undefined) {
      this.whole.push(m);
      this.order.push(0);
      return;
    }
    let text = -1;
    if (src) {
      const key = src.file;
      text = this.textIndex.get(key) ?? -1;
      if (text === -1 || this.texts[text]!.fileText !== src.fileText) {
        text = this.texts.push({ file: src.file, fileText: src.fileText }) - 1;
        this.textIndex.set(key, text);
      }
    }
    this.compact.push(json);
    this.compactSources.push(text);
    this.order.push(1);
  }

  /** The retained manifests in the order they were pushed (none when `revive` is false); the store is empty afterwards. */
  take(revive = true): Manifest[] {
    const out: Manifest[] = [];
    if (!revive) this.order.length = 0;
    let c = 0;
    let w = 0;
    for (const kind of this.order) {
      if (kind === 0) {
        out.push(this.whole[w++]!);
        continue;
      }
      const [object, docIndex, startLine, start, end, pointerPrefix] = JSON.parse(this.compact[c]!) as [
        Record<string, unknown>,
        number?,
        number?,
        number?,
        number?,
        string?,
      ];
      const text = this.compactSources[c++]!;
      const t = text >= 0 ? this.texts[text]! : undefined;
      out.push(
        t
          ? {
              object,
              source: {
                file: t.file,
                fileText: t.fileText,
                docIndex: docIndex!,
                startLine: startLine!,
                start: start!,
                end: end!,
                pointerPrefix: pointerPrefix!,
              },
            }
          : { object },
      );
    }
    this.compact.length = 0;
    this.compactSources.length = 0;
    this.whole.length = 0;
    this.order.length = 0;
    return out;
  }
}

/** JSON text that parses back to an equal object, or undefined when JSON cannot carry the object exactly. */
function exactJson(value: unknown): string | undefined {
  // Checked by a walk, then stringified natively: a replacer function called per key cost more than the rest.
  return jsonExact(value, 0) ? JSON.stringify(value) : undefined;
}

/** Deeper than any parsed document (the parser refuses nesting past MAX_NESTING): a cycle, kept as it is. */
const MAX_EXACT_DEPTH = 1000;

/**
 * True when JSON carries `v` exactly: no undefined, bigint, function or symbol, no non-finite number or -0, no
 * object but plain ones and arrays (a Date would come back a string), no array hole, no cycle.
 */
function jsonExact(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    case 'object':
      break;
    default:
      return false;
  }
  if (v === null) return true;
  if (depth > MAX_EXACT_DEPTH) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!jsonExact(v[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k in v) if (!jsonExact((v as Record<string, unknown>)[k], depth + 1)) return false;
  return true;
}

/**
 * Rules whose findings for a document depend on that document alone (they loop over manifests and never compare
 * two). Only these may run over batches; a rule missing here (every new rule by default) sees all manifests.
 */
export const PER_DOCUMENT_RULES: ReadonlySet<string> = new Set([
  // The parser's findings: their check finds nothing.
  'KRUISE-INPUT-001',
  'KRUISE-INPUT-002',
  'KRUISE-SCHEMA-001',
  'KRUISE-SCHEMA-002',
  'KRUISE-SCHEMA-003',
  'KRUISE-SCHEMA-004',
  'KRUISE-IMAGE-001',
  'KRUISE-SIDECAR-001',
  'KRUISE-SIDECAR-002',
  'KRUISE-SIDECAR-003',
  'KRUISE-SIDECAR-004',
  'KRUISE-SIDECAR-005',
  'KRUISE-SIDECAR-006',
  'KRUISE-EXITPRIO-001',
  'KRUISE-EXITPRIO-002',
  'KRUISE-EXITPRIO-003',
  'KRUISE-EXITPRIO-004',
  'KRUISE-LAUNCHPRIO-001',
  'KRUISE-LAUNCHPRIO-002',
  'KRUISE-LAUNCHPRIO-003',
  'KRUISE-SIDECARSET-008',
  'KRUISE-IMAGEPULLJOB-001',
  'KRUISE-IMAGEPULLJOB-002',
  'KRUISE-IMAGEPULLJOB-003',
  'KRUISE-IMAGEPULLJOB-004',
  'KRUISE-IMAGEPULLJOB-005',
  'KRUISE-IMAGELISTPULLJOB-001',
  'KRUISE-IMAGELISTPULLJOB-002',
  'KRUISE-IMAGELISTPULLJOB-003',
  'KRUISE-IMAGELISTPULLJOB-004',
  'KRUISE-IMAGELISTPULLJOB-005',
  'KRUISE-IMAGELISTPULLJOB-006',
  'KRUISE-IMAGELISTPULLJOB-007',
  'KRUISE-IMAGELISTPULLJOB-008',
  'KRUISE-PREPULL-001',
  'KRUISE-PREPULL-002',
  'KRUISE-BROADCASTJOB-001',
  'KRUISE-BROADCASTJOB-002',
  'KRUISE-BROADCASTJOB-003',
  'KRUISE-DAEMONSET-001',
  'KRUISE-DAEMONSET-002',
  'KRUISE-STATEFULSET-001',
  'KRUISE-STATEFULSET-002',
  'KRUISE-PODPROBEMARKER-001',
  'KRUISE-LIVENESS-001',
  'KRUISE-LIVENESS-002',
  'KRUISE-PUB-001',
  'KRUISE-CLONESET-001',
  'KRUISE-CLONESET-002',
  'KRUISE-CLONESET-003',
  'KRUISE-CLONESET-004',
  'KRUISE-INPLACE-001',
  'KRUISE-CRR-001',
  'KRUISE-CRR-002',
  'KRUISE-PROTECT-001',
  'KRUISE-PROTECT-002',
  'KRUISE-PROTECT-003',
  'KRUISE-SIDECARSET-001',
  'KRUISE-SIDECARSET-003',
  'KRUISE-SIDECARSET-004',
  'KRUISE-SIDECARSET-006',
  'KRUISE-RUNTIME-002',
  'KRUISE-IMAGE-002',
]);
// Small batches: their objects die young (scavenged) instead of being promoted, which is what grows the heap.
const RULE_BATCH = 200;

type WindowEntry = { file: number; line: number; parser?: Finding; raw?: RawFinding; severity: Severity };

/**
 * Keeps the entries that can be among the first `limit` in (file, first line) order, plus every entry tied with
 * the last of them (their exact order is settled after locating), and counts all entries added.
 */
class CoarseWindow {
  private kept: WindowEntry[] = [];
  readonly total = { errors: 0, warnings: 0, infos: 0 };
  /**
   * Trimmed when it holds this many. A trim cannot drop entries tied with the last listed one (all findings of one
   * document tie), so after each trim the mark is at least twice what is left: however many tie, the entries are
   * sorted O(log n) times, not once per entry added.
   */
  private trimAt: number;

  constructor(readonly limit: number) {
    this.trimAt = 2 * limit + 1024;
  }

  add(e: WindowEntry): void {
    if (e.severity === 'error') this.total.errors++;
    else if (e.severity === 'warning') this.total.warnings++;
    else this.total.infos++;
    this.kept.push(e);
    if (Number.isFinite(this.limit) && this.kept.length >= this.trimAt) {
      this.trim();
      this.trimAt = Math.max(2 * this.limit + 1024, 2 * this.kept.length);
    }
  }

  entries(): WindowEntry[] {
    this.trim();
    return this.kept;
  }

  private trim(): void {
    this.kept.sort((a, b) => a.file - b.file || a.line - b.line);
    if (!Number.isFinite(this.limit)) return;
    let cut = Math.min(this.kept.length, this.limit);
    while (
      cut > 0 &&
      cut < this.kept.length &&
      this.kept[cut]!.file === this.kept[cut - 1]!.file &&
      this.kept[cut]!.line === this.kept[cut - 1]!.line
    )
      cut++;
    if (cut < this.kept.length) this.kept = this.kept.slice(0, cut);
  }
}

/** True for an input with no content but whitespace, which cdk8s writes for a chart without objects. */
export function isBlank(content: string | Uint8Array): boolean {
  const text =
    typeof content === 'string' ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('latin1');
  return text.trim() === '';
}

/**
 * Parses and validates inputs. Never throws for bad content; throws UsageError for an unknown rule id. With
 * `previousOf`, the rules that judge a change compare each object with its previous version.
 */
export function validateInputs(inputs: readonly TextInput[], selection: RuleSelection = {}, previousOf?: PreviousLookup): ValidationResult {
  const rules = selectRules(selection);
  const parsed = parseInputs(inputs);
  return {
    findings: checkParsed(
      parsed,
      rules,
      inputs.map((i) => i.file),
      previousOf,
    ),
    documents: parsed.manifests.length,
    files: inputs.length,
  };
}

/**
 * In-process validation of rendered objects, e.g. `validateManifests(Testing.synth(chart))` in a unit test.
 * Findings carry the JSON pointer and resource but no file or line.
 */
export function validateManifests(objects: readonly unknown[], selection: RuleSelection = {}): Finding[] {
  const manifests: Manifest[] = objects
    .filter((o): o is Record<string, unknown> => typeof o === 'object' && o !== null && !Array.isArray(o))
    .map((object) => ({ object }));
  return runRules(manifests, selectRules(selection));
}

const SEVERITY_ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

function sortFindings(findings: Finding[], fileOrder: readonly string[]): Finding[] {
  const order = new Map(fileOrder.map((f, i) => [f, i]));
  const ruleOrder = new Map(RULES.map((r, i) => [r.id, i]));
  return findings
    .map((f, i) => ({ f, i }))
    .sort(
      (a, b) =>
        (order.get(a.f.file ?? '') ?? -1) - (order.get(b.f.file ?? '') ?? -1) ||
        (a.f.line ?? 0) - (b.f.line ?? 0) ||
        (ruleOrder.get(a.f.ruleId) ?? 0) - (ruleOrder.get(b.f.ruleId) ?? 0) ||
        a.i - b.i,
    )
    .map((x) => x.f);
}

export interface Summary {
  readonly errors: number;
  readonly warnings: number;
  readonly infos: number;
}

export function summarize(findings: readonly Finding[]): Summary {
  let errors = 0;
  let warnings = 0;
  let infos = 0;
  for (const f of findings) {
    if (f.severity === 'error') errors++;
    else if (f.severity === 'warning') warnings++;
    else infos++;
  }
  return { errors, warnings, infos };
}

/** True when the findings should fail a run (exit code 1 / failed synth). */
export function failing(findings: readonly Finding[], warningsAsErrors = false): boolean {
  return findings.some((f) => SEVERITY_ORDER[f.severity] === 0 || (warningsAsErrors && f.severity === 'warning'));
}

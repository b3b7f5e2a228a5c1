import { DocumentLocator } from './locate.js';
import { decodeInput, parseText, resourceRef } from './parse.js';
import { findRule, RULES } from './rules/index.js';
import type { Finding, Manifest, Rule, RuleContext, Severity } from './types.js';

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
    (ids ?? []).flatMap((raw) => raw.split(',')).map((s) => s.trim()).filter(Boolean).map((id) => {
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
export function runRules(manifests: readonly Manifest[], rules: readonly Rule[] = RULES): Finding[] {
  const ctx: RuleContext = { manifests };
  // Keyed by span, not by SourceRef: items of one List share their document and are parsed once.
  const locators = new Map<string, DocumentLocator>();
  const out: Finding[] = [];
  for (const rule of rules) {
    let raw;
    try {
      raw = rule.check(manifests, ctx);
    } catch (e) {
      out.push({
        ruleId: rule.id,
        severity: 'error',
        resource: { kind: '', name: '' },
        jsonPointer: '',
        message: `internal error in rule ${rule.id}: ${(e as Error).message}`,
        hint: 'This is a bug in cdk8s-kruise; skip the rule with --skip-rule meanwhile and report it.',
      });
      continue;
    }
    for (const f of raw) {
      const src = f.manifest.source;
      let position: { line: number; column: number } | undefined;
      if (src) {
        const key = `${src.file}\0${src.start}`;
        let loc = locators.get(key);
        if (!loc) locators.set(key, (loc = new DocumentLocator({ ...src, pointerPrefix: '' })));
        position = loc.locate(src.pointerPrefix + f.jsonPointer);
      }
      out.push({
        ruleId: rule.id,
        severity: rule.severity,
        ...(src ? { file: src.file, line: position?.line, column: position?.column } : {}),
        resource: resourceRef(f.manifest.object),
        jsonPointer: f.jsonPointer,
        message: f.message,
        hint: f.hint,
      });
    }
  }
  return out;
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

/** Runs the selected rules over parsed inputs; parser findings are kept when their rule is selected. */
export function checkParsed(parsed: ParsedInputs, rules: readonly Rule[], fileOrder: readonly string[]): Finding[] {
  const selected = new Set(rules.map((r) => r.id));
  return sortFindings([...parsed.findings.filter((f) => selected.has(f.ruleId)), ...runRules(parsed.manifests, rules)], fileOrder);
}

/** Parses and validates inputs. Never throws for bad content; throws UsageError for an unknown rule id. */
export function validateInputs(inputs: readonly TextInput[], selection: RuleSelection = {}): ValidationResult {
  const rules = selectRules(selection);
  const parsed = parseInputs(inputs);
  return { findings: checkParsed(parsed, rules, inputs.map((i) => i.file)), documents: parsed.manifests.length, files: inputs.length };
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

/**
 * Schema validation of apps.kruise.io objects, and of the common core kinds (`core-kinds.ts`), with ajv.
 *
 * One ajv instance holds the generated core definitions once; each kind's validator is compiled on
 * first use and cached, so validating many documents costs only the compiled checks. Unknown fields
 * are errors everywhere (including inside containers and volumes): the API server would prune them
 * silently. Raw ajv errors are turned into {@link SchemaIssue}s with plain messages, the JSON
 * pointer of the offending field and, for typos, a "did you mean" hint.
 *
 * @module
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Json } from './resolve.js';
import { findKind, isKruiseApiVersion, KINDS, type KindDefinition } from './registry.js';
import { listNames, quoteValue, truncate } from './quote.js';
import { SERVED_IN, SERVED_IN_ELSEWHERE } from './common.js';
// Both from one module, which the package build replaces for the CLI: then every kind is precompiled and the
// compiler (ajv, the core definitions) is never loaded.
import { compileCoreKindValidator, compileValidator, PRECOMPILED_VALIDATORS } from './precompiled-validators.js';

/** One schema problem, located by a JSON pointer into the validated object. */
export interface SchemaIssue {
  /** RFC 6901 pointer to the offending field (for unknown/missing fields: the field itself). */
  readonly jsonPointer: string;
  /** Human-readable message, e.g. `unknown field "maxUnavaliable"`. */
  readonly message: string;
  /** Keyword that failed: additionalProperties, type, enum, required, pattern, ... or `kind`. */
  readonly keyword: string;
  /** How to fix it, e.g. `did you mean "maxUnavailable"?`. */
  readonly hint?: string;
}

/** Result of {@link validateObject}. */
export interface ValidationResult {
  /** The kind definition the object was validated against (undefined: not a modelled kind). */
  readonly kind?: KindDefinition;
  readonly issues: SchemaIssue[];
}

const compiled = new Map<KindDefinition, ValidateFunction>();

/**
 * The compiled ajv function for `def`: precompiled by the package build when present, else compiled once
 * on first use and cached.
 */
export function validatorFor(def: KindDefinition): ValidateFunction {
  let fn = compiled.get(def);
  if (!fn) {
    fn = PRECOMPILED_VALIDATORS[def.kind] ?? compileValidator(def);
    compiled.set(def, fn);
  }
  return fn;
}

const compiledCore = new Map<string, ValidateFunction>();

/**
 * Validates a core Kubernetes object against the schema generated as `definition` (see `core-kinds.ts`), as
 * strictly as the Kruise kinds: unknown fields, types, enums and required fields. Its validator is compiled (or,
 * in the CLI, loaded) on first use.
 */
export function validateCoreKind(definition: string, obj: unknown): SchemaIssue[] {
  let fn = compiledCore.get(definition);
  if (!fn) {
    fn = compileCoreKindValidator(definition);
    compiledCore.set(definition, fn);
  }
  if (fn(obj)) return [];
  return toIssues(fn.errors ?? []);
}

/** Compiles every kind's validator now (e.g. before a benchmark or a long-running server). */
export function warmUpValidators(): void {
  for (const def of KINDS) validatorFor(def);
}

/**
 * Validates one parsed object. Objects outside the Kruise API groups yield no kind and no issues;
 * a Kruise apiVersion/kind we do not model yields one `kind` issue.
 */
export function validateObject(obj: unknown): ValidationResult {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    return { issues: [{ jsonPointer: '', keyword: 'type', message: `expected an object, got ${describe(obj)}` }] };
  }
  const o = obj as { apiVersion?: unknown; kind?: unknown };
  const def = typeof o.apiVersion === 'string' && typeof o.kind === 'string' ? findKind(o.apiVersion, o.kind) : undefined;
  if (!def) {
    if (!isKruiseApiVersion(o.apiVersion)) return { issues: [] };
    const known = KINDS.map((k) => `${k.group}/${k.version} ${k.kind}`);
    const sameName = typeof o.kind === 'string' ? KINDS.find((k) => k.kind === o.kind) : undefined;
    const guess =
      typeof o.kind === 'string' && !sameName
        ? closestMatch(
            o.kind,
            KINDS.map((k) => k.kind),
          )
        : undefined;
    return {
      issues: [
        {
          // A known kind under another version points at apiVersion; otherwise the kind is the problem.
          jsonPointer: sameName ? '/apiVersion' : '/kind',
          keyword: 'kind',
          message: `${truncate(String(o.apiVersion))} ${truncate(String(o.kind))} is not a kind cdk8s-kruise models`,
          hint: sameName
            ? `cdk8s-kruise models ${sameName.kind} as ${sameName.group}/${sameName.version}`
            : guess
              ? `did you mean kind ${guess}?`
              : `modelled kinds: ${known.join(', ')}`,
        },
      ],
    };
  }
  return { kind: def, issues: validateAgainst(def, obj) };
}

/** Validates `obj` against `def` regardless of its apiVersion/kind fields. */
export function validateAgainst(def: KindDefinition, obj: unknown): SchemaIssue[] {
  const fn = validatorFor(def);
  const versionIssues = versionFieldIssues(def, obj);
  if (fn(obj)) return versionIssues;
  return [...toIssues(fn.errors ?? []), ...versionIssues];
}

// ---------------------------------------------------------------------------------------------
// Fields of one served version only (`servedIn`)
// ---------------------------------------------------------------------------------------------

/** A field marked `servedIn`: its path in the schema (`*` = any array item or map value) and its versions. */
interface VersionedField {
  readonly path: readonly string[];
  readonly versions: readonly string[];
  readonly elsewhere?: string;
}

const versionedFields = new Map<KindDefinition, readonly VersionedField[]>();

function collectVersioned(node: Json, path: string[], out: VersionedField[]): void {
  const props = node.properties as Json | undefined;
  if (props && typeof props === 'object') {
    for (const [name, p] of Object.entries(props)) {
      const sub = p as Json;
      const served = sub[SERVED_IN];
      if (Array.isArray(served)) {
        const elsewhere = sub[SERVED_IN_ELSEWHERE];
        out.push({ path: [...path, name], versions: served as string[], ...(typeof elsewhere === 'string' ? { elsewhere } : {}) });
      }
      collectVersioned(sub, [...path, name], out);
    }
  }
  if (node.items && typeof node.items === 'object') collectVersioned(node.items as Json, [...path, '*'], out);
  const pattern = node.patternProperties as Json | undefined;
  if (pattern) for (const v of Object.values(pattern)) collectVersioned(v as Json, [...path, '*'], out);
  if (node.additionalProperties && typeof node.additionalProperties === 'object')
    collectVersioned(node.additionalProperties as Json, [...path, '*'], out);
}

function fieldsOf(def: KindDefinition): readonly VersionedField[] {
  let fields = versionedFields.get(def);
  if (!fields) {
    const out: VersionedField[] = [];
    collectVersioned(def.schema as unknown as Json, [], out);
    fields = out;
    versionedFields.set(def, fields);
  }
  return fields;
}

/** Every value at `path` in `obj`, with its JSON pointer. */
function valuesAt(obj: unknown, path: readonly string[], pointer = ''): Array<[string, unknown]> {
  if (path.length === 0) return [[pointer, obj]];
  if (obj === null || typeof obj !== 'object') return [];
  const [head, ...rest] = path as [string, ...string[]];
  if (head === '*') {
    const entries = Array.isArray(obj) ? obj.map((v, i): [string, unknown] => [String(i), v]) : Object.entries(obj);
    return entries.flatMap(([k, v]) => valuesAt(v, rest, `${pointer}/${escapeToken(k)}`));
  }
  if (Array.isArray(obj) || !Object.hasOwn(obj, head)) return [];
  return valuesAt((obj as Json)[head], rest, `${pointer}/${escapeToken(head)}`);
}

/**
 * A field of another served version in this object (`customVersion` in a v1alpha1 SidecarSet): the API server would
 * prune it silently at this version, so it is an error that names the versions that have it.
 */
function versionFieldIssues(def: KindDefinition, obj: unknown): SchemaIssue[] {
  const fields = fieldsOf(def);
  if (fields.length === 0 || obj === null || typeof obj !== 'object') return [];
  const apiVersion = (obj as Json).apiVersion;
  if (typeof apiVersion !== 'string') return [];
  const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
  const issues: SchemaIssue[] = [];
  for (const f of fields) {
    if (f.versions.includes(version)) continue;
    for (const [pointer] of valuesAt(obj, f.path)) {
      const field = f.path[f.path.length - 1]!;
      const at = f.versions.map((v) => `${def.group}/${v}`).join(' or ');
      issues.push({
        jsonPointer: pointer,
        keyword: 'apiVersion',
        message: `field ${quoteValue(field)} is not served at ${truncate(apiVersion)} (the API server would drop it silently)`,
        hint: `it is a field of ${at}: set apiVersion to ${at}${f.elsewhere ? `, or ${f.elsewhere}` : ''}`,
      });
    }
  }
  return issues;
}

// ---------------------------------------------------------------------------------------------
// ajv errors → issues
// ---------------------------------------------------------------------------------------------

function escapeToken(t: string): string {
  return t.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return `the string ${quoteValue(v)}`;
    case 'number':
      return Number.isInteger(v) ? `the integer ${v}` : `the number ${v}`;
    case 'boolean':
      return `the boolean ${v}`;
    case 'object':
      return 'an object';
    default:
      return typeof v;
  }
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean (true/false)',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

function typeList(t: unknown): string {
  const ts = Array.isArray(t) ? t : [t];
  return ts.map((x) => TYPE_NAMES[String(x)] ?? String(x)).join(' or ');
}

/** Optimal string alignment distance (Levenshtein with transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate closest to `word` when close enough to be a typo (case-insensitive). */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const w = word.toLowerCase();
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  for (const c of candidates) {
    // The distance is at least the difference in length: a candidate that far off cannot be the answer, and a
    // huge key must not cost a huge matrix.
    const lc = c.toLowerCase();
    if (Math.abs(lc.length - w.length) > limit) continue;
    const dist = editDistance(w, lc);
    if (dist < bestD) {
      bestD = dist;
      best = c;
    }
  }
  return best !== undefined && bestD <= limit ? best : undefined;
}

function knownFields(parentSchema: unknown): string[] {
  const p = (parentSchema as Json | undefined)?.properties;
  return p && typeof p === 'object' ? Object.keys(p) : [];
}

const FORMAT_TEXT: Record<string, { what: string; hint: string }> = {
  'dns-subdomain': {
    what: 'is not a valid object name',
    hint: "use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit (at most 253 characters)",
  },
  'generate-name': {
    what: 'is not a valid name prefix',
    hint: "use lower-case letters, digits, '-' and '.', starting with a letter or digit",
  },
  'dns-label': {
    what: 'is not a valid namespace name',
    hint: "use lower-case letters, digits and '-', starting and ending with a letter or digit (at most 63 characters)",
  },
  'qualified-name': {
    what: 'is not a valid label/annotation key',
    hint: "use an optional DNS-subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric",
  },
  'label-value': {
    what: 'is not a valid label value',
    hint: "use at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric (or leave it empty)",
  },
};

function issueFor(e: ErrorObject): SchemaIssue | undefined {
  const at = e.instancePath;
  const p = e.params as Record<string, unknown>;
  const schema = e.parentSchema as Json | undefined;
  if (e.keyword === 'propertyNames') return undefined; // its sub-errors name the offending key
  if (e.propertyName !== undefined) {
    const fmt = FORMAT_TEXT[String(schema?.['x-kruise-format'])];
    return {
      jsonPointer: `${at}/${escapeToken(e.propertyName)}`,
      keyword: 'propertyNames',
      message: `key ${quoteValue(e.propertyName)} ${fmt?.what ?? `fails ${e.keyword}`}`,
      hint: fmt?.hint,
    };
  }
  const fmt = FORMAT_TEXT[String(schema?.['x-kruise-format'])];
  if (fmt && (e.keyword === 'pattern' || e.keyword === 'maxLength')) {
    return { jsonPointer: at, keyword: e.keyword, message: `${describe(e.data)} ${fmt.what}`, hint: fmt.hint };
  }
  switch (e.keyword) {
    case 'additionalProperties': {
      const field = String(p.additionalProperty);
      const fields = knownFields(schema);
      const guess = closestMatch(field, fields);
      return {
        jsonPointer: `${at}/${escapeToken(field)}`,
        keyword: e.keyword,
        message: `unknown field ${quoteValue(field)}${guess ? '' : ' (the API server would drop it silently)'}`,
        hint: guess
          ? `did you mean "${guess}"? (the API server would drop ${quoteValue(field)} silently)`
          : fields.length
            ? `known fields here: ${listNames(fields, 12)}`
            : undefined,
      };
    }
    case 'required': {
      const field = String(p.missingProperty);
      return { jsonPointer: `${at}/${escapeToken(field)}`, keyword: e.keyword, message: `missing required field ${quoteValue(field)}` };
    }
    case 'type': {
      const intOrString = schema?.['x-kubernetes-int-or-string'] === true;
      return {
        jsonPointer: at,
        keyword: e.keyword,
        message: `expected ${intOrString && schema?.['x-kruise-format'] !== 'quantity' ? 'an integer or a string' : typeList(p.type)}, got ${describe(e.data)}`,
        hint:
          p.type === 'string' && (typeof e.data === 'number' || typeof e.data === 'boolean')
            ? `quote the value: ${quoteValue(String(e.data))}`
            : p.type === 'integer' && typeof e.data === 'string' && /^-?\d+$/.test(e.data)
              ? `remove the quotes: ${truncate(e.data)}`
              : undefined,
      };
    }
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).map((v) => String(v));
      const guess = typeof e.data === 'string' ? closestMatch(e.data, allowed) : undefined;
      return {
        jsonPointer: at,
        keyword: e.keyword,
        message: `${describe(e.data)} is not allowed; expected one of: ${allowed.join(', ')}`,
        hint: guess ? `did you mean "${guess}"?` : undefined,
      };
    }
    case 'const':
      return { jsonPointer: at, keyword: e.keyword, message: `must be ${JSON.stringify(p.allowedValue)}, got ${describe(e.data)}` };
    case 'pattern': {
      const fmt = schema?.['x-kruise-format'];
      if (fmt === 'int-or-percent') {
        return {
          jsonPointer: at,
          keyword: e.keyword,
          message: `expected a non-negative integer or a percentage such as "25%", got ${describe(e.data)}`,
          hint:
            typeof e.data === 'string' && /^\d+$/.test(e.data)
              ? `write ${truncate(e.data)} without quotes, or ${quoteValue(`${truncate(e.data)}%`)}`
              : undefined,
        };
      }
      if (fmt === 'quantity') {
        return {
          jsonPointer: at,
          keyword: e.keyword,
          message: `${describe(e.data)} is not a Kubernetes quantity`,
          hint: 'use a number with an optional suffix, e.g. 500m, 1, 2Gi, 128Mi',
        };
      }
      return { jsonPointer: at, keyword: e.keyword, message: `${describe(e.data)} does not match the pattern ${String(p.pattern)}` };
    }
    case 'minimum':
    case 'exclusiveMinimum':
      return {
        jsonPointer: at,
        keyword: e.keyword,
        message: `must be ${e.keyword === 'minimum' ? '≥' : '>'} ${String(p.limit)}, got ${String(e.data)}`,
      };
    case 'maximum':
    case 'exclusiveMaximum':
      return {
        jsonPointer: at,
        keyword: e.keyword,
        message: `must be ${e.keyword === 'maximum' ? '≤' : '<'} ${String(p.limit)}, got ${String(e.data)}`,
      };
    case 'minLength':
      return {
        jsonPointer: at,
        keyword: e.keyword,
        message: Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters long`,
      };
    case 'maxLength':
      return { jsonPointer: at, keyword: e.keyword, message: `must be at most ${String(p.limit)} characters long` };
    case 'minItems':
      return { jsonPointer: at, keyword: e.keyword, message: `must list at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}` };
    case 'maxItems':
      return { jsonPointer: at, keyword: e.keyword, message: `must list at most ${String(p.limit)} items` };
    case 'maxProperties':
      return { jsonPointer: at, keyword: e.keyword, message: `must have at most ${String(p.limit)} entries` };
    case 'format': {
      const f = String(p.format);
      if (f === 'date-time')
        return {
          jsonPointer: at,
          keyword: e.keyword,
          message: `${describe(e.data)} is not an RFC 3339 timestamp`,
          hint: 'e.g. 2024-01-02T15:04:05Z',
        };
      if (f === 'int32' || f === 'int64') return { jsonPointer: at, keyword: e.keyword, message: `${String(e.data)} is out of ${f} range` };
      return { jsonPointer: at, keyword: e.keyword, message: `${describe(e.data)} is not a valid ${f}` };
    }
    case 'anyOf':
    case 'oneOf':
      return undefined; // the branch errors say more
    default:
      return { jsonPointer: at, keyword: e.keyword, message: e.message ?? `fails ${e.keyword}` };
  }
}

/**
 * Unknown fields listed per object (per mapping that holds them); the rest are counted in one issue. An object with
 * thousands of unknown keys is one mistake (a misplaced block, generated junk), and every listed one costs a "did
 * you mean" search and, in a report, a line lookup.
 */
export const MAX_UNKNOWN_FIELDS_LISTED = 20;

/** Unknown fields of one object: those seen, how many were listed, and the rest, counted. */
interface UnknownFields {
  readonly seen: Set<string>;
  listed: number;
  omitted: number;
  firstOmitted?: string;
  parentSchema?: unknown;
}

/**
 * Converts raw ajv errors into deduplicated issues, ordered by pointer. At most {@link MAX_UNKNOWN_FIELDS_LISTED}
 * unknown fields are listed per object, in the object's key order; the others become one issue that counts them,
 * at the first of them. Linear in the number of errors: an error past the cap costs a counter, not a suggestion.
 */
export function toIssues(errors: readonly ErrorObject[]): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  const seen = new Set<string>();
  const unknown = new Map<string, UnknownFields>();
  // A failed anyOf (e.g. timestamp-or-null) reports one error per branch; keep the first branch only.
  const anyOfPaths = new Set<string>();
  for (const e of errors) if (e.keyword === 'anyOf') anyOfPaths.add(e.instancePath);
  for (const e of errors) {
    if (anyOfPaths.has(e.instancePath) && e.keyword === 'type' && e.params && (e.params as Json).type === 'null') continue;
    if (e.keyword === 'additionalProperties' && e.propertyName === undefined) {
      const field = String((e.params as Record<string, unknown>).additionalProperty);
      let group = unknown.get(e.instancePath);
      if (!group) unknown.set(e.instancePath, (group = { seen: new Set(), listed: 0, omitted: 0 }));
      // The same unknown field can be reported by several branches (anyOf); it counts once.
      if (group.seen.has(field)) continue;
      group.seen.add(field);
      if (group.listed >= MAX_UNKNOWN_FIELDS_LISTED) {
        if (group.omitted++ === 0) {
          group.firstOmitted = field;
          group.parentSchema = e.parentSchema;
        }
        continue;
      }
      group.listed++;
    }
    const issue = issueFor(e);
    if (!issue) continue;
    const key = `${issue.jsonPointer}|${issue.keyword}|${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
  for (const [at, group] of unknown) if (group.omitted > 0) out.push(omittedUnknownFields(at, group));
  return sortByPointer(out);
}

/** The issue counting the unknown fields of the object at `at` that were not listed, located at the first of them. */
function omittedUnknownFields(at: string, group: UnknownFields): SchemaIssue {
  const fields = knownFields(group.parentSchema);
  // Grouped by hand: the first toLocaleString of a process initializes ICU's number formats (tens of milliseconds).
  const count = String(group.omitted).replace(/\B(?=(\d{3})+$)/g, ',');
  return {
    jsonPointer: `${at}/${escapeToken(group.firstOmitted!)}`,
    keyword: 'additionalProperties',
    message:
      `… and ${count} more unknown field${group.omitted === 1 ? '' : 's'} under ${at ? truncate(at) : 'the top level'} ` +
      `(not listed, from ${quoteValue(group.firstOmitted)} on; the API server would drop them silently)`,
    hint: fields.length ? `known fields here: ${listNames(fields, 12)}` : undefined,
  };
}

/** Issues in document order of their pointers (each pointer split once, not once per comparison). */
function sortByPointer(issues: SchemaIssue[]): SchemaIssue[] {
  if (issues.length < 2) return issues;
  const keyed = issues.map((issue, i) => ({ issue, tokens: issue.jsonPointer.split('/'), i }));
  keyed.sort((a, b) => compareTokens(a.tokens, b.tokens) || a.i - b.i);
  return keyed.map((k) => k.issue);
}

/** Document order for pointers: token by token, array indexes numerically. Stable for equal pointers. */
export function comparePointers(a: string, b: string): number {
  if (a === b) return 0;
  return compareTokens(a.split('/'), b.split('/'));
}

function compareTokens(ta: readonly string[], tb: readonly string[]): number {
  for (let i = 0; i < Math.min(ta.length, tb.length); i++) {
    const x = ta[i]!;
    const y = tb[i]!;
    if (x === y) continue;
    const nx = /^\d+$/.test(x) ? Number(x) : NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : NaN;
    if (!Number.isNaN(nx) && !Number.isNaN(ny)) return nx - ny;
    return x < y ? -1 : 1;
  }
  return ta.length - tb.length;
}

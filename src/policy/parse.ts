import { load, YAMLException } from 'js-yaml';
import { KUBE_YAML_SCHEMA } from './kube-yaml.js';
import { quoteValue, truncate } from '../api/quote.js';
import type { Finding, Manifest, ResourceRef } from './types.js';

/** Result of reading one input: the objects found, plus findings for what could not be read. */
export interface ParsedInput {
  readonly manifests: Manifest[];
  readonly findings: Finding[];
}

export const INPUT_ERROR = 'KRUISE-INPUT-001';
export const INPUT_EMPTY = 'KRUISE-INPUT-002';

const NO_RESOURCE: ResourceRef = { kind: '', name: '' };

function loadYaml(text: string, opts: { filename: string }): unknown {
  return load(text, { ...opts, schema: KUBE_YAML_SCHEMA, maxDepth: MAX_NESTING });
}

/** Thrown for a document nested deeper than MAX_NESTING, whichever parser found it. */
class TooDeep extends Error {}

// A `---` or `...` at column 0 always starts or ends a document in YAML (even inside block scalars, where such a
// line is forbidden), so splitting on them is exact and much cheaper than a full parse.
const DOC_MARKER = /^(?:---|\.\.\.)(?=[ \t\r\n]|$)/gm;

/** Nesting deeper than this is refused (js-yaml's maxDepth for YAML; checked by hand for JSON). */
export const MAX_NESTING = 100;
/**
 * A document whose aliases expand to more nodes than this (and to many times its written size) is refused, as the
 * API server's decoder refuses "excessive aliasing": rules walk the expanded tree, so a few lines of anchors could
 * otherwise cost hours.
 */
export const MAX_EXPANDED_NODES = 1_000_000;

/**
 * Splits a YAML stream into the spans of its documents. A span holds the document's directives (`%YAML`, `%TAG`),
 * its `---`, its content and its `...`, so each span parses on its own exactly as in the stream. `explicit` is
 * true when the span has a `---` (then it is a document even with no content).
 */
export function documentSpans(text: string): Array<{ start: number; end: number; explicit: boolean }> {
  const spans: Array<{ start: number; end: number; explicit: boolean }> = [];
  let cur = 0;
  let started = false;
  DOC_MARKER.lastIndex = 0;
  for (let m = DOC_MARKER.exec(text); m; m = DOC_MARKER.exec(text)) {
    const at = m.index;
    if (m[0] === '---') {
      // Only directives and comments so far: they belong to this document. Otherwise the previous one ends here.
      if (started || !isBlank(text, cur, at)) {
        spans.push({ start: cur, end: at, explicit: started });
        cur = at;
      }
      started = true;
    } else {
      let eol = text.indexOf('\n', at);
      eol = eol === -1 ? text.length : eol + 1;
      if (started || !isBlank(text, cur, at)) spans.push({ start: cur, end: eol, explicit: started });
      cur = eol;
      started = false;
      DOC_MARKER.lastIndex = eol;
    }
  }
  if (cur < text.length || started) spans.push({ start: cur, end: text.length, explicit: started });
  return spans;
}

/**
 * Turns raw bytes into text, refusing binary and non-UTF-8 input with a finding instead of garbage.
 * Returns the text, or a finding explaining why the input is not a manifest file.
 */
export function decodeInput(bytes: Uint8Array, file: string): string | Finding {
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
    return inputFinding(file, 'the file is UTF-16 text; manifests must be UTF-8', 'Re-save the file as UTF-8.');
  }
  const probe = bytes.subarray(0, 8192);
  if (probe.includes(0)) {
    return inputFinding(file, 'binary input (NUL bytes found), not a YAML or JSON manifest', 'Pass YAML or JSON manifest files only.');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return inputFinding(
      file,
      'the input is not valid UTF-8 text, so it is not a YAML or JSON manifest',
      'Pass UTF-8 YAML or JSON manifest files only.',
    );
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Parses a multi-document YAML or JSON text. Never throws: unreadable parts become findings. */
export function parseText(text: string, file: string): ParsedInput {
  const out: ParsedInput = { manifests: [], findings: [] };
  parseTextInBatches(text, file, Infinity, (batch) => {
    for (const m of batch.manifests) out.manifests.push(m);
    for (const f of batch.findings) out.findings.push(f);
  });
  return out;
}

/**
 * Like parseText, but hands over the objects in batches of about `batchSize` as it goes, so a caller that checks
 * and drops each batch never holds the objects of a whole large file at once.
 */
export function parseTextInBatches(text: string, file: string, batchSize: number, emit: (batch: ParsedInput) => void): void {
  let out: ParsedInput = { manifests: [], findings: [] };
  let produced = 0;
  const flush = () => {
    produced += out.manifests.length + out.findings.length;
    emit(out);
    out = { manifests: [], findings: [] };
  };
  if (isBlank(text, 0, text.length)) {
    out.findings.push(emptyFinding(file));
    flush();
    return;
  }
  const first = firstSignificantChar(text);
  if (first === '{' || first === '[') {
    let value: unknown;
    let parsed = false;
    if (jsonNestingExceeds(text, MAX_NESTING)) {
      out.findings.push(
        inputFinding(
          file,
          `the JSON input nests deeper than ${MAX_NESTING} levels`,
          'Kubernetes objects are far shallower; pass the intended manifest.',
          1,
        ),
      );
      flush();
      return;
    }
    try {
      value = JSON.parse(text);
      parsed = true;
    } catch {
      // Not strict JSON: read it as YAML (JSON is YAML), as kubectl does; a real syntax error is reported below
      // with YAML's line and column.
    }
    if (parsed) {
      addValue(out, value, file, text, 0, text.length, 0, 1, '');
      if (out.manifests.length === 0 && out.findings.length === 0) out.findings.push(emptyFinding(file));
      flush();
      return;
    }
  }
  let line = 1;
  let lineAt = 0;
  let docIndex = 0;
  for (const { start, end, explicit } of documentSpans(text)) {
    line += countNewlines(text, lineAt, start);
    lineAt = start;
    const startLine = line;
    if (isBlank(text, start, end)) {
      // An explicit `---` with nothing after it is an empty document; comments and directives alone are not one.
      if (explicit) docIndex++;
      continue;
    }
    const chunk = text.slice(start, end);
    let value: unknown;
    try {
      const body = chunk.startsWith('---') ? chunk.slice(3) : chunk;
      const c = firstSignificantChar(body);
      value = c === '{' ? parseJsonOrYaml(body, chunk, file) : loadYaml(chunk, { filename: file });
    } catch (e) {
      const mark = e instanceof YAMLException ? e.mark : undefined;
      if (e instanceof TooDeep || (e instanceof YAMLException && /maxDepth/.test(e.reason))) {
        // Refused before any rule walks it: deep input would otherwise cost stack in every walker.
        out.findings.push(
          inputFinding(
            file,
            `document ${docIndex + 1} nests deeper than ${MAX_NESTING} levels`,
            'Kubernetes objects are far shallower; pass the intended manifest.',
            mark ? startLine + mark.line : startLine,
            mark ? mark.column + 1 : undefined,
          ),
        );
        docIndex++;
        continue;
      }
      const reason = e instanceof YAMLException ? e.reason : (e as Error).message;
      out.findings.push(
        inputFinding(
          file,
          `malformed YAML in document ${docIndex + 1}: ${reason}`,
          'Fix the YAML syntax at that position (indentation, an unclosed bracket or quote, a tab used for indentation).',
          mark ? startLine + mark.line : startLine,
          mark ? mark.column + 1 : undefined,
        ),
      );
      docIndex++;
      continue;
    }
    const aliasing = chunk.includes('*') && value !== null && typeof value === 'object' ? aliasProblem(value) : undefined;
    if (aliasing) {
      out.findings.push(aliasFinding(file, docIndex, startLine, aliasing));
      docIndex++;
      continue;
    }
    addValue(out, value, file, text, start, end, docIndex, startLine, '');
    docIndex++;
    if (out.manifests.length >= batchSize) flush();
  }
  if (produced + out.manifests.length + out.findings.length === 0) out.findings.push(emptyFinding(file));
  flush();
}

function parseJsonOrYaml(body: string, chunk: string, file: string): unknown {
  if (jsonNestingExceeds(body, MAX_NESTING)) throw new TooDeep();
  try {
    return JSON.parse(body);
  } catch {
    return loadYaml(chunk, { filename: file });
  }
}

function addValue(
  out: ParsedInput,
  value: unknown,
  file: string,
  fileText: string,
  start: number,
  end: number,
  docIndex: number,
  startLine: number,
  pointerPrefix: string,
): void {
  if (value === null || value === undefined) return; // an empty document, as kubectl treats it
  if (Array.isArray(value)) {
    value.forEach((item, i) => addValue(out, item, file, fileText, start, end, docIndex, startLine, `${pointerPrefix}/${i}`));
    return;
  }
  const where = `document ${docIndex + 1}${pointerPrefix ? ` at ${pointerPrefix}` : ''}`;
  if (typeof value !== 'object') {
    out.findings.push(
      inputFinding(
        file,
        `${where} is a ${typeof value} (${quoteValue(value, 40)}), not a Kubernetes object`,
        'Each YAML document must be a mapping with apiVersion, kind and metadata.',
        startLine,
      ),
    );
    return;
  }
  const obj = value as Record<string, unknown>;
  if (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj.items)) {
    obj.items.forEach((item, i) => addValue(out, item, file, fileText, start, end, docIndex, startLine, `${pointerPrefix}/items/${i}`));
    return;
  }
  const missing = ['apiVersion', 'kind'].filter((k) => typeof obj[k] !== 'string' || obj[k] === '');
  if (missing.length > 0) {
    out.findings.push(
      inputFinding(
        file,
        `${where} has no ${missing.join(' and no ')}, so it is not a Kubernetes object`,
        'Add apiVersion and kind (e.g. apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet).',
        startLine,
      ),
    );
    return;
  }
  out.manifests.push({ object: obj, source: { file, docIndex, startLine, fileText, start, end, pointerPrefix } });
}

/** The object a manifest is about, for reports. */
export function resourceRef(obj: Record<string, unknown>): ResourceRef {
  const meta = (obj.metadata && typeof obj.metadata === 'object' ? obj.metadata : {}) as Record<string, unknown>;
  // Kubernetes names are at most 253 characters; a longer one is invalid anyway and must not bloat every report.
  const name =
    typeof meta.name === 'string'
      ? truncate(meta.name, MAX_NAME)
      : typeof meta.generateName === 'string'
        ? `${truncate(meta.generateName, MAX_NAME)}*`
        : '<unnamed>';
  const ref: ResourceRef = {
    apiVersion: typeof obj.apiVersion === 'string' ? truncate(obj.apiVersion, MAX_NAME) : undefined,
    kind: typeof obj.kind === 'string' ? truncate(obj.kind, MAX_NAME) : '<no kind>',
    name,
    ...(typeof meta.namespace === 'string' ? { namespace: truncate(meta.namespace, MAX_NAME) } : {}),
  };
  return ref;
}

const MAX_NAME = 253;

export function inputFinding(file: string, message: string, hint: string, line?: number, column?: number): Finding {
  return { ruleId: INPUT_ERROR, severity: 'error', file, line, column, resource: NO_RESOURCE, jsonPointer: '', message, hint };
}

function aliasFinding(file: string, docIndex: number, line: number, problem: 'cycle' | 'excessive'): Finding {
  return inputFinding(
    file,
    problem === 'cycle'
      ? `document ${docIndex + 1} has an alias inside the node its anchor names (a value that contains itself)`
      : `document ${docIndex + 1} uses YAML aliases that expand to more than ${MAX_EXPANDED_NODES} nodes (excessive aliasing, as the API server's decoder calls it)`,
    'Write the repeated parts out, or use fewer nested aliases (`*name`).',
    line,
  );
}

/**
 * 'cycle' when an alias points into its own anchor's node, 'excessive' when the alias graph of a loaded value
 * expands to more than MAX_EXPANDED_NODES nodes and to more than ten times its distinct nodes. js-yaml returns one shared object per anchor, so sizes are memoized per object and the
 * check costs one pass over the distinct nodes, never the expansion.
 */
export function aliasProblem(root: object): 'cycle' | 'excessive' | undefined {
  const size = new Map<object, number>();
  const visiting = new Set<object>();
  let distinct = 0;
  // Iterative post-order: deep documents must not exhaust the stack.
  const stack: Array<{ node: object; expanded: boolean }> = [{ node: root, expanded: false }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (size.has(top.node)) {
      stack.pop();
      continue;
    }
    const children = Object.values(top.node).filter((c): c is object => c !== null && typeof c === 'object');
    if (!top.expanded) {
      top.expanded = true;
      visiting.add(top.node);
      for (const c of children) {
        if (visiting.has(c)) return 'cycle';
        if (!size.has(c)) stack.push({ node: c, expanded: false });
      }
      continue;
    }
    visiting.delete(top.node);
    stack.pop();
    let total = 1 + Object.keys(top.node).length;
    for (const c of children) total += size.get(c) ?? 0;
    size.set(top.node, Math.min(total, Number.MAX_SAFE_INTEGER));
    distinct++;
  }
  const expanded = size.get(root) ?? 0;
  return expanded > MAX_EXPANDED_NODES && expanded > 10 * distinct ? 'excessive' : undefined;
}

/** True when brackets outside strings nest deeper than `max` (JSON.parse itself has no depth limit). */
export function jsonNestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

function emptyFinding(file: string): Finding {
  return {
    ruleId: INPUT_EMPTY,
    severity: 'warning',
    file,
    resource: NO_RESOURCE,
    jsonPointer: '',
    message: 'the input holds no documents (empty, or only comments)',
    hint: 'Remove the empty file or pass the intended manifests.',
  };
}

function countNewlines(text: string, start: number, end: number): number {
  let n = 0;
  for (let i = text.indexOf('\n', start); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** True when the span holds only blank lines, comments, directives or document markers. */
function isBlank(text: string, start: number, end: number): boolean {
  let i = start;
  while (i < end) {
    let eol = text.indexOf('\n', i);
    if (eol === -1 || eol > end) eol = end;
    let j = i;
    while (j < eol && (text[j] === ' ' || text[j] === '\t' || text[j] === '\r')) j++;
    if (j < eol) {
      const c = text[j];
      const rest = text.slice(j, Math.min(eol, j + 4));
      const marker = (rest.startsWith('---') || rest.startsWith('...')) && (rest.length === 3 || /[ \t\r]/.test(rest[3]!));
      if (c !== '#' && c !== '%' && !marker) return false;
      if (
        marker &&
        text.slice(j + 3, eol).trim() !== '' &&
        !text
          .slice(j + 3, eol)
          .trim()
          .startsWith('#')
      )
        return false;
    }
    i = eol + 1;
  }
  return true;
}

function firstSignificantChar(text: string): string | undefined {
  const m = /^(?:\s|#[^\n]*)*(\S)/.exec(text);
  return m?.[1];
}

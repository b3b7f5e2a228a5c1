import { EVENT_ID, getScalarValue, parseEvents, SCALAR_STYLE, type Event, type ScalarEvent } from 'js-yaml';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, Scalar, type Node, type Pair, type YAMLMap } from 'yaml';
import { plainKey } from './kube-yaml.js';
import type { SourceRef } from './types.js';

export interface Position {
  readonly line: number;
  readonly column: number;
}

/** Splits an RFC 6901 pointer into unescaped segments. */
export function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Builds an RFC 6901 pointer from segments. */
export function toPointer(segments: ReadonlyArray<string | number>): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/** Where the path to a pointer ends in one document: the offset of the deepest node or key found. */
interface DocumentIndex {
  offsetOf(segments: readonly string[]): number;
}

/**
 * Resolves where a field is written in the source, for documents that have findings only: the fast path parsed
 * them with js-yaml/JSON.parse, which keep no positions. The document is read again as js-yaml's event stream
 * (offsets, no values); the keys of each mapping a pointer passes through are indexed as they are read, so
 * locating many fields of one wide object costs at most one pass over it, not one per field. A missing field resolves to its deepest existing
 * ancestor; a present key resolves to the key itself.
 */
export class DocumentLocator {
  private readonly text: string;
  private readonly index: DocumentIndex;
  private readonly lineOffset: number;
  private lineStarts?: number[];

  constructor(private readonly source: SourceRef) {
    this.text = source.fileText.slice(source.start, source.end);
    this.lineOffset = source.startLine - 1;
    let index: DocumentIndex;
    try {
      index = new EventIndex(this.text);
    } catch {
      // Input js-yaml's parser refuses reached here only as JSON (JSON.parse is more lenient about, e.g., tabs).
      index = new YamlIndex(this.text);
    }
    this.index = index;
  }

  locate(pointer: string): Position {
    const offset = this.index.offsetOf(pointerSegments(this.source.pointerPrefix + pointer));
    const starts = (this.lineStarts ??= lineStartsOf(this.text));
    // The last line starting at or before the offset.
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1 + this.lineOffset, column: offset - starts[lo]! + 1 };
  }
}

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The document as js-yaml's flat event stream: each collection's end is found once, each mapping indexed on demand. */
class EventIndex implements DocumentIndex {
  private readonly events: Event[];
  /** For each collection event, the index of its closing event. */
  private readonly closing: Int32Array;
  /** Per mapping (by its event): the keys read so far, and the event of the next key to read. */
  private readonly keys = new Map<number, { found: Map<string, number>; next: number }>();
  private readonly items = new Map<number, number[]>();

  constructor(private readonly text: string) {
    this.events = parseEvents(text, {});
    this.closing = new Int32Array(this.events.length);
    const open: number[] = [];
    for (let i = 0; i < this.events.length; i++) {
      const type = this.events[i]!.type;
      if (type === EVENT_ID.DOCUMENT || type === EVENT_ID.MAPPING || type === EVENT_ID.SEQUENCE) open.push(i);
      else if (type === EVENT_ID.POP) this.closing[open.pop()!] = i;
    }
  }

  offsetOf(segments: readonly string[]): number {
    const events = this.events;
    // events[0] opens the document; its content, if any, follows.
    let node = 1;
    if (node >= events.length || events[node]!.type === EVENT_ID.POP) return 0;
    let best = this.startOf(node) ?? 0;
    for (const seg of segments) {
      const type = events[node]!.type;
      if (type === EVENT_ID.MAPPING) {
        const key = this.keyEvent(node, seg);
        if (key === undefined) break;
        best = this.startOf(key) ?? best;
        node = this.next(key);
      } else if (type === EVENT_ID.SEQUENCE) {
        if (!/^\d+$/.test(seg)) break;
        const item = this.itemsOf(node)[Number(seg)];
        if (item === undefined) break;
        best = this.startOf(item) ?? best;
        node = item;
      } else {
        break;
      }
    }
    return best;
  }

  /** The event after the node that starts at event `i` (its next sibling, or its parent's end). */
  private next(i: number): number {
    const type = this.events[i]!.type;
    return type === EVENT_ID.MAPPING || type === EVENT_ID.SEQUENCE ? this.closing[i]! + 1 : i + 1;
  }

  /**
   * The key event of `key` in the mapping opened at event `at` (the first of duplicate keys). Keys are read and
   * indexed only as far as the lookups reach: the fields a report lists are mostly among an object's first keys,
   * and no key is read twice however many are looked up.
   */
  private keyEvent(at: number, key: string): number | undefined {
    let scan = this.keys.get(at);
    if (!scan) this.keys.set(at, (scan = { found: new Map(), next: at + 1 }));
    const hit = scan.found.get(key);
    if (hit !== undefined) return hit;
    const end = this.closing[at]!;
    while (scan.next < end) {
      const k = scan.next;
      const value = this.next(k);
      scan.next = value < end ? this.next(value) : end;
      const ev = this.events[k]!;
      if (ev.type !== EVENT_ID.SCALAR) continue;
      const text = this.keyText(ev);
      if (scan.found.has(text)) continue;
      scan.found.set(text, k);
      if (text === key) return k;
    }
    return undefined;
  }

  private itemsOf(at: number): number[] {
    let items = this.items.get(at);
    if (items) return items;
    items = [];
    const end = this.closing[at]!;
    for (let item = at + 1; item < end; item = this.next(item)) items.push(item);
    this.items.set(at, items);
    return items;
  }

  /** A key as the fast path (js-yaml with the kubectl scalar rules) names it: plain `yes:` is "true", `0x1:` is "1". */
  private keyText(ev: ScalarEvent): string {
    const value = getScalarValue(this.text, ev);
    if (ev.style !== SCALAR_STYLE.PLAIN) return value;
    const tag = ev.tagStart === -1 ? '' : this.text.slice(ev.tagStart, ev.tagEnd);
    return tag === '!' || tag === '!!str' || tag === '!<tag:yaml.org,2002:str>' ? value : plainKey(value);
  }

  /** The offset of the header of a block scalar whose content starts at `contentStart` (that, if not found). */
  private blockHeader(contentStart: number): number {
    const headerEnd = this.text.lastIndexOf('\n', contentStart - 1);
    if (headerEnd === -1) return contentStart;
    const headerStart = this.text.lastIndexOf('\n', headerEnd - 1) + 1;
    const m = BLOCK_HEADER.exec(this.text.slice(headerStart, headerEnd));
    return m ? headerStart + m.index : contentStart;
  }

  /** Where the node at event `i` is written (a quoted scalar: its opening quote), as the `yaml` package ranges it. */
  private startOf(i: number): number | undefined {
    const ev = this.events[i]!;
    switch (ev.type) {
      case EVENT_ID.SCALAR:
        if (ev.valueStart === -1) return undefined;
        if (ev.style === SCALAR_STYLE.SINGLE_QUOTED || ev.style === SCALAR_STYLE.DOUBLE_QUOTED) return ev.valueStart - 1;
        if (ev.style === SCALAR_STYLE.LITERAL_BLOCK || ev.style === SCALAR_STYLE.FOLDED_BLOCK) return this.blockHeader(ev.valueStart);
        return ev.valueStart;
      case EVENT_ID.MAPPING:
      case EVENT_ID.SEQUENCE:
        return ev.start;
      case EVENT_ID.ALIAS:
        return ev.anchorStart - 1;
      default:
        return undefined;
    }
  }
}

/** A block scalar's `|` or `>` indicator: on the line before its content, followed only by indicators and a comment. */
const BLOCK_HEADER = /[|>][0-9+-]*[ \t]*(?:#.*)?\r?$/;

/** The document as the `yaml` package's tree: the fallback for JSON that js-yaml's parser refuses. */
class YamlIndex implements DocumentIndex {
  private readonly root: Node | null;
  private readonly keys = new WeakMap<YAMLMap, Map<string, Pair>>();

  constructor(text: string) {
    const doc = parseDocument(text, { lineCounter: new LineCounter(), keepSourceTokens: false, strict: false, uniqueKeys: false });
    this.root = (doc.contents as Node | null) ?? null;
  }

  offsetOf(segments: readonly string[]): number {
    let node: unknown = this.root;
    let best: number | undefined = rangeStart(node);
    for (const seg of segments) {
      if (isMap(node)) {
        const pair = this.keysOf(node).get(seg);
        if (!pair) break;
        best = rangeStart(pair.key) ?? best;
        node = pair.value;
      } else if (isSeq(node)) {
        const item = node.items[Number(seg)];
        if (item === undefined || !/^\d+$/.test(seg)) break;
        best = rangeStart(item) ?? best;
        node = item;
      } else {
        break;
      }
    }
    return best ?? 0;
  }

  private keysOf(map: YAMLMap): Map<string, Pair> {
    let keys = this.keys.get(map);
    if (keys) return keys;
    keys = new Map();
    for (const pair of map.items) {
      if (!isPair(pair)) continue;
      const text = yamlKeyText(pair.key);
      if (!keys.has(text)) keys.set(text, pair);
    }
    this.keys.set(map, keys);
    return keys;
  }
}

/** A key of the `yaml` package's tree as the fast path names it. */
function yamlKeyText(key: unknown): string {
  if (isScalar(key)) {
    if (key.type === Scalar.PLAIN && !key.tag && typeof key.source === 'string') return plainKey(key.source);
    return String(key.value);
  }
  return String(key);
}

function rangeStart(node: unknown): number | undefined {
  return (node as { range?: [number, number, number] } | null | undefined)?.range?.[0];
}

import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, Scalar, type Node } from 'yaml';
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

/**
 * Resolves where a field is written in the source, for documents that have findings only: the fast path parsed
 * them with js-yaml/JSON.parse, which keep no positions. The `yaml` package re-parses just this document.
 * A missing field resolves to its deepest existing ancestor; a present key resolves to the key itself.
 */
export class DocumentLocator {
  private readonly root: Node | null;
  private readonly lines = new LineCounter();
  private readonly lineOffset: number;

  constructor(private readonly source: SourceRef) {
    const text = source.fileText.slice(source.start, source.end);
    const doc = parseDocument(text, { lineCounter: this.lines, keepSourceTokens: false, strict: false, uniqueKeys: false });
    this.root = (doc.contents as Node | null) ?? null;
    this.lineOffset = source.startLine - 1;
  }

  locate(pointer: string): Position {
    let node: unknown = this.root;
    let best: [number, number] | undefined = rangeOf(node);
    for (const seg of pointerSegments(this.source.pointerPrefix + pointer)) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && keyText(p.key) === seg);
        if (!pair) break;
        best = rangeOf(pair.key) ?? best;
        node = pair.value;
      } else if (isSeq(node)) {
        const item = node.items[Number(seg)];
        if (item === undefined || !/^\d+$/.test(seg)) break;
        best = rangeOf(item) ?? best;
        node = item;
      } else {
        break;
      }
    }
    const offset = best?.[0] ?? 0;
    const pos = this.lines.linePos(offset);
    return { line: pos.line + this.lineOffset, column: pos.col };
  }
}

/** A key as the fast path (js-yaml with the kubectl scalar rules) names it: plain `yes:` is "true", `0x1:` is "1". */
function keyText(key: unknown): string {
  if (isScalar(key)) {
    if (key.type === Scalar.PLAIN && !key.tag && typeof key.source === 'string') return plainKey(key.source);
    return String(key.value);
  }
  return String(key);
}

function rangeOf(node: unknown): [number, number] | undefined {
  const r = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return r ? [r[0], r[1]] : undefined;
}

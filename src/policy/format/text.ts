import { summarize } from '../engine.js';
import type { Finding, ResourceRef } from '../types.js';

function describe(r: ResourceRef): string {
  if (!r.kind) return '';
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}

/** Human-readable report: one block per finding, `file:line:col` first so editors and terminals link it. */
export function formatText(findings: readonly Finding[], stats: { documents: number; files: number }): string {
  const lines: string[] = [];
  for (const f of findings) {
    const where = f.file ? `${f.file}${f.line ? `:${f.line}${f.column ? `:${f.column}` : ''}` : ''}` : '<in-memory>';
    const res = describe(f.resource);
    lines.push(`${where}: ${f.severity} ${f.ruleId}: ${f.message}`);
    if (res || f.jsonPointer) lines.push(`  at ${[res, f.constructPath && `construct ${f.constructPath}`, f.jsonPointer && `field ${f.jsonPointer}`].filter(Boolean).join(', ')}`);
    lines.push(`  fix: ${f.hint}`);
  }
  const s = summarize(findings);
  lines.push(
    `${s.errors} error(s), ${s.warnings} warning(s), ${s.infos} note(s) in ${stats.documents} object(s) from ${stats.files} input(s)`,
  );
  return lines.join('\n') + '\n';
}

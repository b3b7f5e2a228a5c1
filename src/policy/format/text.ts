import { windowOf, type FindingWindow } from '../engine.js';
import { safeLine } from '../../api/quote.js';
import type { Finding, ResourceRef } from '../types.js';

function describe(r: ResourceRef): string {
  if (!r.kind) return '';
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}

/**
 * Human-readable report: one block per finding, `file:line:col` first so editors and terminals link it. Every line
 * passes through safeLine: manifest values and file names cannot inject ANSI escapes, fake lines or CI workflow
 * commands. At most `limit` findings are listed; the summary counts all of them and says how many were left out.
 */
export function formatText(
  findings: readonly Finding[] | FindingWindow,
  stats: { documents: number; files: number },
  limit = Infinity,
): string {
  const lines: string[] = [];
  const { shown, total: s, omitted: rest } = windowOf(findings, limit);
  for (const f of shown) {
    const where = f.file ? `${f.file}${f.line ? `:${f.line}${f.column ? `:${f.column}` : ''}` : ''}` : '<in-memory>';
    const res = describe(f.resource);
    lines.push(`${where}: ${f.severity} ${f.ruleId}: ${f.message}`);
    if (res || f.jsonPointer)
      lines.push(
        `  at ${[res, f.constructPath && `construct ${f.constructPath}`, f.jsonPointer && `field ${f.jsonPointer}`].filter(Boolean).join(', ')}`,
      );
    lines.push(`  fix: ${f.hint}`);
  }
  const more = rest.errors + rest.warnings + rest.infos;
  if (more > 0) {
    lines.push(
      `… ${more} more finding(s) not shown (${rest.errors} error(s), ${rest.warnings} warning(s), ${rest.infos} note(s)); ` +
        'raise the limit with --max-findings',
    );
  }
  lines.push(
    `${s.errors} error(s), ${s.warnings} warning(s), ${s.infos} note(s) in ${stats.documents} object(s) from ${stats.files} input(s)`,
  );
  return lines.map(safeLine).join('\n') + '\n';
}

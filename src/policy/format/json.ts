import { summarize } from '../engine.js';
import type { Finding } from '../types.js';

/**
 * Stable machine-readable report (`--format json`). The summary counts every finding; `findings` lists at most
 * `limit` of them and `omitted` says how many more there were.
 */
export function formatJson(findings: readonly Finding[], stats: { documents: number; files: number }, limit = Infinity): string {
  const shown = findings.length > limit ? findings.slice(0, limit) : findings;
  const omitted = findings.length - shown.length;
  return JSON.stringify({ version: 1, summary: { ...summarize(findings), ...stats, ...(omitted > 0 ? { omitted } : {}) }, findings: shown }, null, 2) + '\n';
}

import { windowOf, type FindingWindow } from '../engine.js';
import type { Finding } from '../types.js';

/**
 * Stable machine-readable report (`--format json`). The summary counts every finding; `findings` lists at most
 * `limit` of them and `omitted` says how many more there were.
 */
export function formatJson(
  findings: readonly Finding[] | FindingWindow,
  stats: { documents: number; files: number },
  limit = Infinity,
): string {
  const { shown, total, omitted: rest } = windowOf(findings, limit);
  const omitted = rest.errors + rest.warnings + rest.infos;
  return (
    JSON.stringify({ version: 1, summary: { ...total, ...stats, ...(omitted > 0 ? { omitted } : {}) }, findings: shown }, null, 2) + '\n'
  );
}

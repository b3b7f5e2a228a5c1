import { summarize } from '../engine.js';
import type { Finding } from '../types.js';

/** Stable machine-readable report (`--format json`). */
export function formatJson(findings: readonly Finding[], stats: { documents: number; files: number }): string {
  return JSON.stringify({ version: 1, summary: { ...summarize(findings), ...stats }, findings }, null, 2) + '\n';
}

// docs/runtime.md "Metrics" lists every metric the runtime registers, with its type: the source is scanned for the
// metric constructors (prom-client's Counter, Gauge, Histogram, Summary), and the scan is checked against what a
// RuntimeMetrics registry really holds, so a metric registered in a way the scan misses fails here too.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RuntimeMetrics } from '../../../../src/runtime/core/metrics.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const DEFAULT_PREFIX = 'kruise_runtime_';

/** name → type of each metric constructed in `files`. */
function registeredIn(files: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(/new (Counter|Gauge|Histogram|Summary)(?:<[^>]*>)?\(\{\s*name:\s*'([a-z_:][a-z0-9_:]*)'/g))
      out.set(m[2]!, m[1]!.toLowerCase());
  }
  return out;
}

function runtimeSources(): string[] {
  return readdirSync(path.join(repoRoot, 'src/runtime'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** name → type from the table of docs/runtime.md's "Metrics" section. */
function documented(): Map<string, string> {
  const doc = readFileSync(path.join(repoRoot, 'docs/runtime.md'), 'utf8');
  const start = doc.indexOf('\n## Metrics\n');
  expect(start, 'docs/runtime.md has a "## Metrics" section').toBeGreaterThan(0);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const rows = [...section.matchAll(/^\| `([^`]+)` +\| ([a-z]*) *\|/gm)];
  return new Map(rows.map((r) => [r[1]!, r[2]!]));
}

describe('docs/runtime.md Metrics', () => {
  it('lists every metric the runtime registers, with its type, and no other', () => {
    const code = registeredIn(runtimeSources());
    const docs = documented();
    expect(docs.get(`${DEFAULT_PREFIX}*`), 'the process metrics row').toBe('');
    docs.delete(`${DEFAULT_PREFIX}*`);
    expect(Object.fromEntries([...docs].sort())).toEqual(Object.fromEntries([...code].sort()));
  });

  it('the scan finds what a RuntimeMetrics registry holds, and the process metrics carry the documented prefix', async () => {
    const registry = new RuntimeMetrics().registry;
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    const own = names.filter((n) => !n.startsWith(DEFAULT_PREFIX));
    const scanned = registeredIn([path.join(repoRoot, 'src/runtime/core/metrics.ts')]);
    expect(own.sort()).toEqual([...scanned.keys()].sort());
    expect(names.some((n) => n.startsWith(`${DEFAULT_PREFIX}process_`))).toBe(true);
  });
});

// docs/benchmarks.md holds the current figure of every bench in one table that the bench scripts rewrite
// (bench/record.ts). These tests hold the writer to replacing only its own rows, and every `bench:*` npm script to
// calling it under its own name, so no bench's figure can go stale unnoticed.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BENCHMARKS_DOC, TABLE_END, TABLE_START, benchRows, cell, replaceBenchRows } from '../../bench/record.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const doc = (rows: string[]) =>
  [
    '# B',
    '',
    TABLE_START,
    '',
    '| Bench | Measure | Figure | Against the peer | Conditions |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
    TABLE_END,
    '',
    'after',
  ].join('\n');
const row = (script: string, figure: string) => benchRows(script, [{ measure: 'm', figure, peer: 'p' }], 'c')[0]!;

describe('the benchmarks table writer', () => {
  it("replaces a script's rows where they were and leaves the other scripts' rows and the text around alone", () => {
    const before = doc([row('bench:a', '1'), row('bench:b', '2'), row('bench:b', '3'), row('bench:c', '4')]);
    const after = replaceBenchRows(before, 'bench:b', [row('bench:b', '9')]);
    expect(after).toBe(doc([row('bench:a', '1'), row('bench:b', '9'), row('bench:c', '4')]));
  });

  it('finds its rows when Prettier has padded the columns, and not those of a script whose name extends it', () => {
    const padded = (script: string, figure: string) =>
      row(script, figure).replace(`\`npm run ${script}\` |`, `\`npm run ${script}\`      |`);
    const before = doc([padded('bench:a', '1'), padded('bench:a-b', '2')]);
    expect(replaceBenchRows(before, 'bench:a', [row('bench:a', '9')])).toBe(doc([row('bench:a', '9'), padded('bench:a-b', '2')]));
  });

  it("appends a script's first rows after the table's last row, inside the markers", () => {
    const after = replaceBenchRows(doc([row('bench:a', '1')]), 'bench:new', [row('bench:new', '5'), row('bench:new', '6')]);
    expect(after).toBe(doc([row('bench:a', '1'), row('bench:new', '5'), row('bench:new', '6')]));
  });

  it('keeps a cell inside its column and refuses what would break the table', () => {
    expect(cell('a | b\n  c')).toBe('a \\| b c');
    expect(() => replaceBenchRows('no markers', 'bench:a', [])).toThrow(/no table between/);
    expect(() => benchRows('synth', [{ measure: 'm', figure: 'f', peer: 'p' }], 'c')).toThrow(/bench:<name>/);
    expect(() => benchRows('bench:a', [], 'c')).toThrow(/at least one figure/);
  });

  it('every bench:* npm script calls the writer under its own name', () => {
    const scripts = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const benches = Object.entries(scripts).filter(([name]) => name.startsWith('bench:'));
    expect(benches.length).toBeGreaterThan(10);
    for (const [name, command] of benches) {
      const file = /bench\/[\w-]+\.bench\.ts/.exec(command)?.[0];
      expect(file, `${name} runs a bench/*.bench.ts file`).toBeDefined();
      const source = readFileSync(path.join(repoRoot, file!), 'utf8');
      expect(source, `${file} records its figures as ${name}`).toMatch(new RegExp(`recordBench\\(\\s*'${name}'`));
    }
  });

  it('the committed table has its markers, its header and rows only of existing bench scripts', () => {
    const text = readFileSync(BENCHMARKS_DOC, 'utf8');
    const scripts = Object.keys((JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: object }).scripts);
    const table = text
      .slice(text.indexOf(TABLE_START) + TABLE_START.length, text.indexOf(TABLE_END))
      .trim()
      .split('\n')
      .slice(2);
    expect(table.length).toBeGreaterThan(0);
    for (const line of table) {
      const script = /^\| `npm run (bench:[a-z0-9-]+)`/.exec(line)?.[1];
      expect(script, line).toBeDefined();
      expect(scripts).toContain(script);
    }
  });
});

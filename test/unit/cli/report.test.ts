// Progress on long work: a redrawn status line on a terminal, nothing in CI logs or pipes, nothing with --quiet.
import { describe, expect, it, vi } from 'vitest';
import { progress, ticker, type TickerStream } from '../../../src/cli/report.js';
import { runCli } from '../support/cli.js';

function fakeStream(isTTY: boolean): TickerStream & { out: string[] } {
  const out: string[] = [];
  return { isTTY, columns: 40, out, write: (c: string) => (out.push(c), true) };
}

describe('ticker', () => {
  it('on a terminal: redraws one line in place, throttled, and clears it', () => {
    const s = fakeStream(true);
    const t = ticker(false, s, 60_000);
    t.tick('read 1 file(s): a.yaml');
    t.tick('read 2 file(s): b.yaml'); // within the interval: not redrawn
    t.clear();
    expect(s.out).toEqual(['\r\x1b[2Kcdk8s-kruise: read 1 file(s): a.yaml', '\r\x1b[2K']);
  });

  it('keeps to the terminal width and escapes control characters in file names', () => {
    const s = fakeStream(true);
    ticker(false, s, 0).tick(`read 1 file(s): ${'x'.repeat(100)}\x1b]0;evil\x07`);
    expect(s.out[0]!.length).toBeLessThanOrEqual('\r\x1b[2K'.length + 39);
    expect([...s.out[0]!.slice(4)].some((ch) => ch.charCodeAt(0) < 0x20)).toBe(false);
  });

  it('writes nothing when stderr is not a terminal (CI, pipes) or with --quiet', () => {
    for (const [tty, quiet] of [
      [false, false],
      [true, true],
    ] as const) {
      const s = fakeStream(tty);
      const t = ticker(quiet, s, 0);
      t.tick('read 1 file(s)');
      t.clear();
      expect(s.out).toEqual([]);
    }
  });

  it('--quiet silences progress lines even with --verbose', async () => {
    const writes: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => (writes.push(String(c)), true));
    try {
      progress(true, true)('hidden');
      progress(true, false)('shown');
    } finally {
      spy.mockRestore();
    }
    expect(writes).toEqual(['cdk8s-kruise: shown\n']);
  });

  it('validate --quiet --verbose prints the report and no timing line', async () => {
    const r = await runCli(['validate', '--quiet', '--verbose', 'dist/ops']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/in 1 object\(s\) from 1 input\(s\)/);
  });
});

// Hostile inputs to `cdk8s-kruise synth`: it must never delete or empty what --output names unless that is a
// directory synth created, and an interrupted or concurrent synth must never lose the previous output.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT_MARKER, OUTPUT_MARKER_CONTENT, lockPathOf, refusalReason } from '../../../../src/cli/synth/output-guard.js';
import { cliMain, repoRoot, runCli } from '../../support/cli.js';

const tsx = path.join(repoRoot, 'node_modules/.bin/tsx');

const require = createRequire(import.meta.url);
const cdk8sLib = require.resolve('cdk8s');
const node = JSON.stringify(process.execPath);

const APPS = {
  ok: `const { App, Chart, ApiObject } = require(${JSON.stringify(cdk8sLib)});
const app = new App();
new ApiObject(new Chart(app, 'web'), 'cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'default' } });
app.synth();
`,
  empty: `const { App } = require(${JSON.stringify(cdk8sLib)});\nnew App().synth();\n`,
  crash: `process.exit(3);\n`,
  slow: `setTimeout(() => {}, 60000);\n`,
};

let dir: string;
const appCmd = (name: keyof typeof APPS) => `${node} ${JSON.stringify(path.join(dir, `app-${name}.cjs`))}`;
const noConfig = () => path.join(dir, 'none.yaml');
const synth = (app: keyof typeof APPS, out: string, extra: string[] = []) =>
  runCli(['synth', '--app', appCmd(app), '--output', out, '--config', noConfig(), ...extra]);

function files(d: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(d).sort()) out[f] = readFileSync(path.join(d, f), 'utf8');
  return out;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-hostile-synth-'));
  for (const [name, text] of Object.entries(APPS)) writeFileSync(path.join(dir, `app-${name}.cjs`), text);
});

describe('synth never deletes what it did not create', { timeout: 180_000 }, () => {
  it('an app that writes no manifests fails the synth and keeps the previous output, unless --allow-empty', async () => {
    const out = path.join(dir, 'empty-app');
    expect((await synth('ok', out)).code).toBe(0);
    const before = files(out);
    const r = await synth('empty', out);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the app produced no manifests');
    expect(r.stderr).toContain('--allow-empty');
    expect(files(out)).toEqual(before);
    const allowed = await synth('empty', out, ['--allow-empty']);
    expect(allowed.code).toBe(0);
    expect(Object.keys(files(out)).sort()).toEqual([OUTPUT_MARKER, 'kustomization.yaml']);
  });

  it('--output naming a file is refused and the file kept', async () => {
    const file = path.join(dir, 'precious.txt');
    writeFileSync(file, 'keep me');
    const r = await synth('ok', file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/exists and is not a directory; synth will not replace a file/);
    expect(readFileSync(file, 'utf8')).toBe('keep me');
  });

  it('--output naming a directory synth did not create (no marker, not empty) is refused and kept; an empty one is used', async () => {
    const mine = path.join(dir, 'hand-made');
    mkdirSync(mine);
    writeFileSync(path.join(mine, 'notes.md'), 'mine');
    const r = await synth('ok', mine);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`is a directory cdk8s-kruise synth did not create (it has no ${OUTPUT_MARKER} file and is not empty)`);
    expect(files(mine)).toEqual({ 'notes.md': 'mine' });

    const empty = path.join(dir, 'empty-dir');
    mkdirSync(empty);
    expect((await synth('ok', empty)).code).toBe(0);
    expect(readFileSync(path.join(empty, OUTPUT_MARKER), 'utf8')).toBe(OUTPUT_MARKER_CONTENT);
  });

  it('--output naming a symbolic link is refused', async () => {
    const target = path.join(dir, 'link-target');
    expect((await synth('ok', target)).code).toBe(0);
    const link = path.join(dir, 'link');
    symlinkSync(target, link);
    const r = await synth('ok', link);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is a symbolic link');
    expect(existsSync(path.join(target, OUTPUT_MARKER))).toBe(true);
  });

  it('--output . and .. (the working directory and its parent) are refused by the real binary, never replaced', () => {
    const sandbox = path.join(dir, 'sandbox');
    const cwd = path.join(sandbox, 'project');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(path.join(sandbox, 'sentinel'), 'parent');
    writeFileSync(path.join(cwd, 'sentinel'), 'cwd');
    // A marker does not make the working directory replaceable either.
    writeFileSync(path.join(cwd, OUTPUT_MARKER), OUTPUT_MARKER_CONTENT);
    for (const out of ['.', '..']) {
      const r = spawnSync(tsx, [cliMain, 'synth', '--app', appCmd('ok'), '--output', out, '--config', noConfig()], {
        cwd,
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(r.status, `${out}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain('is the working directory or one of its parents');
    }
    expect(readFileSync(path.join(sandbox, 'sentinel'), 'utf8')).toBe('parent');
    expect(readFileSync(path.join(cwd, 'sentinel'), 'utf8')).toBe('cwd');
  });

  it('refusalReason table: what synth may replace', async () => {
    const base = mkdtempSync(path.join(tmpdir(), 'kruise-refusal-'));
    mkdirSync(path.join(base, 'cwd/out-marked'), { recursive: true });
    writeFileSync(path.join(base, 'cwd/out-marked', OUTPUT_MARKER), OUTPUT_MARKER_CONTENT);
    mkdirSync(path.join(base, 'cwd/out-empty'));
    mkdirSync(path.join(base, 'cwd/out-foreign'));
    writeFileSync(path.join(base, 'cwd/out-foreign/x'), '');
    mkdirSync(path.join(base, 'cwd/out-fake-marker/.cdk8s-kruise-synth'), { recursive: true });
    writeFileSync(path.join(base, 'cwd/out-fake-marker/x'), '');
    const cwd = path.join(base, 'cwd');
    const table: Array<[string, RegExp | undefined]> = [
      ['out-new', undefined],
      ['out-marked', undefined],
      ['out-empty', undefined],
      ['out-foreign', /did not create/],
      ['out-fake-marker', /did not create/], // a directory named like the marker is not the marker
      ['.', /working directory/],
      ['..', /working directory/],
      ['/', /working directory/],
    ];
    for (const [out, expected] of table) {
      const why = await refusalReason(out, cwd);
      if (expected) expect(why, out).toMatch(expected);
      else expect(why, out).toBeUndefined();
    }
  });
});

describe('interrupted and concurrent synths never lose the output', { timeout: 180_000 }, () => {
  it('a second synth into the same directory fails clearly while the first runs, and works after it', async () => {
    const out = path.join(dir, 'concurrent');
    expect((await synth('ok', out)).code).toBe(0);
    const first = spawn(
      process.execPath,
      ['--import', 'tsx', cliMain, 'synth', '--app', appCmd('slow'), '--output', out, '--config', noConfig()],
      { cwd: repoRoot, stdio: 'ignore' },
    );
    try {
      for (let i = 0; i < 600 && !existsSync(lockPathOf(out)); i++) await new Promise((r) => setTimeout(r, 100));
      const second = await synth('ok', out);
      expect(second.code).toBe(2);
      expect(second.stderr).toContain(`another cdk8s-kruise synth (pid ${first.pid}) is writing ${out}`);
    } finally {
      first.kill('SIGTERM');
      await new Promise((r) => first.on('close', r));
    }
    expect(existsSync(lockPathOf(out))).toBe(false);
    expect((await synth('ok', out)).code).toBe(0);
  });

  it('a lock left by a killed synth is taken over, and an output it had moved aside is put back', async () => {
    const out = path.join(dir, 'killed');
    expect((await synth('ok', out)).code).toBe(0);
    const before = files(out);
    // What SIGKILL between the two renames of the swap leaves: the old output inside a stage, no output, a lock
    // naming a process that no longer exists.
    const stage = path.join(dir, '.killed.synth-dead01');
    mkdirSync(stage);
    const { renameSync } = await import('node:fs');
    renameSync(out, path.join(stage, 'old'));
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('close', r));
    writeFileSync(lockPathOf(out), `${dead.pid}\n`);
    // The next synth fails (crashing app), so what it leaves is exactly the recovered output.
    const r = await synth('crash', out);
    expect(r.code).toBe(1);
    expect(files(out)).toEqual(before);
    expect(existsSync(stage)).toBe(false);
    expect(existsSync(lockPathOf(out))).toBe(false);
  });

  it('SIGINT or SIGTERM between the two renames of the swap is held until the new output is in place', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const out = path.join(dir, `swap-${signal}`);
      mkdirSync(out);
      writeFileSync(path.join(out, OUTPUT_MARKER), OUTPUT_MARKER_CONTENT);
      writeFileSync(path.join(out, 'old.yaml'), 'old');
      // The same handler synth installs: stop, delete the stage, exit 130. Before the gate, that deleted the stage
      // while it held the only copy of the old output.
      const script = path.join(dir, `swap-${signal}.mts`);
      writeFileSync(
        script,
        `import { rmSync } from 'node:fs';
import { makeStage, replaceDirectory, SignalGate } from ${JSON.stringify(path.join(repoRoot, 'src/cli/synth/atomic.ts'))};
const out = ${JSON.stringify(out)};
const stage = await makeStage(out);
const gate = new SignalGate(() => { rmSync(stage, { recursive: true, force: true }); process.exit(130); });
process.on('SIGINT', gate.handle);
process.on('SIGTERM', gate.handle);
await replaceDirectory(stage, out, [{ name: 'new.yaml', content: 'new' }], {
  gate,
  betweenRenames: () => new Promise((resolve) => { process.stdout.write('between\\n'); setTimeout(resolve, 1500); }),
});
process.stdout.write('done\\n');
`,
      );
      const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const between = new Promise<boolean>((resolve) => {
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString();
          if (stdout.includes('between')) resolve(true);
        });
        child.on('close', () => resolve(false));
      });
      expect(await between, stderr).toBe(true);
      child.kill(signal);
      const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
      expect(code, signal).toBe(130);
      expect(stdout).not.toContain('done');
      expect(files(out)).toEqual({ [OUTPUT_MARKER]: OUTPUT_MARKER_CONTENT, 'new.yaml': 'new' });
      expect(readdirSync(dir).filter((f) => f.startsWith(`.swap-${signal}.synth-`))).toEqual([]);
    }
  });
});

// Hostile inputs to `cdk8s-kruise validate`: files that never end, links, oversized inputs, floods of findings,
// values built to blow up messages, and text built to forge terminal output or CI workflow commands.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkParsed, checkParsedWindow, parseInputs, selectRules, summarize } from '../../../../src/policy/engine.js';
import { formatText } from '../../../../src/policy/format/text.js';
import { readInputs, parseSize } from '../../../../src/policy/inputs.js';
import { escapeControl, listNames, quoteValue, safeLine } from '../../../../src/api/quote.js';
import { runCli } from '../../support/cli.js';
import { CLONESET_YAML } from '../../support/manifests.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-hostile-validate-'));
});

const file = (name: string, content: string | Buffer) => {
  const p = path.join(dir, name);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, content);
  return p;
};

const badImagePullJob = (i: number, image = `nginx:1.${i}:bad`) =>
  `---\napiVersion: apps.kruise.io/v1alpha1\nkind: ImagePullJob\nmetadata: {name: pull-${i}, namespace: default}\nspec:\n  image: ${JSON.stringify(image)}\n  completionPolicy: {type: Always}\n`;

describe('validate refuses inputs that are not regular files, and bounds what it reads', { timeout: 120_000 }, () => {
  it('a FIFO named on the command line is reported at once instead of blocking forever', async () => {
    const fifo = path.join(dir, 'pipe.yaml');
    execFileSync('mkfifo', [fifo]);
    const r = await runCli(['validate', fifo]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${fifo}: error KRUISE-INPUT-001: the input is a named pipe (FIFO), not a regular file, so it was not read`);
  }, 20_000);

  it('a symlink to /dev/zero is refused as a character device (named, or found in a directory)', async () => {
    const zero = path.join(dir, 'zero.yaml');
    symlinkSync('/dev/zero', zero);
    const named = await runCli(['validate', zero]);
    expect(named.code).toBe(1);
    expect(named.stdout).toContain('the input is a character device, not a regular file');
    const tree = path.join(dir, 'with-device');
    mkdirSync(tree);
    symlinkSync('/dev/zero', path.join(tree, 'zero.yaml'));
    file('with-device/ok.yaml', CLONESET_YAML);
    const walked = await runCli(['validate', tree]);
    expect(walked.code).toBe(1);
    expect(walked.stdout).toContain(
      `${path.join(tree, 'zero.yaml')}: error KRUISE-INPUT-001: the symbolic link points to a character device, not a regular file`,
    );
    expect(walked.stdout).toContain('in 1 object(s) from 2 input(s)');
  }, 20_000);

  it('symlinks inside a directory are followed to files and directories (a cycle scanned once); broken ones are reported', async () => {
    const outside = file('outside/real.yaml', CLONESET_YAML);
    file('outside/sub/also.yaml', CLONESET_YAML.replace('name: web', 'name: web2'));
    const tree = path.join(dir, 'linked');
    mkdirSync(tree);
    symlinkSync(outside, path.join(tree, 'a-file.yaml'));
    symlinkSync(path.join(dir, 'outside/sub'), path.join(tree, 'b-dir'));
    symlinkSync(tree, path.join(tree, 'c-cycle'));
    symlinkSync(path.join(dir, 'nowhere.yaml'), path.join(tree, 'd-broken.yaml'));
    const r = await runCli(['validate', tree]);
    expect(r.stdout).toContain(`${path.join(tree, 'd-broken.yaml')}: error KRUISE-INPUT-001: the symbolic link is broken`);
    expect(r.stdout).toContain('in 2 object(s) from 3 input(s)');
  });

  it('a file over --max-file-size is reported without being read; the flag raises the limit; stdin is bounded too', async () => {
    const big = file('big.yaml', CLONESET_YAML + `# ${'x'.repeat(4096)}\n`);
    const capped = await runCli(['validate', '--max-file-size', '2KiB', big]);
    expect(capped.code).toBe(1);
    expect(capped.stdout).toContain('the input is larger than the 2048 bytes limit, so it was not read');
    expect(capped.stdout).toContain('--max-file-size');
    expect((await runCli(['validate', '--max-file-size', '1MiB', big])).code).toBe(0);
    const bad = await runCli(['validate', '--max-file-size', 'lots', big]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid size "lots"');
    expect(parseSize('64MiB')).toBe(64 * 1024 * 1024);
    expect(parseSize('1G')).toBe(1024 ** 3);
    const stdin = Readable.from([Buffer.alloc(3000, 0x61), Buffer.alloc(3000, 0x61)]);
    const items = await readInputs(['-'], stdin, { maxFileSize: 4096 });
    expect(items).toEqual([
      { file: '<stdin>', finding: expect.objectContaining({ message: expect.stringContaining('larger than the 4096 bytes limit') }) },
    ]);
  });

  it('lists at most --max-findings findings (default 1000) and summarises the rest, in text, JSON and SARIF', async () => {
    const flood = file('flood.yaml', Array.from({ length: 30 }, (_, i) => badImagePullJob(i)).join(''));
    const text = await runCli(['validate', '--max-findings', '5', flood]);
    expect(text.code).toBe(1);
    expect(text.stdout.match(/error KRUISE-IMAGEPULLJOB/g)).toHaveLength(5);
    expect(text.stdout).toContain(
      '… 25 more finding(s) not shown (25 error(s), 0 warning(s), 0 note(s)); raise the limit with --max-findings',
    );
    expect(text.stdout).toContain('30 error(s), 0 warning(s), 0 note(s) in 30 object(s) from 1 input(s)');
    const json = JSON.parse((await runCli(['validate', '--max-findings', '5', '--format', 'json', flood])).stdout);
    expect(json.findings).toHaveLength(5);
    expect(json.summary).toMatchObject({ errors: 30, omitted: 25 });
    const sarif = JSON.parse((await runCli(['validate', '--max-findings', '5', '--format', 'sarif', flood])).stdout);
    expect(sarif.runs[0].results).toHaveLength(5);
    expect(sarif.runs[0].invocations[0].toolExecutionNotifications[0].message.text).toContain('25 more result(s)');
    expect((await runCli(['validate', '--max-findings', '0', flood])).stdout.match(/error KRUISE-IMAGEPULLJOB/g)).toHaveLength(30);
  });
});

describe('the findings window lists exactly the first findings of the full report', () => {
  it('for every limit, across files, batches of documents, parser findings and whole-run rules', { timeout: 300_000 }, () => {
    const inputs = [
      { file: 'a.yaml', content: Array.from({ length: 2050 }, (_, i) => badImagePullJob(i)).join('') + '---\nkind: [broken\n' },
      { file: 'b.yaml', content: '' },
      {
        file: 'c.yaml',
        content:
          CLONESET_YAML.replace('  replicas: 2\n', '  replicas: 2\n  updateStrategy: {maxUnavaliable: 1, partiton: 2}\n') +
          badImagePullJob(9999),
      },
    ];
    const parsed = parseInputs(inputs);
    const rules = selectRules();
    const files = inputs.map((i) => i.file);
    const full = checkParsed(parsed, rules, files);
    for (const limit of [0, 1, 7, 2049, 2050, 2051, 2054, Infinity]) {
      const w = checkParsedWindow(parsed, rules, files, limit);
      expect(w.shown, String(limit)).toEqual(full.slice(0, limit));
      expect(w.total).toEqual(summarize(full));
      expect(w.omitted).toEqual(summarize(full.slice(limit)));
    }
  });
});

describe('messages are bounded and cannot forge output', () => {
  it('a huge value is quoted truncated to about 120 characters, a huge unknown key too', async () => {
    const longImage = file('long-image.yaml', badImagePullJob(1, `nginx:${'x'.repeat(20000)}:bad`));
    const r = await runCli(['validate', '--format', 'json', longImage]);
    const f = JSON.parse(r.stdout).findings[0];
    expect(f.message).toMatch(/^image "nginx:x{100,120}… is not a valid image reference/);
    expect(f.message.length).toBeLessThan(400);
    const key = 'k'.repeat(50000);
    const unknownKey = file('long-key.yaml', CLONESET_YAML.replace('  replicas: 2\n', `  replicas: 2\n  ${key}: 1\n`));
    const u = JSON.parse((await runCli(['validate', '--format', 'json', unknownKey])).stdout).findings[0];
    expect(u.message.length).toBeLessThan(400);
    expect(u.hint.length).toBeLessThan(2100);
    expect(u.jsonPointer.length).toBeLessThanOrEqual(1025);
  });

  it('lists at most a few names plus a count', async () => {
    const containers = Array.from({ length: 40 }, (_, i) => `        - {name: c${i}, image: "busybox:1.36"}`).join('\n');
    const job = file(
      'many-containers.yaml',
      `apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: default}\nspec:\n  template:\n    metadata:\n      annotations:\n        kruise.io/container-exit-priority: '{"nope":1}'\n    spec:\n      restartPolicy: Never\n      containers:\n${containers}\n`,
    );
    const r = await runCli(['validate', job]);
    expect(r.stdout).toContain('(containers: c0, c1, c2, c3, c4 and 35 more)');
    expect(listNames(['a', 'b'])).toBe('a, b');
    expect(
      listNames(
        Array.from({ length: 9 }, (_, i) => `n${i}`),
        3,
      ),
    ).toBe('n0, n1, n2 and 6 more');
  });

  it('a YAML alias bomb is refused as excessive aliasing, quickly, and never expanded into a message', async () => {
    const names = 'abcdefghi';
    const lines = [
      'apiVersion: apps.kruise.io/v1alpha1',
      'kind: ImagePullJob',
      'metadata: {name: bomb}',
      'x:',
      `  a: &a [${Array(10).fill('"lol"').join(',')}]`,
    ];
    for (let i = 1; i < names.length; i++)
      lines.push(
        `  ${names[i]}: &${names[i]} [${Array(10)
          .fill(`*${names[i - 1]}`)
          .join(',')}]`,
      );
    lines.push('spec: {image: "nginx:1.25", completionPolicy: *i}');
    const bomb = file('bomb.yaml', lines.join('\n') + '\n');
    const t0 = performance.now();
    const r = await runCli(['validate', bomb]);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('uses YAML aliases that expand to more than 1000000 nodes (excessive aliasing');
    expect(r.stdout.length).toBeLessThan(2000);
    // The quoting helper never serialises past its budget, however large the shared graph.
    let shared: unknown = ['lol'];
    for (let i = 0; i < 40; i++) shared = [shared, shared];
    expect(quoteValue(shared).length).toBeLessThanOrEqual(121);
  });

  it('text output escapes control characters and neutralises CI workflow commands, from values and file names', async () => {
    const evilKey = 'x\n::error file=app.ts,line=1::forged\u001b[31mred\r::add-mask::secret';
    const evil = file('evil.yaml', CLONESET_YAML.replace('  replicas: 2\n', `  replicas: 2\n  ${JSON.stringify(evilKey)}: 1\n`));
    const named = file('::warning::named.yaml', badImagePullJob(1, 'bad image\u001b]0;title\u0007'));
    const r = await runCli(['validate', evil, named]);
    expect(r.code).toBe(1);
    for (const line of r.stdout.split('\n')) {
      expect(line, line).not.toMatch(/^\s*::/);
      // eslint-disable-next-line no-control-regex -- asserting that no control character reaches the output
      expect(line).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    }
    expect(r.stdout).toContain('\\n::error file=app.ts');
    expect(r.stdout).toContain('\\x1b[31m');
    // A file name that starts a line (given relative, e.g. `validate ::warning::x.yaml`) gets a visible prefix.
    const report = formatText(
      [
        {
          ruleId: 'KRUISE-INPUT-002',
          severity: 'warning',
          file: '::warning::named.yaml',
          resource: { kind: '', name: '' },
          jsonPointer: '',
          message: 'm',
          hint: 'h',
        },
      ],
      { documents: 0, files: 1 },
    );
    expect(report.split('\n')[0]).toBe('> ::warning::named.yaml: warning KRUISE-INPUT-002: m');
    // Escapes, table-tested.
    const table: Array<[string, string]> = [
      ['plain', 'plain'],
      ['a\nb', 'a\\nb'],
      ['\u001b[2J', '\\x1b[2J'],
      ['bidi\u202eoverride', 'bidi\\u202eoverride'],
      ['c1\u009bx', 'c1\\x9bx'],
    ];
    for (const [input, out] of table) expect(escapeControl(input)).toBe(out);
    expect(safeLine('  ::set-output name=x::y')).toBe('>   ::set-output name=x::y');
    expect(safeLine('file.yaml:1: error ::x')).toBe('file.yaml:1: error ::x');
  });
});

describe('validate --max-file-size default', () => {
  it('the flag default and the inputs module agree', async () => {
    const { DEFAULT_MAX_FILE_SIZE_MIB } = await import('../../../../src/cli/commands/validate.js');
    const { DEFAULT_MAX_FILE_SIZE } = await import('../../../../src/policy/inputs.js');
    expect(DEFAULT_MAX_FILE_SIZE_MIB * 1024 * 1024).toBe(DEFAULT_MAX_FILE_SIZE);
  });
});

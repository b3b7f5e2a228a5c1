// `cdk8s-kruise uninstall`: wrong input is a usage error (exit 2) naming the problem, before kubectl is called. The
// cluster flow (refused while a CloneSet exists, then the runtime and CRDs removed) is in test/e2e/gitops-apply.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { layout, OUTPUT_MARKER, OUTPUT_MARKER_CONTENT } from '../../../../src/policy/output-layout.js';
import { repoRoot, runCli } from '../../support/cli.js';

const dist = path.join(repoRoot, 'dist');

describe('cdk8s-kruise uninstall: wrong input is a usage error (exit 2)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kruise-uninstall-bad-'));

  it('a directory synth did not write', async () => {
    mkdirSync(path.join(dir, 'hand'), { recursive: true });
    writeFileSync(path.join(dir, 'hand', 'x.yaml'), 'kind: ConfigMap\n');
    const r = await runCli(['uninstall', path.join(dir, 'hand')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/was not written by cdk8s-kruise synth/);
  });

  it('an output that installs neither CRDs nor a runtime', async () => {
    const out = path.join(dir, 'app-only');
    mkdirSync(out, { recursive: true });
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
    for (const f of layout([{ chartFile: '0000-web.k8s.yaml', object: cm, text: JSON.stringify(cm) }]))
      writeFileSync(path.join(out, f.name), f.content);
    writeFileSync(path.join(out, OUTPUT_MARKER), OUTPUT_MARKER_CONTENT);
    const r = await runCli(['uninstall', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/installs no CRDs and no runtime; nothing to uninstall/);
  });

  it('kubectl not found', async () => {
    const r = await runCli(['uninstall', dist, '--kubectl', path.join(dir, 'no-kubectl')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot run .*no-kubectl: not found \(pass --kubectl <path>\)/);
  });

  it('a bad --timeout', async () => {
    const r = await runCli(['uninstall', dist, '--timeout', '-1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--timeout must be a whole number of seconds/);
  });
});

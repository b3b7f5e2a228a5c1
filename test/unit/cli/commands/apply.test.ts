// `cdk8s-kruise apply`: which files each phase applies and what it waits for, read from a synth output; hostile
// or wrong input is a usage error (exit 2) naming the problem. The cluster flows: test/node/gitops-apply (to a ready
// app) and test/e2e/gitops-apply (a phase that times out).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { escapeLines, readPhases } from '../../../../src/cli/commands/apply-run.js';
import { layout, OUTPUT_MARKER, OUTPUT_MARKER_CONTENT, type SynthDoc } from '../../../../src/policy/output-layout.js';
import { repoRoot, runCli } from '../../support/cli.js';

const dist = path.join(repoRoot, 'dist');

describe('cdk8s-kruise apply: phases', () => {
  it("plain layout (the repo's dist/): CRDs with their names, the runtime with its workloads, the app; never ops/", () => {
    const phases = readPhases(dist);
    expect(phases.map((p) => p.title)).toEqual(['CRDs', 'runtime', 'app']);
    expect(phases[0]!.files).toEqual([path.join(dist, '00-crds.yaml')]);
    expect(phases[0]!.crds).toContain('containerrecreaterequests.apps.kruise.io');
    expect(phases[1]!.workloads).toContainEqual({ kind: 'Deployment', name: 'kruise-controller-manager', namespace: 'kruise-system' });
    expect(phases[2]!.files.every((f) => path.basename(f).startsWith('20-app-'))).toBe(true);
    expect(phases.flatMap((p) => p.files).some((f) => f.includes(`${path.sep}ops${path.sep}`))).toBe(false);
  });

  it('flux layout: one phase per directory', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kruise-apply-flux-'));
    const doc = (chartFile: string, object: Record<string, unknown>): SynthDoc => ({ chartFile, object, text: JSON.stringify(object) });
    const part = { 'app.kubernetes.io/part-of': 'cdk8s-kruise' };
    const files = layout(
      [
        doc('0000-crds.k8s.yaml', {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: 'x.apps.kruise.io', labels: part },
        }),
        doc('0001-kruise.k8s.yaml', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'm', namespace: 'k', labels: part } }),
        doc('0002-web.k8s.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }),
      ],
      { gitops: 'flux' },
    );
    for (const f of files) {
      mkdirSync(path.dirname(path.join(dir, f.name)), { recursive: true });
      writeFileSync(path.join(dir, f.name), f.content);
    }
    writeFileSync(path.join(dir, OUTPUT_MARKER), OUTPUT_MARKER_CONTENT);
    const phases = readPhases(dir);
    expect(phases.map((p) => [p.title, p.files.map((f) => path.relative(dir, f))])).toEqual([
      ['CRDs', ['crds/00-crds.yaml']],
      ['runtime', ['runtime/10-runtime.yaml']],
      ['app', ['app/20-app-web.yaml']],
    ]);
    expect(phases[0]!.crds).toEqual(['x.apps.kruise.io']);
    expect(phases[1]!.workloads).toEqual([{ kind: 'Deployment', name: 'm', namespace: 'k' }]);
  });
});

describe('cdk8s-kruise apply: wrong input is a usage error (exit 2)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kruise-apply-bad-'));
  it.each([
    ['a missing directory', () => path.join(dir, 'missing'), /is not a directory/],
    [
      'a directory synth did not write',
      () => {
        mkdirSync(path.join(dir, 'hand'), { recursive: true });
        writeFileSync(path.join(dir, 'hand', 'x.yaml'), 'kind: ConfigMap\n');
        return path.join(dir, 'hand');
      },
      /was not written by cdk8s-kruise synth \(no \.cdk8s-kruise-synth\)/,
    ],
    [
      'an output without its kustomization',
      () => {
        mkdirSync(path.join(dir, 'nok'), { recursive: true });
        writeFileSync(path.join(dir, 'nok', OUTPUT_MARKER), OUTPUT_MARKER_CONTENT);
        return path.join(dir, 'nok');
      },
      /kustomization\.yaml is missing; re-run cdk8s-kruise synth/,
    ],
  ])('%s', async (_name, make, message) => {
    const r = await runCli(['apply', make()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('kubectl not found', async () => {
    const r = await runCli(['apply', dist, '--kubectl', path.join(dir, 'no-kubectl')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot run .*no-kubectl: not found \(pass --kubectl <path>\)/);
  });

  it('a bad --timeout', async () => {
    const r = await runCli(['apply', dist, '--timeout', '5m']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--timeout must be a whole number of seconds/);
  });
});

describe('cdk8s-kruise apply: what a failed phase prints', () => {
  it('keeps the lines of the cause, pods and events; control characters inside a line are escaped', () => {
    const diagnosis = 'cause: the image r/x:1 cannot be pulled\n  pod m-1: Pending\n  event Pod/m-1 Failed: bad\u001b[31m\r';
    expect(escapeLines(diagnosis).split('\n')).toEqual([
      'cause: the image r/x:1 cannot be pulled',
      '  pod m-1: Pending',
      '  event Pod/m-1 Failed: bad\\x1b[31m\\r',
    ]);
  });
});

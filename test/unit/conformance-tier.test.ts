// The conformance tier's bookkeeping (test/conformance/tier.ts) on hand-written ginkgo reports: which results fail
// the tier, what the expectations file may contain, and the ginkgo arguments CI runs with. The tier itself runs
// upstream's suite on the real node (test/node/conformance.test.ts); and the install it runs the suite against.
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { BUNDLED_RUNTIME_GATES } from '../../src/contracts/features.js';
import { tierManifests } from '../conformance/install.js';
import {
  compare,
  ginkgoArgs,
  loadExpectations,
  parseExpectations,
  selected,
  specResults,
  type FileExpectation,
} from '../conformance/tier.js';

const file: FileExpectation = {
  file: 'apps/v1alpha1/containermeta.go',
  specs: [
    { spec: '[apps] meta works', expect: 'pass', ci: true },
    { spec: '[apps] meta (v2) fails', expect: 'expected-fail', reason: 'BroadcastJob not served' },
  ],
};

function report(states: Record<string, string>, at = 'github.com/openkruise/kruise@v1.9.1/test/e2e/apps/v1alpha1/containermeta.go') {
  return JSON.stringify([
    {
      SpecReports: [
        { LeafNodeType: 'SynchronizedBeforeSuite', State: 'passed', LeafNodeLocation: { FileName: at } },
        ...Object.entries(states).map(([name, state]) => ({
          ContainerHierarchyTexts: ['[apps]', name.split(' ')[1]],
          LeafNodeText: name.split(' ').slice(2).join(' '),
          LeafNodeType: 'It',
          LeafNodeLocation: { FileName: at },
          State: state,
          RunTime: 12_400_000_000,
          Failure:
            state === 'failed' ? { Message: 'Expected\n  <bool>: false\nto be true', Location: { FileName: at, LineNumber: 7 } } : {},
        })),
      ],
    },
  ]);
}

describe('conformance tier: comparing a ginkgo report with the expectations', () => {
  it('reads It specs of the file only, with their full text, state, seconds and failure', () => {
    const results = specResults(report({ '[apps] meta works': 'failed' }), file.file);
    expect(results).toEqual([
      {
        spec: '[apps] meta works',
        state: 'failed',
        seconds: 12,
        failure: 'Expected\n  <bool>: false\nto be true (containermeta.go:7)',
      },
    ]);
    expect(specResults(report({ '[apps] meta works': 'passed' }), 'apps/v1beta1/containermeta.go')).toEqual([]);
  });

  it('passes when pass specs pass and expected-fail specs fail', () => {
    const results = specResults(report({ '[apps] meta works': 'passed', '[apps] meta (v2) fails': 'failed' }), file.file);
    expect(compare(file, results, 'all')).toEqual({ problems: [], ran: 2, passed: 1 });
  });

  it('fails when a pass spec fails, and says why', () => {
    const results = specResults(report({ '[apps] meta works': 'timedout', '[apps] meta (v2) fails': 'failed' }), file.file);
    const { problems } = compare(file, results, 'all');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('"[apps] meta works" should pass but timedout');
  });

  it('fails when an expected-fail spec passes, so the list only shrinks', () => {
    const results = specResults(report({ '[apps] meta works': 'passed', '[apps] meta (v2) fails': 'passed' }), file.file);
    const { problems } = compare(file, results, 'all');
    expect(problems).toEqual([expect.stringContaining('is listed as expected-fail (BroadcastJob not served) but passed')]);
  });

  it('fails on a spec missing from the expectations and on a listed spec the suite no longer has', () => {
    const results = specResults(report({ '[apps] meta works': 'passed', '[apps] meta new': 'skipped' }), file.file);
    const { problems } = compare(file, results, 'ci');
    expect(problems).toEqual([
      expect.stringContaining('"[apps] meta new" is not in the expectations file'),
      expect.stringContaining('"[apps] meta (v2) fails" is listed but the suite has no such spec'),
    ]);
  });

  it('in CI mode judges only the ci specs (the others are skipped by focus)', () => {
    const results = specResults(report({ '[apps] meta works': 'passed', '[apps] meta (v2) fails': 'skipped' }), file.file);
    expect(compare(file, results, 'ci')).toEqual({ problems: [], ran: 1, passed: 1 });
  });

  it('a pass spec that skips itself is not a pass', () => {
    const results = specResults(report({ '[apps] meta works': 'skipped', '[apps] meta (v2) fails': 'failed' }), file.file);
    expect(compare(file, results, 'all').problems).toEqual([expect.stringContaining('should pass but skipped')]);
  });
});

describe('conformance tier: the expectations file', () => {
  it('the checked-in file parses, lists upstream files once, and gives CI at least one spec per file not excluded with a reason', () => {
    const { files } = loadExpectations();
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) if (!f.ciExcluded) expect(f.specs.filter((s) => s.ci).length, f.file).toBeGreaterThan(0);
    expect(files.filter((f) => f.ciExcluded).length, 'files CI leaves out').toBeLessThanOrEqual(1);
  });

  it('an unstable expected-fail that passes is reported, not a regression; a stable one that passes is', () => {
    const specs = [
      { spec: '[apps] meta works', expect: 'expected-fail' as const, reason: 'a race the runtime loses', unstable: 'passes in some runs' },
      { spec: '[apps] meta (v2) fails', expect: 'expected-fail' as const, reason: 'not yet implemented here' },
    ];
    const results = specResults(report({ '[apps] meta works': 'passed', '[apps] meta (v2) fails': 'passed' }), file.file);
    expect(compare({ ...file, specs }, results, 'all').problems).toEqual([
      expect.stringContaining('meta (v2) fails" is listed as expected-fail'),
    ]);
  });

  it.each([
    ['an unstable pass spec', 'expect: pass\n        unstable: passes in some runs only'],
    [
      'an unstable spec in CI',
      'expect: expected-fail\n        reason: a race the runtime loses\n        unstable: passes in some runs only\n        ci: true',
    ],
    ['an unstable spec without a reason', 'expect: expected-fail\n        reason: a race the runtime loses\n        unstable: x'],
  ])('refuses %s', (_case, body) => {
    const text = `files:\n  - file: apps/v1alpha1/containermeta.go\n    specs:\n      - spec: a spec\n        ${body}\n`;
    expect(() => parseExpectations(text)).toThrow(/unstable/);
  });

  it('refuses a file left out of CI without a reason, or with a ci spec', () => {
    const spec = '    specs:\n      - spec: a spec\n        expect: pass\n';
    expect(() => parseExpectations(`files:\n  - file: apps/v1alpha1/containermeta.go\n    ciExcluded: x\n${spec}`)).toThrow(
      /ciExcluded needs/,
    );
    expect(() =>
      parseExpectations(
        `files:\n  - file: apps/v1alpha1/containermeta.go\n    ciExcluded: its one spec is unstable\n${spec}        ci: true\n`,
      ),
    ).toThrow(/ciExcluded but a spec/);
  });

  it('refuses an expected-fail without a specific reason', () => {
    const text =
      'files:\n  - file: apps/v1alpha1/cloneset.go\n    specs:\n      - spec: x\n        expect: expected-fail\n        reason: no\n';
    expect(() => parseExpectations(text)).toThrow(/needs a specific reason/);
  });

  it('refuses unknown states, keys, duplicate specs and paths outside upstream test/e2e', () => {
    const entry = (body: string, f = 'apps/v1alpha1/cloneset.go') => `files:\n  - file: ${f}\n    specs:\n${body}`;
    expect(() => parseExpectations(entry('      - spec: x\n        expect: flaky\n'))).toThrow(/expect must be pass or expected-fail/);
    expect(() => parseExpectations(entry('      - spec: x\n        expect: pass\n        skip: true\n'))).toThrow(/unknown key "skip"/);
    expect(() => parseExpectations(entry('      - spec: x\n        expect: pass\n      - spec: x\n        expect: pass\n'))).toThrow(
      /listed twice/,
    );
    expect(() => parseExpectations(entry('      - spec: x\n        expect: pass\n', '../../etc/passwd'))).toThrow(/upstream spec file/);
    expect(() => parseExpectations('- just a list')).toThrow(/`files` list/);
  });
});

describe('conformance tier: ginkgo arguments', () => {
  const reports = { json: 'r.json', junit: 'r.xml' };

  it('focuses the one file and, in CI mode, each ci spec by its exact text', () => {
    const args = ginkgoArgs({ ...file, specs: [{ spec: '[apps] a (b) c.d', expect: 'pass', ci: true }] }, 'ci', reports, '15m');
    expect(args).toContain('--ginkgo.focus-file=/test/e2e/apps/v1alpha1/containermeta\\.go$');
    expect(args).toContain('--ginkgo.focus=(^| )\\[apps\\] a \\(b\\) c\\.d$');
    expect(args).toContain('--ginkgo.json-report=r.json');
    expect(args).toContain('--ginkgo.junit-report=r.xml');
  });

  it('runs the whole file in full mode, and refuses a file CI would not cover', () => {
    expect(ginkgoArgs(file, 'all', reports, '1h').some((a) => a.startsWith('--ginkgo.focus='))).toBe(false);
    expect(() => ginkgoArgs({ ...file, specs: [{ spec: 'x', expect: 'pass' }] }, 'ci', reports, '15m')).toThrow(/no spec is marked ci/);
  });

  it('in focus mode runs and judges only the specs whose text contains the focus', () => {
    const specs = [
      { spec: 'A recreates with preStop', expect: 'pass' as const },
      { spec: 'A recreates by force', expect: 'expected-fail' as const, reason: 'r' },
    ];
    const mode = { focus: 'prestop' };
    expect(ginkgoArgs({ ...file, specs }, mode, reports, '1h').filter((a) => a.startsWith('--ginkgo.focus='))).toEqual([
      '--ginkgo.focus=(^| )A recreates with preStop$',
    ]);
    const results = [
      { spec: 'A recreates with preStop', state: 'passed', seconds: 1 },
      { spec: 'A recreates by force', state: 'skipped', seconds: 0 },
    ];
    expect(compare({ ...file, specs }, results, mode)).toEqual({ problems: [], ran: 1, passed: 1 });
    expect(() => ginkgoArgs({ ...file, specs }, { focus: 'nothing' }, reports, '1h')).toThrow(/no spec contains "nothing"/);
  });

  it('a focus of |-separated parts selects the specs containing any part; empty parts select nothing', () => {
    const specs = [
      { spec: 'A recreates with preStop', expect: 'pass' as const },
      { spec: 'A recreates by force', expect: 'pass' as const },
      { spec: 'A recreates simple containers', expect: 'pass' as const },
    ];
    const chosen = (focus: string) => specs.filter((s) => selected(s, { focus })).map((s) => s.spec);
    expect(chosen('prestop | BY FORCE')).toEqual(['A recreates with preStop', 'A recreates by force']);
    expect(chosen('|')).toEqual([]);
    expect(chosen('simple||')).toEqual(['A recreates simple containers']);
  });
});

describe("the tier's install (test/conformance/install.ts)", () => {
  it('turns on every gate the bundled runtime knows, on the manager and the daemon, and asks for the daemon and a Fail pod webhook', () => {
    const { crds, runtime } = tierManifests();
    const docs = YAML.parseAllDocuments(runtime).map((d) => d.toJS() as Record<string, any>);
    const gatesOf = (kind: string) => {
      const args: string[] = docs.find((d) => d.kind === kind)!.spec.template.spec.containers[0].args;
      return args
        .find((a) => a.startsWith('--feature-gates='))!
        .slice('--feature-gates='.length)
        .split(',')
        .sort();
    };
    const all = Object.keys(BUNDLED_RUNTIME_GATES)
      .map((g) => `${g}=true`)
      .sort();
    expect(all).toContain('PreparingUpdateAsUpdate=true');
    expect(all).toContain('SidecarSetPatchPodMetadataDefaultsAllowed=true');
    expect(gatesOf('Deployment')).toEqual(all);
    expect(gatesOf('DaemonSet')).toEqual(all);
    const podHooks = docs
      .filter((d) => d.kind === 'MutatingWebhookConfiguration')
      .flatMap((d) => d.webhooks as { rules: { resources: string[] }[]; failurePolicy: string }[])
      .filter((w) => w.rules.some((r) => r.resources.includes('pods')));
    expect(podHooks.map((w) => w.failurePolicy)).toEqual(['Fail']);
    expect(crds).toContain('kind: CustomResourceDefinition');
    expect(runtime).not.toContain('kind: CustomResourceDefinition');
  });
});

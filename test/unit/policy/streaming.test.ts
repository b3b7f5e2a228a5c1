// `validate` streams: files are parsed in batches, per-document rules run batch by batch, and cross-document rules
// see only what they retain (`Rule.retain`). The report must be exactly the one of the whole-input path, with the
// partners of every cross-document finding in other batches and other files.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  checkInputStreamWindow,
  checkParsed,
  PER_DOCUMENT_RULES,
  parseInputs,
  selectRules,
  summarize,
  type TextInput,
} from '../../../src/policy/engine.js';
import { RULES } from '../../../src/policy/rules/index.js';
import { parseText } from '../../../src/policy/parse.js';
import { advancedCronJob } from '../support/manifests.js';

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist');

const distInputs = (): TextInput[] =>
  readdirSync(DIST)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ file: `dist/${f}`, content: readFileSync(path.join(DIST, f), 'utf8') }));

/** The runtime of dist/ with the SidecarTerminator gate turned off, so a Job using it is a cross-document finding. */
const runtimeWithGateOff = (): TextInput => {
  const runtime = distInputs().find((i) => i.file.endsWith('10-runtime.yaml'))!;
  const content = String(runtime.content).replaceAll('SidecarTerminator=true', 'SidecarTerminator=false');
  expect(content).not.toBe(runtime.content);
  return { file: 'runtime-gate-off.yaml', content };
};

const app = `apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - {name: app, image: "nginx:1.27"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: team}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: main, image: "busybox:1.36"}
        - name: proxy
          image: "envoy:1.30"
          env: [{name: KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: "true"}]
---
${stringify(advancedCronJob('team'))}`;

// A label value JSON cannot carry (YAML's .inf is Infinity; JSON would make it null): retained manifests are kept
// compact as JSON only when JSON carries them exactly.
const oddLabels = `apiVersion: apps/v1
kind: Deployment
metadata: {name: odd, namespace: team}
spec:
  selector: {matchLabels: {app: odd}}
  template:
    metadata: {labels: {app: odd, weight: .inf}}
    spec:
      containers:
        - {name: meter, image: "nginx:1.27"}
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: weighted}
spec:
  selector: {matchExpressions: [{key: weight, operator: In, values: ["Infinity"]}]}
  containers:
    - {name: meter, image: "busybox:1.36"}
`;

const sidecarSets = `apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: first}
spec:
  selector: {matchLabels: {app: web}}
  containers:
    - {name: app, image: "busybox:1.36"}
    - {name: logtail, image: "busybox:1.36"}
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: second}
spec:
  selector: {matchLabels: {app: web}}
  containers:
    - {name: logtail, image: "busybox:1.36"}
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: typo}
spec:
  selector: {matchLabels: {app: wbe}}
  containers:
    - {name: metrics, image: "busybox:1.36"}
`;

async function* stream(inputs: readonly TextInput[]) {
  for (const input of inputs) yield input;
}

describe('streaming validate', () => {
  it('reports exactly what the whole-input path reports, for any batch size and limit', async () => {
    const inputs = [
      runtimeWithGateOff(),
      { file: 'app.yaml', content: app },
      { file: 'odd.yaml', content: oddLabels },
      ...distInputs(),
      { file: 'sidecarsets.yaml', content: sidecarSets },
    ];
    const rules = selectRules();
    const files = inputs.map((i) => i.file);
    const full = checkParsed(parseInputs(inputs), rules, files);
    // Every cross-document rule fires, with its partners in other files and batches.
    const fired = new Set(full.map((f) => f.ruleId));
    for (const id of ['KRUISE-GATE-001', 'KRUISE-SIDECARSET-002', 'KRUISE-SIDECARSET-005', 'KRUISE-SIDECARSET-007', 'KRUISE-RUNTIME-001'])
      expect(fired, id).toContain(id);
    expect(full.filter((f) => f.ruleId === 'KRUISE-SIDECARSET-002').map((f) => f.resource.name)).toContain('weighted');
    for (const batchSize of [1, 2, 7, 2000]) {
      for (const limit of [Infinity, 3]) {
        const w = await checkInputStreamWindow(stream(inputs), rules, limit, batchSize);
        expect(w.shown, `batch ${batchSize}, limit ${limit}`).toEqual(full.slice(0, limit));
        expect(w.total).toEqual(summarize(full));
        expect(w.files).toEqual(files);
      }
    }
  });

  it('a rule activated only by a late manifest (the install after the app) still sees what came before it', async () => {
    const inputs = [{ file: 'app.yaml', content: app }, { file: 'sidecarsets.yaml', content: sidecarSets }, runtimeWithGateOff()];
    const rules = selectRules();
    const files = inputs.map((i) => i.file);
    const full = checkParsed(parseInputs(inputs), rules, files);
    expect(full.map((f) => f.ruleId)).toContain('KRUISE-GATE-001');
    for (const batchSize of [1, 3]) expect((await checkInputStreamWindow(stream(inputs), rules, Infinity, batchSize)).shown).toEqual(full);
  });

  it('a rule with activatedBy finds nothing when no manifest activates it, so dropping what it retained loses nothing', () => {
    const gated = RULES.filter((r) => r.activatedBy);
    expect(gated.map((r) => r.id).sort()).toEqual([
      'KRUISE-GATE-001',
      'KRUISE-RUNTIME-001',
      'KRUISE-SIDECARSET-002',
      'KRUISE-SIDECARSET-005',
      'KRUISE-SIDECARSET-007',
    ]);
    const all = [...distInputs(), { file: 'app.yaml', content: app }, { file: 'odd.yaml', content: oddLabels }].flatMap(
      (i) => parseText(String(i.content), i.file).manifests,
    );
    for (const rule of gated) {
      const inactive = all.filter((m) => !rule.activatedBy!(m));
      expect(inactive.length, rule.id).toBeLessThan(all.length);
      expect(rule.check(inactive, { manifests: inactive }), rule.id).toEqual([]);
    }
  });

  it('cross-document rules retain only the manifests that can matter to them, and only what they read', () => {
    const manifests = [app, sidecarSets].flatMap((t) => parseText(t, 'x.yaml').manifests);
    const retained = (id: string) =>
      manifests.map((m) => RULES.find((r) => r.id === id)!.retain!(m)).filter((o): o is Record<string, unknown> => o !== undefined);
    // The gate rule keeps only users of gated features and install manifests (none here): not the plain Deployment
    // and Namespace, nor the AdvancedCronJob, whose feature needs no gate.
    expect(retained('KRUISE-GATE-001').map((o) => o.kind)).toEqual(['Job', 'SidecarSet', 'SidecarSet', 'SidecarSet']);
    expect(retained('KRUISE-SIDECARSET-005').map((o) => o.kind)).toEqual(['SidecarSet', 'SidecarSet', 'SidecarSet']);
    // The selector rule keeps workloads as their pods' labels and their own labels (the runtime's are skipped).
    expect(retained('KRUISE-SIDECARSET-007').find((o) => o.kind === 'Deployment')).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'team' },
      spec: { template: { metadata: { labels: { app: 'web' } } } },
    });
    expect(retained('KRUISE-SIDECARSET-007').map((o) => o.kind)).toEqual([
      'Namespace',
      'Deployment',
      'Job',
      'AdvancedCronJob',
      'SidecarSet',
      'SidecarSet',
      'SidecarSet',
    ]);
    // Workloads are kept as their pods' labels and container names.
    const web = retained('KRUISE-SIDECARSET-002').find((o) => o.kind === 'Deployment')!;
    expect(web).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'team' },
      spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app' }] } } },
    });
  });

  it('every rule runs per document or declares what it retains, so no rule holds a whole large input', () => {
    const holdingAll = RULES.filter((r) => !PER_DOCUMENT_RULES.has(r.id) && !r.retain).map((r) => r.id);
    expect(holdingAll, 'add the rule to PER_DOCUMENT_RULES (engine.ts) or give it a retain').toEqual([]);
  });
});

// The upstream conformance tier: OpenKruise v1.9.1's own e2e suite (built by test/prepare.d/45-upstream-e2e.sh),
// unchanged, against the bundled runtime installed from its image on the real node, with the feature gates upstream's
// own e2e runs turn on (test/conformance/install.ts; restored to dist/'s install afterwards). Each upstream spec file runs
// in its own e2e process (`--ginkgo.focus-file`), and its ginkgo JSON report is compared with
// test/conformance/expectations.yaml: a `pass` spec must pass, an `expected-fail` spec must not (so the list only
// shrinks), and every spec of the file must be listed. `npm test` runs the specs marked `ci: true`;
// `npm run test:conformance` (CDK8S_KRUISE_CONFORMANCE=all) runs every spec of every listed file;
// CDK8S_KRUISE_CONFORMANCE_FOCUS=<text> runs only the specs whose name contains the text.
//
// Reports (ginkgo JSON and JUnit, the e2e process's log, a result table) go to
// out/conformance/<run>/, or CDK8S_KRUISE_CONFORMANCE_OUT.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectCacheDir } from '../harness/cache.js';
import { distManifests, installRuntime } from '../harness/runtime-install.js';
import { tierManifests } from '../conformance/install.js';
import {
  compare,
  ginkgoArgs,
  loadExpectations,
  resultTable,
  selected,
  specResults,
  type FileExpectation,
  type Mode,
} from '../conformance/tier.js';
import { node } from './support.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const focus = process.env.CDK8S_KRUISE_CONFORMANCE_FOCUS;
const mode: Mode = focus ? { focus } : process.env.CDK8S_KRUISE_CONFORMANCE === 'all' ? 'all' : 'ci';
const modeName = typeof mode === 'string' ? mode : 'focus';
const expectations = loadExpectations();
const kruiseVersion = /^KRUISE_VERSION=(\S+)$/m.exec(readFileSync(path.join(repoRoot, 'test/kruise-peer/versions.env'), 'utf8'))?.[1];
const binary = process.env.KRUISE_E2E_ASSETS
  ? path.join(process.env.KRUISE_E2E_ASSETS, 'kruise-e2e.test')
  : projectCacheDir('upstream-e2e', kruiseVersion ?? 'unknown', 'kruise-e2e.test');
const outDir =
  process.env.CDK8S_KRUISE_CONFORMANCE_OUT ??
  path.join(repoRoot, 'out', 'conformance', `${new Date().toISOString().replace(/[:.]/g, '-')}-${modeName}`);
/**
 * With a focus: only the listed files whose path contains this (`apps/v1beta1/`: one API version's same-named specs);
 * `a|b` keeps the files containing either.
 */
const fileFilter = process.env.CDK8S_KRUISE_CONFORMANCE_FILE?.split('|').filter((part) => part.length > 0);
/** Spec files run side by side (each one e2e process); a file marked serial runs alone. */
const parallel = Math.max(1, Number(process.env.CDK8S_KRUISE_CONFORMANCE_PARALLEL ?? 3) || 1);
/** ginkgo's own deadline for one file's run; the vitest timeout leaves room for its reports. */
const fileTimeoutMin = mode === 'ci' ? 15 : 100;

beforeAll(async () => {
  if (!existsSync(binary)) throw new Error(`the upstream e2e suite is not built (${binary}); run bash test/prepare.d/45-upstream-e2e.sh`);
  mkdirSync(outDir, { recursive: true });
  // Applied over any runtime an earlier suite of the run installed, so the specs always meet the tier's gates.
  const t = await installRuntime(node(), tierManifests(), { reapply: true });
  console.log(`[conformance] runtime installed with the tier's gates (image ${t.imageMs} ms, rollout ${t.rolloutMs} ms)`);
}, 900_000);

// The suites after this one expect dist/'s install (its gates), which they do not reapply over an existing runtime.
afterAll(async () => {
  await installRuntime(node(), distManifests(), { reapply: true });
}, 900_000);

/** Runs one file's specs in an e2e process of its own; resolves with the report path and the process's exit code. */
function runFile(file: FileExpectation): Promise<{ json: string; code: number | null; log: string }> {
  const base = path.join(outDir, file.file.replace(/[/.]/g, '_'));
  const reports = { json: `${base}.json`, junit: `${base}.junit.xml` };
  const log = `${base}.log`;
  const out = createWriteStream(log);
  const child = spawn(binary, ginkgoArgs(file, mode, reports, `${fileTimeoutMin}m`), {
    // The suite finds the cluster only through $KUBECONFIG.
    env: { ...process.env, KUBECONFIG: node().kubeconfig },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      out.end(() => resolve({ json: reports.json, code, log }));
    });
  });
}

/**
 * At most `parallel` files at once; a serial file waits for an empty slot set and holds all of them. The v1alpha1
 * and v1beta1 copies of one spec file never run side by side: their specs create the same cluster-scoped objects
 * (SidecarSets selecting the same labels), so each copy would act on the other's pods.
 */
const slots = { busy: 0, twins: new Set<string>(), waiting: [] as (() => void)[] };
const twinKey = (file: FileExpectation) => file.file.replace(/\/v1(alpha1|beta1)\//, '/');
async function withSlot<T>(file: FileExpectation, work: () => Promise<T>): Promise<T> {
  const need = file.serial ? parallel : 1;
  const twin = twinKey(file);
  while (slots.busy + need > parallel || slots.twins.has(twin)) await new Promise<void>((r) => slots.waiting.push(r));
  slots.busy += need;
  slots.twins.add(twin);
  try {
    return await work();
  } finally {
    slots.busy -= need;
    slots.twins.delete(twin);
    for (const wake of slots.waiting.splice(0)) wake();
  }
}

// Serial files first, then the rest side by side.
const ordered = [...expectations.files]
  .filter((f) => (mode === 'ci' ? !f.ciExcluded : mode === 'all' || f.specs.some((s) => selected(s, mode))))
  .filter((f) => typeof mode === 'string' || fileFilter === undefined || fileFilter.some((part) => f.file.includes(part)))
  .sort((a, b) => Number(b.serial ?? false) - Number(a.serial ?? false));

describe.concurrent(`upstream OpenKruise ${kruiseVersion} e2e suite against the bundled runtime (${modeName})`, () => {
  for (const file of ordered) {
    it(
      file.file,
      async () => {
        const { json, code, log } = await withSlot(file, () => runFile(file));
        if (!existsSync(json))
          throw new Error(`${file.file}: the e2e process (exit ${code}) wrote no report; its log: ${log}\n${tail(log)}`);
        const results = specResults(readFileSync(json, 'utf8'), file.file);
        const { problems, ran, passed } = compare(file, results, mode);
        const table = resultTable(file, results);
        writeFileSync(json.replace(/\.json$/, '.table.md'), `${table}\n`);
        console.log(`[conformance] ${file.file}: ${passed}/${ran} passed (log ${log})\n${table}`);
        expect(ran, `${file.file}: no spec ran (log ${log})`).toBeGreaterThan(0);
        expect(problems, `log: ${log}`).toEqual([]);
      },
      (fileTimeoutMin + 10) * 60_000 * (mode === 'ci' ? 2 : 3),
    );
  }
});

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

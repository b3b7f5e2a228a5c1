// `validate` throughput on 10,000 documents against the `yaml` package's parseAllDocuments of the same input,
// measured in the same run (target: ratio below 1.0, i.e. validating is faster than that parser merely reading
// the text). The input is one multi-document YAML stream as `cdk8s synth` writes it: CloneSets with exit
// priorities, Jobs with sidecar markers, SidecarSets, ImagePullJobs, Deployments and ConfigMaps; 1% of the
// documents carry a mistake so the line-recovery path runs too. Also shown for scale: js-yaml loadAll and
// JSON.parse of the same documents. Interleaved repetitions after warm-up; medians.
// Usage: npm run bench:validate [-- --docs N --reps R --json]
import { loadAll } from 'js-yaml';
import { parseAllDocuments } from 'yaml';
import { validateInputs } from '../src/policy/engine.js';
import { benchArgs, median, ratio, timeVariants } from './lib.js';
import { recordBench } from './record.js';
import { validateInput } from './support/validate-docs.js';

const args = benchArgs({ docs: 10000, reps: 7, warmup: 2 });
const N = args.docs;
const REPS = args.reps;
const WARMUP = args.warmup;

const { objects, text } = validateInput(N);
const bytes = new TextEncoder().encode(text);
const jsonTexts = objects.map((o) => JSON.stringify(o));

let findings = 0;
const candidates: Record<string, () => number> = {
  'yaml parseAllDocuments (baseline)': () => parseAllDocuments(text).length,
  'cdk8s-kruise validate': () => {
    const r = validateInputs([{ file: 'bench.yaml', content: bytes }]);
    if (r.documents !== N) throw new Error(`validated ${r.documents} documents, expected ${N}`);
    return (findings = r.findings.length);
  },
  'js-yaml loadAll': () => loadAll(text).length,
  'JSON.parse per document': () => jsonTexts.reduce((n, t) => n + (JSON.parse(t) ? 1 : 0), 0),
};

const times = timeVariants(candidates, { warmup: WARMUP, reps: REPS });
const base = median(times['yaml parseAllDocuments (baseline)']!);
const rows = Object.entries(times).map(([name, xs]) => {
  const ms = median(xs);
  return { name, ms: Number(ms.toFixed(1)), docsPerSecond: Math.round((N / ms) * 1000), ratioToYamlParse: ratio(ms, base, 3) };
});
const validateRow = rows.find((r) => r.name === 'cdk8s-kruise validate')!;
await recordBench('bench:validate', [
  {
    measure: `in-process validate of ${N} documents (${(bytes.length / 1e6).toFixed(1)} MB of YAML, ${findings} findings), every rule`,
    figure: `${validateRow.ms} ms (${validateRow.docsPerSecond} documents/s)`,
    peer: `${validateRow.ratioToYamlParse}x yaml parseAllDocuments alone (target < 1.0x)`,
  },
]);
if (args.json) {
  console.log(JSON.stringify({ docs: N, bytes: bytes.length, reps: REPS, findings, rows }, null, 2));
} else {
  console.log(
    `validate benchmark: ${N} documents, ${(bytes.length / 1e6).toFixed(1)} MB of YAML, ${findings} findings, median of ${REPS} runs`,
  );
  for (const r of rows)
    console.log(
      `  ${r.name.padEnd(36)} ${String(r.ms).padStart(9)} ms  ${String(r.docsPerSecond).padStart(9)} docs/s  ratio ${r.ratioToYamlParse}`,
    );
  console.log(
    `validate / yaml.parseAllDocuments = ${validateRow.ratioToYamlParse} (target < 1.0: ${validateRow.ratioToYamlParse < 1 ? 'met' : 'NOT met'})`,
  );
}

// Validator throughput: validateObject() on representative CloneSets (already parsed), against
// baselines measured in the same run on the same documents: JSON.parse of each document's JSON
// text, js-yaml loadAll and yaml parseAllDocuments of the multi-document YAML text. Interleaved
// repetitions after warm-up; medians reported. Usage: npm run bench:api [-- --docs N --reps R --json]
import { loadAll } from 'js-yaml';
import { parseAllDocuments, stringify } from 'yaml';
import { CloneSetDefinition, validateObject, validatorFor } from '../src/api/index.js';
import { benchArgs, median, ratio, repeat, timeMs } from './lib.js';
import { recordBench } from './record.js';

const args = benchArgs({ docs: 10000, reps: 7, warmup: 2 });
const N = args.docs;
const REPS = args.reps;
const WARMUP = args.warmup;

/** A CloneSet as the examples emit it: 3 containers, probes, resources, lifecycle, PVC template. */
function cloneSet(i: number): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: `web-${i}`, namespace: `team-${i % 20}`, labels: { app: `web-${i}` } },
    spec: {
      replicas: 1 + (i % 5),
      selector: { matchLabels: { app: `web-${i}` } },
      template: {
        metadata: { labels: { app: `web-${i}` }, annotations: { 'kruise.io/container-exit-priority': '{"log-agent":1,"envoy":2}' } },
        spec: {
          automountServiceAccountToken: false,
          containers: [
            {
              name: 'app',
              image: `example.io/app-${i % 50}:1.0.${i}`,
              ports: [{ containerPort: 8080 }],
              env: [{ name: 'INDEX', value: String(i) }],
              readinessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, failureThreshold: 3 },
              resources: { limits: { cpu: '1500m', memory: '2048Mi' }, requests: { cpu: '1000m', memory: '512Mi' } },
              securityContext: { allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, runAsNonRoot: true },
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
            { name: 'log-agent', image: 'fluent/fluent-bit:3.0', resources: { limits: { cpu: '100m' } } },
            { name: 'envoy', image: 'envoyproxy/envoy:v1.30.1', ports: [{ containerPort: 15001 }] },
          ],
          dnsPolicy: 'ClusterFirst',
          restartPolicy: 'Always',
          securityContext: { fsGroupChangePolicy: 'Always', runAsNonRoot: true },
          volumes: [{ name: 'tmp', emptyDir: {} }],
        },
      },
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      ],
      updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '20%', partition: 0 },
      scaleStrategy: { disablePVCReuse: i % 2 === 0 },
      lifecycle: { preNormal: { finalizersHandler: ['example.io/unready-blocker'] } },
    },
  };
}

const objects = Array.from({ length: N }, (_, i) => cloneSet(i));
/** Same documents with a typo in every tenth one: measures the error path (messages, hints). */
const withTypos = objects.map((o, i) => {
  if (i % 10 !== 0) return o;
  const c = structuredClone(o) as { spec: { updateStrategy: Record<string, unknown> } };
  c.spec.updateStrategy.maxUnavaliable = 1;
  return c;
});
const jsonTexts = objects.map((o) => JSON.stringify(o));
const yamlText = objects.map((o) => stringify(o)).join('---\n');

let sink = 0;
const variants: Record<string, () => void> = {
  validate: () => {
    for (const o of objects) sink += validateObject(o).issues.length;
  },
  'validate, 10% with a typo': () => {
    for (const o of withTypos) sink += validateObject(o).issues.length;
  },
  'JSON.parse': () => {
    for (const t of jsonTexts) sink += (JSON.parse(t) as object) ? 1 : 0;
  },
  'js-yaml loadAll': () => {
    loadAll(yamlText, () => sink++);
  },
  'yaml parseAllDocuments': () => {
    sink += parseAllDocuments(yamlText).length;
  },
};

const compileMs = timeMs(() => validatorFor(CloneSetDefinition));
if (sink < 0 || validateObject(objects[0]).issues.length) throw new Error('benchmark document is invalid');
const samples = repeat(Object.keys(variants), { warmup: WARMUP, reps: REPS }, (name) => timeMs(variants[name]!));
const med = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
const result = {
  docs: N,
  reps: REPS,
  compileMs: Math.round(compileMs),
  bytesPerDocYaml: Math.round(yamlText.length / N),
  docsPerSecond: Object.fromEntries(Object.entries(med).map(([k, ms]) => [k, Math.round((N / ms) * 1000)])),
  ratios: {
    'validate / JSON.parse': ratio(med.validate!, med['JSON.parse']!, 3),
    'validate (10% typos) / JSON.parse': ratio(med['validate, 10% with a typo']!, med['JSON.parse']!, 3),
    'validate / js-yaml loadAll': ratio(med.validate!, med['js-yaml loadAll']!, 3),
    'validate / yaml parseAllDocuments': ratio(med.validate!, med['yaml parseAllDocuments']!, 3),
  },
};
await recordBench('bench:api', [
  {
    measure: `API model validator on ${N} CloneSets (valid; 10% with a typo)`,
    figure: `${result.docsPerSecond.validate} / ${result.docsPerSecond['validate, 10% with a typo']} documents/s; first compile ${result.compileMs} ms`,
    peer: `${result.ratios['validate / JSON.parse']}x / ${result.ratios['validate (10% typos) / JSON.parse']}x JSON.parse, ${result.ratios['validate / js-yaml loadAll']}x js-yaml loadAll (time)`,
  },
]);
if (args.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  process.stdout.write(`validator benchmark: ${N} CloneSets (~${result.bytesPerDocYaml} B YAML each), median of ${REPS}\n`);
  process.stdout.write(`  first compile of the CloneSet validator: ${result.compileMs} ms\n`);
  for (const [k, v] of Object.entries(result.docsPerSecond)) process.stdout.write(`  ${k.padEnd(27)} ${String(v).padStart(9)} docs/s\n`);
  for (const [k, v] of Object.entries(result.ratios)) process.stdout.write(`  ${k.padEnd(37)} ${v}× time\n`);
}

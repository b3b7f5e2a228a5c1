// `validate` throughput on 10,000 documents against the `yaml` package's parseAllDocuments of the same input,
// measured in the same run (target: ratio below 1.0, i.e. validating is faster than that parser merely reading
// the text). The input is one multi-document YAML stream as `cdk8s synth` writes it: CloneSets with exit
// priorities, Jobs with sidecar markers, SidecarSets, ImagePullJobs, Deployments and ConfigMaps; 1% of the
// documents carry a mistake so the line-recovery path runs too. Also shown for scale: js-yaml loadAll and
// JSON.parse of the same documents. Interleaved repetitions after warm-up; medians.
// Usage: npm run bench:validate [-- --docs N --reps R --json]
import { loadAll } from 'js-yaml';
import { parseAllDocuments, stringify } from 'yaml';
import { validateInputs } from '../src/policy/engine.js';
import { benchArgs, median, ratio, timeVariants } from './lib.js';

const args = benchArgs({ docs: 10000, reps: 7, warmup: 2 });
const N = args.docs;
const REPS = args.reps;
const WARMUP = args.warmup;

const container = (name: string, image: string, env: Array<{ name: string; value: string }> = []) => ({
  name,
  image,
  ...(env.length ? { env } : {}),
  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
  securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
});

function doc(i: number): Record<string, unknown> {
  const ns = `team-${i % 20}`;
  const broken = Math.floor(i / 6) % 100 === 50; // 1% of each kind carries a mistake
  switch (i % 6) {
    case 0:
      return {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: `web-${i}`, namespace: ns, labels: { app: `web-${i}` } },
        spec: {
          replicas: 1 + (i % 5),
          selector: { matchLabels: { app: `web-${i}` } },
          updateStrategy: { type: 'InPlaceIfPossible', [broken ? 'maxUnavaliable' : 'maxUnavailable']: 1 },
          lifecycle: { preNormal: { finalizersHandler: ['example.io/unready-blocker'] } },
          template: {
            metadata: { labels: { app: `web-${i}` }, annotations: { 'kruise.io/container-exit-priority': '{"log-agent":1,"envoy":2}' } },
            spec: {
              containers: [
                {
                  ...container('app', `example.io/app-${i % 50}:1.0.${i}`),
                  ports: [{ containerPort: 8080 }],
                  readinessProbe: { httpGet: { path: '/healthz', port: 8080 } },
                },
                container('log-agent', 'fluent/fluent-bit:3.0'),
                container('envoy', 'envoyproxy/envoy:v1.30.0'),
              ],
            },
          },
        },
      };
    case 1:
      return {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: `job-${i}`, namespace: ns },
        spec: {
          backoffLimit: 2,
          template: {
            spec: {
              restartPolicy: broken ? 'Always' : 'Never',
              containers: [
                container('main', 'busybox:1.36'),
                container('log-agent', 'fluent/fluent-bit:3.0', [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }]),
              ],
            },
          },
        },
      };
    case 2:
      return {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: `logtail-${i}` },
        spec: {
          selector: { matchLabels: { app: `webserver-${i}` } },
          updateStrategy: { type: 'RollingUpdate', maxUnavailable: broken ? 0 : 1 },
          containers: [{ ...container('logtail', 'example.io/logtail:1.0'), volumeMounts: [{ name: 'log', mountPath: '/var/log' }] }],
          volumes: [{ name: 'log', emptyDir: {} }],
        },
      };
    case 3:
      return {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ImagePullJob',
        metadata: { name: `pull-${i}`, namespace: ns },
        spec: {
          image: `nginx:1.${i % 30}.1`,
          parallelism: broken ? '50%' : 10,
          pullPolicy: { timeoutSeconds: 300, backoffLimit: 3 },
          completionPolicy: { type: 'Always', activeDeadlineSeconds: 1200, ttlSecondsAfterFinished: 300 },
          sandboxConfig: {
            annotations: { 'io.kubernetes.image.metrics.tags': 'cluster=cn-shanghai' },
            labels: { 'io.kubernetes.image.app': 'foo' },
          },
        },
      };
    case 4:
      return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: `api-${i}`, namespace: ns, labels: { app: `api-${i}` } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: `api-${i}` } },
          template: { metadata: { labels: { app: `api-${i}` } }, spec: { containers: [container('api', `example.io/api:${i}`)] } },
        },
      };
    default:
      return {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cfg-${i}`, namespace: ns },
        data: { 'app.properties': `key=${i}\nother=value\n` },
      };
  }
}

const objects = Array.from({ length: N }, (_, i) => doc(i));
const text = objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
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

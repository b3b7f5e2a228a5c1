// CPU per review of the pod webhook's answer path, in process and load-independent: the review body the API
// server sends for the pod-webhook-peer bench's pod is parsed (parseAdmissionReview), run through the composed
// `/mutate-pod` chain (every pod mutator, SidecarSet injection with the bench's SidecarSet in a fake cache) and
// answered (AdmissionReview JSON with the base64 patch). No TLS, no HTTP, no controllers: those are measured
// by bench/pod-webhook-peer.bench.ts. Use it to judge a change to the hot path by CPU microseconds per review.
// Usage: npm run bench:pod-webhook-cpu [-- --reviews 20000 --json]
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { ControllerContext } from '../src/runtime/core/controller.js';
import { composeAdmission } from '../src/runtime/core/webhook/compose.js';
import { parseAdmissionReview } from '../src/runtime/core/webhook/review.js';
import { ADMISSION_API_VERSION, ADMISSION_KIND } from '../src/runtime/core/webhook/review.js';
import { admissionResponse, type AdmissionResult } from '../src/runtime/core/webhook/server.js';
import { POD_MUTATORS } from '../src/runtime/manager/registry.js';
import { NAMESPACES, SIDECARSETS, POD_MUTATING_PATH } from '../src/contracts/index.js';
import { benchArgs } from './lib.js';
import { recordBench } from './record.js';
import { BENCH_SIDECARSET_NAME, BENCH_SIDECARSET_SPEC } from './support/pod-webhook-fixtures.js';

const args = benchArgs({ reviews: 20_000 }, {});
const SET = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: BENCH_SIDECARSET_NAME, uid: 'u1', generation: 1, resourceVersion: '1' },
  spec: BENCH_SIDECARSET_SPEC,
};
const informer = (items: object[]) => ({
  list: () => items,
  get: (key: string) => items.find((o) => (o as { metadata: { name: string } }).metadata.name === key),
  addHandlers: () => undefined,
});
const ctx = {
  featureGates: new Map([
    ['PodWebhook', true],
    ['ContainerExitPriority', true],
  ]),
  informers: {
    for: (resource: unknown) =>
      informer(resource === SIDECARSETS ? [SET] : resource === NAMESPACES ? [{ metadata: { name: 'bench', labels: {} } }] : []),
  },
  options: { get: () => 'kruise-system' },
  client: {},
} as unknown as ControllerContext;
const handler = composeAdmission(POD_MUTATORS.flatMap((d) => d.setup(ctx))).find((h) => h.path === POD_MUTATING_PATH)!;

// A review as kube-apiserver v1.35 sends it for the bench's pod after defaulting (fields it adds included).
function body(i: number): string {
  const pod = {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { name: `p-${i}`, namespace: 'bench', labels: { app: 'bench' }, creationTimestamp: null },
    spec: {
      volumes: [{ name: 'data', emptyDir: {} }],
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          env: [{ name: 'REGION', value: 'eu' }],
          resources: {},
          volumeMounts: [
            { name: 'data', mountPath: '/data' },
            { name: 'kube-api-access-abcde', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
          ],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {},
  };
  return JSON.stringify({
    kind: ADMISSION_KIND,
    apiVersion: ADMISSION_API_VERSION,
    request: {
      uid: randomUUID(),
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'bench',
      operation: 'CREATE',
      userInfo: { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  });
}

async function review(text: string): Promise<string> {
  const parsed = parseAdmissionReview(text);
  if (!parsed.ok) throw new Error(parsed.message);
  const result: AdmissionResult = await handler.handle(parsed.request);
  if (!result.allowed || result.patch === undefined) throw new Error('pod not injected');
  return JSON.stringify({
    apiVersion: ADMISSION_API_VERSION,
    kind: ADMISSION_KIND,
    response: admissionResponse(parsed.request.uid, result),
  });
}

const bodies = Array.from({ length: 256 }, (_, i) => Buffer.from(body(i)));
for (let i = 0; i < 2000; i++) await review(bodies[i % bodies.length]!.toString('utf8')); // warm-up
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < args.reviews; i++) await review(bodies[i % bodies.length]!.toString('utf8'));
const cpu = process.cpuUsage(cpu0);
const out = {
  reviews: args.reviews,
  cpuUsPerReview: Math.round(((cpu.user + cpu.system) / args.reviews) * 10) / 10,
  wallUsPerReview: Math.round(((performance.now() - t0) * 1000) / args.reviews) / 1,
  bodyBytes: bodies[0]!.length,
  load1: Math.round(loadavg()[0]! * 100) / 100,
};
await recordBench('bench:pod-webhook-cpu', [
  {
    measure: 'pod webhook answer path in process (parse → every pod mutator → JSON patch → answer): CPU, wall per review',
    figure: `${(out.cpuUsPerReview / 1000).toFixed(3)} ms, ${(out.wallUsPerReview / 1000).toFixed(3)} ms`,
    peer: '(no peer: the figure isolates our share of bench:pod-webhook-peer)',
  },
]);
console.log(args.json ? JSON.stringify(out) : `pod webhook answer path: ${JSON.stringify(out)}`);

// The 10,000-document input the validate benches share: one multi-document YAML stream as `cdk8s synth` writes it:
// CloneSets with exit priorities, Jobs with sidecar markers, SidecarSets, ImagePullJobs, Deployments and ConfigMaps;
// 1% of the documents (of each kind but ConfigMap) carry a mistake.
import { stringify } from 'yaml';

const container = (name: string, image: string, env: Array<{ name: string; value: string }> = []) => ({
  name,
  image,
  ...(env.length ? { env } : {}),
  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
  securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
});

/** Document `i` of the input (deterministic). */
export function doc(i: number): Record<string, unknown> {
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

/** The first `n` documents, one YAML stream (documents separated by `---`). */
export function validateInput(n: number): { readonly objects: Array<Record<string, unknown>>; readonly text: string } {
  const objects = Array.from({ length: n }, (_, i) => doc(i));
  return { objects, text: objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n') };
}

// Job pods as the sidecar-terminator benches create them (realistic specs: labels, annotations, env,
// resources, mounts, projected volume, tolerations), their kubelet-style statuses, and a small pool.
import { readFileSync } from 'node:fs';
import { ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT } from '../../src/api/pod-contracts.js';
import type { Pod } from '../../src/runtime/core/index.js';

export async function pool<T>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** A pod like a real Job pod: labels, annotations, env, resources, mounts, volumes, tolerations. */
export function jobPod(name: string, namespace: string, nodeName: string | undefined, sidecar: boolean): Pod {
  const env = Array.from({ length: 6 }, (_, i) => ({ name: `SETTING_${i}`, value: `value-${i}-${name}` }));
  const mounts = [
    { name: 'data', mountPath: '/data' },
    { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
  ];
  const resources = { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { app: 'batch', 'batch.kubernetes.io/job-name': name.replace(/-\d+$/, ''), 'controller-uid': `uid-${name}` },
      annotations: { 'example.io/owner': 'team-a', 'example.io/cost-center': '1234', 'example.io/trace': `trace-${name}` },
    },
    spec: {
      restartPolicy: sidecar ? 'Never' : 'Always',
      serviceAccountName: 'default',
      ...(nodeName ? { nodeName } : {}),
      containers: [
        { name: 'app', image: 'registry.example.io/batch/app:1.2.3', args: ['--run', name], env, resources, volumeMounts: mounts },
        {
          name: 'envoy',
          image: 'registry.example.io/mesh/envoy:1.30',
          env: [...env.slice(0, 2), ...(sidecar ? [{ name: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: 'true' }] : [])],
          resources,
          volumeMounts: mounts,
          ports: [{ containerPort: 15001, name: 'proxy' }],
        },
      ],
      volumes: [
        { name: 'data', emptyDir: {} },
        {
          name: 'kube-api-access',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
          },
        },
      ],
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    },
  };
}

export function statusOf(appState: object): object {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    status: {
      phase: 'Running',
      startTime: now,
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: now }],
      containerStatuses: [
        {
          name: 'app',
          image: 'registry.example.io/batch/app:1.2.3',
          imageID: '',
          ready: false,
          restartCount: 0,
          containerID: 'containerd://app',
          state: appState,
        },
        {
          name: 'envoy',
          image: 'registry.example.io/mesh/envoy:1.30',
          imageID: '',
          ready: true,
          restartCount: 0,
          containerID: 'containerd://envoy',
          state: { running: { startedAt: now } },
        },
      ],
    },
  };
}

/**
 * The status a kubelet writes for a Running pod whose containers all started and are ready: conditions, host and pod
 * IPs (unique per `index`), container states with image digests and IDs. As a `{ status }` body for the status
 * subresource.
 */
export function runningStatus(
  pod: Pod,
  index: number,
  at = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
): { status: NonNullable<Pod['status']> } {
  const ip = (base: number) => `10.${base + (index >> 16)}.${(index >> 8) & 255}.${index & 255}`;
  const uid = pod.metadata.uid ?? `${index}`;
  return {
    status: {
      phase: 'Running',
      hostIP: ip(0),
      hostIPs: [{ ip: ip(0) }],
      podIP: ip(100),
      podIPs: [{ ip: ip(100) }],
      startTime: at,
      qosClass: 'Burstable',
      conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: at,
      })),
      containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
        name: c.name,
        image: c.image,
        imageID: `${c.image!.split(':')[0]}@sha256:${'0123456789abcdef'.repeat(4)}`,
        containerID: `containerd://${uid.replace(/-/g, '')}${c.name}`,
        ready: true,
        restartCount: 0,
        started: true,
        state: { running: { startedAt: at } },
      })),
    },
  };
}

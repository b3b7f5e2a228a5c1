import { posix } from 'node:path';
import type { KubeObject } from './types.js';
import { DAEMON_SELECTOR, NAMES, PORTS, meta, type InstallSpec } from './spec.js';
import { TMP_MOUNT, TMP_VOLUME, podSecurityContext, restrictedContainerSecurityContext } from './pod-security.js';

/**
 * Flags of `cdk8s-kruise daemon` as the install passes them (the contract with src/cli/commands/daemon.ts).
 * - `--cri-socket`: the socket path inside the pod when the user named one.
 * - `--cri-host-run-dir`: where the host's /run (= /var/run) is mounted when probing: the daemon maps its
 *   default candidates (/run/containerd/containerd.sock, /var/run/crio/crio.sock, ...) under this dir.
 */
export const DAEMON_FLAGS = {
  healthAddr: '--health-addr',
  criSocket: '--cri-socket',
  criHostRunDir: '--cri-host-run-dir',
  featureGates: '--feature-gates',
  logLevel: '--log-level',
} as const;

/** Where the host's /var/run is mounted for probing (upstream's path, so its docs still apply). */
export const HOST_RUN_MOUNT = '/hostvarrun';
/** Where the directory of a user-named CRI socket is mounted. */
export const CRI_SOCKET_MOUNT = '/host-cri';

/** Host volume, mount and flag for the CRI socket: the named socket's directory, or /var/run for probing. */
export function criSocketWiring(criSocket: string | undefined): { volume: Record<string, unknown>; mount: Record<string, unknown>; flag: string } {
  if (criSocket === undefined) {
    return {
      volume: { name: 'host-run', hostPath: { path: '/var/run', type: 'Directory' } },
      // Read-only is enough: connect(2) on a socket does not write to the filesystem.
      mount: { name: 'host-run', mountPath: HOST_RUN_MOUNT, readOnly: true },
      flag: `${DAEMON_FLAGS.criHostRunDir}=${HOST_RUN_MOUNT}`,
    };
  }
  return {
    volume: { name: 'cri-socket-dir', hostPath: { path: posix.dirname(criSocket), type: 'Directory' } },
    mount: { name: 'cri-socket-dir', mountPath: CRI_SOCKET_MOUNT, readOnly: true },
    flag: `${DAEMON_FLAGS.criSocket}=${CRI_SOCKET_MOUNT}/${posix.basename(criSocket)}`,
  };
}

/** The node daemon: one pod per node (virtual-kubelet nodes excluded), talking CRI over the host socket. */
export function daemonSet(spec: InstallSpec): KubeObject | undefined {
  const d = spec.daemon;
  if (!d) return undefined;
  const cri = criSocketWiring(d.criSocket);
  // Without a socket group the CRI socket (root:root 0660) is only reachable as uid 0; all capabilities
  // stay dropped, so root here grants file ownership only, not privileges.
  const runAsRoot = d.criSocketGroup === undefined;
  const podLabels = { ...DAEMON_SELECTOR, 'app.kubernetes.io/name': 'cdk8s-kruise', 'app.kubernetes.io/component': 'daemon' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: meta(spec, NAMES.daemonSet, true, DAEMON_SELECTOR) as KubeObject['metadata'],
    spec: {
      selector: { matchLabels: { ...DAEMON_SELECTOR } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } },
      minReadySeconds: 3,
      revisionHistoryLimit: 5,
      template: {
        metadata: { labels: podLabels },
        spec: {
          serviceAccountName: NAMES.daemonServiceAccount,
          automountServiceAccountToken: true,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 10,
          securityContext: podSecurityContext({ runAsRoot, supplementalGroups: runAsRoot ? [] : [d.criSocketGroup!] }),
          ...(spec.imagePullSecrets.length ? { imagePullSecrets: spec.imagePullSecrets.map((name) => ({ name })) } : {}),
          ...(d.priorityClassName ? { priorityClassName: d.priorityClassName } : {}),
          // Runs on every real node whatever its taints, never on virtual-kubelet nodes (no CRI there).
          tolerations: [{ operator: 'Exists' }],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
                      { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
                    ],
                  },
                ],
              },
            },
          },
          containers: [
            {
              name: 'daemon',
              image: spec.image,
              imagePullPolicy: spec.imagePullPolicy,
              command: ['cdk8s-kruise'],
              args: [
                'daemon',
                `${DAEMON_FLAGS.healthAddr}=:${PORTS.daemonHealth}`,
                cri.flag,
                ...(spec.featureGates ? [`${DAEMON_FLAGS.featureGates}=${spec.featureGates}`] : []),
                `${DAEMON_FLAGS.logLevel}=${d.logLevel}`,
              ],
              env: [
                { name: 'NODE_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
              ],
              ports: [{ name: 'health', containerPort: PORTS.daemonHealth, protocol: 'TCP' }],
              livenessProbe: { httpGet: { path: '/healthz', port: 'health' }, initialDelaySeconds: 30, periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 3 },
              readinessProbe: { httpGet: { path: '/healthz', port: 'health' }, periodSeconds: 10, timeoutSeconds: 2 },
              resources: d.resources,
              securityContext: restrictedContainerSecurityContext(runAsRoot),
              volumeMounts: [cri.mount, TMP_MOUNT],
            },
          ],
          volumes: [cri.volume, TMP_VOLUME],
        },
      },
    },
  };
}

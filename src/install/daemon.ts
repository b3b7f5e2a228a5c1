import { posix } from 'node:path';
import type { KubeObject } from './types.js';
import { DAEMON_EXIT_PRIORITY_PORT } from '../contracts/names.js';
import { DAEMON_SELECTOR, NAMES, PORTS, meta, type InstallSpec } from './spec.js';
import { TMP_MOUNT, TMP_VOLUME, podSecurityContext, restrictedContainerSecurityContext } from './pod-security.js';

/**
 * Flags of `cdk8s-kruise daemon` as the install passes them (the contract with src/cli/commands/daemon.ts).
 */
export const DAEMON_FLAGS = {
  healthProbeAddr: '--health-probe-addr',
  criSocket: '--cri-socket',
  configNamespace: '--daemon-config-namespace',
  featureGates: '--feature-gates',
  logLevel: '--log-level',
  exitPriorityAddr: '--exit-priority-addr',
} as const;

/** Where the host's /var/run (= /run) is mounted for the well-known CRI sockets (upstream's path). */
export const HOST_RUN_MOUNT = '/hostvarrun';
/** Where the directory of a socket outside /run is mounted. */
export const CRI_SOCKET_MOUNT = '/host-cri';

/**
 * Host volume, mount and flag for the CRI socket. Sockets under /run or /var/run (all the well-known
 * ones) are reached through one read-only mount of the host's /var/run, like upstream; any other path
 * through a read-only mount of its directory.
 */
export function criSocketWiring(criSocket: string): { volume: Record<string, unknown>; mount: Record<string, unknown>; flag: string } {
  const underRun = /^\/(?:var\/)?run\/(.+)$/.exec(criSocket);
  if (underRun) {
    return {
      volume: { name: 'host-run', hostPath: { path: '/var/run', type: 'Directory' } },
      // Read-only is enough: connect(2) on a socket does not write to the filesystem.
      mount: { name: 'host-run', mountPath: HOST_RUN_MOUNT, readOnly: true },
      flag: `${DAEMON_FLAGS.criSocket}=${HOST_RUN_MOUNT}/${underRun[1]}`,
    };
  }
  return {
    volume: { name: 'cri-socket-dir', hostPath: { path: posix.dirname(criSocket), type: 'Directory' } },
    mount: { name: 'cri-socket-dir', mountPath: CRI_SOCKET_MOUNT, readOnly: true },
    flag: `${DAEMON_FLAGS.criSocket}=${CRI_SOCKET_MOUNT}/${posix.basename(criSocket)}`,
  };
}

/** The daemon never runs where there is no CRI (virtual-kubelet nodes) nor on other operating systems. */
const DAEMON_NODE_EXPRESSIONS = [
  { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
  { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
];

/**
 * The daemon's affinity: the user's pod (anti-)affinity and preferred node terms as given; each required node term
 * (ORed by the scheduler) keeps the default expressions, so no term can place the daemon on a node without CRI.
 */
export function daemonAffinity(user: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const nodeAffinity = (user?.nodeAffinity ?? {}) as Record<string, unknown>;
  const required = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution as
    { nodeSelectorTerms?: Record<string, unknown>[] } | undefined;
  const terms = required?.nodeSelectorTerms?.length ? required.nodeSelectorTerms : [{}];
  return {
    ...user,
    nodeAffinity: {
      ...nodeAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: terms.map((t) => ({
          ...t,
          matchExpressions: [...DAEMON_NODE_EXPRESSIONS, ...((t.matchExpressions as unknown[] | undefined) ?? [])],
        })),
      },
    },
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
  const placement = d.placement ?? {};
  const port = d.port ?? PORTS.daemonHealth;
  const hostNetwork = d.exitPriorityEndpoint === true || placement.hostNetwork === true;
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
          // The kubelet sends exit-priority preStop hooks to 127.0.0.1 on the node: only a host-network daemon is there.
          ...(hostNetwork ? { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' } : {}),
          securityContext: podSecurityContext({ runAsRoot, supplementalGroups: runAsRoot ? [] : [d.criSocketGroup!] }),
          ...(spec.imagePullSecrets.length ? { imagePullSecrets: spec.imagePullSecrets.map((name) => ({ name })) } : {}),
          ...(d.priorityClassName ? { priorityClassName: d.priorityClassName } : {}),
          // Runs on every real node whatever its taints, never on virtual-kubelet nodes (no CRI there).
          tolerations: placement.tolerations ?? [{ operator: 'Exists' }],
          ...(placement.nodeSelector && Object.keys(placement.nodeSelector).length > 0
            ? { nodeSelector: { ...placement.nodeSelector } }
            : {}),
          affinity: daemonAffinity(placement.affinity),
          containers: [
            {
              name: 'daemon',
              image: spec.image,
              imagePullPolicy: spec.imagePullPolicy,
              command: ['cdk8s-kruise'],
              args: [
                'daemon',
                `${DAEMON_FLAGS.healthProbeAddr}=:${port}`,
                cri.flag,
                `${DAEMON_FLAGS.configNamespace}=${spec.daemonConfigNamespace}`,
                ...(spec.featureGates ? [`${DAEMON_FLAGS.featureGates}=${spec.featureGates}`] : []),
                `${DAEMON_FLAGS.logLevel}=${d.logLevel}`,
                ...(d.exitPriorityEndpoint ? [`${DAEMON_FLAGS.exitPriorityAddr}=127.0.0.1:${DAEMON_EXIT_PRIORITY_PORT}`] : []),
              ],
              env: [
                { name: 'NODE_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
                ...(placement.extraEnv ?? []),
              ],
              ports: [{ name: 'health', containerPort: port, protocol: 'TCP' }],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'health' },
                initialDelaySeconds: 30,
                periodSeconds: 10,
                timeoutSeconds: 2,
                failureThreshold: 3,
              },
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

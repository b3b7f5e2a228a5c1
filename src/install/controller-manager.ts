import { LEADER_ELECTION_LEASE, MANAGER_MALLOC_ARENA_MAX, managerNodeOptions, WEBHOOK_CERT_SECRET } from '../contracts/index.js';
import type { KubeObject } from './types.js';
import { MANAGER_SELECTOR, NAMES, PORTS, meta, type InstallSpec } from './spec.js';
import { TMP_MOUNT, TMP_VOLUME, podSecurityContext, restrictedContainerSecurityContext } from './pod-security.js';

/**
 * Command-line flags of `cdk8s-kruise controller` as the install passes them. The runtime's CLI
 * (src/cli/commands/controller.ts) must accept exactly these; `CONTROLLER_FLAGS` is the contract.
 */
export const CONTROLLER_FLAGS = {
  leaderElect: '--leader-elect',
  leaderElectionNamespace: '--leader-election-namespace',
  leaderElectionId: '--leader-election-id',
  metricsAddr: '--metrics-addr',
  healthProbeAddr: '--health-probe-addr',
  webhookPort: '--webhook-port',
  webhookService: '--webhook-service',
  webhookCertSecret: '--webhook-cert-secret',
  webhookCertMode: '--webhook-cert-mode',
  featureGates: '--feature-gates',
  logLevel: '--log-level',
} as const;

/** The manager's ports: the spec's, else the defaults (upstream's). */
export function managerPorts(spec: InstallSpec): { webhook: number; metrics: number; health: number } {
  return spec.manager.ports ?? { webhook: PORTS.webhook, metrics: PORTS.metrics, health: PORTS.health };
}

export function controllerArgs(spec: InstallSpec): string[] {
  const f = CONTROLLER_FLAGS;
  const ports = managerPorts(spec);
  return [
    'controller',
    `${f.leaderElect}=true`,
    `${f.leaderElectionNamespace}=${spec.namespace}`,
    `${f.leaderElectionId}=${LEADER_ELECTION_LEASE}`,
    `${f.metricsAddr}=:${ports.metrics}`,
    `${f.healthProbeAddr}=:${ports.health}`,
    `${f.webhookPort}=${ports.webhook}`,
    `${f.webhookService}=${NAMES.webhookService}`,
    `${f.webhookCertSecret}=${WEBHOOK_CERT_SECRET}`,
    `${f.webhookCertMode}=${spec.webhook.certificates.mode}`,
    ...(spec.featureGates ? [`${f.featureGates}=${spec.featureGates}`] : []),
    `${f.logLevel}=${spec.manager.logLevel}`,
  ];
}

/** The controller-manager Deployment: leader-elected replicas spread across hosts and zones. */
export function controllerManagerDeployment(spec: InstallSpec): KubeObject {
  const podLabels = { ...MANAGER_SELECTOR, 'app.kubernetes.io/name': 'cdk8s-kruise', 'app.kubernetes.io/component': 'controller-manager' };
  const ports = managerPorts(spec);
  const placement = spec.manager.placement ?? {};
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(spec, NAMES.managerDeployment, true, MANAGER_SELECTOR) as KubeObject['metadata'],
    spec: {
      replicas: spec.manager.replicas,
      minReadySeconds: 3,
      revisionHistoryLimit: 5,
      // Never below the configured replica count during a rollout: a standby is always ready to lead.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '100%' } },
      selector: { matchLabels: { ...MANAGER_SELECTOR } },
      template: {
        metadata: { labels: podLabels },
        spec: {
          serviceAccountName: NAMES.managerServiceAccount,
          automountServiceAccountToken: true,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 30,
          securityContext: podSecurityContext(),
          ...(spec.imagePullSecrets.length ? { imagePullSecrets: spec.imagePullSecrets.map((name) => ({ name })) } : {}),
          ...(spec.manager.priorityClassName ? { priorityClassName: spec.manager.priorityClassName } : {}),
          ...(placement.hostNetwork ? { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' } : {}),
          nodeSelector: { 'kubernetes.io/os': 'linux', ...placement.nodeSelector },
          ...(placement.tolerations ? { tolerations: placement.tolerations } : {}),
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: { labelSelector: { matchLabels: { ...MANAGER_SELECTOR } }, topologyKey: 'kubernetes.io/hostname' },
                },
              ],
            },
            ...placement.affinity,
          },
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'topology.kubernetes.io/zone',
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: { matchLabels: { ...MANAGER_SELECTOR } },
            },
          ],
          containers: [
            {
              name: 'manager',
              image: spec.image,
              imagePullPolicy: spec.imagePullPolicy,
              command: ['cdk8s-kruise'],
              args: controllerArgs(spec),
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
                // Upstream's variable: where the ImagePullJob controller copies pull secrets (and its Role is bound).
                { name: 'KRUISE_DAEMON_CONFIG_NS', value: spec.daemonConfigNamespace },
                // V8 sizes its heap for the node, not the container: the old space follows the container's memory limit.
                { name: 'NODE_OPTIONS', value: managerNodeOptions(spec.manager.resources.limits?.memory) },
                // Fewer glibc malloc arenas: less resident memory for the same work.
                { name: 'MALLOC_ARENA_MAX', value: MANAGER_MALLOC_ARENA_MAX },
                ...(placement.extraEnv ?? []),
              ],
              ports: [
                { name: 'webhook-server', containerPort: ports.webhook, protocol: 'TCP' },
                { name: 'metrics', containerPort: ports.metrics, protocol: 'TCP' },
                { name: 'health', containerPort: ports.health, protocol: 'TCP' },
              ],
              // readyz waits for caches and the webhook certificate, so a replica that cannot serve
              // admission requests never gets Service traffic.
              readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 3 },
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'health' },
                initialDelaySeconds: 15,
                periodSeconds: 10,
                timeoutSeconds: 2,
                failureThreshold: 3,
              },
              resources: spec.manager.resources,
              securityContext: restrictedContainerSecurityContext(),
              volumeMounts: [TMP_MOUNT],
            },
          ],
          volumes: [TMP_VOLUME],
        },
      },
    },
  };
}

/** Keeps one manager available during node drains (webhooks with failurePolicy Fail depend on it). */
export function controllerManagerPdb(spec: InstallSpec): KubeObject | undefined {
  if (spec.manager.replicas < 2) return undefined;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(spec, NAMES.managerPdb, true) as KubeObject['metadata'],
    spec: { minAvailable: 1, selector: { matchLabels: { ...MANAGER_SELECTOR } } },
  };
}

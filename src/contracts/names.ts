/**
 * Names of the objects an install creates and the runtime finds again: namespaces, ServiceAccounts,
 * Secrets, the Lease, webhook configurations and their paths, ports. Upstream's names, so docs and
 * habits carry over. The install writes them and the runtime reads them from here.
 *
 * @module
 */

/** Default namespace of the manager, the daemon and the webhook Service (upstream's). */
export const DEFAULT_RUNTIME_NAMESPACE = 'kruise-system';
/** Namespace pull secrets are copied into for kruise-daemon (upstream's). */
export const DAEMON_CONFIG_NAMESPACE = 'kruise-daemon-config';

/** Name of the Secret holding the webhook CA and serving certificate (in the runtime namespace). */
export const WEBHOOK_CERT_SECRET = 'kruise-webhook-certs';
/** Names of the admission webhook configurations whose caBundle the manager keeps current. */
export const MUTATING_WEBHOOK_CONFIGURATION = 'kruise-mutating-webhook-configuration';
export const VALIDATING_WEBHOOK_CONFIGURATION = 'kruise-validating-webhook-configuration';
/** The CRD whose conversion webhook's caBundle the manager keeps current too (its versions' schemas differ). */
export const SIDECARSET_CRD = 'sidecarsets.apps.kruise.io';
/** Name of the leader-election Lease (upstream's id). */
export const LEADER_ELECTION_LEASE = 'kruise-manager';
/** ConfigMap in the runtime namespace that holds cluster settings an admin owns (upstream's name). */
export const KRUISE_CONFIGURATION_CONFIGMAP = 'kruise-configuration';
/** Its key with the JSON whitelist of annotation keys SidecarSets may patch into pods (upstream's spelling). */
export const SIDECARSET_PATCH_METADATA_WHITELIST_KEY = 'SidecarSet_PatchPodMetadata_WhiteList';

/** Fixed names of install objects. */
export const NAMES = {
  managerServiceAccount: 'kruise-manager',
  daemonServiceAccount: 'kruise-daemon',
  managerDeployment: 'kruise-controller-manager',
  daemonSet: 'kruise-daemon',
  webhookService: 'kruise-webhook-service',
  managerClusterRole: 'kruise-manager-role',
  managerRole: 'kruise-manager-role',
  managerDaemonConfigRole: 'kruise-manager-secret-role',
  daemonClusterRole: 'kruise-daemon-role',
  daemonRole: 'kruise-daemon-secret-role',
  certificate: 'kruise-webhook-cert',
  managerPdb: 'kruise-controller-manager',
} as const;

/** Ports of the manager (webhook, metrics, health) and the daemon (health). */
export const PORTS = { webhook: 9876, metrics: 8080, health: 8000, daemonHealth: 10221 } as const;

/** Env vars the install sets on the runtime containers and the runtime reads. */
export const RUNTIME_ENV = {
  /** Namespace of the manager pod (downward API). */
  podNamespace: 'POD_NAMESPACE',
  /** Node of the daemon pod (downward API). */
  nodeName: 'NODE_NAME',
  /** Namespace pull secrets are copied into. */
  daemonConfigNamespace: 'KRUISE_DAEMON_CONFIG_NS',
} as const;

/**
 * Admission paths follow controller-runtime's convention, so a handler's path and its registration are
 * derived from the same (group, version, kind).
 */
export const POD_MUTATING_PATH = '/mutate-pod';
/** Path of the CRD conversion endpoint of the manager's webhook server (upstream's). */
export const CONVERSION_PATH = '/convert';
/** Path of the pod validating webhook (PodUnavailableBudget on pod DELETE, UPDATE and eviction), upstream's. */
export const POD_VALIDATING_PATH = '/validate-pod';

/** `/mutate-<group with dots as dashes>-<version>-<kind lowercase>`, or `/validate-...`. */
export function kindWebhookPath(
  op: 'mutate' | 'validate',
  k: { readonly group: string; readonly version: string; readonly kind: string },
): string {
  return `/${op}-${k.group.replace(/\./g, '-')}-${k.version}-${k.kind.toLowerCase()}`;
}

/** Prefix of the CRR the sidecar terminator creates for a pod. */
export const SIDECAR_TERMINATION_CRR_PREFIX = 'sidecar-termination-';

/** Name of the CRR the sidecar terminator creates for a pod: one per pod, so a retry never makes a second. */
export function sidecarTerminationCrrName(podUid: string): string {
  return `${SIDECAR_TERMINATION_CRR_PREFIX}${podUid}`;
}

/**
 * Port of the daemon's exit-priority endpoint on the node's loopback: the kubelet sends the preStop `httpGet`
 * hooks the pod webhook gives prioritised containers there (the daemon runs in the host network then).
 */
export const DAEMON_EXIT_PRIORITY_PORT = 10222;
/** Path prefix of those hooks: `<prefix>/<namespace>/<token>/<container>`. */
export const EXIT_PRIORITY_HOOK_PATH = '/exit-priority/v1';

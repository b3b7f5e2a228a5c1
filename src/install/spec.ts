/**
 * The resolved, plain-data description of one runtime install. The `KruiseRuntime` construct turns its
 * props plus what the app uses into an `InstallSpec`; the builders turn an `InstallSpec` into manifests.
 */

import type { PodFailClosed } from './pod-webhook-needs.js';
import type { MetricsSpec } from './metrics-spec.js';

/** Kubernetes ResourceRequirements as rendered. */
export interface ResourceRequirements {
  requests?: { cpu?: string; memory?: string };
  limits?: { cpu?: string; memory?: string };
}

/** A kind the runtime serves (CRD installed, validating webhook registered). */
export interface ServedKind {
  readonly group: string;
  readonly version: string;
  /** Other versions the CRD serves it at (their objects reach the webhooks as written, not relabelled). */
  readonly alsoServed?: readonly string[];
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

export type CertificateSpec =
  { readonly mode: 'self' } | { readonly mode: 'cert-manager'; readonly issuerKind: string; readonly issuerName: string };

/**
 * Where and how a runtime pod runs, beyond the install's defaults (the chart's nodeSelector, tolerations, affinity,
 * hostNetwork and extra env values). Kubernetes JSON, checked by the construct before it gets here.
 */
export interface PodPlacement {
  /** Added to the default `kubernetes.io/os: linux`. */
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** Replace the default tolerations (none for the manager, tolerate-all for the daemon). */
  readonly tolerations?: readonly Readonly<Record<string, unknown>>[];
  /**
   * Manager: each of nodeAffinity / podAffinity / podAntiAffinity given replaces the default one (host anti-affinity).
   * Daemon: pod (anti-)affinity as given; its required node terms each keep the default exclusion of virtual-kubelet
   * and non-Linux nodes.
   */
  readonly affinity?: Readonly<Record<string, unknown>>;
  /** Run in the host network (dnsPolicy ClusterFirstWithHostNet). */
  readonly hostNetwork?: boolean;
  /** Appended to the container's env (names the install sets itself are refused before). */
  readonly extraEnv?: readonly Readonly<Record<string, unknown>>[];
}

/** The manager's container ports. */
export interface ManagerPorts {
  readonly webhook: number;
  readonly metrics: number;
  readonly health: number;
}

export interface InstallSpec {
  /** Namespace of the manager, the daemon and the webhook Service. */
  readonly namespace: string;
  /** Namespace the manager copies image pull secrets into for the daemon (upstream `kruise-daemon-config`). */
  readonly daemonConfigNamespace: string;
  /** Full image reference; manager and daemon run the same image. */
  readonly image: string;
  readonly imagePullPolicy: 'IfNotPresent' | 'Always' | 'Never';
  readonly imagePullSecrets: readonly string[];
  readonly manager: {
    readonly replicas: number;
    readonly resources: ResourceRequirements;
    readonly logLevel: string;
    readonly priorityClassName?: string;
    readonly placement?: PodPlacement;
    /** @default PORTS (9876, 8080, 8000) */
    readonly ports?: ManagerPorts;
  };
  /** Undefined when the app needs no daemon: then no DaemonSet, daemon RBAC or daemon-config namespace. */
  readonly daemon?: {
    readonly resources: ResourceRequirements;
    /** Host path of the CRI socket. */
    readonly criSocket: string;
    /** Group owning the CRI socket: run the daemon as non-root in that group instead of as uid 0. */
    readonly criSocketGroup?: number;
    readonly logLevel: string;
    readonly priorityClassName?: string;
    /**
     * Serve the exit-priority preStop hooks on the node's loopback: the daemon then runs in the host network
     * (the kubelet sends the hooks to 127.0.0.1 on the node). Only when the app uses exit priority.
     */
    readonly exitPriorityEndpoint?: boolean;
    readonly placement?: PodPlacement;
    /** Health probe port. @default PORTS.daemonHealth (10221) */
    readonly port?: number;
  };
  readonly webhook: {
    readonly timeoutSeconds: number;
    /** Register the pod mutating webhook (SidecarSet injection, exit priority, launch priority). */
    readonly pods: boolean;
    /**
     * Which pods the pod webhook refuses when the runtime does not answer (`failurePolicy: Fail`); every other pod is
     * admitted unmutated. Absent: every pod it covers (one `Fail` entry), as upstream registers it.
     */
    readonly podFailClosed?: PodFailClosed;
    /**
     * Register the deletion-protection webhook (gate ResourcesDeletionProtection on: the app labels an object
     * `policy.kruise.io/delete-protection`, or the gate is forced on). @default false
     */
    readonly deletionProtection?: boolean;
    /**
     * Register the pod validating webhook for PodUnavailableBudgets (gate PodUnavailableBudgetDeleteGate on and the
     * app has a budget, or the gate is forced on); `update` also sends in-place updates (PodUnavailableBudgetUpdateGate).
     */
    readonly podUnavailableBudget?: { readonly update: boolean };
    readonly certificates: CertificateSpec;
  };
  /** `--feature-gates` value for manager and daemon. */
  readonly featureGates: string;
  /** Kinds served by the runtime (validating webhooks). */
  readonly kinds: readonly ServedKind[];
  /** Argo CD sync wave for the runtime objects, when asked for. */
  readonly syncWave?: number;
  /** How Prometheus scrapes the manager and daemon. @default DEFAULT_METRICS (pod annotations only) */
  readonly metrics?: MetricsSpec;
  /** Annotations of both ServiceAccounts (e.g. a cloud IAM role). */
  readonly serviceAccountAnnotations?: Readonly<Record<string, string>>;
  /** False: the namespaces exist already (created by the platform), so the install emits no Namespace. @default true */
  readonly createNamespaces?: boolean;
}

// Names and ports are contracts the runtime reads too; declared in the contract layer.
export { NAMES, PORTS } from '../contracts/names.js';

/** Labels on every object, and the selector labels of the two workloads. */
export const COMMON_LABELS: Readonly<Record<string, string>> = { 'app.kubernetes.io/part-of': 'cdk8s-kruise' };
export const MANAGER_SELECTOR: Readonly<Record<string, string>> = { 'control-plane': 'controller-manager' };
export const DAEMON_SELECTOR: Readonly<Record<string, string>> = { 'control-plane': 'daemon' };

export const SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

export function meta(spec: InstallSpec, name: string, namespaced: boolean, labels: Record<string, string> = {}): Record<string, unknown> {
  const m: Record<string, unknown> = { name, labels: { ...COMMON_LABELS, ...labels } };
  if (namespaced) m.namespace = spec.namespace;
  if (spec.syncWave !== undefined) m.annotations = { [SYNC_WAVE_ANNOTATION]: String(spec.syncWave) };
  return m;
}

import { ApiObject, App, Chart, Duration, JsonPatch, Lazy } from 'cdk8s';
import type { ContainerResources, EnvValue } from 'cdk8s-plus-27';
import { ImagePullPolicy } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { secretNames, type SecretReference } from './internal/plus-objects.js';
import { DAEMON_CONFIG_NAMESPACE } from '../src/api/pod-contracts.js';
import { detectFeatures, isMetadataOnlyKind, type FeatureUse } from '../src/install/app-features.js';
import { customResourceDefinitions, servedKinds } from '../src/install/crds.js';
import {
  checkGateNames,
  gatesForUses,
  gatesMarkdownTable,
  needsDaemon,
  needsPodWebhook,
  resolveGates,
  type ResolvedGates,
} from '../src/install/feature-gates.js';
import { RuntimeImage } from '../src/install/image.js';
import { sidecarSetTargets, type SidecarSetTarget } from '../src/install/pod-webhook-needs.js';
import { bundledFeatureGatesFlag } from '../src/install/runtime-gates.js';
import { bundledServesPods, runtimeSupport } from '../src/install/runtime-support.js';
import { AppFeature, BUNDLED_RUNTIME_GATES } from '../src/contracts/features.js';
import { renderRuntime } from '../src/install/render.js';
import { metricsSpecOf, type RuntimeMetricsOptions } from './runtime-metrics.js';
import type { CertificateSpec, InstallSpec, ManagerPorts, PodPlacement, ResourceRequirements } from '../src/install/spec.js';
import {
  checkPlacement,
  checkPort,
  checkPorts,
  checkPriorityClassName,
  checkRenderedWorkloads,
  checkServiceAccountAnnotations,
} from './internal/runtime-values.js';
import { DAEMON_EXIT_PRIORITY_PORT, PORTS } from '../src/contracts/names.js';
import { MANAGER_DEFAULT_MEMORY_LIMIT } from '../src/contracts/node-options.js';
import type { V1Affinity } from '../src/api/core/k8s-core-types.js';
import type { KubeObject, SourcedObject } from '../src/install/types.js';
import { describeRef, refOf } from '../src/install/types.js';
import { findKind, isKruiseApiVersion } from '../src/api/registry.js';
import { validateObject } from '../src/api/validate.js';
import { dns1123LabelError, dns1123SubdomainError } from '../src/contracts/validators.js';
import { ANNOTATION_IGNORED_FEATURE_GATES } from '../src/contracts/keys.js';
import { NAMES } from '../src/contracts/names.js';
import { quoteValue } from '../src/api/quote.js';
import { packageVersion } from '../src/version.js';
import { currentSynthScope, renderShared, scopeSynth } from './internal/render-once.js';
import { readCapabilitiesFile } from './internal/capabilities-source.js';
import {
  CAPABILITIES_ENV,
  CapabilitiesError,
  capabilitiesOf,
  capabilityErrors,
  checkCapabilities,
  type RuntimeCapabilities,
} from '../src/install/capabilities.js';

export { RuntimeImage } from '../src/install/image.js';
export type { BundledImageOptions } from '../src/install/image.js';
export { AppFeature } from '../src/contracts/features.js';
export type { RuntimeCapabilities } from '../src/install/capabilities.js';
export { CAPABILITIES_CONFIGMAP, CAPABILITIES_ENV, CAPABILITIES_FILE } from '../src/install/capabilities.js';

/** Which Kruise implementation runs the app's resources. */
export enum RuntimeTarget {
  /** The cdk8s-kruise runtime bundled with this package: CRDs + controller-manager + daemon are emitted. */
  BUNDLED = 'bundled',
  /**
   * Upstream OpenKruise, installed separately (e.g. its Helm chart): nothing is emitted; the app is
   * checked for features upstream lacks and the feature gates it needs are reported.
   */
  OPENKRUISE = 'openkruise',
  /**
   * A runtime the platform installed (another app's `KruiseRuntime` with target BUNDLED): nothing is emitted; the
   * app's features are checked against the installed runtime's capabilities (see `installedRuntime`), and one it
   * lacks is a synth error naming the feature, the gate and the fix.
   */
  PLATFORM = 'platform',
}

/**
 * Where an app whose runtime the platform installed finds that runtime's capabilities. All sources carry the same
 * versioned document (`kruise.cdk8s.io/v1alpha1` `RuntimeCapabilities`), which the platform's install publishes in the
 * ConfigMap `kruise-runtime-capabilities` of its namespace.
 */
export class InstalledRuntime {
  /**
   * From the platform's synth output, committed where the app can read it: its output directory (e.g.
   * `../platform/dist`), its runtime manifest (`10-runtime.yaml`), or a capabilities JSON file
   * (`kruise-runtime.capabilities.json`, e.g. `kubectl get configmap kruise-runtime-capabilities -n kruise-system -o jsonpath='{.data.capabilities\.json}'`).
   * Read when the construct is created; a relative path is relative to the working directory of the synth.
   * @param path file or directory
   */
  public static fromFile(path: string): InstalledRuntime {
    if (typeof path !== 'string' || path.length === 0 || path.includes('\0')) {
      throw new Error('InstalledRuntime.fromFile: path must be a non-empty string');
    }
    return new InstalledRuntime(() => readCapabilitiesFile(path), path, `commit its new output where ${path} reads it`);
  }

  /**
   * From the cluster: `cdk8s-kruise synth --capabilities-from-cluster` reads the ConfigMap with your kubeconfig before
   * it runs the app and passes it in the environment variable `CDK8S_KRUISE_CAPABILITIES` (a file path), which this reads.
   * The default source of target PLATFORM.
   */
  public static fromCluster(): InstalledRuntime {
    return new InstalledRuntime(
      () => {
        const file = process.env[CAPABILITIES_ENV];
        if (!file) {
          throw new CapabilitiesError(
            `no runtime capabilities: ${CAPABILITIES_ENV} is not set. Run the synth as \`cdk8s-kruise synth --capabilities-from-cluster\` ` +
              "(reads the platform runtime's ConfigMap with your kubeconfig), or give installedRuntime: InstalledRuntime.fromFile(<platform synth output>)",
          );
        }
        return readCapabilitiesFile(file);
      },
      `the cluster's ConfigMap kruise-runtime-capabilities`,
      'apply its output to the cluster',
    );
  }

  /**
   * From a capabilities document already in memory (e.g. `platformRuntime.capabilities()` in a monorepo program).
   * @param document the parsed capabilities JSON
   */
  public static fromDocument(document: RuntimeCapabilities | Record<string, unknown>): InstalledRuntime {
    const caps = checkCapabilities(JSON.parse(JSON.stringify(document ?? null)) as unknown, 'InstalledRuntime.fromDocument');
    return new InstalledRuntime(() => caps, 'a capabilities document', 'pass its new capabilities document');
  }

  private constructor(
    private readonly load: () => RuntimeCapabilities,
    /** Where the capabilities come from, as messages name it. */
    public readonly source: string,
    /** How the app sees the platform's new capabilities, as a fix names it. */
    private readonly refresh: string,
  ) {}

  /** @internal */
  public _read(): RuntimeCapabilities {
    return this.load();
  }

  /** @internal */
  public get _refresh(): string {
    return this.refresh;
  }
}

/** When to run the node daemon. */
export enum DaemonPlacement {
  /** Only when something in the app needs it (CRRs, ImagePullJobs, kill-mode sidecar termination...). */
  AUTO = 'auto',
  /** Always (e.g. CRRs will be created at run time by other tools). */
  ALWAYS = 'always',
  /** Never; a resource that needs the daemon is then a synth error. */
  NEVER = 'never',
}

/** Log verbosity of the runtime processes. */
export enum RuntimeLogLevel {
  ERROR = 'error',
  WARN = 'warn',
  INFO = 'info',
  DEBUG = 'debug',
}

/** Which pods the API server refuses while the runtime does not answer its pod webhook. */
export enum PodWebhookFailClosed {
  /**
   * Only the pods that would be created wrong without the runtime: pods the app's SidecarSets select (in their
   * `spec.namespace`; a `namespaceSelector` is not seen, so in every namespace), pods with exit or launch priorities,
   * and pods of Kruise workloads. Every other pod is admitted unmutated, so a runtime that cannot start (image that
   * cannot be pulled, crash loop, deleted Service) blocks nothing else. Needs Kubernetes 1.30 or newer (webhook
   * `matchConditions`).
   */
  NEEDED = 'needed',
  /**
   * Every pod the webhook covers (all namespaces but kube-system, the runtime's own and those labelled
   * `kruise.cdk8s.io/pod-webhook: disabled`), as upstream registers it: for SidecarSets applied outside this app that
   * must never be skipped. A runtime that does not answer then blocks every pod creation in those namespaces.
   */
  ALL_PODS = 'all',
}

/** Kind of cert-manager issuer. */
export enum IssuerKind {
  /** A namespaced `Issuer` in the runtime namespace. */
  ISSUER = 'Issuer',
  /** A `ClusterIssuer`. */
  CLUSTER_ISSUER = 'ClusterIssuer',
}

/** How the webhook serving certificate and the configurations' caBundle are provided. */
export class WebhookCertificates {
  /**
   * The runtime issues a CA and serving certificate itself, keeps them in the Secret
   * `kruise-webhook-certs`, renews them and patches caBundle (as upstream does). No extra component.
   */
  public static selfManaged(): WebhookCertificates {
    return new WebhookCertificates({ mode: 'self' });
  }

  /**
   * A cert-manager `Certificate` from the given issuer writes the Secret and cert-manager's CA injector
   * fills caBundle (annotation `cert-manager.io/inject-ca-from`). Needs cert-manager in the cluster.
   * @param issuerName name of the Issuer (in the runtime namespace) or ClusterIssuer
   * @param kind Issuer or ClusterIssuer
   */
  public static fromCertManager(issuerName: string, kind: IssuerKind = IssuerKind.ISSUER): WebhookCertificates {
    if (dns1123SubdomainError(issuerName) !== undefined) {
      throw new Error(`certificates: cert-manager issuer name "${issuerName}" is not a valid object name (lowercase DNS subdomain)`);
    }
    return new WebhookCertificates({ mode: 'cert-manager', issuerKind: kind, issuerName });
  }

  private constructor(
    /** @internal */
    public readonly _spec: CertificateSpec,
  ) {}
}

/** The node's CRI runtime socket, which the daemon uses to stop containers and pull images. */
export class CriSocket {
  /** containerd's default socket (kubeadm, EKS, GKE, AKS, kind): `/run/containerd/containerd.sock`. */
  public static readonly CONTAINERD = new CriSocket('/run/containerd/containerd.sock');
  /** CRI-O's default socket: `/var/run/crio/crio.sock`. */
  public static readonly CRIO = new CriSocket('/var/run/crio/crio.sock');
  /** cri-dockerd's default socket: `/var/run/cri-dockerd.sock`. */
  public static readonly CRI_DOCKERD = new CriSocket('/var/run/cri-dockerd.sock');
  /** k3s's embedded containerd: `/run/k3s/containerd/containerd.sock`. */
  public static readonly K3S = new CriSocket('/run/k3s/containerd/containerd.sock');

  /**
   * Any socket path on the host.
   * @param path absolute host path of the socket file
   */
  public static fromPath(path: string): CriSocket {
    if (!/^\/[^\0]*[^/]$/.test(path)) throw new Error(`CriSocket.fromPath: "${path}" must be an absolute path to a socket file`);
    return new CriSocket(path);
  }

  private constructor(
    /** Host path of the socket. */
    public readonly path: string,
  ) {}
}

/** How a toleration matches a taint. */
export enum TolerationOperator {
  /** The taint has the key, whatever its value. */
  EXISTS = 'Exists',
  /** The taint has the key with this value. */
  EQUAL = 'Equal',
}

/** The effect of a taint a toleration matches. */
export enum TaintEffect {
  NO_SCHEDULE = 'NoSchedule',
  PREFER_NO_SCHEDULE = 'PreferNoSchedule',
  NO_EXECUTE = 'NoExecute',
}

/** A toleration of the runtime pods (Kubernetes `Toleration`). */
export interface RuntimeToleration {
  /**
   * Taint key; empty with operator EXISTS tolerates every taint.
   * @default - every key (only with TolerationOperator.EXISTS)
   */
  readonly key?: string;
  /**
   * @default TolerationOperator.EQUAL
   */
  readonly operator?: TolerationOperator;
  /**
   * Taint value (operator EQUAL only).
   * @default ""
   */
  readonly value?: string;
  /**
   * Effect matched.
   * @default - every effect
   */
  readonly effect?: TaintEffect;
  /**
   * How long a NO_EXECUTE taint is tolerated before the pod is evicted.
   * @default - forever
   */
  readonly tolerationSeconds?: number;
}

/** Where the runtime pods run and what they get, beyond the install's defaults (the chart's per-workload values). */
export interface RuntimePodOptions {
  /**
   * Node labels the pods must match (added to `kubernetes.io/os: linux`). Chart: `manager.nodeSelector`, `daemon.nodeSelector`.
   * @default - Linux nodes
   */
  readonly nodeSelector?: { readonly [label: string]: string };
  /**
   * Tolerations, replacing the default. Chart: `manager.tolerations`.
   * @default - manager: none; daemon: every taint (it must run on every node)
   */
  readonly tolerations?: readonly RuntimeToleration[];
  /**
   * Affinity (Kubernetes `Affinity`). Manager: each of nodeAffinity, podAffinity and podAntiAffinity given replaces
   * the default one (replicas preferably on different hosts). Daemon: required node terms each keep the exclusion of
   * virtual-kubelet and non-Linux nodes. Chart: `manager.nodeAffinity`, `daemon.affinity`.
   * @default - manager: host anti-affinity; daemon: not on virtual-kubelet nodes
   */
  readonly affinity?: V1Affinity;
  /**
   * Run in the host network (dnsPolicy ClusterFirstWithHostNet), e.g. where the API server cannot reach pod IPs for
   * webhooks. Chart: `manager.hostNetwork` (the chart's daemon always runs in the host network).
   * @default false (the daemon: true when the app uses exit priority)
   */
  readonly hostNetwork?: boolean;
  /**
   * Extra environment variables of the container (e.g. HTTP_PROXY), cdk8s-plus `EnvValue`s. Names the install sets
   * itself are refused. Chart: `daemon.extraEnvs`.
   * @default - none
   */
  readonly extraEnv?: { readonly [name: string]: EnvValue };
}

/** The controller-manager's ports (container ports; the webhook Service targets the webhook port by name). */
export interface RuntimePorts {
  /**
   * Admission webhook server. Chart: `manager.webhook.port`.
   * @default 9876
   */
  readonly webhook?: number;
  /**
   * Prometheus metrics. Chart: `manager.metrics.port`.
   * @default 8080
   */
  readonly metrics?: number;
  /**
   * Health and readiness probes. Chart: `manager.healthProbe.port`.
   * @default 8000
   */
  readonly health?: number;
}

/** A rendered object of the install that `KruiseRuntime.addJsonPatch` can patch. */
export enum RuntimeObject {
  /** The controller-manager Deployment `kruise-controller-manager`. */
  MANAGER_DEPLOYMENT = 'Deployment/kruise-controller-manager',
  /** The node daemon DaemonSet `kruise-daemon` (rendered at synth, when the app needs it or placement is ALWAYS). */
  DAEMON_SET = 'DaemonSet/kruise-daemon',
  /** `kruise-mutating-webhook-configuration`. */
  MUTATING_WEBHOOK_CONFIGURATION = 'MutatingWebhookConfiguration/kruise-mutating-webhook-configuration',
  /** `kruise-validating-webhook-configuration`. */
  VALIDATING_WEBHOOK_CONFIGURATION = 'ValidatingWebhookConfiguration/kruise-validating-webhook-configuration',
  /** The webhook Service `kruise-webhook-service`. */
  WEBHOOK_SERVICE = 'Service/kruise-webhook-service',
}

/** Options of the node daemon. */
export interface KruiseDaemonOptions extends RuntimePodOptions {
  /**
   * When to run the daemon.
   * @default DaemonPlacement.AUTO
   */
  readonly placement?: DaemonPlacement;
  /**
   * The CRI socket on the nodes. Sockets under /run or /var/run are reached through a read-only mount of
   * the host's /var/run (as upstream); others through a read-only mount of their directory.
   * @default CriSocket.CONTAINERD
   */
  readonly criSocket?: CriSocket;
  /**
   * Group id that owns the CRI socket (containerd `[grpc] gid`). When set the daemon runs as the
   * non-root image user with this supplementary group instead of uid 0.
   * @default - runs as uid 0 with every capability dropped (default socket permissions are root:root 0660)
   */
  readonly criSocketGroup?: number;
  /**
   * CPU and memory of the daemon container.
   * @default - requests 50m CPU / 64Mi, limit 192Mi memory and no CPU limit (see DEFAULT_DAEMON_RESOURCES)
   */
  readonly resources?: ContainerResources;
  /**
   * Priority class of the daemon pods (e.g. `system-node-critical`).
   * @default - none
   */
  readonly priorityClassName?: string;
  /**
   * Port of the daemon's health endpoint. Chart: `daemon.port`.
   * @default 10221
   */
  readonly port?: number;
}

/** Props of {@link KruiseRuntime}. The pod options apply to the controller-manager; the daemon's are in `daemon`. */
export interface KruiseRuntimeProps extends RuntimePodOptions {
  /**
   * Which Kruise implementation runs the app.
   * @default RuntimeTarget.BUNDLED
   */
  readonly target?: RuntimeTarget;
  /**
   * Target PLATFORM: where the installed runtime's capabilities come from.
   * @default InstalledRuntime.fromCluster() - what `cdk8s-kruise synth --capabilities-from-cluster` read
   */
  readonly installedRuntime?: InstalledRuntime;
  /**
   * Target BUNDLED, for a platform install that serves other apps: features to carry out whether or not this app
   * uses them (the union of the apps' needs). Their gates are turned on, and the daemon and the pod webhook are
   * deployed when they need them; the capabilities the install publishes then list them.
   * @default - only what this app uses
   */
  readonly features?: readonly AppFeature[];
  /**
   * Namespace of the runtime (created by this chart, labelled `control-plane: openkruise`).
   * @default "kruise-system"
   */
  readonly namespace?: string;
  /**
   * Namespace the manager copies ImagePullJob pull secrets into for the daemon.
   * @default "kruise-daemon-config"
   */
  readonly daemonConfigNamespace?: string;
  /**
   * Image of the controller-manager and the daemon.
   * @default RuntimeImage.bundled() - `ghcr.io/cdk8s-kruise/cdk8s-kruise:<package version>`
   */
  readonly image?: RuntimeImage;
  /**
   * Pull policy of the runtime image.
   * @default ImagePullPolicy.IF_NOT_PRESENT (the default tag is a fixed release)
   */
  readonly imagePullPolicy?: ImagePullPolicy;
  /**
   * Secrets (in the runtime namespace) used to pull the runtime image: cdk8s-plus Secrets or Secret names.
   * @default - none
   */
  readonly imagePullSecrets?: readonly SecretReference[];
  /**
   * Controller-manager replicas (one leads through a Lease, the others stand by and serve webhooks).
   * @default 2
   */
  readonly replicas?: number;
  /**
   * CPU and memory of the controller-manager container.
   * @default - requests 100m CPU / 256Mi, limits 500m CPU / 1Gi (a 640 MiB heap: 100,000 pods cached)
   */
  readonly managerResources?: ContainerResources;
  /**
   * Priority class of the controller-manager pods.
   * @default - none
   */
  readonly priorityClassName?: string;
  /**
   * The controller-manager's ports.
   * @default - webhook 9876, metrics 8080, health 8000 (upstream's)
   */
  readonly ports?: RuntimePorts;
  /**
   * Annotations of the manager's and the daemon's ServiceAccounts (e.g. `eks.amazonaws.com/role-arn`). Chart:
   * `serviceAccount.annotations`.
   * @default - none
   */
  readonly serviceAccountAnnotations?: { readonly [key: string]: string };
  /**
   * Emit the CRD chart. False when the CRDs are applied another way (e.g. by a cluster bootstrap); the runtime still
   * serves the kinds. Chart: `crds.managed`.
   * @default true
   */
  readonly installCrds?: boolean;
  /**
   * Emit the runtime's Namespace (and the daemon-config one). False when the namespaces already exist, created by
   * whoever owns them. Chart: `installation.createNamespace`.
   * @default true
   */
  readonly createNamespace?: boolean;
  /**
   * The node daemon.
   * @default - placed automatically, CRI socket probed
   */
  readonly daemon?: KruiseDaemonOptions;
  /**
   * Feature gates forced on (`true`) or off (`false`), by upstream gate name. Gates the app needs are
   * turned on automatically; forcing one of them off is a synth error naming the gate and the resource.
   * @default - only what the app needs
   */
  readonly featureGates?: { readonly [gate: string]: boolean };
  /**
   * How long the API server waits for a webhook answer (1-30 seconds).
   * @default Duration.seconds(10)
   */
  readonly webhookTimeout?: Duration;
  /**
   * Webhook certificates.
   * @default WebhookCertificates.selfManaged()
   */
  readonly certificates?: WebhookCertificates;
  /**
   * Register the pod mutating webhook even if nothing in the app needs it (e.g. SidecarSets are applied
   * by another tool). Pods only such SidecarSets select are injected while the runtime answers; to refuse them
   * while it does not, set `podWebhookFailClosed` to `PodWebhookFailClosed.ALL_PODS`.
   * @default false - registered only when the app has a SidecarSet, exit or launch priorities
   */
  readonly alwaysRegisterPodWebhook?: boolean;
  /**
   * Which pods are refused while the runtime does not answer the pod webhook (the others are admitted unmutated).
   * @default PodWebhookFailClosed.NEEDED
   */
  readonly podWebhookFailClosed?: PodWebhookFailClosed;
  /**
   * Add Argo CD `argocd.argoproj.io/sync-wave` annotations: CRDs in wave -2, the runtime in wave -1
   * (the app's resources stay in wave 0).
   * @default false
   */
  readonly syncWaves?: boolean;
  /**
   * Make every other chart of the app depend on this one, so file order (and cdk8s's numbering) is
   * CRDs, runtime, then the app.
   * @default true
   */
  readonly orderBeforeApp?: boolean;
  /**
   * Log level of the runtime processes.
   * @default RuntimeLogLevel.INFO
   */
  readonly logLevel?: RuntimeLogLevel;
  /**
   * How Prometheus scrapes the manager and the daemon: `prometheus.io/*` pod annotations, and optionally Prometheus
   * Operator PodMonitors or ServiceMonitors. The metrics: docs/runtime.md, "Metrics".
   *
   * @default - pod annotations only
   */
  readonly metrics?: RuntimeMetricsOptions;
}

/** What the runtime found in the app at the last synth. */
export interface KruiseRuntimeReport {
  /** Every feature use found in the app. */
  readonly uses: readonly FeatureUse[];
  /** Gates after requirements, overrides and cascades. */
  readonly gates: ResolvedGates;
  /** Whether the daemon is emitted (bundled target). */
  readonly daemon: boolean;
  /** Whether the pod mutating webhook is registered (bundled target). */
  readonly podWebhook: boolean;
  /** Errors that fail the synth. */
  readonly errors: readonly string[];
  /** Notes for the user (e.g. features the bundled runtime does not implement). */
  readonly warnings: readonly string[];
  /** Markdown table of the gates the app needs (for a README or a PR description). */
  readonly gatesTable: string;
  /**
   * Target BUNDLED: the capabilities this install publishes. Target PLATFORM: those of the installed runtime the app
   * was checked against. Undefined for target OPENKRUISE.
   */
  readonly capabilities?: RuntimeCapabilities;
}

const DEFAULT_MANAGER_RESOURCES: ResourceRequirements = {
  requests: { cpu: '100m', memory: '256Mi' },
  limits: { cpu: '500m', memory: MANAGER_DEFAULT_MEMORY_LIMIT },
};
/**
 * No CPU limit for the daemon: it idles, then must act within milliseconds of a container's exit (node-local sidecar
 * stop, exit-priority hooks). A CFS quota throttles exactly that burst: at 200m the daemon stalls until the next
 * 100 ms period once it has used its 20 ms (with the earlier 20 ms CRI poll this doubled the node-local stop's p50;
 * bench/real-node-terminator.bench.ts, 2026-11-24), and a limit protects nothing for a process that idles. The
 * request gives it a fair CPU share under contention; memory stays capped.
 */
const DEFAULT_DAEMON_RESOURCES: ResourceRequirements = {
  requests: { cpu: '50m', memory: '64Mi' },
  limits: { memory: '192Mi' },
};
const CRD_WAVE = -2;
const RUNTIME_WAVE = -1;

function toResources(r: ContainerResources | undefined, fallback: ResourceRequirements): ResourceRequirements {
  if (!r) return fallback;
  const out: ResourceRequirements = { requests: { ...fallback.requests }, limits: { ...fallback.limits } };
  if (r.cpu?.request) out.requests!.cpu = r.cpu.request.amount;
  if (r.cpu?.limit) out.limits!.cpu = r.cpu.limit.amount;
  if (r.memory?.request) out.requests!.memory = `${r.memory.request.toMebibytes()}Mi`;
  if (r.memory?.limit) out.limits!.memory = `${r.memory.limit.toMebibytes()}Mi`;
  return out;
}

function objectId(o: KubeObject): string {
  return `${o.kind}-${o.metadata?.namespace ?? 'cluster'}-${o.metadata?.name}`;
}

/**
 * An ApiObject whose body is produced by the install builders at synth time: metadata is fixed by the
 * props, every other field is looked up lazily so the runtime reflects what the app contains then.
 */
class RenderedObject extends ApiObject {
  constructor(scope: Construct, id: string, first: KubeObject, produce: () => KubeObject | undefined) {
    const body: Record<string, unknown> = {};
    for (const key of Object.keys(first)) {
      if (key === 'apiVersion' || key === 'kind' || key === 'metadata') continue;
      body[key] = Lazy.any({ produce: () => produce()?.[key] });
    }
    super(scope, id, { apiVersion: first.apiVersion, kind: first.kind, metadata: first.metadata as never, ...body });
  }
}

/**
 * Everything a cluster needs to run the app's OpenKruise resources: a chart with the runtime
 * (namespace, service accounts, least-privilege RBAC, controller-manager, node daemon, admission
 * webhooks) and a sibling chart with the CRDs, both derived from what the app contains when it is
 * synthesized.
 *
 * @example
 * const app = new App();
 * new KruiseRuntime(app, 'kruise');
 * new MyChart(app, 'my-app'); // uses CloneSets, sidecars...
 * app.synth(); // dist/0000-kruise-crds.k8s.yaml, 0001-kruise.k8s.yaml, 0002-my-app.k8s.yaml
 */
/** Props that only shape the emitted install, so they mean nothing under target PLATFORM. */
const PLATFORM_IGNORED_PROPS = [
  'namespace',
  'daemonConfigNamespace',
  'image',
  'imagePullPolicy',
  'imagePullSecrets',
  'replicas',
  'managerResources',
  'priorityClassName',
  'daemon',
  'featureGates',
  'webhookTimeout',
  'certificates',
  'alwaysRegisterPodWebhook',
  'podWebhookFailClosed',
  'syncWaves',
  'nodeSelector',
  'tolerations',
  'affinity',
  'hostNetwork',
  'extraEnv',
  'ports',
  'serviceAccountAnnotations',
  'installCrds',
  'createNamespace',
  'metrics',
] as const satisfies readonly (keyof KruiseRuntimeProps)[];

/** Env vars the install sets on the manager and the daemon (extraEnv may not override them). */
const MANAGER_ENV = ['POD_NAMESPACE', 'KRUISE_DAEMON_CONFIG_NS', 'NODE_OPTIONS', 'MALLOC_ARENA_MAX'];
const DAEMON_ENV = ['NODE_NAME', 'POD_NAMESPACE'];

function hasPodOptions(o: RuntimePodOptions): boolean {
  return o.nodeSelector !== undefined || o.tolerations !== undefined || o.affinity !== undefined || o.extraEnv !== undefined;
}

/** The `features` prop, checked: each an AppFeature value, no duplicates. */
function checkFeatures(features: readonly AppFeature[] | undefined, where: string): readonly AppFeature[] {
  if (features === undefined) return [];
  if (!Array.isArray(features)) throw new Error(`${where}: features must be an array of AppFeature values`);
  const known = Object.values(AppFeature) as string[];
  for (const f of features) {
    if (!known.includes(f as string)) {
      throw new Error(
        `${where}: features: ${quoteValue(f)} is not an AppFeature (e.g. AppFeature.SIDECAR_TERMINATOR_KILL, AppFeature.IMAGE_PULL_JOB)`,
      );
    }
  }
  return [...new Set<AppFeature>(features)];
}

/** Every KruiseRuntime of this process (all Apps, every copy of this package), to find two that would collide. */
function liveRuntimes(): Set<WeakRef<KruiseRuntime>> {
  const key = Symbol.for('cdk8s-kruise.KruiseRuntime.instances');
  const g = globalThis as unknown as Record<symbol, Set<WeakRef<KruiseRuntime>> | undefined>;
  return (g[key] ??= new Set());
}

/** Marks KruiseRuntime instances; a registered symbol, so two copies of this package recognize each other. */
const KRUISE_RUNTIME = Symbol.for('cdk8s-kruise.KruiseRuntime');

export class KruiseRuntime extends Chart {
  /**
   * True when `x` is a KruiseRuntime. Use this rather than `instanceof`: `Chart` defines
   * `Symbol.hasInstance`, which subclasses inherit, so `x instanceof KruiseRuntime` holds for any Chart.
   */
  public static isKruiseRuntime(x: unknown): x is KruiseRuntime {
    return x !== null && typeof x === 'object' && KRUISE_RUNTIME in x;
  }

  /** The chart holding the CRDs (undefined for the openkruise target). */
  public readonly crds?: Chart;
  /** Implementation that runs the app. */
  public readonly target: RuntimeTarget;
  /** Namespace of the runtime. */
  public readonly runtimeNamespace: string;
  /** The image manager and daemon run. */
  public readonly image: RuntimeImage;

  private readonly props: KruiseRuntimeProps;
  private readonly overrides: Record<string, boolean>;
  /** Target PLATFORM: the installed runtime's capabilities, read when the construct is created. */
  private readonly installed?: { readonly caps: RuntimeCapabilities; readonly source: string; readonly refresh: string };
  private readonly features: readonly AppFeature[];
  private readonly managerPlacement: PodPlacement;
  private readonly daemonPlacement: PodPlacement;
  private readonly managerPorts?: ManagerPorts;
  private readonly serviceAccountAnnotations?: Record<string, string>;
  /** JSON patches by target, applied to the rendered object whenever it exists (see addJsonPatch). */
  private readonly patches = new Map<RuntimeObject, JsonPatch[]>();
  private readonly objects = new Map<string, RenderedObject>();
  private rendered = new Map<string, KubeObject>();
  private lastReport?: KruiseRuntimeReport;
  /** The app's SidecarSets at the last analysis: the pods they select are refused while the runtime is down. */
  private sidecarSets: SidecarSetTarget[] = [];
  private printedFor?: string;

  constructor(scope: Construct, id: string, props: KruiseRuntimeProps = {}) {
    super(scope, id);
    Object.defineProperty(this, KRUISE_RUNTIME, { value: true });
    liveRuntimes().add(new WeakRef(this));
    const other = App.of(this)
      .node.findAll()
      .find((c) => c !== this && KruiseRuntime.isKruiseRuntime(c));
    if (other) {
      throw new Error(
        `${this.node.path}: the app already has a KruiseRuntime at ${other.node.path}; one runtime (and one set of CRDs) serves the whole cluster`,
      );
    }
    this.props = props;
    this.target = props.target ?? RuntimeTarget.BUNDLED;
    this.runtimeNamespace = props.namespace ?? 'kruise-system';
    this.image = props.image ?? RuntimeImage.bundled();
    this.overrides = { ...(props.featureGates ?? {}) };
    checkGateNames(this.overrides, `${this.node.path}: featureGates`);
    for (const [field, value] of [
      ['namespace', this.runtimeNamespace],
      ['daemonConfigNamespace', props.daemonConfigNamespace],
    ] as const) {
      if (value !== undefined && dns1123LabelError(value) !== undefined) {
        throw new Error(
          `${this.node.path}: ${field} "${value}" is not a valid namespace name (lowercase RFC 1123 label, at most 63 characters)`,
        );
      }
    }
    const replicas = props.replicas ?? 2;
    if (!Number.isInteger(replicas) || replicas < 1)
      throw new Error(`${this.node.path}: replicas must be an integer >= 1 (got ${replicas})`);
    const timeout = props.webhookTimeout?.toSeconds() ?? 10;
    if (!Number.isInteger(timeout) || timeout < 1 || timeout > 30) {
      throw new Error(`${this.node.path}: webhookTimeout must be between 1 and 30 whole seconds (the API server's limit), got ${timeout}s`);
    }
    if (props.alwaysRegisterPodWebhook && this.target === RuntimeTarget.BUNDLED && !bundledServesPods()) {
      throw new Error(
        `${this.node.path}: alwaysRegisterPodWebhook: this version of the bundled runtime does not serve the pod webhook (/mutate-pod); registering it would make every pod creation fail`,
      );
    }
    const failClosed: unknown = props.podWebhookFailClosed;
    if (failClosed !== undefined && !Object.values(PodWebhookFailClosed).includes(failClosed as PodWebhookFailClosed)) {
      throw new Error(
        `${this.node.path}: podWebhookFailClosed must be PodWebhookFailClosed.NEEDED or PodWebhookFailClosed.ALL_PODS, got ${JSON.stringify(failClosed)}`,
      );
    }
    if (props.daemon?.criSocketGroup !== undefined && (!Number.isInteger(props.daemon.criSocketGroup) || props.daemon.criSocketGroup < 0)) {
      throw new Error(`${this.node.path}: daemon.criSocketGroup must be a non-negative integer group id`);
    }
    if (!Object.values(RuntimeTarget).includes(this.target)) {
      throw new Error(
        `${this.node.path}: target must be a RuntimeTarget (bundled, openkruise or platform), got ${JSON.stringify(this.target)}`,
      );
    }
    this.features = checkFeatures(props.features, this.node.path);
    if (this.features.length > 0 && this.target !== RuntimeTarget.BUNDLED) {
      throw new Error(
        `${this.node.path}: features only applies to target BUNDLED (the platform's install); with target ${this.target} the runtime is installed elsewhere, so enable them there`,
      );
    }
    if (props.installedRuntime !== undefined && this.target !== RuntimeTarget.PLATFORM) {
      throw new Error(`${this.node.path}: installedRuntime only applies to target PLATFORM`);
    }
    if (this.target === RuntimeTarget.PLATFORM) {
      // The platform's install is configured in the platform's app: a value here would change nothing.
      const ignored = PLATFORM_IGNORED_PROPS.filter((k) => props[k] !== undefined);
      if (ignored.length > 0) {
        throw new Error(
          `${this.node.path}: ${ignored.join(', ')} configure the install, which the platform's KruiseRuntime emits; with target PLATFORM ` +
            'set them there (this app emits no install objects)',
        );
      }
    }
    checkPriorityClassName(props.priorityClassName, `${this.node.path}: priorityClassName`);
    checkPriorityClassName(props.daemon?.priorityClassName, `${this.node.path}: daemon.priorityClassName`);
    this.managerPlacement = checkPlacement(props, `${this.node.path}:`, MANAGER_ENV);
    this.daemonPlacement = checkPlacement(props.daemon ?? {}, `${this.node.path}: daemon`, DAEMON_ENV);
    this.managerPorts = checkPorts(props.ports, PORTS, `${this.node.path}: ports`);
    if (props.daemon?.port !== undefined) {
      checkPort(props.daemon.port, `${this.node.path}: daemon.port`);
      if (props.daemon.port === DAEMON_EXIT_PRIORITY_PORT) {
        throw new Error(`${this.node.path}: daemon.port ${props.daemon.port} is the daemon's exit-priority endpoint; choose another port`);
      }
    }
    this.serviceAccountAnnotations = checkServiceAccountAnnotations(
      props.serviceAccountAnnotations,
      `${this.node.path}: serviceAccountAnnotations`,
    );
    for (const flag of ['installCrds', 'createNamespace'] as const) {
      if (props[flag] !== undefined && typeof props[flag] !== 'boolean')
        throw new Error(`${this.node.path}: ${flag} must be true or false`);
    }
    if (this.target === RuntimeTarget.PLATFORM) {
      const source = props.installedRuntime ?? InstalledRuntime.fromCluster();
      try {
        this.installed = { caps: source._read(), source: source.source, refresh: source._refresh };
      } catch (e) {
        if (e instanceof CapabilitiesError) throw new Error(`${this.node.path}: target PLATFORM: ${e.message}`, { cause: e });
        throw e;
      }
    }

    if (this.target === RuntimeTarget.BUNDLED) {
      if (props.installCrds ?? true) {
        const crdChart = new Chart(scope, `${id}-crds`);
        const crds = customResourceDefinitions({
          syncWave: props.syncWaves ? CRD_WAVE : undefined,
          runtimeNamespace: this.runtimeNamespace,
          certManager: (props.certificates ?? WebhookCertificates.selfManaged())._spec.mode === 'cert-manager',
        });
        for (const crd of crds) {
          new ApiObject(crdChart, crd.metadata!.name!, crd as never);
        }
        this.crds = crdChart;
        this.addDependency(crdChart);
      }
      this.sync(this.buildSpec());
      // The chart-like values, rendered once with a daemon: an affinity or env the API server would refuse fails here.
      if (hasPodOptions(props) || hasPodOptions(props.daemon ?? {})) {
        checkRenderedWorkloads(renderRuntime(this.buildSpec(undefined, true)), this.node.path);
      }
    }

    this.node.addValidation({ validate: () => this.prepare() });
    const root = App.of(this);
    if (root instanceof App) scopeSynth(root);
  }

  /**
   * Forces a feature gate on or off (same as the `featureGates` prop).
   * @param gate upstream gate name, e.g. `SidecarTerminator`
   * @param enabled true to force on, false to force off
   */
  public setFeatureGate(gate: string, enabled: boolean): void {
    checkGateNames({ [gate]: enabled }, `${this.node.path}: setFeatureGate`);
    this.overrides[gate] = enabled;
  }

  /**
   * Escape hatch to a rendered object of the install, as `ApiObject.addJsonPatch`: the patches apply to the object's
   * JSON at synth, after everything else. The DaemonSet exists only once the synth has decided the app needs it; a
   * patch for an object the install does not render, a patch that does not apply, and a workload the patch makes
   * invalid fail the synth.
   * @param target which object
   * @param ops JSON patch operations, e.g. `JsonPatch.add('/spec/template/spec/containers/0/args/-', '--flag')`
   */
  public addJsonPatch(target: RuntimeObject, ...ops: JsonPatch[]): void {
    if (this.target !== RuntimeTarget.BUNDLED) {
      throw new Error(`${this.node.path}: addJsonPatch: target ${this.target} renders no install objects to patch`);
    }
    if (!Object.values(RuntimeObject).includes(target)) {
      throw new Error(`${this.node.path}: addJsonPatch: ${quoteValue(target)} is not a RuntimeObject`);
    }
    if (ops.length === 0 || ops.some((op) => !(op instanceof JsonPatch))) {
      throw new Error(
        `${this.node.path}: addJsonPatch(${target}): give one or more cdk8s JsonPatch operations (JsonPatch.add, replace, remove...)`,
      );
    }
    this.patches.set(target, [...(this.patches.get(target) ?? []), ...ops]);
    this.objectFor(target)?.addJsonPatch(...ops);
  }

  private objectFor(target: RuntimeObject): RenderedObject | undefined {
    const id: string = target;
    return [...this.objects.values()].find((o) => `${o.kind}/${o.metadata.name}` === id);
  }

  /** The cluster-scoped objects this install writes, by `Kind/name`, as JSON (what another install must match). */
  private clusterScoped(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [id, o] of this.rendered) {
      if (o.metadata?.namespace !== undefined) continue;
      const obj = this.objects.get(id);
      out.set(`${o.kind}/${o.metadata?.name}`, JSON.stringify(obj ? obj.toJson() : o));
    }
    // The CRDs depend only on the package version and the sync wave.
    if (this.crds) out.set('CustomResourceDefinitions', `${packageVersion()} wave ${this.props.syncWaves ? CRD_WAVE : 'none'}`);
    return out;
  }

  /**
   * Another App of this program writing the same output directory with a KruiseRuntime of target BUNDLED would apply
   * the same cluster-scoped objects (webhook configurations, cluster roles, CRDs); when they differ, whichever is
   * applied last wins. Both construct paths and the first differing object are named.
   */
  private conflictsWithOtherApps(): string[] {
    const outdir = App.of(this).outdir;
    const mine = this.clusterScoped();
    this.lastClusterScoped = mine;
    for (const ref of liveRuntimes()) {
      const other = ref.deref();
      if (!other) {
        liveRuntimes().delete(ref);
        continue;
      }
      if (other === this || App.of(other) === App.of(this) || App.of(other).outdir !== outdir) continue;
      const theirs = other.lastClusterScoped;
      if (!theirs || other.target !== RuntimeTarget.BUNDLED) continue;
      const differing = [...mine.keys()].filter((k) => theirs.has(k) && theirs.get(k) !== mine.get(k));
      if (differing.length === 0) continue;
      return [
        `${this.node.path} and ${other.node.path} (another App writing ${outdir}) would both write ${differing[0]}` +
          `${differing.length > 1 ? ` and ${differing.length - 1} other cluster-scoped object(s)` : ''}, differently. ` +
          "One runtime serves a cluster: keep one KruiseRuntime with target BUNDLED, given the union of the apps' needs with `features`, " +
          'and use target PLATFORM in the other apps.',
      ];
    }
    return [];
  }

  /** This install's cluster-scoped objects at its last synth (read by another App's runtime, see conflictsWithOtherApps). */
  private lastClusterScoped?: Map<string, string>;

  /** Patches whose object is not rendered, does not take them, or ends up invalid: synth errors. */
  private patchErrors(): string[] {
    const errors: string[] = [];
    for (const [target, ops] of this.patches) {
      const call = `addJsonPatch(RuntimeObject.${(Object.keys(RuntimeObject) as (keyof typeof RuntimeObject)[]).find((k) => RuntimeObject[k] === target)})`;
      const obj = this.objectFor(target);
      if (!obj) {
        errors.push(
          `${call}: the install renders no ${target}` +
            (target === RuntimeObject.DAEMON_SET
              ? ' (nothing in the app needs the node daemon; set daemon.placement to DaemonPlacement.ALWAYS)'
              : ''),
        );
        continue;
      }
      let json: KubeObject;
      try {
        json = obj.toJson() as KubeObject;
      } catch (e) {
        errors.push(`${call}: the ${ops.length} patch operation(s) do not apply: ${(e as Error).message.split('\n')[0]}`);
        continue;
      }
      try {
        checkRenderedWorkloads([json], call);
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    return errors;
  }

  /** What the runtime found at the last synth (analysing the app now if it was not synthesized yet). */
  public report(): KruiseRuntimeReport {
    if (this.lastReport) return this.lastReport;
    const r = this.analyze();
    return this.target === RuntimeTarget.BUNDLED && r.errors.length === 0 ? { ...r, capabilities: capabilitiesOf(this.buildSpec(r)) } : r;
  }

  /**
   * The capabilities document: for target BUNDLED the one this install publishes (write it to a file for apps that
   * read `InstalledRuntime.fromFile`, or pass it to `InstalledRuntime.fromDocument`); for target PLATFORM the installed
   * runtime's. Undefined for target OPENKRUISE or when the app has errors.
   */
  public capabilities(): RuntimeCapabilities | undefined {
    return this.report().capabilities;
  }

  /**
   * The rendered objects of the app, without this runtime and its CRDs. At synth (`shared`), each
   * manifest is handed on to its chart's rendering in the same synth, so the app renders once.
   */
  private appObjects(shared: boolean): SourcedObject[] {
    const root = App.of(this);
    const out: SourcedObject[] = [];
    for (const c of root.node.findAll()) {
      if (!ApiObject.isApiObject(c)) continue;
      const chart = Chart.of(c);
      if (chart === this || chart === this.crds) continue;
      try {
        // Rendering is most of the analysis cost: objects that can only use a feature through their
        // labels are looked at without rendering them.
        const object = isMetadataOnlyKind(c.apiVersion, c.kind)
          ? ({ apiVersion: c.apiVersion, kind: c.kind, metadata: c.metadata.toJson() as KubeObject['metadata'] } as KubeObject)
          : ((shared ? renderShared(c) : c.toJson()) as KubeObject);
        out.push({ object, path: c.node.path });
      } catch {
        // The object's own rendering reports its error with better context when the chart renders.
      }
    }
    return out;
  }

  private analyze(shared = false): KruiseRuntimeReport {
    const objects = this.appObjects(shared);
    const uses = [...detectFeatures(objects), ...this.requestedUses()];
    this.sidecarSets = sidecarSetTargets(objects.map((o) => o.object));
    if (this.installed) return this.analyzeAgainstPlatform(objects, uses, this.installed);
    const bundled = this.target === RuntimeTarget.BUNDLED;
    // What the app needs depends on how the target carries each feature out (the feature table's per-runtime needs).
    const runtime = bundled ? 'bundled' : 'upstream';
    const gates = resolveGates(gatesForUses(uses, runtime), this.overrides);
    const errors = [...gates.conflicts];
    const warnings: string[] = [];
    const placement = this.props.daemon?.placement ?? DaemonPlacement.AUTO;
    const daemonUse = needsDaemon(uses, runtime);
    let daemon = false;
    let podWebhook = false;
    if (bundled) {
      daemon = placement === DaemonPlacement.ALWAYS || (placement === DaemonPlacement.AUTO && daemonUse !== undefined);
      if (this.overrides.KruiseDaemon === true && placement !== DaemonPlacement.NEVER) daemon = true;
      if (placement === DaemonPlacement.NEVER && daemonUse) {
        errors.push(
          `daemon.placement is NEVER, but ${describeRef(daemonUse.resource)} uses ${daemonUse.feature}${daemonUse.pointer ? ` at ${daemonUse.pointer}` : ''}, ` +
            'which the node daemon carries out. Use DaemonPlacement.AUTO or remove the resource.',
        );
      }
      const exitPriority = uses.find((u) => u.feature === AppFeature.CONTAINER_EXIT_PRIORITY);
      if (daemon && exitPriority && this.props.daemon?.hostNetwork === false) {
        errors.push(
          `daemon.hostNetwork is false, but ${describeRef(exitPriority.resource)} uses ${exitPriority.feature}: the kubelet sends its preStop ` +
            "hooks to the daemon on the node's loopback, which only a host-network daemon listens on. Leave daemon.hostNetwork unset.",
        );
      }
      const servesPods = bundledServesPods();
      podWebhook =
        servesPods &&
        (needsPodWebhook(uses, runtime) !== undefined ||
          this.props.alwaysRegisterPodWebhook === true ||
          this.overrides.PodWebhook === true);
      const support = runtimeSupport(uses, 'bundled');
      errors.push(...support.errors);
      warnings.push(...support.warnings);
      for (const g of Object.keys(this.overrides)) {
        if (!(g in BUNDLED_RUNTIME_GATES))
          warnings.push(`feature gate ${g} is not known to the bundled runtime; the override only matters for target openkruise.`);
      }
    } else {
      errors.push(...this.upstreamSchemaErrors(objects));
      errors.push(...runtimeSupport(uses, 'upstream').errors);
    }
    return {
      uses,
      gates,
      daemon,
      podWebhook,
      errors: [...new Set(errors)],
      warnings: [...new Set(warnings)],
      gatesTable: gatesMarkdownTable(gates),
    };
  }

  /** The `features` prop as feature uses of this construct, so they flow through gates, daemon and webhook like the app's. */
  private requestedUses(): FeatureUse[] {
    const resource = { apiVersion: 'cdk8s.io/v1', kind: 'KruiseRuntime', name: this.node.id, path: this.node.path };
    return this.features.map((feature, i) => ({ feature, resource, pointer: `/features/${i}` }));
  }

  /** Target PLATFORM: the app's uses against the installed runtime; nothing is rendered. */
  private analyzeAgainstPlatform(
    objects: readonly SourcedObject[],
    uses: readonly FeatureUse[],
    installed: { readonly caps: RuntimeCapabilities; readonly source: string; readonly refresh: string },
  ): KruiseRuntimeReport {
    const { caps, source, refresh } = installed;
    const gates = resolveGates(gatesForUses(uses, caps.runtime), {});
    const support = runtimeSupport(uses, caps.runtime);
    const errors = [...support.errors, ...capabilityErrors(uses, objects, caps, source, refresh)];
    if (caps.runtime === 'upstream') errors.push(...this.upstreamSchemaErrors(objects));
    return {
      uses,
      gates,
      daemon: false,
      podWebhook: false,
      errors: [...new Set(errors)],
      warnings: [...new Set(support.warnings)],
      gatesTable: gatesMarkdownTable(gates),
      capabilities: caps,
    };
  }

  /**
   * Schema check of the Kruise objects we model against the API model, which mirrors upstream's
   * v1alpha1 CRDs: upstream's API server would reject (or silently prune) what fails here.
   */
  private upstreamSchemaErrors(objects: readonly SourcedObject[]): string[] {
    const errors: string[] = [];
    for (const src of objects) {
      if (!isKruiseApiVersion(src.object.apiVersion) || !findKind(src.object.apiVersion, src.object.kind)) continue;
      for (const issue of validateObject(src.object).issues) {
        errors.push(`${describeRef(refOf(src))} at ${issue.jsonPointer || '/'}: ${issue.message}${issue.hint ? ` (${issue.hint})` : ''}`);
      }
    }
    return errors;
  }

  private buildSpec(report?: KruiseRuntimeReport, forceDaemon = false): InstallSpec {
    const p = this.props;
    const gates = report?.gates ?? resolveGates([], this.overrides);
    const daemon = forceDaemon || (report?.daemon ?? p.daemon?.placement === DaemonPlacement.ALWAYS);
    return {
      namespace: this.runtimeNamespace,
      daemonConfigNamespace: p.daemonConfigNamespace ?? DAEMON_CONFIG_NAMESPACE,
      image: this.image.reference,
      imagePullPolicy: (p.imagePullPolicy ?? ImagePullPolicy.IF_NOT_PRESENT) as InstallSpec['imagePullPolicy'],
      imagePullSecrets: secretNames(p.imagePullSecrets, `${this.node.path}: imagePullSecrets`) ?? [],
      manager: {
        replicas: p.replicas ?? 2,
        resources: toResources(p.managerResources, DEFAULT_MANAGER_RESOURCES),
        logLevel: p.logLevel ?? RuntimeLogLevel.INFO,
        priorityClassName: p.priorityClassName,
        placement: this.managerPlacement,
        ports: this.managerPorts,
      },
      daemon: daemon
        ? {
            resources: toResources(p.daemon?.resources, DEFAULT_DAEMON_RESOURCES),
            criSocket: (p.daemon?.criSocket ?? CriSocket.CONTAINERD).path,
            criSocketGroup: p.daemon?.criSocketGroup,
            logLevel: p.logLevel ?? RuntimeLogLevel.INFO,
            priorityClassName: p.daemon?.priorityClassName,
            exitPriorityEndpoint: report?.uses.some((u) => u.feature === AppFeature.CONTAINER_EXIT_PRIORITY) ?? false,
            placement: this.daemonPlacement,
            port: p.daemon?.port,
          }
        : undefined,
      webhook: {
        timeoutSeconds: p.webhookTimeout?.toSeconds() ?? 10,
        pods: report?.podWebhook ?? p.alwaysRegisterPodWebhook === true,
        podFailClosed:
          (p.podWebhookFailClosed ?? PodWebhookFailClosed.NEEDED) === PodWebhookFailClosed.ALL_PODS
            ? { mode: 'all' }
            : { mode: 'needed', sidecarSets: this.sidecarSets },
        // Upstream's gate is off by default since v1.8: the webhook comes with the gate, on when the app labels an object.
        deletionProtection: gates.values.get('ResourcesDeletionProtection') === true,
        // Upstream's delete gate is on by default: the webhook comes with a budget in the app (or the gate forced on).
        podUnavailableBudget:
          gates.values.get('PodUnavailableBudgetDeleteGate') === true &&
          ((report?.uses.some((u) => u.feature === AppFeature.POD_UNAVAILABLE_BUDGET) ?? false) ||
            this.overrides.PodUnavailableBudgetDeleteGate === true)
            ? { update: gates.values.get('PodUnavailableBudgetUpdateGate') === true }
            : undefined,
        certificates: (p.certificates ?? WebhookCertificates.selfManaged())._spec,
      },
      featureGates: bundledFeatureGatesFlag(gates),
      kinds: servedKinds(),
      syncWave: p.syncWaves ? RUNTIME_WAVE : undefined,
      metrics: metricsSpecOf(p.metrics, this.node.path),
      serviceAccountAnnotations: this.serviceAccountAnnotations,
      createNamespaces: p.createNamespace ?? true,
    };
  }

  /** Creates, keeps or removes child ApiObjects so they match one rendering of the install. */
  private sync(spec: InstallSpec): void {
    const next = new Map(renderRuntime(spec).map((o) => [objectId(o), o]));
    this.rendered = next;
    for (const [id, obj] of this.objects) {
      if (!next.has(id)) {
        this.node.tryRemoveChild(obj.node.id);
        this.objects.delete(id);
      }
    }
    for (const [id, o] of next) {
      if (this.objects.has(id)) continue;
      const obj = new RenderedObject(this, id, o, () => this.rendered.get(id));
      this.objects.set(id, obj);
      const patches = this.patches.get(`${o.kind}/${o.metadata?.name}` as RuntimeObject);
      if (patches) obj.addJsonPatch(...patches);
    }
    // Admission webhooks go last in the file: registered once their backend has been applied.
    const hooks = [...this.objects.values()].filter((o) => o.kind.endsWith('WebhookConfiguration'));
    const others = [...this.objects.values()].filter((o) => !o.kind.endsWith('WebhookConfiguration'));
    for (const h of hooks) for (const o of others) if (!h.node.dependencies.includes(o)) h.addDependency(o);
  }

  /**
   * Runs at synth (validation phase, before any chart renders): decide, render, order, report. cdk8s
   * validates the app again inside every chart's rendering: within one App.synth() the first result stands.
   */
  private prepare(): string[] {
    const scope = currentSynthScope();
    if (scope !== undefined && this.preparedIn?.scope === scope) return [...this.preparedIn.errors];
    const errors = this.prepareNow(scope !== undefined);
    this.preparedIn = scope === undefined ? undefined : { scope, errors };
    return errors;
  }

  private preparedIn?: { scope: number; errors: string[] };

  private prepareNow(shared: boolean): string[] {
    const analysis = this.analyze(shared);
    let report = analysis;
    this.lastReport = report;
    if (report.errors.length > 0) return [...report.errors];
    if (this.target === RuntimeTarget.BUNDLED) {
      const spec = this.buildSpec(report);
      report = { ...analysis, capabilities: capabilitiesOf(spec) };
      this.lastReport = report;
      this.sync(spec);
      const patchErrors = this.patchErrors();
      if (patchErrors.length > 0) return patchErrors;
      const conflicts = this.conflictsWithOtherApps();
      if (conflicts.length > 0) return conflicts;
      this.recordIgnoredGates();
      if (this.props.orderBeforeApp ?? true) this.orderApp();
    }
    this.printOnce(report);
    return [];
  }

  /**
   * Gates forced in featureGates that the bundled runtime does not know never reach its `--feature-gates` flag;
   * they are recorded on the manager Deployment so the output shows them and the policy rule KRUISE-RUNTIME-002
   * reports them (counted in every report format, honoured by --warnings-as-errors).
   */
  private recordIgnoredGates(): void {
    const ignored = Object.entries(this.overrides)
      .filter(([g]) => !(g in BUNDLED_RUNTIME_GATES))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([g, v]) => `${g}=${v}`);
    if (ignored.length === 0) return;
    const manager = [...this.objects.values()].find((o) => o.kind === 'Deployment' && o.metadata.name === NAMES.managerDeployment);
    manager?.metadata.addAnnotation(ANNOTATION_IGNORED_FEATURE_GATES, ignored.join(','));
  }

  private orderApp(): void {
    const root = App.of(this);
    for (const c of root.node.findAll()) {
      if (!Chart.isChart(c) || c === this || c === this.crds) continue;
      // Only outermost charts: nested ones are ordered by their parent chart.
      if (c.node.scopes.slice(0, -1).some((s) => Chart.isChart(s))) continue;
      if (this.node.dependencies.includes(c) || c.node.dependencies.includes(this)) continue;
      c.addDependency(this);
    }
  }

  private printOnce(report: KruiseRuntimeReport): void {
    // Warnings are not printed here: the output carries what they are about (feature uses, the manager's
    // ignored-gates annotation), and the policy rules KRUISE-RUNTIME-001/002 report them in every report format.
    const lines: string[] = [];
    if (this.target === RuntimeTarget.OPENKRUISE && report.gates.required.size > 0) {
      const flag = [...report.gates.required.keys()].map((g) => `${g}=true`).join(',');
      lines.push(`cdk8s-kruise: target openkruise: run OpenKruise with --feature-gates=${flag} (Helm: --set featureGates="${flag}")`);
    }
    const text = lines.join('\n');
    // Printed once per distinct content: validation may run more than once per synth.
    if (text && text !== this.printedFor) {
      process.stderr.write(`${text}\n`);
      this.printedFor = text;
    }
  }
}

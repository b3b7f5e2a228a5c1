import { IConstruct } from 'constructs';

/**
 * cdk8s context key holding the Kubernetes version the app targets, as a string such as
 * `"1.29"` or `"v1.30.2"`. From 1.29 on, Job sidecar termination and container exit
 * priorities compile to native sidecars; below it, to the OpenKruise env/annotation contracts.
 *
 * Set it once per app (`app.node.setContext(KUBERNETES_VERSION_CONTEXT, '1.29')`) or per chart.
 */
export const KUBERNETES_VERSION_CONTEXT = 'cdk8s-kruise:kubernetesVersion';

/**
 * cdk8s context key that forces a {@link SidecarStrategy} (`"native"` or `"kruise"`),
 * overriding the choice derived from {@link KUBERNETES_VERSION_CONTEXT}.
 */
export const SIDECAR_STRATEGY_CONTEXT = 'cdk8s-kruise:sidecarStrategy';

/** How pod-level sidecar features (Job sidecar termination, container exit priority) compile. */
export enum SidecarStrategy {
  /**
   * OpenKruise contracts: `KRUISE_TERMINATE_SIDECAR_*` env markers and the
   * `kruise.io/container-exit-priority` annotation, acted on by the Kruise runtime.
   */
  KRUISE = 'kruise',
  /**
   * Kubernetes native sidecars (initContainers with `restartPolicy: Always`, GA-on-by-default
   * from 1.29), ordered so that reverse-declaration exit order honours the declared priorities.
   * Needs no runtime.
   */
  NATIVE = 'native',
}

/** The first Kubernetes minor version (1.x) where native sidecars are enabled by default. */
export const NATIVE_SIDECARS_MIN_MINOR = 29;

/** Parses `"1.29"`, `"v1.29.3"` or `"1.29.0-gke.1"` into `{major, minor}`. */
export function parseKubernetesVersion(value: unknown, where: string): { major: number; minor: number } {
  if (typeof value !== 'string') {
    throw new Error(
      `[${where}] context "${KUBERNETES_VERSION_CONTEXT}" must be a string like "1.29" ` +
        `(got ${typeof value} ${JSON.stringify(value)}; numbers lose precision: 1.30 === 1.3). Fix: quote the version.`,
    );
  }
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$/.exec(value.trim());
  if (!m) {
    throw new Error(
      `[${where}] context "${KUBERNETES_VERSION_CONTEXT}" = ${JSON.stringify(value)} is not a Kubernetes version; ` +
        'expected "<major>.<minor>[.<patch>]", e.g. "1.29".',
    );
  }
  return { major: Number(m[1]), minor: Number(m[2]) };
}

/**
 * The sidecar strategy in effect for `scope`: {@link SIDECAR_STRATEGY_CONTEXT} if set, else
 * derived from {@link KUBERNETES_VERSION_CONTEXT}, else {@link SidecarStrategy.KRUISE}
 * (upstream-compatible output).
 */
export function sidecarStrategyOf(scope: IConstruct): SidecarStrategy {
  const where = () => scope.node.path || '<app>';
  const forced: unknown = scope.node.tryGetContext(SIDECAR_STRATEGY_CONTEXT);
  if (forced !== undefined) {
    if (forced === SidecarStrategy.KRUISE || forced === SidecarStrategy.NATIVE) return forced;
    throw new Error(
      `[${where()}] context "${SIDECAR_STRATEGY_CONTEXT}" = ${JSON.stringify(forced)} is invalid; ` +
        `use "${SidecarStrategy.KRUISE}" or "${SidecarStrategy.NATIVE}".`,
    );
  }
  const version: unknown = scope.node.tryGetContext(KUBERNETES_VERSION_CONTEXT);
  if (version === undefined) return SidecarStrategy.KRUISE;
  const { major, minor } = parseKubernetesVersion(version, where());
  return major > 1 || minor >= NATIVE_SIDECARS_MIN_MINOR ? SidecarStrategy.NATIVE : SidecarStrategy.KRUISE;
}

/** What the compiler knows about native sidecars in `scope`: the strategy, whether the cluster has them, and how it knows. */
export interface NativeSidecarFacts {
  readonly strategy: SidecarStrategy;
  /** Kubernetes >= 1.29 by {@link KUBERNETES_VERSION_CONTEXT}, or the native strategy forced by {@link SIDECAR_STRATEGY_CONTEXT}. */
  readonly nativeAvailable: boolean;
  /** The contexts behind it, for messages. */
  readonly versionText: string;
}

/** The native-sidecar facts of `scope` (see {@link sidecarStrategyOf}). */
export function nativeSidecarFactsOf(scope: IConstruct): NativeSidecarFacts {
  const strategy = sidecarStrategyOf(scope);
  const version: unknown = scope.node.tryGetContext(KUBERNETES_VERSION_CONTEXT);
  const forced: unknown = scope.node.tryGetContext(SIDECAR_STRATEGY_CONTEXT);
  let nativeAvailable = strategy === SidecarStrategy.NATIVE;
  const parts: string[] = [];
  if (version === undefined) parts.push(`context "${KUBERNETES_VERSION_CONTEXT}" is not set`);
  else {
    const { major, minor } = parseKubernetesVersion(version, scope.node.path || '<app>');
    if (major > 1 || minor >= NATIVE_SIDECARS_MIN_MINOR) nativeAvailable = true;
    parts.push(`context "${KUBERNETES_VERSION_CONTEXT}" is ${JSON.stringify(version)}`);
  }
  if (forced !== undefined) parts.push(`context "${SIDECAR_STRATEGY_CONTEXT}" is ${JSON.stringify(forced)}`);
  return { strategy, nativeAvailable, versionText: parts.join(' and ') };
}

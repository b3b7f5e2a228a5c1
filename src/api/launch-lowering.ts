/**
 * Container launch priority lowered to Kubernetes native sidecars (restartable init containers, Kubernetes >= 1.29).
 *
 * The kubelet starts init containers one at a time, in order, and starts a restartable one's successor only once it
 * has started (its startupProbe succeeded, when it has one); all regular containers start together after the last.
 * So an order lowers only when every priority level above the lowest holds exactly one container: those containers
 * become restartable init containers, highest priority first, and the lowest level stays in `spec.containers`.
 * Anything else (two containers sharing a level above the lowest) keeps upstream's barrier: env
 * `KRUISE_CONTAINER_PRIORITY` or the `Ordered` annotation, and one `<pod>-barrier` ConfigMap per pod.
 *
 * A lowered container is a sidecar for its whole life, not only at start: the kubelet stops it after the regular
 * containers, and in a pod with restartPolicy Never or OnFailure (a Job's) it no longer keeps the pod running. The
 * decision therefore refuses what would change a pod's behaviour beyond its start order (see {@link decideLaunchLowering}).
 */

/** How a workload's launch priority is carried out. */
export const LAUNCH_MECHANISMS = ['auto', 'barrier', 'native-sidecars'] as const;
export type LaunchMechanismValue = (typeof LAUNCH_MECHANISMS)[number];

/** What the decision needs to know about one pod template and the app. */
export interface LaunchLoweringInput {
  /** Names of `spec.containers`, in spec order. */
  readonly containers: readonly string[];
  /** Start in spec order (upstream's `Ordered`). */
  readonly ordered: boolean;
  /** Declared priorities by container (default 0); ignored when `ordered`. */
  readonly priorities: ReadonlyMap<string, number>;
  /** `auto` lowers when the sidecar strategy is native; `barrier` never; `native-sidecars` must lower or fail. */
  readonly mechanism: LaunchMechanismValue;
  /** The app's pod features compile to native sidecars (Kubernetes >= 1.29, or the strategy forced to native). */
  readonly strategyNative: boolean;
  /** The cluster runs native sidecars: kubernetesVersion >= 1.29, or the native strategy forced. */
  readonly nativeAvailable: boolean;
  /** How the app states its Kubernetes version, for messages (e.g. `context cdk8s-kruise:kubernetesVersion = "1.28"`). */
  readonly versionText: string;
  /** The pod's restartPolicy (undefined = Always). */
  readonly restartPolicy?: string;
  /** Containers declared as Job sidecars (by name, or by a pattern that matches them at synth). */
  readonly jobSidecars: ReadonlySet<string>;
  /** Declared exit priorities (absent = 0). */
  readonly exitPriority: ReadonlyMap<string, number>;
}

/** The outcome for one pod template. */
export type LaunchLowering =
  /** No launch order (one container, or every container at the same priority): nothing to compile. */
  | { readonly kind: 'none' }
  /** Upstream's barrier (env or annotation, one ConfigMap per pod); `reason` says why it did not lower. */
  | { readonly kind: 'barrier'; readonly reason: string }
  /** `sidecars` become restartable init containers in this order; `rest` stay regular containers. */
  | { readonly kind: 'native'; readonly sidecars: readonly string[]; readonly rest: readonly string[] }
  /** Forced native lowering that cannot be done: the message and how to fix it. */
  | { readonly kind: 'error'; readonly message: string; readonly fix: string };

/** Each container's launch priority in spec order (upstream: Ordered gives container i priority -i). */
export function launchPrioritiesOf(input: Pick<LaunchLoweringInput, 'containers' | 'ordered' | 'priorities'>): number[] {
  return input.containers.map((name, i) => (input.ordered ? -i : (input.priorities.get(name) ?? 0)));
}

const quoted = (names: readonly string[]) => names.map((n) => `"${n}"`).join(', ');

/**
 * Whether and how one pod template's launch order lowers to native sidecars. Pure. In order:
 * 1. no order (fewer than two containers, equal priorities) → none;
 * 2. mechanism `barrier` → barrier; `auto` without the native strategy → barrier; `native-sidecars` on a cluster
 *    without native sidecars → error;
 * 3. the shape: a level above the lowest with two or more containers does not lower;
 * 4. a Job pod (restartPolicy Never/OnFailure): each lowered container must be a declared Job sidecar, since a
 *    native sidecar no longer keeps the pod running;
 * 5. exit order: native sidecars stop in reverse start order, after the regular containers; under the native
 *    strategy the exit-priority sidecars follow the lowered ones, so exit priorities must not rise along the start
 *    order; under the Kruise strategy a lowered container may carry neither a Job sidecar nor an exit-priority
 *    marker (those markers are read on regular containers only).
 * Each refusal is a barrier with its reason under `auto`, an error under `native-sidecars`.
 */
export function decideLaunchLowering(input: LaunchLoweringInput): LaunchLowering {
  const priorities = launchPrioritiesOf(input);
  if (input.containers.length <= 1 || priorities.every((p) => p === priorities[0])) return { kind: 'none' };
  if (input.mechanism === 'barrier') return { kind: 'barrier', reason: 'the construct asks for the barrier (LaunchMechanism.BARRIER)' };
  const forced = input.mechanism === 'native-sidecars';
  if (!forced && !input.strategyNative) {
    return {
      kind: 'barrier',
      reason: `native sidecars need Kubernetes >= 1.29 and the app's pod features compile to the Kruise contracts (${input.versionText})`,
    };
  }
  if (forced && !input.nativeAvailable) {
    return {
      kind: 'error',
      message: `LaunchMechanism.NATIVE_SIDECARS needs Kubernetes >= 1.29, but ${input.versionText}`,
      fix: 'set the context cdk8s-kruise:kubernetesVersion to "1.29" or later, or use LaunchMechanism.AUTO or BARRIER',
    };
  }
  const refuse = (why: string, fix: string): LaunchLowering =>
    forced
      ? { kind: 'error', message: `LaunchMechanism.NATIVE_SIDECARS cannot carry out this order: ${why}`, fix }
      : { kind: 'barrier', reason: why };

  // Levels, highest priority first; within a level, spec order.
  const levels = [...new Set(priorities)].sort((a, b) => b - a);
  const members = levels.map((level) => input.containers.filter((_, i) => priorities[i] === level));
  const upper = members.slice(0, -1);
  const shared = upper.find((m) => m.length > 1);
  if (shared) {
    return refuse(
      `containers ${quoted(shared)} share a priority above the lowest, and native sidecars start one at a time`,
      'give each container above the lowest level a priority of its own, or use LaunchMechanism.AUTO to keep the barrier for this order',
    );
  }
  const sidecars = upper.map((m) => m[0]!);
  const rest = members[members.length - 1]!;
  const policy = input.restartPolicy ?? 'Always';
  if (policy === 'Never' || policy === 'OnFailure') {
    const undeclared = sidecars.filter((n) => !input.jobSidecars.has(n));
    if (undeclared.length > 0) {
      return refuse(
        `in a pod with restartPolicy ${policy}, ${quoted(undeclared)} would become native sidecars, which the kubelet stops ` +
          'once the other containers finish instead of waiting for them, and they are not declared Job sidecars',
        `declare them with JobSidecarTermination.of(workload).terminate(...) if they are sidecars, or use LaunchMechanism.AUTO to keep the barrier`,
      );
    }
  }
  const exitOf = (n: string) => input.exitPriority.get(n) ?? 0;
  if (input.strategyNative) {
    // The init containers will be: the lowered ones in start order, then the other exit-priority and Job sidecars.
    const others = [...new Set([...input.jobSidecars, ...[...input.exitPriority].filter(([, p]) => p > 0).map(([n]) => n)])].filter(
      (n) => !sidecars.includes(n) && input.containers.includes(n),
    );
    const chain = [...sidecars, ...(others.length > 0 ? [others.reduce((a, b) => (exitOf(a) >= exitOf(b) ? a : b))] : [])];
    for (let i = 1; i < chain.length; i++) {
      const before = chain[i - 1]!;
      const after = chain[i]!;
      if (exitOf(after) > exitOf(before)) {
        return refuse(
          `"${before}" must start before "${after}", so as native sidecars it would stop after it, but its exit priority ` +
            `(${exitOf(before)}) is below "${after}"'s (${exitOf(after)})`,
          'give the containers that start first an exit priority at least as high as those that start after them, or use LaunchMechanism.AUTO',
        );
      }
    }
  } else {
    const marked = sidecars.filter((n) => input.jobSidecars.has(n) || exitOf(n) > 0);
    if (marked.length > 0) {
      return refuse(
        `${quoted(marked)} would become native sidecars, but the sidecar strategy is kruise, whose Job sidecar and exit-priority ` +
          'markers are read on regular containers only',
        'drop the forced cdk8s-kruise:sidecarStrategy "kruise" context (so those features compile to native sidecars too), or use LaunchMechanism.AUTO',
      );
    }
  }
  return { kind: 'native', sidecars, rest };
}

/** A readiness or startup probe, as far as deriving a start gate needs it. */
export interface ProbeJson {
  readonly initialDelaySeconds?: number;
  readonly periodSeconds?: number;
  readonly timeoutSeconds?: number;
  readonly successThreshold?: number;
  readonly failureThreshold?: number;
  readonly terminationGracePeriodSeconds?: number;
  readonly [handler: string]: unknown;
}

/** How long a lowered container may take to pass the start gate derived from its readiness probe before the kubelet restarts it. */
export const LOWERED_START_WINDOW_SECONDS = 600;

/**
 * The start gate of a lowered container that has a readiness probe: that probe's check and timing (the barrier
 * released the next level once the container was ready), with successThreshold 1 (required for startup probes) and a
 * failure threshold that allows {@link LOWERED_START_WINDOW_SECONDS}. Undefined without a readiness probe: then, as
 * under the barrier, the container counts as started once it runs.
 */
export function startupProbeFromReadiness(readiness: ProbeJson | undefined): ProbeJson | undefined {
  if (readiness === undefined || readiness === null || typeof readiness !== 'object') return undefined;
  const period = typeof readiness.periodSeconds === 'number' && readiness.periodSeconds > 0 ? readiness.periodSeconds : 10;
  const probe: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(readiness)) {
    if (key === 'successThreshold' || key === 'failureThreshold' || key === 'terminationGracePeriodSeconds') continue;
    // A copy: an object shared with the readiness probe would be written out as a YAML anchor and alias.
    probe[key] = structuredClone(value);
  }
  probe.failureThreshold = Math.ceil(LOWERED_START_WINDOW_SECONDS / period);
  probe.successThreshold = 1;
  // Sorted keys, as cdk8s writes every other object.
  return Object.fromEntries(
    Object.keys(probe)
      .sort()
      .map((k) => [k, probe[k]]),
  ) as ProbeJson;
}

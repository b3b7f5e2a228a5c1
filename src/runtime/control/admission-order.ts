/**
 * Where each admission step of the runtime's units runs in its path's chain. Core composes handlers that share a
 * path in their `order` (lower first) and refuses two equal orders; these are the orders the webhooks agree on,
 * named in one place so a new step is placed against the others and not by a number picked alone.
 */

/**
 * The pod webhook's mutators on `/mutate-pod`: SidecarSet injection first (later steps must see the injected
 * containers), then the readiness gates of pods owned by Kruise workloads, then container launch and exit
 * priority (they wire every container, injected ones included), then enhanced liveness (it moves the liveness
 * probes of every container, injected ones included, as upstream's step runs after its injection).
 */
export const POD_MUTATOR_ORDER = Object.freeze({
  sidecarSetInjection: 100,
  readinessGates: 200,
  launchPriority: 300,
  exitPriority: 400,
  enhancedLiveness: 500,
});

/** The validating chains on each of our kinds' validate paths. */
export const VALIDATING_CHAIN_ORDER = Object.freeze({
  /** The policy rules of `cdk8s-kruise validate` (webhook `kruisevalidation`): first on every kind's path. */
  policyRules: 100,
  /** A kind's own checks beyond the rules (CloneSet updates, SidecarSets against the cluster): after them. */
  kindChecks: 200,
});

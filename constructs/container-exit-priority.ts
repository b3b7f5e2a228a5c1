import { IConstruct } from 'constructs';
import { exitPriorityValueMessage } from '../src/api/pod-contracts.js';
import { checkContainerName, PodFeatures } from './internal/pod-features.js';
import type { NamedContainer } from './internal/plus-objects.js';
import { InjectedSidecar } from './job-sidecar-termination.js';

/**
 * Container exit priority on any pod-template owner (cdk8s-plus workload, CloneSet, Job, raw
 * ApiObject): main containers (priority 0, the default) stop first, then containers in
 * ascending priority. `{"log-agent": 1, "envoy": 2}` means main containers, then log-agent,
 * then envoy.
 *
 * Compiles per the app's {@link SidecarStrategy}:
 * - native sidecars (Kubernetes >= 1.29 when chosen): declared highest-priority-first; the kubelet
 *   stops them in reverse declaration order after the main containers; no runtime needed.
 * - otherwise the `kruise.io/container-exit-priority` annotation, carried out by the bundled runtime
 *   (never by upstream OpenKruise): its pod webhook gives each prioritised container a preStop hook
 *   to the node daemon, which holds it until the lower levels have exited or the level's share of
 *   terminationGracePeriodSeconds (at least 2 s per level) is spent; the container's own preStop
 *   still runs after the wait.
 *
 * Names, values and the grace period are checked at synth (construct path and JSON pointer).
 *
 * @example
 * ContainerExitPriority.of(cloneSet).set('log-agent', 1).set('envoy', 2);
 */
export class ContainerExitPriority {
  /** The exit priorities of `owner`'s pod template. */
  public static of(owner: IConstruct): ContainerExitPriority {
    return new ContainerExitPriority(owner);
  }

  private readonly features: PodFeatures;

  private constructor(private readonly owner: IConstruct) {
    this.features = PodFeatures.of(owner);
  }

  /**
   * Sets the exit priority of one container (by name or object), or of the containers an {@link InjectedSidecar}
   * declares by name or pattern (e.g. a mesh proxy another webhook injects, so the app stops before it): those compile
   * to annotation `kruise.cdk8s.io/container-exit-priority-patterns`, which the bundled pod webhook resolves on the
   * pod it admits, whatever the sidecar strategy.
   *
   * @param priority a non-negative integer; larger exits later; 0 = with the main containers.
   */
  public set(container: string | NamedContainer | InjectedSidecar, priority: number): this {
    const where = this.owner.node.path;
    if (container instanceof InjectedSidecar) {
      // By name or pattern: resolved by the bundled pod webhook on the live pod, after other webhooks added theirs.
      const bad = exitPriorityValueMessage(container.description, priority);
      if (bad) throw new Error(`[${where}] exit priority: ${bad}.`);
      this.features.exitPriorityPatterns.push({ match: container.match, priority });
      return this;
    }
    const name = typeof container === 'string' ? container : container.name;
    checkContainerName(name, where);
    const bad = exitPriorityValueMessage(name, priority);
    if (bad) throw new Error(`[${where}] exit priority: ${bad}.`);
    this.features.exitPriority.set(name, priority);
    return this;
  }

  /** Sets several exit priorities at once, e.g. `{ 'log-agent': 1, envoy: 2 }`. */
  public setAll(priorities: { [containerName: string]: number }): this {
    for (const [name, priority] of Object.entries(priorities)) this.set(name, priority);
    return this;
  }

  /** The declared priorities (a copy). */
  public get priorities(): { [containerName: string]: number } {
    return Object.fromEntries(this.features.exitPriority);
  }
}

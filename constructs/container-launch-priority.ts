import { IConstruct } from 'constructs';
import { parseLaunchPriority } from '../src/api/pod-contracts.js';
import { checkContainerName, PodFeatures } from './internal/pod-features.js';
import type { NamedContainer } from './internal/plus-objects.js';

/** Largest launch priority (and smallest, negated), as upstream OpenKruise accepts it. */
export const MAX_LAUNCH_PRIORITY = 2147483647;

/**
 * Container launch priority on any pod-template owner, upstream OpenKruise-compatible: containers with a
 * higher priority start first, and a container starts only once every container of a higher priority is
 * ready. Either {@link inOrder} (annotation `apps.kruise.io/container-launch-priority: Ordered`: spec
 * order) or per-container priorities with {@link set} (env `KRUISE_CONTAINER_PRIORITY`, default 0).
 *
 * Carried out by the pod webhook and barrier controller of both the bundled runtime and upstream
 * OpenKruise (gate PodWebhook): each container waits on a key of ConfigMap `<pod>-barrier`, which the
 * controller fills highest priority first.
 *
 * @example
 * ContainerLaunchPriority.of(deployment).set('envoy', 10).set('app', 0);
 * ContainerLaunchPriority.of(job).inOrder();
 */
export class ContainerLaunchPriority {
  /** The launch priorities of `owner`'s pod template. */
  public static of(owner: IConstruct): ContainerLaunchPriority {
    return new ContainerLaunchPriority(owner);
  }

  private readonly features: PodFeatures;

  private constructor(private readonly owner: IConstruct) {
    this.features = PodFeatures.of(owner);
  }

  /** Starts the containers one after another in the order they are declared. */
  public inOrder(): this {
    if (this.features.launchPriority.size > 0) {
      throw new Error(
        `[${this.owner.node.path}] launch priority: inOrder() and set() exclude each other (upstream ignores the priorities once Ordered is set).`,
      );
    }
    this.features.launchOrdered = true;
    return this;
  }

  /**
   * Sets the launch priority of one container (by name or object).
   *
   * @param priority an integer within ±2147483647; higher starts first; 0 is the default.
   */
  public set(container: string | NamedContainer, priority: number): this {
    const name = typeof container === 'string' ? container : container.name;
    const where = this.owner.node.path;
    checkContainerName(name, where);
    if (this.features.launchOrdered) {
      throw new Error(
        `[${where}] launch priority: inOrder() and set() exclude each other (upstream ignores the priorities once Ordered is set).`,
      );
    }
    // The message of the webhook and `validate` for the env value this compiles to.
    const issue = typeof priority === 'number' ? parseLaunchPriority(String(priority)).issues[0] : { message: 'not a number' };
    if (issue) throw new Error(`[${where}] launch priority of container "${name}": ${issue.message}.`);
    this.features.launchPriority.set(name, priority);
    return this;
  }

  /** The declared priorities (a copy); empty under {@link inOrder}. */
  public get priorities(): { [containerName: string]: number } {
    return Object.fromEntries(this.features.launchPriority);
  }

  /** Whether {@link inOrder} was chosen. */
  public get ordered(): boolean {
    return this.features.launchOrdered;
  }
}

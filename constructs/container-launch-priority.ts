import { IConstruct } from 'constructs';
import type { LaunchMechanismValue } from '../src/api/launch-lowering.js';
import { parseLaunchPriority } from '../src/api/pod-contracts.js';
import { checkContainerName, PodFeatures } from './internal/pod-features.js';
import type { NamedContainer } from './internal/plus-objects.js';

/** How a launch order is carried out. */
export enum LaunchMechanism {
  /**
   * Native sidecars when the app's pod features compile to them (context `cdk8s-kruise:kubernetesVersion` >= 1.29)
   * and the order can be expressed by them; the barrier otherwise. The default.
   */
  AUTO = 'auto',
  /** Always upstream's barrier: one `<pod>-barrier` ConfigMap per pod, carried out by the pod webhook and its controller. */
  BARRIER = 'barrier',
  /** Native sidecars, or a synth error naming why the order or the cluster cannot have them. */
  NATIVE_SIDECARS = 'native-sidecars',
}

/** Options of {@link ContainerLaunchPriority.of}. */
export interface ContainerLaunchPriorityOptions {
  /** How the order is carried out. @default LaunchMechanism.AUTO */
  readonly mechanism?: LaunchMechanism;
}

/** Largest launch priority (and smallest, negated), as upstream OpenKruise accepts it. */
export const MAX_LAUNCH_PRIORITY = 2147483647;

/**
 * Container launch priority on any pod-template owner, upstream OpenKruise-compatible: containers with a
 * higher priority start first, and a container starts only once every container of a higher priority is
 * ready. Either {@link inOrder} (annotation `apps.kruise.io/container-launch-priority: Ordered`: spec
 * order) or per-container priorities with {@link set} (env `KRUISE_CONTAINER_PRIORITY`, default 0).
 *
 * Carried out one of two ways ({@link LaunchMechanism}):
 * - native sidecars, when the app targets Kubernetes >= 1.29 (context `cdk8s-kruise:kubernetesVersion`) and every
 *   priority level above the lowest holds one container: those containers become restartable init containers
 *   (`restartPolicy: Always`), highest first, each gated by its startupProbe (or one derived from its readinessProbe),
 *   and the kubelet orders the start; no runtime, no ConfigMap. The pod template records it in annotation
 *   `kruise.cdk8s.io/launch-priority-lowered`. A lowered container is then a sidecar for its whole life (stopped after
 *   the other containers), so in a Job pod only declared Job sidecars lower.
 * - otherwise the pod webhook and barrier controller of both the bundled runtime and upstream OpenKruise (gate
 *   PodWebhook): each container waits on a key of ConfigMap `<pod>-barrier`, which the controller fills highest
 *   priority first.
 *
 * `synth` notes which one each workload got (rule KRUISE-LAUNCHPRIO-002).
 *
 * @example
 * ContainerLaunchPriority.of(deployment).set('envoy', 10).set('app', 0);
 * ContainerLaunchPriority.of(job).inOrder();
 */
export class ContainerLaunchPriority {
  /** The launch priorities of `owner`'s pod template. */
  public static of(owner: IConstruct, options: ContainerLaunchPriorityOptions = {}): ContainerLaunchPriority {
    return new ContainerLaunchPriority(owner, options);
  }

  private readonly features: PodFeatures;

  private constructor(
    private readonly owner: IConstruct,
    options: ContainerLaunchPriorityOptions,
  ) {
    this.features = PodFeatures.of(owner);
    const mechanism = options.mechanism;
    if (mechanism === undefined) return;
    if (!Object.values(LaunchMechanism).includes(mechanism)) {
      throw new Error(
        `[${owner.node.path}] launch priority: mechanism ${JSON.stringify(mechanism)} is not one of ${Object.values(LaunchMechanism).join(', ')}.`,
      );
    }
    const earlier = this.features.launchMechanism;
    const value: LaunchMechanismValue = mechanism;
    if (earlier !== undefined && earlier !== value) {
      throw new Error(
        `[${owner.node.path}] launch priority: mechanism "${mechanism}" conflicts with "${earlier}" given earlier for the same workload. ` +
          'Fix: pass the same mechanism each time, or pass it once.',
      );
    }
    this.features.launchMechanism = value;
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

  /** The mechanism asked for ({@link LaunchMechanism.AUTO} unless given). */
  public get mechanism(): LaunchMechanism {
    return (this.features.launchMechanism as LaunchMechanism | undefined) ?? LaunchMechanism.AUTO;
  }

  /** Whether {@link inOrder} was chosen. */
  public get ordered(): boolean {
    return this.features.launchOrdered;
  }
}

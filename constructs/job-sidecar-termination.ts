import * as kplus from 'cdk8s-plus-27';
import { IConstruct } from 'constructs';
import { checkImage, imageReferenceMessage } from './internal/image-reference.js';
import { checkContainerName, PodFeatures } from './internal/pod-features.js';
import { describeConstruct, isPlusPodOwner, type NamedContainer } from './internal/plus-objects.js';

export { imageReferenceMessage };

/**
 * @deprecated Use {@link imageReferenceMessage} (the same function). This name is kept for existing imports of
 * `cdk8s-kruise/constructs`; inside the project `imageReferenceError` is the contract layer's reason-only check.
 */
export const imageReferenceError: (image: string) => string | undefined = imageReferenceMessage;

/** How a sidecar is stopped once the Job's main containers are done. */
export class SidecarTerminationMode {
  /**
   * Kill mode (default): the Kruise runtime kills the sidecar through a
   * ContainerRecreateRequest. Compiles to env `KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true`.
   */
  public static kill(): SidecarTerminationMode {
    return new SidecarTerminationMode(undefined);
  }

  /**
   * Quick-exit-image mode, for pods on virtual-kubelet nodes (no node daemon there): the
   * sidecar's image is replaced in place by `image`, which must exit 0 immediately. Compiles
   * to env `KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE=<image>`.
   *
   * @param image a valid image reference that exits immediately with code 0.
   */
  public static quickExitImage(image: string): SidecarTerminationMode {
    const error = imageReferenceMessage(image);
    if (error) throw new Error(`SidecarTerminationMode.quickExitImage: ${error}`);
    return new SidecarTerminationMode(image);
  }

  private constructor(
    /** The quick-exit image, when in quick-exit-image mode. */
    public readonly quickExitImage: string | undefined,
  ) {}
}

/** Options for {@link JobSidecarTermination.terminate}. */
export interface SidecarTerminationOptions {
  /**
   * How the sidecar is stopped.
   *
   * @default SidecarTerminationMode.kill()
   */
  readonly mode?: SidecarTerminationMode;

  /**
   * Whether the sidecar's own exit code is ignored when the pod phase is decided, so a
   * sidecar that exits non-zero on SIGTERM does not fail the Job. Only honoured in kill mode
   * (env `KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE=true`). Native sidecars never affect the
   * Job's outcome, so this is implied under the native strategy.
   *
   * @default false
   */
  readonly ignoreExitCode?: boolean;
}

/**
 * Job sidecar termination for any pod-template owner whose restartPolicy is Never or
 * OnFailure: a cdk8s-plus `Job` or `Pod`, a CloneSet-like construct, or a raw `ApiObject`
 * Job/CronJob. Marked containers are stopped once every main container has finished, so they
 * no longer keep the Job running.
 *
 * Compiles per the app's {@link SidecarStrategy}: Kruise env markers, or native sidecars.
 * Checked at synth (errors name the construct path): the restart policy, that each named
 * container exists, and that at least one main container remains.
 *
 * @example
 * const job = new kplus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox' }] });
 * JobSidecarTermination.of(job).addSidecar({ name: 'envoy', image: 'envoyproxy/envoy:v1.30' });
 */
export class JobSidecarTermination {
  /** The sidecar termination settings of `owner`'s pod template. */
  public static of(owner: IConstruct): JobSidecarTermination {
    return new JobSidecarTermination(owner);
  }

  private readonly features: PodFeatures;

  private constructor(private readonly owner: IConstruct) {
    if (isPlusPodOwner(owner) && owner.restartPolicy === 'Always') {
      throw new Error(
        `[${owner.node.path}] Job sidecar termination needs restartPolicy Never or OnFailure, but this ` +
          'pod template uses Always. Fix: pass restartPolicy: RestartPolicy.NEVER (or ON_FAILURE).',
      );
    }
    this.features = PodFeatures.of(owner);
  }

  /**
   * Marks an existing container (by name or object) as a sidecar to stop when the main
   * containers finish. The container may also be added later; existence is checked at synth.
   */
  public terminate(container: string | NamedContainer, options: SidecarTerminationOptions = {}): this {
    const name = typeof container === 'string' ? container : container.name;
    const where = this.owner.node.path;
    checkContainerName(name, where);
    const quickExitImage = options.mode?.quickExitImage;
    if (quickExitImage !== undefined && options.ignoreExitCode) {
      throw new Error(
        `[${where}] sidecar "${name}": ignoreExitCode is only honoured in kill mode; ` +
          'a quick-exit image must itself exit 0. Fix: drop ignoreExitCode or use SidecarTerminationMode.kill().',
      );
    }
    this.features.sidecars.set(name, { quickExitImage, ignoreExitCode: options.ignoreExitCode ?? false });
    return this;
  }

  /**
   * Adds a container to a cdk8s-plus pod owner and marks it as a terminated sidecar.
   *
   * @returns the new container.
   */
  public addSidecar(props: kplus.ContainerProps, options: SidecarTerminationOptions = {}): kplus.Container {
    if (!isPlusPodOwner(this.owner)) {
      throw new Error(
        `[${this.owner.node.path}] addSidecar needs a cdk8s-plus pod owner (a Pod, Job, CronJob, Deployment, ` +
          `StatefulSet, DaemonSet or CloneSet, from any cdk8s-plus-NN), but got ${describeConstruct(this.owner)}. ` +
          'For a raw ApiObject, put the container in its spec and call terminate(name).',
      );
    }
    if (!props.name) {
      throw new Error(`[${this.owner.node.path}] addSidecar: the sidecar needs a name (the default "main" is for the main container).`);
    }
    checkImage(props.image, `[${this.owner.node.path}] addSidecar "${props.name}" image`);
    const container = this.owner.addContainer(props) as kplus.Container;
    this.terminate(container, options);
    return container;
  }

  /** Names of the containers marked so far, in declaration order. */
  public get sidecars(): string[] {
    return [...this.features.sidecars.keys()];
  }
}

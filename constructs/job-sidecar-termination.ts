import * as kplus from 'cdk8s-plus-27';
import { IConstruct } from 'constructs';
import {
  describeMatch,
  HTTP_PATH,
  patternProblem,
  type ContainerMatch,
  type SidecarShutdown,
  type TerminatedSidecarPattern,
} from '../src/api/container-patterns.js';
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

/** A clean way to stop a sidecar, tried by the node daemon before SIGTERM (bounded; SIGTERM follows when it fails). */
export class SidecarShutdownMethod {
  /**
   * Runs `command` in the sidecar through the container runtime (like an exec preStop hook). For shutdown endpoints
   * that only answer on the pod's loopback, which a command inside the pod reaches.
   */
  public static exec(command: string[]): SidecarShutdownMethod {
    if (!Array.isArray(command) || command.length === 0 || command.some((w) => typeof w !== 'string' || w.length === 0)) {
      throw new Error(
        `SidecarShutdownMethod.exec: the command must be a non-empty list of non-empty strings, got ${JSON.stringify(command)}`,
      );
    }
    return new SidecarShutdownMethod({ exec: { command: [...command] } });
  }

  /**
   * An HTTP POST from the node daemon to the pod's IP (on the pod's own node) at `port` and `path`. Only for
   * endpoints that listen on the pod IP and accept requests from it; loopback-only endpoints need {@link exec}.
   */
  public static httpPost(port: number, path: string): SidecarShutdownMethod {
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new Error(`SidecarShutdownMethod.httpPost: port must be 1-65535, got ${port}`);
    if (typeof path !== 'string' || !HTTP_PATH.test(path)) {
      throw new Error(`SidecarShutdownMethod.httpPost: path must start with "/" and hold no whitespace, got ${JSON.stringify(path)}`);
    }
    return new SidecarShutdownMethod({ httpPost: { port, path } });
  }

  /** No clean shutdown: the sidecar's preStop, then SIGTERM (the default). */
  public static sigterm(): SidecarShutdownMethod {
    return new SidecarShutdownMethod(undefined);
  }

  private constructor(
    /** The annotation form; undefined for SIGTERM. */
    public readonly spec: SidecarShutdown | undefined,
  ) {}
}

/** Options of an {@link InjectedSidecar}. */
export interface InjectedSidecarOptions {
  /** How it is stopped. @default SidecarShutdownMethod.sigterm(), or the preset's own */
  readonly shutdown?: SidecarShutdownMethod;
  /** Whether its exit code is ignored, so the Job succeeds when the main containers did. @default true */
  readonly ignoreExitCode?: boolean;
}

function regexSource(pattern: RegExp | string, where: string): string {
  const source = typeof pattern === 'string' ? pattern : pattern.source;
  if (typeof pattern !== 'string' && pattern.flags.replace(/[dsu]/g, '') !== '') {
    throw new Error(
      `${where}: flags /${pattern.flags} are not supported (the runtime matches without flags); write e.g. [Pp]roxy instead of /proxy/i`,
    );
  }
  const problem = patternProblem(source);
  if (problem) throw new Error(`${where}: the pattern /${source}/ ${problem}`);
  return source;
}

/**
 * A container declared by name or pattern instead of by a marker on it, so it may be added to the pod after synth by
 * another admission webhook (a service mesh's proxy, a secret agent). Compiles to the pod annotation
 * `kruise.cdk8s.io/terminate-sidecars` (or, for exit priority, `kruise.cdk8s.io/container-exit-priority-patterns`),
 * which the bundled runtime reads on the live pod. Patterns are searched anywhere in the name or image (anchor with ^
 * and $).
 *
 * @example
 * JobSidecarTermination.of(job, { injectedSidecars: [InjectedSidecar.istio(), InjectedSidecar.image(/cloud-sql-proxy/)] });
 */
export class InjectedSidecar {
  /** Istio's `istio-proxy`, shut down with `pilot-agent request POST quitquitquit` inside it (Envoy's admin API answers on the pod loopback only). */
  public static istio(options: InjectedSidecarOptions = {}): InjectedSidecar {
    return InjectedSidecar.named('istio-proxy', {
      shutdown: SidecarShutdownMethod.exec(['pilot-agent', 'request', 'POST', 'quitquitquit']),
      ...options,
    });
  }

  /**
   * Linkerd's `linkerd-proxy`, stopped with SIGTERM: its `POST :4191/shutdown` answers only on the pod's loopback, is off
   * unless the workload enables it, and the proxy image has no shell to reach it from inside; SIGTERM drains it cleanly.
   */
  public static linkerd(options: InjectedSidecarOptions = {}): InjectedSidecar {
    return InjectedSidecar.named('linkerd-proxy', options);
  }

  /** The Vault Agent Injector's `vault-agent` (SIGTERM: the agent has no shutdown endpoint unless its listener enables one). */
  public static vaultAgent(options: InjectedSidecarOptions = {}): InjectedSidecar {
    return InjectedSidecar.named('vault-agent', options);
  }

  /**
   * A Cloud SQL Auth Proxy, by image (v1 `gce-proxy` and v2 `cloud-sql-proxy`), stopped with SIGTERM: its `/quitquitquit`
   * exists only with `--quitquitquit` and listens on the pod's loopback.
   */
  public static cloudSqlProxy(options: InjectedSidecarOptions = {}): InjectedSidecar {
    return new InjectedSidecar({ imagePattern: 'cloud-sql-proxy|cloudsql-proxy|gce-proxy' }, options);
  }

  /** The container with exactly this name. */
  public static named(name: string, options: InjectedSidecarOptions = {}): InjectedSidecar {
    checkContainerName(name, 'InjectedSidecar.named');
    return new InjectedSidecar({ name }, options);
  }

  /** Containers whose name matches `pattern` (no flags). */
  public static namePattern(pattern: RegExp | string, options: InjectedSidecarOptions = {}): InjectedSidecar {
    return new InjectedSidecar({ namePattern: regexSource(pattern, 'InjectedSidecar.namePattern') }, options);
  }

  /** Containers whose image matches `pattern` (no flags), e.g. `/cloud-sql-proxy/`. */
  public static image(pattern: RegExp | string, options: InjectedSidecarOptions = {}): InjectedSidecar {
    return new InjectedSidecar({ imagePattern: regexSource(pattern, 'InjectedSidecar.image') }, options);
  }

  private constructor(
    /** Which containers it means. */
    public readonly match: ContainerMatch,
    private readonly options: InjectedSidecarOptions,
  ) {}

  /** `name "istio-proxy"`, `image pattern /x/`. */
  public get description(): string {
    return describeMatch(this.match);
  }

  /** The annotation entry. */
  public toPattern(): TerminatedSidecarPattern {
    const shutdown = this.options.shutdown?.spec;
    return { match: this.match, ignoreExitCode: this.options.ignoreExitCode ?? true, ...(shutdown ? { shutdown } : {}) };
  }
}

/** Options of {@link JobSidecarTermination.of}. */
export interface JobSidecarTerminationOptions {
  /** Containers (usually injected by another webhook after synth) declared by name or pattern; see {@link InjectedSidecar}. */
  readonly injectedSidecars?: InjectedSidecar[];
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
  public static of(owner: IConstruct, options: JobSidecarTerminationOptions = {}): JobSidecarTermination {
    const termination = new JobSidecarTermination(owner);
    for (const sidecar of options.injectedSidecars ?? []) termination.terminateInjected(sidecar);
    return termination;
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

  /**
   * Declares containers by name or pattern (see {@link InjectedSidecar}): they need not be in the pod template at synth,
   * since the runtime matches them on the live pod, after other webhooks added theirs. Always carried out by the bundled
   * runtime (never compiled to native sidecars: the container is not there to move).
   */
  public terminateInjected(sidecar: InjectedSidecar): this {
    if (!(sidecar instanceof InjectedSidecar)) {
      throw new Error(`[${this.owner.node.path}] terminateInjected needs an InjectedSidecar (InjectedSidecar.named(...), .istio(), ...)`);
    }
    this.features.injectedSidecars.push(sidecar.toPattern());
    return this;
  }

  /** Names of the containers marked so far, in declaration order. */
  public get sidecars(): string[] {
    return [...this.features.sidecars.keys()];
  }
}

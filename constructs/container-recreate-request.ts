import { ApiObject, Duration, Lazy } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { ContainerRecreateRequestSpec } from '../src/api/kinds/containerrecreaterequest.js';
import { KRUISE_API_VERSION } from '../src/contracts/groups.js';
import { checkContainerName } from './internal/pod-features.js';
import { dns1123SubdomainError } from '../src/contracts/validators.js';

/** What happens when recreating one container fails. */
export enum ContainerRecreateFailurePolicy {
  /** Stop and fail the request (the default). */
  FAIL = 'Fail',
  /** Carry on with the next container. */
  IGNORE = 'Ignore',
}

/** How the containers are recreated. */
export interface ContainerRecreateStrategy {
  /**
   * Failure handling.
   *
   * @default ContainerRecreateFailurePolicy.FAIL
   */
  readonly failurePolicy?: ContainerRecreateFailurePolicy;
  /**
   * Recreate one container only after the previous one is running again.
   *
   * @default false
   */
  readonly orderedRecreate?: boolean;
  /**
   * Kill the container even if it has not started yet or is already being restarted.
   *
   * @default false
   */
  readonly forceRecreate?: boolean;
  /**
   * Grace period for stopping each container.
   *
   * @default - the pod's terminationGracePeriodSeconds
   */
  readonly terminationGracePeriod?: Duration;
  /**
   * Time the pod is marked not-ready before containers are stopped.
   *
   * @default - none
   */
  readonly unreadyGracePeriod?: Duration;
  /**
   * Time a recreated container must run before it counts as succeeded.
   *
   * @default - none
   */
  readonly minStarted?: Duration;
}

/** Properties of a {@link ContainerRecreateRequest}. */
export interface ContainerRecreateRequestProps extends kplus.ResourceProps {
  /** Name of the pod (in the request's namespace). */
  readonly podName: string;
  /** Names of the containers to recreate (at least one, no duplicates). */
  readonly containers: string[];
  /**
   * How to recreate.
   *
   * @default - fail on error, unordered, not forced
   */
  readonly strategy?: ContainerRecreateStrategy;
  /**
   * Deadline after which the request is completed regardless (at least 3 seconds).
   *
   * @default - none
   */
  readonly activeDeadline?: Duration;
  /**
   * Time after completion when the request is deleted.
   *
   * @default - kept
   */
  readonly ttlAfterFinished?: Duration;
}

/** An OpenKruise ContainerRecreateRequest: restarts named containers of one pod in place. */
export class ContainerRecreateRequest extends kplus.Resource {
  /** @see base.Resource.apiObject */
  protected readonly apiObject: ApiObject;
  /** The Kubernetes resource type (plural). */
  public readonly resourceType = 'containerrecreaterequests';

  public constructor(
    scope: Construct,
    id: string,
    private readonly props: ContainerRecreateRequestProps,
  ) {
    super(scope, id);
    const where = this.node.path;
    if (dns1123SubdomainError(props.podName) !== undefined) {
      throw new Error(`[${where}] podName ${JSON.stringify(props.podName)} is not a valid pod name.`);
    }
    if (props.containers.length === 0) throw new Error(`[${where}] containers: give at least one container name.`);
    const seen = new Set<string>();
    for (const name of props.containers) {
      checkContainerName(name, where);
      if (seen.has(name)) throw new Error(`[${where}] containers: "${name}" is listed twice.`);
      seen.add(name);
    }
    const deadline = props.activeDeadline?.toSeconds();
    if (deadline !== undefined && deadline < 3) {
      throw new Error(`[${where}] activeDeadline must be at least 3 seconds, got ${deadline}s.`);
    }
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: KRUISE_API_VERSION,
      kind: 'ContainerRecreateRequest',
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown,
    });
  }

  /** @internal */
  public _toKube(): ContainerRecreateRequestSpec {
    const p = this.props;
    const s = p.strategy;
    return {
      podName: p.podName,
      containers: p.containers.map((name) => ({ name })),
      strategy: s
        ? {
            failurePolicy: s.failurePolicy,
            orderedRecreate: s.orderedRecreate,
            forceRecreate: s.forceRecreate,
            terminationGracePeriodSeconds: s.terminationGracePeriod?.toSeconds(),
            unreadyGracePeriodSeconds: s.unreadyGracePeriod?.toSeconds(),
            minStartedSeconds: s.minStarted?.toSeconds(),
          }
        : undefined,
      activeDeadlineSeconds: p.activeDeadline?.toSeconds(),
      ttlSecondsAfterFinished: p.ttlAfterFinished?.toSeconds(),
    };
  }
}

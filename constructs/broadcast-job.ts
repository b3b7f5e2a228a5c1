import { ApiObject, Duration, Lazy } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { V1PodSpec } from '../src/api/core/k8s-core-types.js';
import type { BroadcastJobSpec } from '../src/api/kinds/broadcastjob.js';
import { kruiseApiVersionOf, type KruiseApiVersion } from './api-version.js';
import { checkImage } from './internal/image-reference.js';
import { percentOrAbsoluteValue } from './internal/plus-objects.js';

/** When a BroadcastJob is finished. */
export enum BroadcastJobCompletionPolicy {
  /** Once the pod on every eligible node has finished (upstream's default). */
  ALWAYS = 'Always',
  /** Never: the job keeps running a pod on every new eligible node. */
  NEVER = 'Never',
}

/** What a failed pod does to a BroadcastJob. */
export enum BroadcastJobFailurePolicy {
  /** The first failed pod fails the job and deletes its running pods (upstream's default). */
  FAIL_FAST = 'FailFast',
  /** Failed pods are counted; the job goes on. */
  CONTINUE = 'Continue',
  /** A failed pod pauses the job: no more pods are created. */
  PAUSE = 'Pause',
}

/** Properties of a {@link BroadcastJob}. */
export interface BroadcastJobProps extends kplus.WorkloadProps {
  /**
   * Pods running at once: a number, or a percentage of the eligible nodes.
   *
   * @default - no limit
   */
  readonly parallelism?: kplus.PercentOrAbsolute;
  /**
   * When the job is finished.
   *
   * @default BroadcastJobCompletionPolicy.ALWAYS
   */
  readonly completionPolicy?: BroadcastJobCompletionPolicy;
  /**
   * The apps.kruise.io version the object is emitted at (upstream v1.9 stores this kind at v1beta1).
   *
   * @default - the app's or chart's choice (`KruiseApiVersions.emitIn`), else KruiseApiVersion.V1ALPHA1
   */
  readonly apiVersion?: KruiseApiVersion;
  /**
   * Fail the job (and delete its running pods) once it has been active this long. Only with completion policy ALWAYS.
   *
   * @default - no deadline
   */
  readonly activeDeadline?: Duration;
  /**
   * Delete the job (and its pods) this long after it finished. Only with completion policy ALWAYS.
   *
   * @default - kept
   */
  readonly ttlAfterFinished?: Duration;
  /**
   * What a failed pod does to the job.
   *
   * @default BroadcastJobFailurePolicy.FAIL_FAST
   */
  readonly failurePolicy?: BroadcastJobFailurePolicy;
  /**
   * restartPolicy OnFailure: a pod whose containers restarted more often than this counts as failed.
   *
   * @default 0
   */
  readonly restartLimit?: number;
  /**
   * Create no more pods while true (running pods go on).
   *
   * @default false
   */
  readonly paused?: boolean;
}

/**
 * An OpenKruise BroadcastJob (apps.kruise.io/v1alpha1): one pod of its template on every eligible node (node
 * selector, node affinity, tolerations), run to completion. It is a cdk8s-plus `Workload`, so containers, volumes,
 * env, scheduling and `podMetadata` work as on a `Job`; restartPolicy defaults to Never and may not be Always. The
 * spec is built lazily, so later `add*` calls show up.
 */
export class BroadcastJob extends kplus.Workload {
  /** When the job is finished. */
  public readonly completionPolicy: BroadcastJobCompletionPolicy;
  /** What a failed pod does to the job. */
  public readonly failurePolicy?: BroadcastJobFailurePolicy;
  /** Pods running at once. */
  public readonly parallelism?: kplus.PercentOrAbsolute;
  /** @see base.Resource.apiObject */
  protected readonly apiObject: ApiObject;
  /** The Kubernetes resource type (plural). */
  public readonly resourceType = 'broadcastjobs';
  private readonly props: BroadcastJobProps;

  public constructor(scope: Construct, id: string, props: BroadcastJobProps = {}) {
    super(scope, id, { ...props, restartPolicy: props.restartPolicy ?? kplus.RestartPolicy.NEVER });
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: kruiseApiVersionOf(this, 'BroadcastJob', props.apiVersion),
      kind: 'BroadcastJob',
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown,
    });
    if (this.restartPolicy === kplus.RestartPolicy.ALWAYS) {
      throw new Error(`[${this.node.path}] a BroadcastJob pod must finish: restartPolicy must be NEVER or ON_FAILURE, not ALWAYS.`);
    }
    this.completionPolicy = props.completionPolicy ?? BroadcastJobCompletionPolicy.ALWAYS;
    if (this.completionPolicy === BroadcastJobCompletionPolicy.NEVER) {
      for (const [name, v] of [
        ['activeDeadline', props.activeDeadline],
        ['ttlAfterFinished', props.ttlAfterFinished],
      ] as const)
        if (v !== undefined) throw new Error(`[${this.node.path}] ${name} needs completionPolicy ALWAYS: a NEVER job never finishes.`);
    }
    if (props.restartLimit !== undefined && (!Number.isSafeInteger(props.restartLimit) || props.restartLimit < 0)) {
      throw new Error(`[${this.node.path}] restartLimit must be a non-negative integer, got ${props.restartLimit}.`);
    }
    percentOrAbsoluteValue(props.parallelism, `[${this.node.path}] parallelism`);
    this.failurePolicy = props.failurePolicy;
    this.parallelism = props.parallelism;
    this.props = props;
    if (this.isolate) this.connections.isolate();
  }

  /** Adds a container to the pod template; its image must be a valid image reference (checked now). */
  public override addContainer(cont: kplus.ContainerProps): kplus.Container {
    // Called by the base constructor for props.containers too: use nothing but the construct node here.
    checkImage(cont.image, `[${this.node.path}] container "${cont.name ?? 'main'}" image`);
    return super.addContainer(cont);
  }

  /** Adds an init container to the pod template; its image must be a valid image reference (checked now). */
  public override addInitContainer(cont: kplus.ContainerProps): kplus.Container {
    checkImage(cont.image, `[${this.node.path}] init container "${cont.name ?? 'main'}" image`);
    return super.addInitContainer(cont);
  }

  /** @internal */
  public _toKube(): BroadcastJobSpec {
    const p = this.props;
    const completion = {
      type: this.completionPolicy,
      activeDeadlineSeconds: p.activeDeadline?.toSeconds(),
      ttlSecondsAfterFinished: p.ttlAfterFinished?.toSeconds(),
    };
    const failure =
      p.failurePolicy !== undefined || p.restartLimit !== undefined ? { type: p.failurePolicy, restartLimit: p.restartLimit } : undefined;
    return {
      parallelism: percentOrAbsoluteValue(p.parallelism, `[${this.node.path}] parallelism`),
      template: {
        metadata: this.podMetadata.toJson() as Record<string, unknown>,
        spec: kplus.k8s.toJson_PodSpec(this._toPodSpec()) as V1PodSpec,
      },
      completionPolicy: completion,
      failurePolicy: failure,
      paused: p.paused,
    };
  }
}

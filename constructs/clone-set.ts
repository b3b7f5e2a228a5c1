import { ApiObject, Duration, Lazy, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { V1PodSpec } from '../src/api/core/k8s-core-types.js';
import type { LabelSelector as V1LabelSelector } from '../src/api/common.js';
import { checkImage } from './internal/image-reference.js';
import { percentOrAbsoluteValue } from './internal/plus-objects.js';
import { ClaimTemplates, scalingTarget, servicePorts } from './internal/workload-plumbing.js';
import type { CloneSetSpec } from '../src/api/kinds/cloneset.js';
import { CloneSetLifecycle, renderLifecycle } from './lifecycle-hook.js';

/** apiVersion of the OpenKruise v1alpha1 kinds we emit. */
export { KRUISE_API_VERSION } from '../src/contracts/groups.js';
import { KRUISE_API_VERSION } from '../src/contracts/groups.js';

/** How a CloneSet replaces pods when the template changes. */
export enum CloneSetUpdateStrategyType {
  /** Delete old pods and create new ones (the upstream default). */
  RECREATE = 'ReCreate',
  /** Update in place when only images (or metadata) changed, otherwise recreate. */
  IN_PLACE_IF_POSSIBLE = 'InPlaceIfPossible',
  /** Only update in place; changes that cannot be applied in place are refused. */
  IN_PLACE_ONLY = 'InPlaceOnly',
}

/** Options of a {@link CloneSetUpdateStrategy}. */
export interface CloneSetUpdateStrategyOptions {
  /**
   * Number or percentage of pods kept at the old revision (a canary partition).
   *
   * @default PercentOrAbsolute.absolute(0)
   */
  readonly partition?: kplus.PercentOrAbsolute;
  /**
   * Maximum number or percentage of pods unavailable during the update.
   *
   * @default PercentOrAbsolute.percent(20)
   */
  readonly maxUnavailable?: kplus.PercentOrAbsolute;
  /**
   * Maximum number or percentage of extra pods created above `replicas` during the update.
   *
   * @default PercentOrAbsolute.absolute(0)
   */
  readonly maxSurge?: kplus.PercentOrAbsolute;
  /**
   * Pauses the rollout (no pods are updated while true).
   *
   * @default false
   */
  readonly paused?: boolean;
  /**
   * Time between marking a pod not-ready and updating it in place (in-place types only).
   *
   * @default - no grace period
   */
  readonly inPlaceUpdateGracePeriod?: Duration;
}

/** The rollout strategy of a CloneSet. */
export class CloneSetUpdateStrategy {
  /** Recreate pods on every template change. */
  public static reCreate(options: CloneSetUpdateStrategyOptions = {}): CloneSetUpdateStrategy {
    if (options.inPlaceUpdateGracePeriod) {
      throw new Error('CloneSetUpdateStrategy.reCreate: inPlaceUpdateGracePeriod only applies to in-place update types.');
    }
    return new CloneSetUpdateStrategy(CloneSetUpdateStrategyType.RECREATE, options);
  }

  /** Update in place when possible, otherwise recreate. */
  public static inPlaceIfPossible(options: CloneSetUpdateStrategyOptions = {}): CloneSetUpdateStrategy {
    return new CloneSetUpdateStrategy(CloneSetUpdateStrategyType.IN_PLACE_IF_POSSIBLE, options);
  }

  /** Update in place only. */
  public static inPlaceOnly(options: CloneSetUpdateStrategyOptions = {}): CloneSetUpdateStrategy {
    return new CloneSetUpdateStrategy(CloneSetUpdateStrategyType.IN_PLACE_ONLY, options);
  }

  private constructor(
    /** The update type. */
    public readonly type: CloneSetUpdateStrategyType,
    private readonly options: CloneSetUpdateStrategyOptions,
  ) {
    for (const field of ['partition', 'maxUnavailable', 'maxSurge'] as const)
      percentOrAbsoluteValue(options[field], `CloneSetUpdateStrategy: ${field}`);
  }

  /** @internal */
  public _toKube() {
    const o = this.options;
    return {
      type: this.type,
      partition: percentOrAbsoluteValue(o.partition, 'CloneSetUpdateStrategy: partition'),
      maxUnavailable: percentOrAbsoluteValue(o.maxUnavailable, 'CloneSetUpdateStrategy: maxUnavailable'),
      maxSurge: percentOrAbsoluteValue(o.maxSurge, 'CloneSetUpdateStrategy: maxSurge'),
      paused: o.paused,
      inPlaceUpdateStrategy: o.inPlaceUpdateGracePeriod ? { gracePeriodSeconds: o.inPlaceUpdateGracePeriod.toSeconds() } : undefined,
    };
  }
}

/** Scaling behaviour of a CloneSet. */
export interface CloneSetScaleStrategy {
  /**
   * When true, PVCs left by a deleted pod are not reused by its replacement; new pods get
   * fresh PVCs (the stale ones are garbage-collected).
   *
   * @default false
   */
  readonly disablePVCReuse?: boolean;
  /**
   * Names of pods to delete first when scaling in (or to delete and replace).
   *
   * @default - none
   */
  readonly podsToDelete?: string[];
  /**
   * Maximum number or percentage of unavailable pods allowed while scaling out.
   *
   * @default - no limit
   */
  readonly maxUnavailable?: kplus.PercentOrAbsolute;
}

/** A PersistentVolumeClaim created per pod from a template. */
export interface CloneSetVolumeClaimTemplate {
  /** Name of the claim template, which is also the pod volume name to mount. */
  readonly name: string;
  /** Requested storage size. */
  readonly storage: Size;
  /**
   * Access modes of the claim.
   *
   * @default [PersistentVolumeAccessMode.READ_WRITE_ONCE]
   */
  readonly accessModes?: kplus.PersistentVolumeAccessMode[];
  /**
   * Storage class name.
   *
   * @default - the cluster's default storage class
   */
  readonly storageClassName?: string;
  /**
   * Volume mode of the claim.
   *
   * @default PersistentVolumeMode.FILE_SYSTEM
   */
  readonly volumeMode?: kplus.PersistentVolumeMode;
}

/** Properties of a {@link CloneSet}. */
export interface CloneSetProps extends kplus.WorkloadProps {
  /**
   * Desired number of pods.
   *
   * @default 1
   */
  readonly replicas?: number;
  /**
   * Rollout strategy.
   *
   * @default CloneSetUpdateStrategy.reCreate()
   */
  readonly updateStrategy?: CloneSetUpdateStrategy;
  /**
   * Scaling behaviour (PVC reuse, pods to delete, scale-out maxUnavailable).
   *
   * @default - upstream defaults
   */
  readonly scaleStrategy?: CloneSetScaleStrategy;
  /**
   * Pod lifecycle hooks (preNormal, preDelete, inPlaceUpdate).
   *
   * @default - no hooks
   */
  readonly lifecycle?: CloneSetLifecycle;
  /**
   * PVC templates; mount them through the volume returned by `addVolumeClaimTemplate`.
   *
   * @default - none
   */
  readonly volumeClaimTemplates?: CloneSetVolumeClaimTemplate[];
  /**
   * Minimum time a new pod must be ready before it counts as available.
   *
   * @default Duration.seconds(0)
   */
  readonly minReady?: Duration;
  /**
   * Number of old revisions kept for rollback.
   *
   * @default 10
   */
  readonly revisionHistoryLimit?: number;
}

/**
 * An OpenKruise CloneSet (apps.kruise.io/v1alpha1) with the full cdk8s-plus pod-template
 * authoring experience: it is a cdk8s-plus `Workload`, so containers, volumes, env, probes,
 * security context, scheduling and `podMetadata` work exactly as on a `Deployment`, and the
 * pod spec is rendered by cdk8s-plus itself. Adds Kruise's update/scale strategies, lifecycle
 * hooks and volumeClaimTemplates. The spec is built lazily, so later `add*` calls show up.
 */
export class CloneSet extends kplus.Workload implements kplus.IScalable {
  /** Desired number of pods. */
  public readonly replicas: number;
  /** Whether a HorizontalPodAutoscaler scales this CloneSet (then `replicas` is left to it). */
  public hasAutoscaler = false;
  /** `replicas` as given (undefined: defaulted), which an autoscaler refuses like on a Deployment. */
  private readonly givenReplicas?: number;
  /** Rollout strategy. */
  public readonly updateStrategy: CloneSetUpdateStrategy;
  /** Scaling behaviour. */
  public readonly scaleStrategy?: CloneSetScaleStrategy;
  /** Lifecycle hooks. */
  public readonly lifecycle?: CloneSetLifecycle;
  /** Minimum ready time before a pod counts as available. */
  public readonly minReady?: Duration;
  /** Revisions kept for rollback. */
  public readonly revisionHistoryLimit?: number;
  /** @see base.Resource.apiObject */
  protected readonly apiObject: ApiObject;
  /** The Kubernetes resource type (plural). */
  public readonly resourceType = 'clonesets';

  private readonly _claimTemplates = new ClaimTemplates<CloneSetVolumeClaimTemplate>(this);

  public constructor(scope: Construct, id: string, props: CloneSetProps = {}) {
    super(scope, id, props);
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: KRUISE_API_VERSION,
      kind: 'CloneSet',
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown,
    });
    if (props.replicas !== undefined && (!Number.isSafeInteger(props.replicas) || props.replicas < 0)) {
      throw new Error(`[${this.node.path}] replicas must be a non-negative integer, got ${props.replicas}.`);
    }
    if (props.revisionHistoryLimit !== undefined && (!Number.isSafeInteger(props.revisionHistoryLimit) || props.revisionHistoryLimit < 0)) {
      throw new Error(`[${this.node.path}] revisionHistoryLimit must be a non-negative integer, got ${props.revisionHistoryLimit}.`);
    }
    this.replicas = props.replicas ?? 1;
    this.givenReplicas = props.replicas;
    this.updateStrategy = props.updateStrategy ?? CloneSetUpdateStrategy.reCreate();
    this.scaleStrategy = props.scaleStrategy;
    this.lifecycle = props.lifecycle;
    this.minReady = props.minReady;
    this.revisionHistoryLimit = props.revisionHistoryLimit;
    renderLifecycle(this.lifecycle, this.node.path); // eager check of local mistakes
    for (const template of props.volumeClaimTemplates ?? []) this.addVolumeClaimTemplate(template);
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

  /** @see kplus.IScalable.markHasAutoscaler (a HorizontalPodAutoscaler targets this CloneSet). */
  public markHasAutoscaler(): void {
    this.hasAutoscaler = true;
  }

  /** @see kplus.IScalable.toScalingTarget */
  public toScalingTarget(): kplus.ScalingTarget {
    return scalingTarget(this.apiObject, this.name, this.containers, this.givenReplicas);
  }

  /**
   * Exposes the CloneSet's pods through a Service, as `Deployment.exposeViaService` does: the ports default to
   * the containers' ports; given ports must be ones a container exposes.
   */
  public exposeViaService(options: kplus.DeploymentExposeViaServiceOptions = {}): kplus.Service {
    const { ports, exposed } = servicePorts(this, options);
    if (ports.length > 1 && ports.some((p) => p.name === undefined)) {
      throw new Error(`[${this.node.path}] exposeViaService: with several ports every port needs a name, so they are unambiguous.`);
    }
    for (const port of ports) {
      const target = port.targetPort ?? port.port;
      if (!exposed.includes(target)) {
        throw new Error(
          `[${this.node.path}] exposeViaService: port ${target} is not exposed by any container (container ports: ${exposed.join(', ') || 'none'}).`,
        );
      }
    }
    return new kplus.Service(this, `${options.name ?? ''}Service`, {
      selector: this,
      ports,
      metadata: { namespace: this.metadata.namespace, ...(options.name ? { name: options.name } : {}) },
      type: options.serviceType ?? kplus.ServiceType.CLUSTER_IP,
    });
  }

  /**
   * Adds a PVC template. Each pod gets its own claim; mount it with the returned volume,
   * e.g. `container.mount('/data', cloneSet.addVolumeClaimTemplate({ name: 'data', storage }))`.
   *
   * @returns a volume named like the template, to mount into containers.
   */
  public addVolumeClaimTemplate(template: CloneSetVolumeClaimTemplate): kplus.Volume {
    return this._claimTemplates.add(template);
  }

  /** The PVC templates (a copy). */
  public get volumeClaimTemplates(): CloneSetVolumeClaimTemplate[] {
    return this._claimTemplates.all;
  }

  /** @internal */
  public _toKube(): CloneSetSpec {
    const podSpec = kplus.k8s.toJson_PodSpec(this._toPodSpec()) as V1PodSpec;
    this._claimTemplates.stripVolumes(podSpec);
    const scale = this.scaleStrategy;
    return {
      replicas: this.hasAutoscaler ? undefined : this.replicas,
      selector: kplus.k8s.toJson_LabelSelector(this._toLabelSelector()) as V1LabelSelector,
      template: { metadata: this.podMetadata.toJson() as Record<string, unknown>, spec: podSpec },
      volumeClaimTemplates: this._claimTemplates.toKube(),
      scaleStrategy: scale
        ? {
            disablePVCReuse: scale.disablePVCReuse,
            podsToDelete: scale.podsToDelete,
            maxUnavailable: percentOrAbsoluteValue(scale.maxUnavailable, `[${this.node.path}] scaleStrategy.maxUnavailable`),
          }
        : undefined,
      updateStrategy: this.updateStrategy._toKube(),
      lifecycle: renderLifecycle(this.lifecycle, this.node.path),
      minReadySeconds: this.minReady?.toSeconds(),
      revisionHistoryLimit: this.revisionHistoryLimit,
    };
  }
}

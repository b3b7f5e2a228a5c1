import { ApiObject, Duration, Lazy, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { V1PodSpec } from '../src/api/core/k8s-core-types.js';
import type { LabelSelector as V1LabelSelector } from '../src/api/common.js';
import type { StatefulSetSpec } from '../src/api/kinds/statefulset.js';
import { CONDITION_INPLACE_UPDATE_READY, KRUISE_GROUP } from '../src/contracts/index.js';
import { checkImage } from './internal/image-reference.js';
import { percentOrAbsoluteValue } from './internal/plus-objects.js';
import { ClaimTemplates, scalingTarget, servicePorts } from './internal/workload-plumbing.js';
import { CloneSetLifecycle, renderLifecycle } from './lifecycle-hook.js';

/** How pods are created and deleted. */
export enum AdvancedStatefulSetPodManagement {
  /** One pod at a time, in ordinal order, each waiting for the one before it to be ready (the default). */
  ORDERED_READY = 'OrderedReady',
  /** All pods at once; the only policy that allows maxUnavailable above 1. */
  PARALLEL = 'Parallel',
}

/** Options of a rolling {@link AdvancedStatefulSetUpdateStrategy}. */
export interface AdvancedStatefulSetRollingOptions {
  /**
   * Pods with an ordinal index below this count keep the current revision (a canary partition).
   *
   * @default 0
   */
  readonly partition?: number;
  /**
   * Maximum number or percentage of pods unavailable during the update; above 1 only with Parallel.
   *
   * @default PercentOrAbsolute.absolute(1)
   */
  readonly maxUnavailable?: kplus.PercentOrAbsolute;
  /**
   * Pauses the rollout.
   *
   * @default false
   */
  readonly paused?: boolean;
  /**
   * How long an updated pod must be ready before the next one is updated (at most 300 s).
   *
   * @default Duration.seconds(0)
   */
  readonly minReady?: Duration;
  /**
   * Time between marking a pod not-ready and updating it in place (in-place policies only).
   *
   * @default - no grace period
   */
  readonly inPlaceUpdateGracePeriod?: Duration;
}

/** The rollout strategy of an {@link AdvancedStatefulSet}. */
export class AdvancedStatefulSetUpdateStrategy {
  /** Delete and recreate each pod, highest ordinal first. */
  public static reCreate(options: AdvancedStatefulSetRollingOptions = {}): AdvancedStatefulSetUpdateStrategy {
    if (options.inPlaceUpdateGracePeriod) {
      throw new Error('AdvancedStatefulSetUpdateStrategy.reCreate: inPlaceUpdateGracePeriod only applies to in-place updates.');
    }
    return new AdvancedStatefulSetUpdateStrategy('RollingUpdate', 'ReCreate', options);
  }

  /** Update pods in place when only images or metadata changed, otherwise recreate them. */
  public static inPlaceIfPossible(options: AdvancedStatefulSetRollingOptions = {}): AdvancedStatefulSetUpdateStrategy {
    return new AdvancedStatefulSetUpdateStrategy('RollingUpdate', 'InPlaceIfPossible', options);
  }

  /** Update pods in place only; a change that cannot be made in place stops the rollout with a condition. */
  public static inPlaceOnly(options: AdvancedStatefulSetRollingOptions = {}): AdvancedStatefulSetUpdateStrategy {
    return new AdvancedStatefulSetUpdateStrategy('RollingUpdate', 'InPlaceOnly', options);
  }

  /** Pods are updated only when you delete them. */
  public static onDelete(): AdvancedStatefulSetUpdateStrategy {
    return new AdvancedStatefulSetUpdateStrategy('OnDelete', undefined, {});
  }

  private constructor(
    /** RollingUpdate or OnDelete. */
    public readonly type: 'RollingUpdate' | 'OnDelete',
    /** How a rolling update replaces a pod. */
    public readonly podUpdatePolicy: 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly' | undefined,
    private readonly options: AdvancedStatefulSetRollingOptions,
  ) {
    if (options.partition !== undefined && (!Number.isSafeInteger(options.partition) || options.partition < 0)) {
      throw new Error(`AdvancedStatefulSetUpdateStrategy: partition must be a non-negative integer, got ${options.partition}.`);
    }
    const minReady = options.minReady?.toSeconds();
    if (minReady !== undefined && minReady > 300) {
      throw new Error(`AdvancedStatefulSetUpdateStrategy: minReady must be at most 300 seconds (upstream's bound), got ${minReady}.`);
    }
    percentOrAbsoluteValue(options.maxUnavailable, 'AdvancedStatefulSetUpdateStrategy: maxUnavailable');
  }

  /** Whether the rollout can exceed one unavailable pod (which needs Parallel pod management). */
  public get allowsMoreThanOneUnavailable(): boolean {
    const v = percentOrAbsoluteValue(this.options.maxUnavailable, 'maxUnavailable');
    return v !== undefined && v !== 1;
  }

  /** @internal */
  public _toKube(): NonNullable<StatefulSetSpec['updateStrategy']> {
    if (this.type === 'OnDelete') return { type: 'OnDelete' };
    const o = this.options;
    return {
      type: 'RollingUpdate',
      rollingUpdate: {
        podUpdatePolicy: this.podUpdatePolicy,
        partition: o.partition,
        maxUnavailable: percentOrAbsoluteValue(o.maxUnavailable, 'AdvancedStatefulSetUpdateStrategy: maxUnavailable'),
        paused: o.paused,
        minReadySeconds: o.minReady?.toSeconds(),
        inPlaceUpdateStrategy: o.inPlaceUpdateGracePeriod ? { gracePeriodSeconds: o.inPlaceUpdateGracePeriod.toSeconds() } : undefined,
      },
    };
  }
}

/** A claim each pod gets from a template, kept across its restarts (`<name>-<set>-<ordinal>`). */
export interface AdvancedStatefulSetVolumeClaimTemplate {
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
}

/** What happens to the claims of volumeClaimTemplates. */
export enum PvcRetention {
  /** Keep the claims (the default). */
  RETAIN = 'Retain',
  /** Delete the claims. */
  DELETE = 'Delete',
}

/** When an existing pod's claims follow a change of their template's size (`volumeClaimUpdateStrategy.type`). */
export enum ClaimUpdate {
  /**
   * The rolling update grows each pod's claims to the template's size before it updates the pod; a size change is
   * refused for a StorageClass without `allowVolumeExpansion`. Needs gate StatefulSetAutoResizePVCGate, which the
   * install turns on for an app using it.
   */
  ON_POD_ROLLING_UPDATE = 'OnPodRollingUpdate',
  /** A template change reaches a claim only when the claim is deleted and made again (upstream's default). */
  ON_DELETE = 'OnDelete',
}

/** Properties of an {@link AdvancedStatefulSet}. */
export interface AdvancedStatefulSetProps extends kplus.WorkloadProps {
  /**
   * Desired number of pods.
   *
   * @default 1
   */
  readonly replicas?: number;
  /**
   * Name of the headless Service that gives the pods their DNS names (see `exposeViaService`).
   *
   * @default - none
   */
  readonly serviceName?: string;
  /**
   * How pods are created and deleted.
   *
   * @default AdvancedStatefulSetPodManagement.ORDERED_READY
   */
  readonly podManagement?: AdvancedStatefulSetPodManagement;
  /**
   * Rollout strategy.
   *
   * @default AdvancedStatefulSetUpdateStrategy.reCreate()
   */
  readonly updateStrategy?: AdvancedStatefulSetUpdateStrategy;
  /**
   * Ordinals never used: the pods skip them (e.g. [1] gives 0, 2, 3 for 3 replicas). Ints or ranges like "3-5".
   *
   * @default - none
   */
  readonly reserveOrdinals?: Array<number | string>;
  /**
   * The first ordinal (needs gate StatefulSetStartOrdinal, which the install turns on).
   *
   * @default 0
   */
  readonly startOrdinal?: number;
  /**
   * Pod lifecycle hooks (preNormal, preDelete, inPlaceUpdate).
   *
   * @default - no hooks
   */
  readonly lifecycle?: CloneSetLifecycle;
  /**
   * Claim templates; mount them through the volume returned by `addVolumeClaimTemplate`.
   *
   * @default - none
   */
  readonly volumeClaimTemplates?: AdvancedStatefulSetVolumeClaimTemplate[];
  /**
   * What happens to the claims when the set is deleted and when a scale-in removes their pod.
   *
   * @default - both Retain
   */
  readonly pvcRetention?: { readonly whenDeleted?: PvcRetention; readonly whenScaled?: PvcRetention };
  /**
   * When existing claims follow a size change of their template: grown with the rolling update, or only when made
   * again.
   *
   * @default - not set: claims are never resized (as ClaimUpdate.ON_DELETE)
   */
  readonly claimUpdate?: ClaimUpdate;
  /**
   * Maximum number or percentage of pods unavailable while scaling (Parallel only).
   *
   * @default - no limit
   */
  readonly scaleMaxUnavailable?: kplus.PercentOrAbsolute;
  /**
   * Number of old revisions kept for rollback.
   *
   * @default 10
   */
  readonly revisionHistoryLimit?: number;
}

/**
 * An OpenKruise Advanced StatefulSet (apps.kruise.io/v1beta1 StatefulSet): a cdk8s-plus `Workload` (containers,
 * volumes, env, probes, scheduling work as on a Deployment) with stable ordered identities, claims per pod, reserved
 * ordinals, in-place rolling update with partition and maxUnavailable, and lifecycle hooks. The spec is built lazily.
 */
export class AdvancedStatefulSet extends kplus.Workload implements kplus.IScalable {
  /** Desired number of pods. */
  public readonly replicas: number;
  /** Whether a HorizontalPodAutoscaler scales this set (then `replicas` is left to it). */
  public hasAutoscaler = false;
  private readonly givenReplicas?: number;
  /** Rollout strategy. */
  public readonly updateStrategy: AdvancedStatefulSetUpdateStrategy;
  /** Pod management policy. */
  public readonly podManagement: AdvancedStatefulSetPodManagement;
  /** Lifecycle hooks. */
  public readonly lifecycle?: CloneSetLifecycle;
  /** @see base.Resource.apiObject */
  protected readonly apiObject: ApiObject;
  /** The Kubernetes resource type (plural). */
  public readonly resourceType = 'statefulsets';

  private serviceName?: string;
  private readonly _claimTemplates = new ClaimTemplates<AdvancedStatefulSetVolumeClaimTemplate>(this);

  public constructor(
    scope: Construct,
    id: string,
    private readonly props: AdvancedStatefulSetProps = {},
  ) {
    super(scope, id, props);
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: `${KRUISE_GROUP}/v1beta1`,
      kind: 'StatefulSet',
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown,
    });
    const where = `[${this.node.path}]`;
    for (const [field, v] of [
      ['replicas', props.replicas],
      ['revisionHistoryLimit', props.revisionHistoryLimit],
      ['startOrdinal', props.startOrdinal],
    ] as const) {
      if (v !== undefined && (!Number.isSafeInteger(v) || v < 0))
        throw new Error(`${where} ${field} must be a non-negative integer, got ${v}.`);
    }
    for (const r of props.reserveOrdinals ?? []) {
      const ok =
        typeof r === 'number'
          ? Number.isSafeInteger(r) && r >= 0
          : /^(\d+)-(\d+)$/.test(r) && Number(r.split('-')[0]) <= Number(r.split('-')[1]);
      if (!ok) throw new Error(`${where} reserveOrdinals: ${JSON.stringify(r)} is neither a non-negative integer nor a range like "3-5".`);
    }
    this.replicas = props.replicas ?? 1;
    this.givenReplicas = props.replicas;
    this.updateStrategy = props.updateStrategy ?? AdvancedStatefulSetUpdateStrategy.reCreate();
    this.podManagement = props.podManagement ?? AdvancedStatefulSetPodManagement.ORDERED_READY;
    const parallel = this.podManagement === AdvancedStatefulSetPodManagement.PARALLEL;
    if (!parallel && this.updateStrategy.allowsMoreThanOneUnavailable) {
      throw new Error(
        `${where} updateStrategy maxUnavailable other than 1 needs podManagement PARALLEL (upstream refuses it with OrderedReady).`,
      );
    }
    if (!parallel && props.scaleMaxUnavailable !== undefined) {
      throw new Error(`${where} scaleMaxUnavailable needs podManagement PARALLEL (upstream refuses it with OrderedReady).`);
    }
    this.lifecycle = props.lifecycle;
    this.serviceName = props.serviceName;
    renderLifecycle(this.lifecycle, this.node.path);
    for (const template of props.volumeClaimTemplates ?? []) this.addVolumeClaimTemplate(template);
    if (this.isolate) this.connections.isolate();
  }

  /** Adds a container to the pod template; its image must be a valid image reference (checked now). */
  public override addContainer(cont: kplus.ContainerProps): kplus.Container {
    checkImage(cont.image, `[${this.node.path}] container "${cont.name ?? 'main'}" image`);
    return super.addContainer(cont);
  }

  /** @see kplus.IScalable.markHasAutoscaler */
  public markHasAutoscaler(): void {
    this.hasAutoscaler = true;
  }

  /** @see kplus.IScalable.toScalingTarget */
  public toScalingTarget(): kplus.ScalingTarget {
    return scalingTarget(this.apiObject, this.name, this.containers, this.givenReplicas);
  }

  /**
   * Exposes the pods through a headless Service (as a StatefulSet's governing Service) named `serviceName`, unless
   * the set already names one; the ports default to the containers' ports.
   */
  public exposeViaService(options: kplus.DeploymentExposeViaServiceOptions = {}): kplus.Service {
    const { ports } = servicePorts(this, options);
    const service = new kplus.Service(this, `${options.name ?? ''}Service`, {
      selector: this,
      ports,
      clusterIP: 'None',
      metadata: { namespace: this.metadata.namespace, ...(options.name ? { name: options.name } : {}) },
    });
    this.serviceName ??= service.name;
    return service;
  }

  /**
   * Adds a claim template. Each pod gets its own claim, kept across its restarts; mount it with the returned volume.
   *
   * @returns a volume named like the template, to mount into containers.
   */
  public addVolumeClaimTemplate(template: AdvancedStatefulSetVolumeClaimTemplate): kplus.Volume {
    return this._claimTemplates.add(template);
  }

  /** @internal */
  public _toKube(): StatefulSetSpec {
    const p = this.props;
    const podSpec = kplus.k8s.toJson_PodSpec(this._toPodSpec()) as V1PodSpec & { readinessGates?: Array<{ conditionType: string }> };
    this._claimTemplates.stripVolumes(podSpec);
    // Upstream's webhook refuses an in-place policy without the InPlaceUpdateReady readiness gate.
    const policy = this.updateStrategy.podUpdatePolicy;
    if (policy === 'InPlaceIfPossible' || policy === 'InPlaceOnly') {
      const gates = podSpec.readinessGates ?? [];
      if (!gates.some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY))
        gates.push({ conditionType: CONDITION_INPLACE_UPDATE_READY });
      podSpec.readinessGates = gates;
    }
    const retention = p.pvcRetention;
    return {
      replicas: this.hasAutoscaler ? undefined : this.replicas,
      selector: kplus.k8s.toJson_LabelSelector(this._toLabelSelector()) as V1LabelSelector,
      template: { metadata: this.podMetadata.toJson() as Record<string, unknown>, spec: podSpec },
      serviceName: this.serviceName,
      podManagementPolicy: this.podManagement,
      volumeClaimTemplates: this._claimTemplates.toKube(),
      updateStrategy: this.updateStrategy._toKube(),
      reserveOrdinals: p.reserveOrdinals,
      ordinals: p.startOrdinal !== undefined ? { start: p.startOrdinal } : undefined,
      lifecycle: renderLifecycle(this.lifecycle, this.node.path),
      persistentVolumeClaimRetentionPolicy: retention
        ? { whenDeleted: retention.whenDeleted, whenScaled: retention.whenScaled }
        : undefined,
      volumeClaimUpdateStrategy: p.claimUpdate ? { type: p.claimUpdate } : undefined,
      scaleStrategy:
        p.scaleMaxUnavailable !== undefined
          ? { maxUnavailable: percentOrAbsoluteValue(p.scaleMaxUnavailable, `[${this.node.path}] scaleMaxUnavailable`) }
          : undefined,
      revisionHistoryLimit: p.revisionHistoryLimit,
    } as StatefulSetSpec;
  }
}

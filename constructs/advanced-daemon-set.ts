import { ApiObject, Duration, Lazy } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { V1LabelSelector, V1PodSpec } from '../src/api/core/k8s-core-types.js';
import type { DaemonSetSpec } from '../src/api/kinds/daemonset.js';
import { ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD } from '../src/contracts/keys.js';
import { kruiseApiVersionOf, type KruiseApiVersion } from './api-version.js';
import { checkImage } from './internal/image-reference.js';
import { percentOrAbsoluteValue } from './internal/plus-objects.js';
import { type CloneSetLifecycle, renderLifecycle } from './lifecycle-hook.js';

/** Options of a rolling update of an {@link AdvancedDaemonSet}. */
export interface AdvancedDaemonSetRollingUpdateOptions {
  /**
   * Maximum number or percentage of nodes without an available pod during the update. Exactly one of maxUnavailable
   * and maxSurge is non-zero.
   *
   * @default PercentOrAbsolute.absolute(1) (when maxSurge is not set)
   */
  readonly maxUnavailable?: kplus.PercentOrAbsolute;
  /**
   * Maximum number or percentage of nodes that run the new pod beside the old one (Standard rolling update only).
   *
   * @default PercentOrAbsolute.absolute(0)
   */
  readonly maxSurge?: kplus.PercentOrAbsolute;
  /**
   * Number or percentage of nodes kept at the old revision (a canary partition).
   *
   * @default PercentOrAbsolute.absolute(0)
   */
  readonly partition?: kplus.PercentOrAbsolute;
  /**
   * Only the pods on nodes with these labels are updated.
   *
   * @default - every node
   */
  readonly nodeLabels?: Readonly<Record<string, string>>;
  /**
   * Pauses the rollout (new nodes still get pods).
   *
   * @default false
   */
  readonly paused?: boolean;
}

/** The rollout strategy of an {@link AdvancedDaemonSet}. */
export class AdvancedDaemonSetUpdateStrategy {
  /** Replace pods: delete the old pod then create the new one, or with maxSurge create the new one first. */
  public static rollingUpdate(options: AdvancedDaemonSetRollingUpdateOptions = {}): AdvancedDaemonSetUpdateStrategy {
    return new AdvancedDaemonSetUpdateStrategy('RollingUpdate', 'Standard', options);
  }

  /** Update images and metadata in place when nothing else changed (the pod keeps its UID), recreate otherwise. */
  public static inPlaceIfPossible(options: AdvancedDaemonSetRollingUpdateOptions = {}): AdvancedDaemonSetUpdateStrategy {
    if (options.maxSurge !== undefined && percentOrAbsoluteValue(options.maxSurge, 'maxSurge') !== 0) {
      throw new Error(
        'AdvancedDaemonSetUpdateStrategy.inPlaceIfPossible: maxSurge must be 0 (a pod updated in place has no second pod). Fix: use maxUnavailable.',
      );
    }
    return new AdvancedDaemonSetUpdateStrategy('RollingUpdate', 'InPlaceIfPossible', options);
  }

  /** Pods are replaced only when they are deleted. */
  public static onDelete(): AdvancedDaemonSetUpdateStrategy {
    return new AdvancedDaemonSetUpdateStrategy('OnDelete', undefined, {});
  }

  private constructor(
    /** RollingUpdate or OnDelete. */
    public readonly type: 'RollingUpdate' | 'OnDelete',
    /** Standard or InPlaceIfPossible (rolling updates). */
    public readonly rollingUpdateType: 'Standard' | 'InPlaceIfPossible' | undefined,
    private readonly options: AdvancedDaemonSetRollingUpdateOptions,
  ) {
    const where = 'AdvancedDaemonSetUpdateStrategy';
    const unavailable = percentOrAbsoluteValue(options.maxUnavailable, `${where}: maxUnavailable`);
    const surge = percentOrAbsoluteValue(options.maxSurge, `${where}: maxSurge`);
    percentOrAbsoluteValue(options.partition, `${where}: partition`);
    const zero = (v: number | string | undefined) => v === undefined || v === 0 || v === '0%';
    if (!zero(unavailable) && !zero(surge)) {
      throw new Error(
        `${where}: maxUnavailable and maxSurge are both set; a rolling update either surges or goes unavailable. Fix: set one of them.`,
      );
    }
    if (unavailable !== undefined && zero(unavailable) && zero(surge)) {
      throw new Error(
        `${where}: maxUnavailable is 0 and there is no maxSurge, so the update could never start. Fix: set one of them above 0.`,
      );
    }
  }

  /** Whether the partition holds nodes back. */
  public get partition(): kplus.PercentOrAbsolute | undefined {
    return this.options.partition;
  }

  /** @internal */
  public _toKube(): NonNullable<DaemonSetSpec['updateStrategy']> {
    if (this.type === 'OnDelete') return { type: 'OnDelete' };
    const o = this.options;
    const surge = percentOrAbsoluteValue(o.maxSurge, 'maxSurge');
    return {
      type: 'RollingUpdate',
      rollingUpdate: {
        rollingUpdateType: this.rollingUpdateType,
        maxUnavailable: percentOrAbsoluteValue(o.maxUnavailable, 'maxUnavailable') ?? (surge === undefined ? 1 : 0),
        maxSurge: surge ?? 0,
        partition: percentOrAbsoluteValue(o.partition, 'partition'),
        selector: o.nodeLabels ? { matchLabels: { ...o.nodeLabels } } : undefined,
        paused: o.paused,
      },
    };
  }
}

/** Properties of an {@link AdvancedDaemonSet}. */
export interface AdvancedDaemonSetProps extends kplus.WorkloadProps {
  /**
   * How pods are replaced when the template changes.
   *
   * @default AdvancedDaemonSetUpdateStrategy.rollingUpdate()
   */
  readonly updateStrategy?: AdvancedDaemonSetUpdateStrategy;
  /**
   * Pod lifecycle hooks. preDelete works under both runtimes; preNormal and inPlaceUpdate are the bundled runtime's
   * only (upstream refuses inPlaceUpdate and ignores preNormal on a DaemonSet; synth fails on them under target
   * openkruise).
   *
   * @default - none
   */
  readonly lifecycle?: CloneSetLifecycle;
  /**
   * Minimum time a pod is ready before it counts as available.
   *
   * @default - available as soon as ready
   */
  readonly minReady?: Duration;
  /**
   * Pods created or deleted in one pass: a number, or a percentage of the nodes that should run the pod.
   *
   * @default 250
   */
  readonly burstReplicas?: kplus.PercentOrAbsolute;
  /**
   * Revisions kept for rollback.
   *
   * @default 10
   */
  readonly revisionHistoryLimit?: number;
  /**
   * With a partition, create pods on only as many new nodes as the partition leaves to the new revision.
   *
   * @default false
   */
  readonly partitionedScaling?: boolean;
  /**
   * The apps.kruise.io version the object is emitted at (upstream v1.9 stores this kind at v1beta1).
   *
   * @default - the app's or chart's choice (`KruiseApiVersions.emitIn`), else KruiseApiVersion.V1ALPHA1
   */
  readonly apiVersion?: KruiseApiVersion;
}

/**
 * An OpenKruise Advanced DaemonSet (apps.kruise.io DaemonSet): one pod of its template on every node it fits, with
 * in-place rolling updates, a canary partition, a node-selected rollout, pause and lifecycle hooks. It is a cdk8s-plus
 * `Workload`, so containers, volumes, env, probes, scheduling (node selector, affinity, tolerations) and `podMetadata`
 * work as on a `Deployment`; restartPolicy must be Always. The spec is built lazily, so later `add*` calls show up.
 */
export class AdvancedDaemonSet extends kplus.Workload {
  /** Rollout strategy. */
  public readonly updateStrategy: AdvancedDaemonSetUpdateStrategy;
  /** Lifecycle hooks. */
  public readonly lifecycle?: CloneSetLifecycle;
  /** Minimum ready time before a pod counts as available. */
  public readonly minReady?: Duration;
  /** @see base.Resource.apiObject */
  protected readonly apiObject: ApiObject;
  /** The Kubernetes resource type (plural). */
  public readonly resourceType = 'daemonsets';
  private readonly props: AdvancedDaemonSetProps;
  private readonly emitted: string;

  public constructor(scope: Construct, id: string, props: AdvancedDaemonSetProps = {}) {
    super(scope, id, props);
    this.emitted = kruiseApiVersionOf(this, 'DaemonSet', props.apiVersion);
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: this.emitted,
      kind: 'DaemonSet',
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown,
    });
    if (this.restartPolicy !== undefined && this.restartPolicy !== kplus.RestartPolicy.ALWAYS) {
      throw new Error(
        `[${this.node.path}] a daemon pod runs until its node goes: restartPolicy must be ALWAYS, not ${this.restartPolicy}.`,
      );
    }
    if (props.revisionHistoryLimit !== undefined && (!Number.isSafeInteger(props.revisionHistoryLimit) || props.revisionHistoryLimit < 0)) {
      throw new Error(`[${this.node.path}] revisionHistoryLimit must be a non-negative integer, got ${props.revisionHistoryLimit}.`);
    }
    percentOrAbsoluteValue(props.burstReplicas, `[${this.node.path}] burstReplicas`);
    this.updateStrategy = props.updateStrategy ?? AdvancedDaemonSetUpdateStrategy.rollingUpdate();
    if (props.partitionedScaling && this.updateStrategy.partition === undefined) {
      throw new Error(
        `[${this.node.path}] partitionedScaling follows the partition, and the update strategy sets none. Fix: set partition, or drop partitionedScaling.`,
      );
    }
    this.lifecycle = props.lifecycle;
    this.minReady = props.minReady;
    this.props = props;
    renderLifecycle(this.lifecycle, this.node.path); // eager check of local mistakes
    // v1alpha1 spells partitionedScaling as an annotation (upstream's conversion maps one to the other).
    if (props.partitionedScaling && this.emitted.endsWith('/v1alpha1')) {
      this.apiObject.metadata.addAnnotation(ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD, 'true');
    }
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
  public _toKube(): DaemonSetSpec {
    const p = this.props;
    return {
      selector: kplus.k8s.toJson_LabelSelector(this._toLabelSelector()) as V1LabelSelector,
      template: {
        metadata: this.podMetadata.toJson() as Record<string, unknown>,
        spec: kplus.k8s.toJson_PodSpec(this._toPodSpec()) as V1PodSpec,
      },
      updateStrategy: this.updateStrategy._toKube(),
      lifecycle: renderLifecycle(this.lifecycle, this.node.path),
      minReadySeconds: this.minReady?.toSeconds(),
      burstReplicas: percentOrAbsoluteValue(p.burstReplicas, `[${this.node.path}] burstReplicas`),
      revisionHistoryLimit: p.revisionHistoryLimit,
      ...(p.partitionedScaling && this.emitted.endsWith('/v1beta1') ? { scaleStrategy: { partitionedScaling: true } } : {}),
    };
  }
}

import { ApiObject, Lazy } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { POLICY_API_VERSION, type PodUnavailableBudgetSpec } from '../src/api/kinds/podunavailablebudget.js';
import { budgetValueProblem } from '../src/contracts/validators.js';

/** The workload kinds a budget's targetRef may name (those whose replicas the runtime counts). */
const TARGET_KINDS: readonly string[] = ['Deployment', 'ReplicaSet', 'StatefulSet', 'CloneSet'];

/** How many of the covered pods may be unavailable: exactly one of the two. */
export interface PodUnavailableBudgetLimit {
  /**
   * At most this many covered pods (or percent of the expected replicas, rounded up) unavailable after a deletion,
   * eviction or in-place update.
   *
   * @default - use `minAvailable`
   */
  readonly maxUnavailable?: kplus.PercentOrAbsolute;
  /**
   * At least this many covered pods (or percent of the expected replicas, rounded up) available after a deletion,
   * eviction or in-place update.
   *
   * @default - use `maxUnavailable`
   */
  readonly minAvailable?: kplus.PercentOrAbsolute;
}

/** Properties of a {@link PodUnavailableBudget}. */
export interface PodUnavailableBudgetProps extends kplus.ResourceProps, PodUnavailableBudgetLimit {
  /**
   * The workload whose pods the budget covers (its `targetRef`): a Deployment, ReplicaSet, StatefulSet or CloneSet of
   * the budget's namespace. Give this or `selector`.
   *
   * @default - use `selector`
   */
  readonly workload?: kplus.Resource;
  /**
   * Pods the budget covers, in its namespace. Give this or `workload`.
   *
   * @default - the pods of `workload`
   */
  readonly selector?: kplus.LabelSelector;
}

/**
 * An OpenKruise PodUnavailableBudget (policy.kruise.io/v1alpha1): deletions, evictions and (with gate
 * PodUnavailableBudgetUpdateGate) in-place updates of the covered pods are refused while they would leave fewer than
 * the budget allows available. The app's `KruiseRuntime` turns on gate PodUnavailableBudgetDeleteGate and registers
 * the pod validating webhook.
 *
 * Checked here with the construct path: a workload of a kind the runtime counts, in the budget's namespace, or a
 * non-empty selector; exactly one of maxUnavailable and minAvailable, a count or a percentage up to 100%.
 */
export class PodUnavailableBudget extends kplus.Resource {
  /** A budget for the pods of `workload`, in its namespace, as a child of it (id `PodUnavailableBudget`). */
  public static forWorkload(workload: kplus.Resource, limit: PodUnavailableBudgetLimit): PodUnavailableBudget {
    return new PodUnavailableBudget(workload, 'PodUnavailableBudget', {
      ...limit,
      workload,
      ...(workload.metadata.namespace ? { metadata: { namespace: workload.metadata.namespace } } : {}),
    });
  }

  /** @see base.Resource.apiObject */
  protected readonly apiObject: ApiObject;
  /** The Kubernetes resource type (plural). */
  public readonly resourceType = 'podunavailablebudgets';

  public constructor(
    scope: Construct,
    id: string,
    private readonly props: PodUnavailableBudgetProps,
  ) {
    super(scope, id);
    const where = this.node.path;
    if (!props.workload === !props.selector) {
      throw new Error(
        `[${where}] give either workload (whose pods the budget covers) or selector, not ${props.selector ? 'both' : 'neither'}.`,
      );
    }
    if (props.selector?.isEmpty()) throw new Error(`[${where}] selector is empty: the budget would cover no pod.`);
    const w = props.workload;
    if (w) {
      if (!TARGET_KINDS.includes(w.kind)) {
        throw new Error(`[${where}] workload ${w.node.path} is a ${w.kind}; a budget's workload is one of ${TARGET_KINDS.join(', ')}.`);
      }
      const ns = props.metadata?.namespace;
      if ((ns ?? '') !== (w.metadata.namespace ?? '')) {
        throw new Error(
          `[${where}] the budget (namespace ${JSON.stringify(ns ?? '')}) and ${w.node.path} (namespace ${JSON.stringify(w.metadata.namespace ?? '')}) must share a namespace.`,
        );
      }
    }
    if (!props.maxUnavailable === !props.minAvailable) {
      throw new Error(`[${where}] set exactly one of maxUnavailable and minAvailable, not ${props.maxUnavailable ? 'both' : 'neither'}.`);
    }
    for (const [k, v] of [
      ['maxUnavailable', props.maxUnavailable],
      ['minAvailable', props.minAvailable],
    ] as const) {
      const problem = v ? budgetValueProblem(v.value) : undefined;
      if (problem) throw new Error(`[${where}] ${k}: ${problem}.`);
    }
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: POLICY_API_VERSION,
      kind: 'PodUnavailableBudget',
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown,
    });
  }

  /** @internal */
  public _toKube(): PodUnavailableBudgetSpec {
    const { workload, selector, maxUnavailable, minAvailable } = this.props;
    return {
      ...(workload
        ? { targetRef: { apiVersion: workload.apiVersion, kind: workload.kind, name: workload.name } }
        : { selector: kplus.k8s.toJson_LabelSelector(selector!._toKube()) as PodUnavailableBudgetSpec['selector'] }),
      ...(maxUnavailable ? { maxUnavailable: maxUnavailable.value as number | string } : {}),
      ...(minAvailable ? { minAvailable: minAvailable.value as number | string } : {}),
    };
  }
}

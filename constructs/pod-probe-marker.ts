import { ApiObject, Lazy } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { PodContainerProbe, PodProbeMarkerSpec } from '../src/api/kinds/podprobemarker.js';
import { KRUISE_API_VERSION } from '../src/contracts/groups.js';

/** Labels and annotations a pod gets while a probe is in one state; those of the other state are removed then. */
export interface ProbeMarks {
  /**
   * Pod labels set in this state.
   *
   * @default - none
   */
  readonly labels?: { [key: string]: string };
  /**
   * Pod annotations set in this state (e.g. `controller.kubernetes.io/pod-deletion-cost`).
   *
   * @default - none
   */
  readonly annotations?: { [key: string]: string };
}

/** One probe of a {@link PodProbeMarker}. */
export interface PodProbeMarkerProbe {
  /** Probe name, unique in the marker (also within the pod across markers). */
  readonly name: string;
  /** The container probed: an exec probe runs in it, http and tcp probes default to its port. */
  readonly container: kplus.Container;
  /** The probe: `Probe.fromCommand`, `Probe.fromHttpGet` or `Probe.fromTcpSocket`, with its timings. */
  readonly probe: kplus.Probe;
  /**
   * Pod condition the result is written to (True when the probe succeeds, False otherwise).
   *
   * @default - no condition (then `whenSucceeded` or `whenFailed` is required)
   */
  readonly conditionType?: string;
  /**
   * Marks while the probe succeeds.
   *
   * @default - none
   */
  readonly whenSucceeded?: ProbeMarks;
  /**
   * Marks while the probe fails.
   *
   * @default - none
   */
  readonly whenFailed?: ProbeMarks;
}

/** Properties of a {@link PodProbeMarker}. */
export interface PodProbeMarkerProps extends kplus.ResourceProps {
  /**
   * Workloads whose pods are probed (their pod selectors are joined); each probe's container must be one of theirs.
   * Give this or `selector`.
   *
   * @default - use `selector`
   */
  readonly workloads?: readonly kplus.Workload[];
  /**
   * Pods to probe, in the marker's namespace. Give this or `workloads`.
   *
   * @default - the pods of `workloads`
   */
  readonly selector?: kplus.LabelSelector;
  /**
   * Probes; more with {@link PodProbeMarker.addProbe}.
   *
   * @default - none
   */
  readonly probes?: readonly PodProbeMarkerProbe[];
}

const hasMarks = (m?: ProbeMarks) => !!m && (Object.keys(m.labels ?? {}).length > 0 || Object.keys(m.annotations ?? {}).length > 0);

/**
 * An OpenKruise PodProbeMarker: custom probes run by the node daemon on the selected pods, whose results become a pod
 * condition and labels/annotations (e.g. a deletion cost), without touching the pods' own readiness. Needs the
 * runtime's daemon and gate PodProbeMarkerGate, which the app's `KruiseRuntime` infers.
 *
 * Checked here with the construct path: a selector (or workloads), unique probe names, a container the selected
 * workloads have, and something to mark.
 */
export class PodProbeMarker extends kplus.Resource {
  /** @see base.Resource.apiObject */
  protected readonly apiObject: ApiObject;
  /** The Kubernetes resource type (plural). */
  public readonly resourceType = 'podprobemarkers';
  private readonly probes: PodProbeMarkerProbe[] = [];
  private readonly workloads: readonly kplus.Workload[];

  public constructor(
    scope: Construct,
    id: string,
    private readonly props: PodProbeMarkerProps,
  ) {
    super(scope, id);
    const where = this.node.path;
    this.workloads = props.workloads ?? [];
    if (!props.selector === (this.workloads.length === 0)) {
      throw new Error(`[${where}] give either workloads (whose pods are probed) or selector, not ${props.selector ? 'both' : 'neither'}.`);
    }
    if (props.selector?.isEmpty()) throw new Error(`[${where}] selector is empty: it would probe every pod of the namespace.`);
    for (const p of props.probes ?? []) this.addProbe(p);
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: KRUISE_API_VERSION,
      kind: 'PodProbeMarker',
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown,
    });
    this.node.addValidation({ validate: () => (this.probes.length ? [] : [`[${where}] has no probe: add one with addProbe().`]) });
  }

  /** Adds a probe; throws (naming the construct) on a duplicate name, a container the workloads lack, or nothing to mark. */
  public addProbe(probe: PodProbeMarkerProbe): PodProbeMarker {
    const where = this.node.path;
    if (!probe.name || probe.name.includes('#'))
      throw new Error(`[${where}] probe name ${JSON.stringify(probe.name)} is empty or holds #.`);
    if (this.probes.some((p) => p.name === probe.name))
      throw new Error(`[${where}] probe name ${JSON.stringify(probe.name)} is used twice.`);
    if (!probe.conditionType && !hasMarks(probe.whenSucceeded) && !hasMarks(probe.whenFailed)) {
      throw new Error(`[${where}] probe ${JSON.stringify(probe.name)} marks nothing: set conditionType, whenSucceeded or whenFailed.`);
    }
    for (const w of this.workloads) {
      if (!w.containers.includes(probe.container)) {
        const names = w.containers.map((c) => c.name).join(', ');
        throw new Error(
          `[${where}] probe ${JSON.stringify(probe.name)}: container ${JSON.stringify(probe.container.name)} is not in ${w.node.path} (its containers: ${names}).`,
        );
      }
    }
    this.probes.push(probe);
    return this;
  }

  /** @internal */
  public _toKube(): PodProbeMarkerSpec {
    const selector = this.props.selector
      ? (kplus.k8s.toJson_LabelSelector(this.props.selector._toKube()) as PodProbeMarkerSpec['selector'])
      : { matchLabels: Object.assign({}, ...this.workloads.map((w) => w.matchLabels)) as Record<string, string> };
    return {
      selector,
      probes: this.probes.map((p): PodContainerProbe => {
        const policy = [
          ...(hasMarks(p.whenSucceeded) ? [{ state: 'Succeeded' as const, ...p.whenSucceeded }] : []),
          ...(hasMarks(p.whenFailed) ? [{ state: 'Failed' as const, ...p.whenFailed }] : []),
        ];
        return {
          name: p.name,
          containerName: p.container.name,
          probe: kplus.k8s.toJson_Probe(p.probe._toKube(p.container)) as PodContainerProbe['probe'],
          ...(policy.length ? { markerPolicy: policy } : {}),
          ...(p.conditionType ? { podConditionType: p.conditionType } : {}),
        };
      }),
    };
  }
}

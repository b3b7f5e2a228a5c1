import { ApiObject, Chart, JsonPatch, Lazy } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { V1Container, V1Volume } from '../src/api/core/k8s-core-types.js';
import type { LabelSelector as V1LabelSelector } from '../src/api/common.js';
import { checkImage } from './internal/image-reference.js';
import { describeConstruct, percentOrAbsoluteValue, secretNames, type SecretReference } from './internal/plus-objects.js';
import type { SidecarSetSpec } from '../src/api/kinds/sidecarset.js';
import { ANNOTATION_SIDECARSET_NATIVE_SIDECARS, LABEL_NAMESPACE_NAME, LABEL_SIDECARSET_CUSTOM_VERSION } from '../src/contracts/keys.js';
import { kruiseApiVersionOf, KruiseApiVersion } from './api-version.js';
import { KUBERNETES_VERSION_CONTEXT, NATIVE_SIDECARS_MIN_MINOR, parseKubernetesVersion } from './sidecar-strategy.js';
import { resourcesPolicyProblems } from '../src/api/sidecar-resources.js';

/** Where an injected container is placed relative to the pod's own containers. */
export enum PodInjectPolicy {
  /** Before the app containers (default for containers). */
  BEFORE_APP_CONTAINER = 'BeforeAppContainer',
  /** After the app containers (default for init containers). */
  AFTER_APP_CONTAINER = 'AfterAppContainer',
}

/** How an injected sidecar is upgraded when the SidecarSet changes. */
export class SidecarUpgradeStrategy {
  /** Stop the old container, start the new one (the default). */
  public static coldUpgrade(): SidecarUpgradeStrategy {
    return new SidecarUpgradeStrategy('ColdUpgrade', undefined);
  }

  /**
   * Hot upgrade: the sidecar runs as two containers that swap roles, so it never stops.
   *
   * @param emptyImage image that idles in the standby slot.
   */
  public static hotUpgrade(emptyImage: string): SidecarUpgradeStrategy {
    if (!emptyImage) throw new Error('SidecarUpgradeStrategy.hotUpgrade: an empty image is required.');
    checkImage(emptyImage, 'SidecarUpgradeStrategy.hotUpgrade: emptyImage');
    return new SidecarUpgradeStrategy('HotUpgrade', emptyImage);
  }

  private constructor(
    /** `ColdUpgrade` or `HotUpgrade`. */
    public readonly upgradeType: 'ColdUpgrade' | 'HotUpgrade',
    /** The standby image for hot upgrades. */
    public readonly hotUpgradeEmptyImage: string | undefined,
  ) {}
}

/** Copies an env var from an app container of the pod into the sidecar. */
export interface TransferEnv {
  /**
   * Name of the app container to copy from. Exactly one of `sourceContainerName` and
   * `sourceContainerNameFromField` must be set.
   *
   * @default - use sourceContainerNameFromField
   */
  readonly sourceContainerName?: string;
  /**
   * A pod field path (e.g. `metadata.labels['app.io/main']`) holding the source container name.
   *
   * @default - use sourceContainerName
   */
  readonly sourceContainerNameFromField?: string;
  /**
   * One env var to copy. Exactly one of `envName` and `envNames` must be set.
   *
   * @default - use envNames
   */
  readonly envName?: string;
  /**
   * Several env vars to copy.
   *
   * @default - use envName
   */
  readonly envNames?: string[];
}

/** How a resources policy aggregates the resources of the pod's target containers. */
export enum TargetContainersMode {
  /** Add up the matched containers' values. */
  SUM = 'sum',
  /** Take the largest of the matched containers' values. */
  MAX = 'max',
}

/**
 * Expressions of one resource list (`limits` or `requests`) of a sidecar. Each may use `+ - * /`, parentheses,
 * `max(a, b)`, `min(a, b)`, numbers (`0.5`, `50%`), quantities (`100m`, `64Mi`) and its variable: `cpu` or `memory`,
 * the aggregate of the target containers (e.g. `max(cpu*50%, 50m)`).
 */
export interface SidecarResourceExpressions {
  /**
   * CPU expression over variable `cpu`.
   *
   * @default - not set
   */
  readonly cpu?: string;
  /**
   * Memory expression over variable `memory`.
   *
   * @default - not set
   */
  readonly memory?: string;
}

/**
 * Computes the sidecar's requests and limits at pod creation from the pod's containers (Kruise v1.9
 * `resourcesPolicy`). A target container without a limit makes that limit unlimited (the sidecar gets none); a
 * missing request counts as 0; a pod none of whose containers match is refused.
 */
export interface SidecarResourcesPolicy {
  /** How the target containers' resources aggregate. */
  readonly mode: TargetContainersMode;
  /**
   * Regex over the pod's container names (plain containers and native sidecars, never the injected sidecars).
   *
   * @default '.*'
   */
  readonly targetContainersNameRegex?: string;
  /**
   * Limit expressions. At least one of `limits` and `requests` is required.
   *
   * @default - no limits
   */
  readonly limits?: SidecarResourceExpressions;
  /**
   * Request expressions.
   *
   * @default - no requests
   */
  readonly requests?: SidecarResourceExpressions;
}

/** Properties of a container injected by a SidecarSet: cdk8s-plus container props plus Kruise fields. */
export interface SidecarContainerProps extends kplus.ContainerProps {
  /**
   * Placement relative to the pod's own containers.
   *
   * @default PodInjectPolicy.BEFORE_APP_CONTAINER
   */
  readonly podInjectPolicy?: PodInjectPolicy;
  /**
   * Also mount every volumeMount of the pod's app containers into this sidecar (e.g. to
   * read their log directories).
   *
   * @default false
   */
  readonly shareVolumePolicy?: boolean;
  /**
   * Env vars copied from app containers.
   *
   * @default - none
   */
  readonly transferEnv?: TransferEnv[];
  /**
   * Upgrade strategy of the injected container.
   *
   * @default SidecarUpgradeStrategy.coldUpgrade()
   */
  readonly upgradeStrategy?: SidecarUpgradeStrategy;
  /**
   * Compute this sidecar's resources from the pod's containers at injection. Excludes `resources`: the
   * container is emitted without any (cdk8s-plus' default resources are left out).
   *
   * @default - the container's own resources
   */
  readonly resourcesPolicy?: SidecarResourcesPolicy;
}

/** Properties of an init container injected by a SidecarSet. */
export interface SidecarInitContainerProps extends kplus.ContainerProps {
  /**
   * Placement relative to the pod's own init containers.
   *
   * @default PodInjectPolicy.AFTER_APP_CONTAINER
   */
  readonly podInjectPolicy?: PodInjectPolicy;
}

/** Options of a rolling SidecarSet update. */
export interface SidecarSetRollingUpdateOptions {
  /**
   * Maximum number or percentage of pods updated at once (not 0).
   *
   * @default PercentOrAbsolute.absolute(1)
   */
  readonly maxUnavailable?: kplus.PercentOrAbsolute;
  /**
   * Number or percentage of matched pods kept at the old version.
   *
   * @default PercentOrAbsolute.absolute(0)
   */
  readonly partition?: kplus.PercentOrAbsolute;
  /**
   * Pauses the rollout.
   *
   * @default false
   */
  readonly paused?: boolean;
  /**
   * Only update pods matching this selector.
   *
   * @default - all matched pods
   */
  readonly selector?: kplus.LabelSelector;
}

/** How a SidecarSet updates sidecars in already-injected pods. */
export class SidecarSetUpdateStrategy {
  /** Update injected sidecars in place, `maxUnavailable` pods at a time. */
  public static rollingUpdate(options: SidecarSetRollingUpdateOptions = {}): SidecarSetUpdateStrategy {
    const maxUnavailable = percentOrAbsoluteValue(options.maxUnavailable, 'SidecarSetUpdateStrategy.rollingUpdate: maxUnavailable');
    if (maxUnavailable === 0 || maxUnavailable === '0%') {
      throw new Error('SidecarSetUpdateStrategy.rollingUpdate: maxUnavailable must not be 0 (the rollout would never progress).');
    }
    return new SidecarSetUpdateStrategy('RollingUpdate', options);
  }

  /** Never update existing pods; only newly created pods get the new sidecars. */
  public static notUpdate(): SidecarSetUpdateStrategy {
    return new SidecarSetUpdateStrategy('NotUpdate', {});
  }

  private constructor(
    /** `RollingUpdate` or `NotUpdate`. */
    public readonly type: 'RollingUpdate' | 'NotUpdate',
    private readonly options: SidecarSetRollingUpdateOptions,
  ) {
    for (const field of ['maxUnavailable', 'partition'] as const)
      percentOrAbsoluteValue(options[field], `SidecarSetUpdateStrategy: ${field}`);
  }

  /** @internal */
  public _toKube() {
    const o = this.options;
    return {
      type: this.type,
      maxUnavailable: percentOrAbsoluteValue(o.maxUnavailable, 'SidecarSetUpdateStrategy: maxUnavailable'),
      partition: percentOrAbsoluteValue(o.partition, 'SidecarSetUpdateStrategy: partition'),
      paused: o.paused,
      selector: o.selector ? labelSelectorJson(o.selector) : undefined,
    };
  }
}

/** Which SidecarSet revision new pods get. */
export enum InjectionRevisionPolicy {
  /** Always inject the pinned revision. */
  ALWAYS = 'Always',
  /** Pods selected by the update strategy may get the latest revision instead. */
  PARTIAL = 'Partial',
}

/** How sidecars are injected into new pods. */
export interface SidecarSetInjectionStrategy {
  /**
   * Stop injecting into new pods.
   *
   * @default false
   */
  readonly paused?: boolean;
  /**
   * Pin injection to a custom version label value (`apps.kruise.io/sidecarset-custom-version`).
   *
   * @default - the latest revision
   */
  readonly customVersion?: string;
  /**
   * Pin injection to a ControllerRevision name.
   *
   * @default - the latest revision
   */
  readonly revisionName?: string;
  /**
   * How strictly the pinned revision applies.
   *
   * @default InjectionRevisionPolicy.ALWAYS
   */
  readonly policy?: InjectionRevisionPolicy;
}

/** How patched pod annotations combine with existing ones. */
export enum PatchPolicy {
  /** Keep an existing value. */
  RETAIN = 'Retain',
  /** Replace an existing value. */
  OVERWRITE = 'Overwrite',
  /** JSON-merge-patch the value into an existing JSON value. */
  MERGE_PATCH_JSON = 'MergePatchJson',
}

/** Annotations a SidecarSet patches onto the pods it injects into. */
export interface SidecarSetPatchPodMetadata {
  /** Annotations to set (keys must be allowed by the Kruise configuration whitelist). */
  readonly annotations: { [key: string]: string };
  /**
   * How to combine with existing values.
   *
   * @default PatchPolicy.RETAIN
   */
  readonly patchPolicy?: PatchPolicy;
}

/** Properties of a {@link SidecarSet}. */
export interface SidecarSetProps extends kplus.ResourceProps {
  /** Pods to inject into. Must not be empty: an empty selector matches nothing. */
  readonly selector: kplus.LabelSelector;
  /**
   * Only inject into pods of this namespace (exclusive with `namespaceSelector` and `allNamespaces`).
   *
   * @default - the chart's namespace; all namespaces when the chart has none
   */
  readonly namespace?: string;
  /**
   * Only inject into pods of namespaces with these labels (exclusive with `namespace` and `allNamespaces`).
   *
   * @default - the chart's namespace; all namespaces when the chart has none
   */
  readonly namespaceSelector?: kplus.LabelSelector;
  /**
   * Inject into matching pods of every namespace, even when the chart has a namespace (exclusive with
   * `namespace` and `namespaceSelector`).
   *
   * @default false
   */
  readonly allNamespaces?: boolean;
  /**
   * Sidecar containers to inject.
   *
   * @default - none; use addContainer
   */
  readonly containers?: SidecarContainerProps[];
  /**
   * Init containers to inject (sorted by name after the pod's own).
   *
   * @default - none
   */
  readonly initContainers?: SidecarInitContainerProps[];
  /**
   * Volumes added to the pod when an injected container uses them. Volumes mounted by the
   * containers are added automatically.
   *
   * @default - none
   */
  readonly volumes?: kplus.Volume[];
  /**
   * How injected sidecars are updated.
   *
   * @default SidecarSetUpdateStrategy.rollingUpdate()
   */
  readonly updateStrategy?: SidecarSetUpdateStrategy;
  /**
   * How sidecars are injected into new pods.
   *
   * @default - latest revision, not paused
   */
  readonly injectionStrategy?: SidecarSetInjectionStrategy;
  /**
   * Image pull secrets added to injected pods: cdk8s-plus Secrets or Secret names.
   *
   * @default - none
   */
  readonly imagePullSecrets?: readonly SecretReference[];
  /**
   * Annotations patched onto injected pods.
   *
   * @default - none
   */
  readonly patchPodMetadata?: SidecarSetPatchPodMetadata[];
  /**
   * Number of old revisions kept.
   *
   * @default 10
   */
  readonly revisionHistoryLimit?: number;
  /**
   * Inject the containers as Kubernetes native sidecars (`initContainers` with `restartPolicy: Always`), so
   * the kubelet starts them before and stops them after the app containers (e.g. a Job completes without a
   * sidecar terminator). Needs Kubernetes >= 1.29: the context `cdk8s-kruise:kubernetesVersion` must say so.
   * Carried out by the cdk8s-kruise runtime only (annotation `kruise.cdk8s.io/native-sidecars`).
   *
   * @default false
   */
  readonly nativeSidecars?: boolean;
  /**
   * A version name recorded on this SidecarSet's revisions, which `injectionStrategy.customVersion` of a later
   * change can pin new pods to (the label `apps.kruise.io/sidecarset-custom-version` at v1alpha1,
   * `spec.customVersion` at v1beta1).
   *
   * @default - none
   */
  readonly customVersion?: string;
  /**
   * The apps.kruise.io version the object is emitted at (upstream v1.9 stores this kind at v1beta1). At v1beta1 the
   * injection namespace is emitted as a namespaceSelector on `kubernetes.io/metadata.name`, as upstream converts it.
   *
   * @default - the app's or chart's choice (`KruiseApiVersions.emitIn`), else KruiseApiVersion.V1ALPHA1
   */
  readonly apiVersion?: KruiseApiVersion;
}

/** Renders a cdk8s-plus selector as plain JSON (cdk8s-plus's own L1 mapping). */
export function labelSelectorJson(selector: kplus.LabelSelector): V1LabelSelector {
  return kplus.k8s.toJson_LabelSelector(selector._toKube()) as V1LabelSelector;
}

/** Renders a cdk8s-plus container as plain JSON (cdk8s-plus's own L1 mapping). */
function containerJson(container: kplus.Container): V1Container {
  return kplus.k8s.toJson_Container(container._toKube()) as V1Container;
}

function policyJson(p: SidecarResourcesPolicy) {
  return {
    targetContainersMode: p.mode,
    targetContainersNameRegex: p.targetContainersNameRegex,
    resourcesExpr: {
      limits: p.limits ? { cpu: p.limits.cpu, memory: p.limits.memory } : undefined,
      requests: p.requests ? { cpu: p.requests.cpu, memory: p.requests.memory } : undefined,
    },
  };
}

interface SidecarEntry {
  readonly container: kplus.Container;
  readonly props: SidecarContainerProps;
}

/**
 * An OpenKruise SidecarSet (cluster-scoped): injects sidecar containers into matching pods
 * at creation and upgrades them in place. In a chart with a namespace it injects only into that
 * namespace (`spec.namespace`), as the chart's other objects live there; `allNamespaces: true` widens it.
 * Containers are cdk8s-plus containers, rendered by cdk8s-plus; the spec is built lazily.
 */
export class SidecarSet extends kplus.Resource {
  /** @see base.Resource.apiObject */
  protected readonly apiObject: ApiObject;
  /** The Kubernetes resource type (plural). */
  public readonly resourceType = 'sidecarsets';

  private readonly _containers: SidecarEntry[] = [];
  private readonly _initContainers: Array<{ container: kplus.Container; props: SidecarInitContainerProps }> = [];
  private readonly _volumes = new Map<string, kplus.Volume>();
  /** `spec.namespace`: the `namespace` prop, else the chart's namespace unless another scope is set. */
  private readonly injectionNamespace: string | undefined;
  /** Emitted at v1beta1 (the prop or the app says so), else v1alpha1. */
  private readonly v1beta1: boolean;

  public constructor(
    scope: Construct,
    id: string,
    private readonly props: SidecarSetProps,
  ) {
    super(scope, id);
    // Plain JavaScript (or a cast) can leave out the required props; say what is missing instead of a TypeError.
    if (!props || !props.selector || typeof props.selector.isEmpty !== 'function') {
      throw new Error(
        `[${this.node.path}] SidecarSet needs a selector (a cdk8s-plus LabelSelector of the pods to inject into), ` +
          `but got ${props?.selector === undefined ? 'none' : describeConstruct(props.selector)}. ` +
          'Fix: selector: LabelSelector.of({ labels: { app: "..." } }).',
      );
    }
    if (props.selector.isEmpty()) {
      throw new Error(
        `[${this.node.path}] selector must not be empty: an empty SidecarSet selector matches no pod. ` +
          'Fix: LabelSelector.of({ labels: { app: "..." } }).',
      );
    }
    const scopes = (['namespace', 'namespaceSelector', 'allNamespaces'] as const).filter(
      (k) => props[k] !== undefined && props[k] !== false,
    );
    if (scopes.length > 1) {
      throw new Error(`[${this.node.path}] ${scopes.join(' and ')} are mutually exclusive; set only one.`);
    }
    for (const p of props.patchPodMetadata ?? []) {
      if (Object.keys(p.annotations).length === 0) {
        throw new Error(`[${this.node.path}] patchPodMetadata entries need at least one annotation.`);
      }
    }
    const apiVersion = kruiseApiVersionOf(this, 'SidecarSet', props.apiVersion);
    const beta = (this.v1beta1 = apiVersion === (KruiseApiVersion.V1BETA1 as string));
    if (props.customVersion !== undefined && (typeof props.customVersion !== 'string' || props.customVersion === '')) {
      throw new Error(`[${this.node.path}] customVersion must be a non-empty string, got ${JSON.stringify(props.customVersion)}.`);
    }
    if (beta && props.metadata?.labels?.[LABEL_SIDECARSET_CUSTOM_VERSION] !== undefined) {
      throw new Error(
        `[${this.node.path}] the label ${LABEL_SIDECARSET_CUSTOM_VERSION} is v1alpha1's custom version; at v1beta1 it is spec.customVersion: use the customVersion prop.`,
      );
    }
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion,
      kind: 'SidecarSet',
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown,
    });
    // A SidecarSet is cluster-scoped (upstream's CRD): the namespace cdk8s stamps from the chart is not valid on it.
    // The chart's namespace becomes the injection scope instead (spec.namespace), as for every other object in it.
    const chartNamespace = Chart.of(this).namespace;
    if (props.metadata?.namespace !== undefined || chartNamespace !== undefined)
      this.apiObject.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
    this.injectionNamespace = scopes.length > 0 ? props.namespace : chartNamespace;
    if (props.customVersion && !beta) this.apiObject.metadata.addLabel(LABEL_SIDECARSET_CUSTOM_VERSION, props.customVersion);
    if (props.nativeSidecars) {
      this.apiObject.metadata.addAnnotation(ANNOTATION_SIDECARSET_NATIVE_SIDECARS, 'true');
      // A restartPolicy on an init container is refused by API servers before 1.28 (and off by default in
      // 1.28): every matched pod's creation would fail, so the version must be known and new enough.
      this.node.addValidation({
        validate: () => {
          const version: unknown = this.node.tryGetContext(KUBERNETES_VERSION_CONTEXT);
          const fix = `set the context "${KUBERNETES_VERSION_CONTEXT}" to your cluster's version (>= 1.${NATIVE_SIDECARS_MIN_MINOR}) or drop nativeSidecars`;
          if (version === undefined)
            return [
              `[${this.node.path}] nativeSidecars needs Kubernetes >= 1.${NATIVE_SIDECARS_MIN_MINOR}, but the target version is unknown: ${fix}.`,
            ];
          const { major, minor } = parseKubernetesVersion(version, this.node.path);
          if (major === 1 && minor < NATIVE_SIDECARS_MIN_MINOR) {
            return [
              `[${this.node.path}] nativeSidecars needs Kubernetes >= 1.${NATIVE_SIDECARS_MIN_MINOR}, but the target is ${major}.${minor}: ${fix}.`,
            ];
          }
          return [];
        },
      });
    }
    for (const c of props.containers ?? []) this.addContainer(c);
    for (const c of props.initContainers ?? []) this.addInitContainer(c);
    for (const v of props.volumes ?? []) this.addVolume(v);
  }

  /** Adds a sidecar container to inject. */
  public addContainer(props: SidecarContainerProps): kplus.Container {
    this.checkName(props.name, 'containers');
    checkImage(props.image, `[${this.node.path}] containers: container "${props.name}" image`);
    for (const t of props.transferEnv ?? []) {
      if ((t.sourceContainerName === undefined) === (t.sourceContainerNameFromField === undefined)) {
        throw new Error(
          `[${this.node.path}] container "${props.name}": transferEnv needs exactly one of sourceContainerName and sourceContainerNameFromField.`,
        );
      }
      if ((t.envName === undefined) === (t.envNames === undefined)) {
        throw new Error(`[${this.node.path}] container "${props.name}": transferEnv needs exactly one of envName and envNames.`);
      }
    }
    if (props.resourcesPolicy) {
      if (props.resources) {
        throw new Error(`[${this.node.path}] container "${props.name}": resourcesPolicy and resources cannot be configured together.`);
      }
      const problems = resourcesPolicyProblems({ name: props.name ?? '', resourcesPolicy: policyJson(props.resourcesPolicy) }, false);
      if (problems.length) {
        throw new Error(`[${this.node.path}] container "${props.name}": ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}.`);
      }
    }
    const container = new kplus.Container(props);
    this._containers.push({ container, props });
    return container;
  }

  /** Adds an init container to inject. Probes are not allowed on init containers. */
  public addInitContainer(props: SidecarInitContainerProps): kplus.Container {
    this.checkName(props.name, 'initContainers');
    checkImage(props.image, `[${this.node.path}] initContainers: container "${props.name}" image`);
    if (props.readiness || props.liveness || props.startup) {
      throw new Error(`[${this.node.path}] init container "${props.name}" must not have probes.`);
    }
    const container = new kplus.Container(props);
    this._initContainers.push({ container, props });
    return container;
  }

  /** Adds a volume injected along with the containers that use it. */
  public addVolume(volume: kplus.Volume): void {
    if (this._volumes.has(volume.name)) {
      throw new Error(`[${this.node.path}] volume "${volume.name}" already exists.`);
    }
    this._volumes.set(volume.name, volume);
  }

  /** The sidecar containers (live objects). */
  public get containers(): kplus.Container[] {
    return this._containers.map((c) => c.container);
  }

  /** The init containers (live objects). */
  public get initContainers(): kplus.Container[] {
    return this._initContainers.map((c) => c.container);
  }

  private checkName(name: string | undefined, field: string): void {
    if (!name) {
      throw new Error(`[${this.node.path}] ${field}: injected containers need an explicit name (it must not clash with app containers).`);
    }
    const all = [...this._containers, ...this._initContainers].map((c) => c.container.name);
    if (all.includes(name)) throw new Error(`[${this.node.path}] ${field}: container "${name}" already exists.`);
  }

  /** @internal */
  public _toKube(): SidecarSetSpec {
    const volumes = new Map(this._volumes);
    const collect = (c: kplus.Container) => {
      for (const mount of c.mounts) {
        const existing = volumes.get(mount.volume.name);
        if (existing && existing !== mount.volume) {
          throw new Error(`[${this.node.path}] two different volumes are named "${mount.volume.name}".`);
        }
        volumes.set(mount.volume.name, mount.volume);
      }
    };
    const containers = this._containers.map(({ container, props }) => {
      collect(container);
      const json = containerJson(container);
      if (props.resourcesPolicy) delete json.resources;
      return {
        ...json,
        podInjectPolicy: props.podInjectPolicy,
        resourcesPolicy: props.resourcesPolicy ? policyJson(props.resourcesPolicy) : undefined,
        shareVolumePolicy:
          props.shareVolumePolicy !== undefined
            ? { type: props.shareVolumePolicy ? ('enabled' as const) : ('disabled' as const) }
            : undefined,
        transferEnv: props.transferEnv?.map((t) => ({
          sourceContainerName: t.sourceContainerName,
          sourceContainerNameFrom: t.sourceContainerNameFromField ? { fieldRef: { fieldPath: t.sourceContainerNameFromField } } : undefined,
          envName: t.envName,
          envNames: t.envNames,
        })),
        upgradeStrategy: props.upgradeStrategy
          ? { upgradeType: props.upgradeStrategy.upgradeType, hotUpgradeEmptyImage: props.upgradeStrategy.hotUpgradeEmptyImage }
          : undefined,
      };
    });
    const initContainers = this._initContainers.map(({ container, props }) => {
      collect(container);
      return { ...containerJson(container), podInjectPolicy: props.podInjectPolicy };
    });
    const p = this.props;
    const injection = p.injectionStrategy;
    const pinned = injection && (injection.customVersion || injection.revisionName || injection.policy);
    // v1beta1 has no spec.namespace: the namespace is the selector upstream's conversion makes of it.
    const beta = this.v1beta1;
    const namespaceSelector = p.namespaceSelector
      ? labelSelectorJson(p.namespaceSelector)
      : beta && this.injectionNamespace
        ? { matchLabels: { [LABEL_NAMESPACE_NAME]: this.injectionNamespace } }
        : undefined;
    return {
      selector: labelSelectorJson(p.selector),
      namespace: beta ? undefined : this.injectionNamespace,
      namespaceSelector,
      customVersion: beta ? p.customVersion : undefined,
      containers: containers.length > 0 ? containers : undefined,
      initContainers: initContainers.length > 0 ? initContainers : undefined,
      volumes: volumes.size > 0 ? [...volumes.values()].map((v) => kplus.k8s.toJson_Volume(v._toKube()) as V1Volume) : undefined,
      updateStrategy: (p.updateStrategy ?? SidecarSetUpdateStrategy.rollingUpdate())._toKube(),
      injectionStrategy: injection
        ? {
            paused: injection.paused,
            revision: pinned
              ? { customVersion: injection.customVersion, revisionName: injection.revisionName, policy: injection.policy }
              : undefined,
          }
        : undefined,
      imagePullSecrets: secretNames(p.imagePullSecrets, `[${this.node.path}] imagePullSecrets`)?.map((name) => ({ name })),
      patchPodMetadata: p.patchPodMetadata?.map((m) => ({ annotations: { ...m.annotations }, patchPolicy: m.patchPolicy })),
      revisionHistoryLimit: p.revisionHistoryLimit,
    };
  }
}

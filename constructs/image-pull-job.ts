import { ApiObject, Duration, Lazy } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { secretNames, type SecretReference } from './internal/plus-objects.js';
import { Construct } from 'constructs';
import type { ImagePullJobSpec } from '../src/api/kinds/imagepulljob.js';
import { kruiseApiVersionOf, type KruiseApiVersion } from './api-version.js';
import { imageReferenceMessage } from './internal/image-reference.js';

/** Which nodes an ImagePullJob pulls on, by node name or node labels. */
export class ImagePullJobNodeSelector {
  /** Exactly these nodes. */
  public static names(...names: string[]): ImagePullJobNodeSelector {
    if (names.length === 0) throw new Error('ImagePullJobNodeSelector.names: give at least one node name.');
    return new ImagePullJobNodeSelector(names, undefined);
  }

  /** Nodes whose labels match. */
  public static labels(selector: kplus.LabelSelector): ImagePullJobNodeSelector {
    if (selector.isEmpty()) {
      throw new Error('ImagePullJobNodeSelector.labels: the selector is empty; omit `selector` to pull on every node.');
    }
    return new ImagePullJobNodeSelector(undefined, selector);
  }

  private constructor(
    /** Node names, for a by-name selector. */
    public readonly nodeNames: string[] | undefined,
    /** The label selector, for a by-label selector. */
    public readonly labelSelector: kplus.LabelSelector | undefined,
  ) {}

  /** @internal */
  public _toKube() {
    return { names: this.nodeNames, ...(this.labelSelector ? kplus.k8s.toJson_LabelSelector(this.labelSelector._toKube()) : {}) };
  }
}

/** When the image is pulled again on a node that already has it. */
export enum ImagePullJobImagePullPolicy {
  /** Always pull. */
  ALWAYS = 'Always',
  /** Pull only if the node lacks the image (the default). */
  IF_NOT_PRESENT = 'IfNotPresent',
}

/** Per-node pull attempts. */
export interface ImagePullJobPullPolicy {
  /**
   * Timeout of one pull attempt on a node.
   *
   * @default Duration.minutes(10)
   */
  readonly timeout?: Duration;
  /**
   * Attempts on a node before it counts as failed.
   *
   * @default 3
   */
  readonly backoffLimit?: number;
}

/** Options of {@link ImagePullJobCompletionPolicy.always}. */
export interface ImagePullJobAlwaysCompletionOptions {
  /**
   * Time after which the job is failed; must be at least the pull timeout.
   *
   * @default - no deadline
   */
  readonly activeDeadline?: Duration;
  /**
   * Time after completion when the job is deleted.
   *
   * @default - kept
   */
  readonly ttlAfterFinished?: Duration;
}

/** When an ImagePullJob is finished. */
export class ImagePullJobCompletionPolicy {
  /** The job completes once every selected node has succeeded or failed (the default). */
  public static always(options: ImagePullJobAlwaysCompletionOptions = {}): ImagePullJobCompletionPolicy {
    return new ImagePullJobCompletionPolicy('Always', options.activeDeadline, options.ttlAfterFinished);
  }

  /** The job never completes: it keeps pulling on new matching nodes. */
  public static never(): ImagePullJobCompletionPolicy {
    return new ImagePullJobCompletionPolicy('Never', undefined, undefined);
  }

  private constructor(
    /** `Always` or `Never`. */
    public readonly type: 'Always' | 'Never',
    /** Deadline (Always only). */
    public readonly activeDeadline: Duration | undefined,
    /** TTL after finishing (Always only). */
    public readonly ttlAfterFinished: Duration | undefined,
  ) {}
}

/** Labels/annotations passed to the CRI PullImage sandbox config. */
export interface ImagePullJobSandboxConfig {
  /**
   * Sandbox labels.
   *
   * @default - none
   */
  readonly labels?: { [key: string]: string };
  /**
   * Sandbox annotations.
   *
   * @default - none
   */
  readonly annotations?: { [key: string]: string };
}

/** What an {@link ImagePullJob} and each image of an {@link ImageListPullJob} share: nodes, pace, policies. */
export interface ImagePullJobTemplateProps extends kplus.ResourceProps {
  /**
   * Secrets (in the job's namespace) used to pull: cdk8s-plus Secrets or Secret names.
   *
   * @default - none
   */
  readonly pullSecrets?: readonly SecretReference[];
  /**
   * Nodes to pull on, by name or labels. Exclusive with `podSelector`.
   *
   * @default - every node
   */
  readonly selector?: ImagePullJobNodeSelector;
  /**
   * Pull on the nodes running pods that match, in the job's namespace. Exclusive with `selector`.
   *
   * @default - use `selector`
   */
  readonly podSelector?: kplus.LabelSelector;
  /**
   * Number of nodes pulling at once (an integer; 0 pauses the job).
   *
   * @default 1
   */
  readonly parallelism?: number;
  /**
   * Per-node timeout and retries.
   *
   * @default - 10 minutes, 3 attempts
   */
  readonly pullPolicy?: ImagePullJobPullPolicy;
  /**
   * When the job finishes.
   *
   * @default ImagePullJobCompletionPolicy.always()
   */
  readonly completionPolicy?: ImagePullJobCompletionPolicy;
  /**
   * CRI sandbox labels/annotations for the pull.
   *
   * @default - none
   */
  readonly sandboxConfig?: ImagePullJobSandboxConfig;
  /**
   * Pull again even if the node has the image.
   *
   * @default ImagePullJobImagePullPolicy.IF_NOT_PRESENT
   */
  readonly imagePullPolicy?: ImagePullJobImagePullPolicy;
}

/** Properties of an {@link ImagePullJob}. */
export interface ImagePullJobProps extends ImagePullJobTemplateProps {
  /** Image to pre-pull, e.g. `nginx:1.9.1`; the reference syntax is checked. */
  readonly image: string;
  /**
   * The apps.kruise.io version the object is emitted at (upstream v1.9 stores this kind at v1beta1).
   *
   * @default - the app's or chart's choice (`KruiseApiVersions.emitIn`), else KruiseApiVersion.V1ALPHA1
   */
  readonly apiVersion?: KruiseApiVersion;
}

const DEFAULT_PULL_TIMEOUT_SECONDS = 600;

/**
 * Checks the template fields at construction, as upstream's webhooks would at admission; throws naming the construct.
 * @internal
 */
export function checkPullTemplate(where: string, props: ImagePullJobTemplateProps): void {
  if (props.selector && props.podSelector) {
    throw new Error(`[${where}] selector (nodes) and podSelector are mutually exclusive; set only one.`);
  }
  if (props.parallelism !== undefined && (!Number.isSafeInteger(props.parallelism) || props.parallelism < 0)) {
    throw new Error(`[${where}] parallelism must be a non-negative integer (percentages are not supported), got ${props.parallelism}.`);
  }
  const backoff = props.pullPolicy?.backoffLimit;
  if (backoff !== undefined && (!Number.isSafeInteger(backoff) || backoff < 0)) {
    throw new Error(`[${where}] pullPolicy.backoffLimit must be a non-negative integer, got ${backoff}.`);
  }
  const timeout = props.pullPolicy?.timeout?.toSeconds() ?? DEFAULT_PULL_TIMEOUT_SECONDS;
  if (timeout <= 0) throw new Error(`[${where}] pullPolicy.timeout must be positive.`);
  const deadline = props.completionPolicy?.activeDeadline?.toSeconds();
  if (deadline !== undefined && deadline < timeout) {
    throw new Error(
      `[${where}] completionPolicy activeDeadline (${deadline}s) must be at least pullPolicy.timeout ` +
        `(${timeout}s), or no pull could ever finish.`,
    );
  }
}

/**
 * The template fields of the spec (everything but the image or images).
 * @internal
 */
export function pullTemplateSpec(where: string, p: ImagePullJobTemplateProps): Omit<ImagePullJobSpec, 'image'> {
  const completion = p.completionPolicy ?? ImagePullJobCompletionPolicy.always();
  return {
    pullSecrets: secretNames(p.pullSecrets, `[${where}] pullSecrets`),
    selector: p.selector?._toKube(),
    podSelector: p.podSelector ? kplus.k8s.toJson_LabelSelector(p.podSelector._toKube()) : undefined,
    parallelism: p.parallelism,
    pullPolicy: p.pullPolicy ? { timeoutSeconds: p.pullPolicy.timeout?.toSeconds(), backoffLimit: p.pullPolicy.backoffLimit } : undefined,
    completionPolicy: {
      type: completion.type,
      activeDeadlineSeconds: completion.activeDeadline?.toSeconds(),
      ttlSecondsAfterFinished: completion.ttlAfterFinished?.toSeconds(),
    },
    sandboxConfig: p.sandboxConfig ? { labels: p.sandboxConfig.labels, annotations: p.sandboxConfig.annotations } : undefined,
    imagePullPolicy: p.imagePullPolicy,
  };
}

/** An OpenKruise ImagePullJob: pre-pulls an image on a set of nodes. */
export class ImagePullJob extends kplus.Resource {
  /** @see base.Resource.apiObject */
  protected readonly apiObject: ApiObject;
  /** The Kubernetes resource type (plural). */
  public readonly resourceType = 'imagepulljobs';
  /** The image pulled. */
  public readonly image: string;

  public constructor(
    scope: Construct,
    id: string,
    private readonly props: ImagePullJobProps,
  ) {
    super(scope, id);
    const where = this.node.path;
    const imageError = imageReferenceMessage(props.image);
    if (imageError) throw new Error(`[${where}] image: ${imageError}.`);
    checkPullTemplate(where, props);
    this.image = props.image;
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: kruiseApiVersionOf(this, 'ImagePullJob', props.apiVersion),
      kind: 'ImagePullJob',
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown,
    });
  }

  /** @internal */
  public _toKube(): ImagePullJobSpec {
    return { image: this.props.image, ...pullTemplateSpec(this.node.path, this.props) };
  }
}

import { ApiObject, Lazy } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { ImageListPullJobSpec } from '../src/api/kinds/imagelistpulljob.js';
import { kruiseApiVersionOf, type KruiseApiVersion } from './api-version.js';
import { checkPullTemplate, pullTemplateSpec, type ImagePullJobTemplateProps } from './image-pull-job.js';
import { imageReferenceMessage } from './internal/image-reference.js';

/** Upstream's webhook refuses a list of more images than this. */
const MAX_IMAGES = 255;

/** Properties of an {@link ImageListPullJob}. */
export interface ImageListPullJobProps extends ImagePullJobTemplateProps {
  /**
   * Images to pre-pull, e.g. `['nginx:1.25', 'redis:7.2']`: at least one, each once, at most 255; the reference
   * syntax of each is checked. Each gets an ImagePullJob of its own with the other properties.
   */
  readonly images: readonly string[];
  /**
   * The apps.kruise.io version the object is emitted at (upstream v1.9 stores this kind at v1beta1).
   *
   * @default - the app's or chart's choice (`KruiseApiVersions.emitIn`), else KruiseApiVersion.V1ALPHA1
   */
  readonly apiVersion?: KruiseApiVersion;
}

/**
 * An OpenKruise ImageListPullJob: pre-pulls a list of images on a set of nodes, one ImagePullJob per image sharing
 * the node selection, parallelism, pull and completion policies, pull secrets and sandbox config given here.
 */
export class ImageListPullJob extends kplus.Resource {
  /** @see base.Resource.apiObject */
  protected readonly apiObject: ApiObject;
  /** The Kubernetes resource type (plural). */
  public readonly resourceType = 'imagelistpulljobs';
  /** The images pulled, in the order given. */
  public readonly images: readonly string[];

  public constructor(
    scope: Construct,
    id: string,
    private readonly props: ImageListPullJobProps,
  ) {
    super(scope, id);
    const where = this.node.path;
    if (props.images.length === 0) throw new Error(`[${where}] images: give at least one image to pull.`);
    if (props.images.length > MAX_IMAGES) {
      throw new Error(
        `[${where}] images: ${props.images.length} images, at most ${MAX_IMAGES}; split them into several ImageListPullJobs.`,
      );
    }
    props.images.forEach((image, i) => {
      const first = props.images.indexOf(image);
      if (first !== i)
        throw new Error(`[${where}] images[${i}]: ${JSON.stringify(image)} is already images[${first}]; list each image once.`);
      const error = imageReferenceMessage(image);
      if (error) throw new Error(`[${where}] images[${i}]: ${error}.`);
    });
    checkPullTemplate(where, props);
    this.images = [...props.images];
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: kruiseApiVersionOf(this, 'ImageListPullJob', props.apiVersion),
      kind: 'ImageListPullJob',
      metadata: props.metadata,
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown,
    });
  }

  /** @internal */
  public _toKube(): ImageListPullJobSpec {
    return { images: [...this.props.images], ...pullTemplateSpec(this.node.path, this.props) };
  }
}

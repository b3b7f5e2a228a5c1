/**
 * Plain JSON shapes shared by the install-manifest builders. The builders are pure functions from
 * options to manifests, so they can be used without cdk8s (CLI, tests) and wrapped by the
 * `KruiseRuntime` construct.
 */

/** A Kubernetes object as rendered JSON. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** Identifies an object of the app in messages: `Kind namespace/name`, plus the construct path when known. */
export interface ResourceRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name?: string;
  readonly namespace?: string;
  /** Construct path of the cdk8s object, when the object came from a cdk8s app. */
  readonly path?: string;
}

/** A rendered object together with where it came from. */
export interface SourcedObject {
  readonly object: KubeObject;
  /** Construct path, when the object came from a cdk8s app. */
  readonly path?: string;
}

export function refOf(src: SourcedObject): ResourceRef {
  const { object, path } = src;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata?.name,
    namespace: object.metadata?.namespace,
    path,
  };
}

/** `Kind ns/name (construct path)`: the form every install message uses to name a resource. */
export function describeRef(ref: ResourceRef): string {
  const id = ref.namespace ? `${ref.namespace}/${ref.name ?? '?'}` : (ref.name ?? '?');
  return `${ref.kind} ${id}${ref.path ? ` (${ref.path})` : ''}`;
}

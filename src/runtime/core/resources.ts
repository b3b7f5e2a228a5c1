/**
 * The resource types the runtime talks to. A `ResourceType` carries what the REST path and the RBAC check
 * need (group, version, plural, scope), so every call through `KubeClient` knows its (group, resource, verb).
 */
export interface ResourceType {
  /** API group, `''` for core. */
  readonly group: string;
  readonly version: string;
  /** Plural resource name as used in URLs and RBAC. */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

function rt(group: string, version: string, resource: string, kind: string, namespaced: boolean): ResourceType {
  return Object.freeze({ group, version, resource, kind, namespaced });
}

export const PODS = rt('', 'v1', 'pods', 'Pod', true);
export const NODES = rt('', 'v1', 'nodes', 'Node', false);
export const EVENTS = rt('', 'v1', 'events', 'Event', true);
export const SECRETS = rt('', 'v1', 'secrets', 'Secret', true);
export const NAMESPACES = rt('', 'v1', 'namespaces', 'Namespace', false);
export const LEASES = rt('coordination.k8s.io', 'v1', 'leases', 'Lease', true);
export const MUTATING_WEBHOOK_CONFIGURATIONS = rt(
  'admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false);
export const VALIDATING_WEBHOOK_CONFIGURATIONS = rt(
  'admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false);
export const CONTAINER_RECREATE_REQUESTS = rt(
  'apps.kruise.io', 'v1alpha1', 'containerrecreaterequests', 'ContainerRecreateRequest', true);
export const SIDECARSETS = rt('apps.kruise.io', 'v1alpha1', 'sidecarsets', 'SidecarSet', false);
export const CLONESETS = rt('apps.kruise.io', 'v1alpha1', 'clonesets', 'CloneSet', true);
export const IMAGE_PULL_JOBS = rt('apps.kruise.io', 'v1alpha1', 'imagepulljobs', 'ImagePullJob', true);
export const NODE_IMAGES = rt('apps.kruise.io', 'v1alpha1', 'nodeimages', 'NodeImage', false);

/** `apiVersion` string of a resource type (`v1`, `apps.kruise.io/v1alpha1`). */
export function apiVersionOf(t: ResourceType): string {
  return t.group === '' ? t.version : `${t.group}/${t.version}`;
}

/** REST path of a collection or an object, optionally a subresource. */
export function resourcePath(t: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  let p = t.group === '' ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  if (t.namespaced && namespace !== undefined) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${t.resource}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource !== undefined) p += `/${subresource}`;
  return p;
}

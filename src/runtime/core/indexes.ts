/**
 * Cache indexes more than one reader of a shared informer uses. An informer refuses a second function under a
 * taken index name, so readers that share an index take its name and function from here (one identity).
 */
import type { IndexFunc } from './informer.js';
import type { ImagePullJobObject, KubeObject, Pod } from './types.js';

/** Pods by the node they are bound to (`spec.nodeName`); unscheduled pods are not in it. */
export const POD_NODE_NAME_INDEX = 'spec.nodeName';
export const podNodeName: IndexFunc<Pod> = (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []);

/** Namespaced objects by namespace, for readers that act on one namespace's objects (a PodProbeMarker's pods). */
export const NAMESPACE_INDEX = 'metadata.namespace';
export const objectNamespace: IndexFunc<KubeObject> = (obj) => (obj.metadata.namespace ? [obj.metadata.namespace] : []);

/** Objects by uid, for readers that learn a uid (from a container's labels, an event) and need the object. */
export const UID_INDEX = 'metadata.uid';
export const objectUid: IndexFunc<KubeObject> = (obj) => (obj.metadata.uid ? [obj.metadata.uid] : []);

/**
 * ImagePullJobs by the Secrets their `spec.pullSecrets` name, as `namespace/name` (a pull secret lives in its
 * job's namespace), so an event on a source Secret finds the jobs whose copies it feeds.
 */
export const IMAGE_PULL_JOB_PULL_SECRET_INDEX = 'spec.pullSecrets';
export const imagePullJobPullSecrets: IndexFunc<ImagePullJobObject> = (job) =>
  (job.spec?.pullSecrets ?? []).map((name) => `${job.metadata.namespace ?? ''}/${name}`);

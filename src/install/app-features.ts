import { featureUsesIn } from '../api/feature-uses.js';
import { AppFeature } from '../contracts/features.js';
import { isKruiseApiVersion } from '../contracts/groups.js';
import { LABEL_DELETE_PROTECTION } from '../contracts/keys.js';

import type { KubeObject, ResourceRef, SourcedObject } from './types.js';
import { refOf } from './types.js';

/**
 * What an app uses, found in its rendered objects. Detection works on rendered JSON rather than on
 * construct classes so that raw `ApiObject`s, `Include`d YAML and kplus workloads count the same way as
 * our own constructs. What each kind, field path and key belongs to is the feature table's
 * (src/contracts/features.ts); the walk is the API model's (src/api/feature-uses.ts).
 */

export const DELETE_PROTECTION_LABEL = LABEL_DELETE_PROTECTION;
export { AppFeature };

/** One place an app uses a feature. */
export interface FeatureUse {
  readonly feature: AppFeature;
  readonly resource: ResourceRef;
  /** JSON pointer inside the rendered object to the field that uses the feature. */
  readonly pointer: string;
}

/**
 * Finds every feature used by `objects`. Pod templates nested in Jobs, CronJobs, CloneSets or SidecarSets are
 * all seen (env markers and annotations at any depth).
 */
export function detectFeatures(objects: readonly SourcedObject[]): FeatureUse[] {
  const uses: FeatureUse[] = [];
  for (const src of objects) {
    const obj = src.object;
    if (!obj || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') continue;
    const found = featureUsesIn(obj);
    if (found.length === 0) continue;
    const resource = refOf(src);
    for (const u of found) uses.push({ feature: u.feature, resource, pointer: u.pointer });
  }
  return uses;
}

/** Whether an object is one of the Kruise API groups (used to decide what the runtime must serve). */
export function isKruiseObject(obj: KubeObject): boolean {
  return isKruiseApiVersion(obj.apiVersion);
}

/**
 * Core kinds that can hold neither a pod template nor a Kruise field, so only their metadata matters
 * for feature detection (the deletion-protection label). Lets the runtime skip rendering them.
 */
const METADATA_ONLY_KINDS = new Set([
  'v1/ConfigMap',
  'v1/Secret',
  'v1/Service',
  'v1/ServiceAccount',
  'v1/Namespace',
  'v1/PersistentVolumeClaim',
  'v1/PersistentVolume',
  'v1/Endpoints',
  'v1/LimitRange',
  'v1/ResourceQuota',
  'v1/Event',
  'rbac.authorization.k8s.io/v1/Role',
  'rbac.authorization.k8s.io/v1/ClusterRole',
  'rbac.authorization.k8s.io/v1/RoleBinding',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding',
  'networking.k8s.io/v1/Ingress',
  'networking.k8s.io/v1/NetworkPolicy',
  'networking.k8s.io/v1/IngressClass',
  'policy/v1/PodDisruptionBudget',
  'autoscaling/v2/HorizontalPodAutoscaler',
  'autoscaling/v1/HorizontalPodAutoscaler',
  'storage.k8s.io/v1/StorageClass',
  'scheduling.k8s.io/v1/PriorityClass',
  'coordination.k8s.io/v1/Lease',
  'apiextensions.k8s.io/v1/CustomResourceDefinition',
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding',
  'flowcontrol.apiserver.k8s.io/v1/FlowSchema',
  'flowcontrol.apiserver.k8s.io/v1/PriorityLevelConfiguration',
]);

/** True when only the metadata of an object of this type can use a feature. */
export function isMetadataOnlyKind(apiVersion: string, kind: string): boolean {
  return METADATA_ONLY_KINDS.has(`${apiVersion}/${kind}`);
}

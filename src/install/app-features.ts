import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  ANNOTATION_CONTAINER_LAUNCH_PRIORITY,
  ENV_CONTAINER_PRIORITY,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
} from '../api/pod-contracts.js';
import { AppFeature } from '../contracts/features.js';
import { KRUISE_GROUP, KRUISE_POLICY_GROUP, groupOf, isKruiseApiVersion } from '../contracts/groups.js';
import { LABEL_DELETE_PROTECTION } from '../contracts/keys.js';

import type { KubeObject, ResourceRef, SourcedObject } from './types.js';
import { refOf } from './types.js';

/**
 * What an app uses, found in its rendered objects. Detection works on rendered JSON rather than on
 * construct classes so that raw `ApiObject`s, `Include`d YAML and kplus workloads count the same way as
 * our own constructs.
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

/** Kinds that need a feature just by existing, keyed by `group/Kind`. */
const KIND_FEATURES: Record<string, AppFeature> = {
  [`${KRUISE_GROUP}/SidecarSet`]: AppFeature.SIDECARSET,
  [`${KRUISE_GROUP}/CloneSet`]: AppFeature.CLONESET,
  [`${KRUISE_GROUP}/ImagePullJob`]: AppFeature.IMAGE_PULL_JOB,
  [`${KRUISE_GROUP}/ImageListPullJob`]: AppFeature.IMAGE_PULL_JOB,
  [`${KRUISE_GROUP}/ContainerRecreateRequest`]: AppFeature.CONTAINER_RECREATE_REQUEST,
  [`${KRUISE_GROUP}/PodProbeMarker`]: AppFeature.POD_PROBE_MARKER,
  [`${KRUISE_GROUP}/WorkloadSpread`]: AppFeature.WORKLOAD_SPREAD,
  [`${KRUISE_GROUP}/ResourceDistribution`]: AppFeature.RESOURCE_DISTRIBUTION,
  [`${KRUISE_POLICY_GROUP}/PodUnavailableBudget`]: AppFeature.POD_UNAVAILABLE_BUDGET,
};

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function escapePointer(segment: string | number): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Finds every feature used by `objects`. The walk is generic (any `containers` array, any `metadata`
 * with annotations) so pod templates nested in Jobs, CronJobs, CloneSets or SidecarSets are all seen.
 */
export function detectFeatures(objects: readonly SourcedObject[]): FeatureUse[] {
  const uses: FeatureUse[] = [];
  for (const src of objects) {
    const obj = src.object;
    if (!obj || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') continue;
    const resource = refOf(src);
    const add = (feature: AppFeature, pointer: string) => uses.push({ feature, resource, pointer });
    const group = groupOf(obj.apiVersion);
    const kindFeature = KIND_FEATURES[`${group}/${obj.kind}`];
    if (kindFeature) add(kindFeature, '');

    if (obj.metadata?.labels && DELETE_PROTECTION_LABEL in obj.metadata.labels) {
      add(AppFeature.DELETION_PROTECTION, `/metadata/labels/${escapePointer(DELETE_PROTECTION_LABEL)}`);
    }
    const spec = isRecord(obj.spec) ? obj.spec : undefined;
    if (group === KRUISE_GROUP && spec) {
      if (obj.kind === 'SidecarSet' && Array.isArray(spec.containers)) {
        spec.containers.forEach((c: unknown, i: number) => {
          if (isRecord(c) && isRecord(c.upgradeStrategy) && c.upgradeStrategy.upgradeType === 'HotUpgrade') {
            add(AppFeature.SIDECARSET_HOT_UPGRADE, `/spec/containers/${i}/upgradeStrategy/upgradeType`);
          }
        });
      }
      if (obj.kind === 'SidecarSet' && Array.isArray(spec.patchPodMetadata) && spec.patchPodMetadata.length > 0) {
        add(AppFeature.SIDECARSET_PATCH_POD_METADATA, '/spec/patchPodMetadata');
      }
      if (obj.kind === 'CloneSet' || obj.kind === 'StatefulSet') {
        detectLifecycle(spec, add);
        detectInPlaceEnvFromMetadata(spec, add);
      }
      if (obj.kind === 'StatefulSet') {
        if (spec.persistentVolumeClaimRetentionPolicy !== undefined) {
          add(AppFeature.STATEFULSET_AUTO_DELETE_PVC, '/spec/persistentVolumeClaimRetentionPolicy');
        }
        if (isRecord(spec.ordinals) && spec.ordinals.start !== undefined) {
          add(AppFeature.STATEFULSET_START_ORDINAL, '/spec/ordinals/start');
        }
      }
    }
    walkPodParts(obj, '', add);
  }
  return uses;
}

type Add = (feature: AppFeature, pointer: string) => void;

function detectLifecycle(spec: Record<string, unknown>, add: Add): void {
  const lifecycle = spec.lifecycle;
  if (!isRecord(lifecycle)) return;
  for (const hook of ['preDelete', 'inPlaceUpdate', 'preNormal']) {
    const h = lifecycle[hook];
    if (isRecord(h) && h.markPodNotReady === true) {
      add(AppFeature.LIFECYCLE_MARK_POD_NOT_READY, `/spec/lifecycle/${hook}/markPodNotReady`);
    }
  }
}

function detectInPlaceEnvFromMetadata(spec: Record<string, unknown>, add: Add): void {
  const strategy = isRecord(spec.updateStrategy) ? spec.updateStrategy : undefined;
  // CloneSet keeps the type in updateStrategy.type; Advanced StatefulSet in rollingUpdate.podUpdatePolicy.
  const type = strategy?.type;
  const podUpdatePolicy = isRecord(strategy?.rollingUpdate) ? strategy.rollingUpdate.podUpdatePolicy : undefined;
  const inPlace = [type, podUpdatePolicy].some((t) => t === 'InPlaceIfPossible' || t === 'InPlaceOnly');
  if (!inPlace) return;
  const template = isRecord(spec.template) ? spec.template : undefined;
  const podSpec = isRecord(template?.spec) ? template.spec : undefined;
  const containers = Array.isArray(podSpec?.containers) ? podSpec.containers : [];
  containers.forEach((c, ci) => {
    if (!isRecord(c) || !Array.isArray(c.env)) return;
    c.env.forEach((e, ei) => {
      const fieldPath = isRecord(e) && isRecord(e.valueFrom) && isRecord(e.valueFrom.fieldRef) ? e.valueFrom.fieldRef.fieldPath : undefined;
      if (typeof fieldPath === 'string' && /^metadata\.(labels|annotations)\[/.test(fieldPath)) {
        add(AppFeature.INPLACE_UPDATE_ENV_FROM_METADATA, `/spec/template/spec/containers/${ci}/env/${ei}/valueFrom/fieldRef/fieldPath`);
      }
    });
  });
}

/**
 * Visits containers (env markers) and annotation maps (pod-level annotations) at any depth. The path is
 * kept as a stack and turned into a JSON pointer only on a hit: most of a manifest is scalars.
 */
function walkPodParts(node: unknown, pointer: string, add: Add): void {
  const path: (string | number)[] = pointer ? pointer.slice(1).split('/') : [];
  const at = (...more: (string | number)[]) => `/${[...path, ...more].map(escapePointer).join('/')}`;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        if (typeof v !== 'object' || v === null) continue;
        path.push(i);
        visit(v);
        path.pop();
      }
      return;
    }
    if (!isRecord(value)) return;
    for (const key in value) {
      const v = value[key];
      if (typeof v !== 'object' || v === null) continue;
      // Status is written by controllers, never by the app.
      if (key === 'status' && path.length === 0) continue;
      if ((key === 'containers' || key === 'initContainers') && Array.isArray(v)) {
        v.forEach((c, i) => inspectContainer(c, at(key, i), add));
      } else if (key === 'annotations' && isRecord(v)) {
        if (ANNOTATION_CONTAINER_EXIT_PRIORITY in v) add(AppFeature.CONTAINER_EXIT_PRIORITY, at(key, ANNOTATION_CONTAINER_EXIT_PRIORITY));
        if (ANNOTATION_CONTAINER_LAUNCH_PRIORITY in v)
          add(AppFeature.CONTAINER_LAUNCH_PRIORITY, at(key, ANNOTATION_CONTAINER_LAUNCH_PRIORITY));
        continue;
      }
      path.push(key);
      visit(v);
      path.pop();
    }
  };
  visit(node);
}

function inspectContainer(c: unknown, pointer: string, add: Add): void {
  if (!isRecord(c) || !Array.isArray(c.env)) return;
  c.env.forEach((e, i) => {
    if (!isRecord(e) || typeof e.name !== 'string') return;
    const value = typeof e.value === 'string' ? e.value : undefined;
    const at = `${pointer}/env/${i}`;
    // Same acceptance rules as upstream: WHEN_JOB_EXIT is compared case-insensitively to "true",
    // WITH_IMAGE counts when it carries an image.
    if (e.name === ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT && value?.toLowerCase() === 'true') add(AppFeature.SIDECAR_TERMINATOR_KILL, at);
    else if (e.name === ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE && value) add(AppFeature.SIDECAR_TERMINATOR_QUICK_EXIT, at);
    else if (e.name === ENV_CONTAINER_PRIORITY) add(AppFeature.CONTAINER_LAUNCH_PRIORITY, at);
  });
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
]);

/** True when only the metadata of an object of this type can use a feature. */
export function isMetadataOnlyKind(apiVersion: string, kind: string): boolean {
  return METADATA_ONLY_KINDS.has(`${apiVersion}/${kind}`);
}

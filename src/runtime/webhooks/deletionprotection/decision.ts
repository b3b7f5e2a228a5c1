/**
 * Deletion protection, decided from the object under deletion and, for `Cascading` on a namespace or a CRD, from
 * what the I/O side counted: upstream v1.9's rules (gate ResourcesDeletionProtection).
 *
 * - `Always`: refused.
 * - `Cascading`: a workload while `spec.replicas > 0`; a namespace while it holds an active pod or a Bound PVC; a CRD
 *   while a custom resource of it exists (only with gate DeletionProtectionForCRDCascadingGate; without it, refused).
 * - Services and Ingresses honour only `Always`; any other value, and an object already being deleted, is let through.
 */
import {
  DELETION_PROTECTED_KINDS,
  DELETION_PROTECTION_REFUSAL,
  LABEL_DELETE_PROTECTION,
  type CascadingCheck,
  type DeletionProtectedKind,
} from '../../../contracts/index.js';
import type { KubeObject } from '../../core/types.js';

/** Where a CRD's custom resources are listed: its storage version. */
export interface CustomResourceList {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** The first look at a DELETE: an answer, or what must be counted before one. */
export type FirstLook =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly message: string }
  | { readonly count: 'namespace-contents'; readonly namespace: string }
  | { readonly count: 'custom-resources'; readonly list: CustomResourceList };

/** What the I/O side counted for a `Cascading` namespace or CRD. */
export interface Counts {
  readonly activePods?: number;
  readonly boundClaims?: number;
  readonly activeCustomResources?: number;
}

const ALLOW = { allowed: true } as const;

function refuse(value: string, why?: string): { allowed: false; message: string } {
  return { allowed: false, message: `${DELETION_PROTECTION_REFUSAL} for ${LABEL_DELETE_PROTECTION}=${value}${why ? ` and ${why}` : ''}` };
}

/** The protected kind a review is about (`kind` of the request), among those the bundled runtime answers. */
export function protectedKindOf(group: string, kind: string): DeletionProtectedKind | undefined {
  return DELETION_PROTECTED_KINDS.find((p) => p.bundled && p.group === group && p.kind === kind);
}

function replicasOf(obj: KubeObject): number | undefined {
  const r = (obj.spec as { replicas?: unknown } | undefined)?.replicas;
  return typeof r === 'number' ? r : undefined;
}

/** The storage version's list of a CRD, or undefined when the CRD names none. */
export function customResourceListOf(crd: KubeObject): CustomResourceList | undefined {
  const spec = crd.spec as
    | {
        group?: unknown;
        scope?: unknown;
        names?: { plural?: unknown; kind?: unknown };
        versions?: Array<{ name?: unknown; storage?: unknown }>;
      }
    | undefined;
  const version = spec?.versions?.find((v) => v.storage === true)?.name;
  const { group } = spec ?? {};
  const plural = spec?.names?.plural;
  const kind = spec?.names?.kind;
  if (typeof version !== 'string' || typeof group !== 'string' || typeof plural !== 'string' || typeof kind !== 'string') return undefined;
  return { group, version, resource: plural, kind, namespaced: spec?.scope !== 'Cluster' };
}

/**
 * The answer from the object alone, or what to count first. `crdCascading` is gate
 * DeletionProtectionForCRDCascadingGate.
 */
export function firstLook(p: DeletionProtectedKind, obj: KubeObject, crdCascading: boolean): FirstLook {
  if (obj.metadata?.deletionTimestamp) return ALLOW;
  const value = obj.metadata?.labels?.[LABEL_DELETE_PROTECTION];
  if (value === 'Always') return refuse(value);
  if (value !== 'Cascading' || !p.cascading) return ALLOW;
  const check: CascadingCheck = p.cascading;
  switch (check) {
    case 'replicas': {
      const replicas = replicasOf(obj);
      return replicas !== undefined && replicas > 0 ? refuse(value, `replicas ${replicas}>0`) : ALLOW;
    }
    case 'namespace-contents': {
      const name = obj.metadata?.name;
      return name ? { count: 'namespace-contents', namespace: name } : refuse(value, 'no namespace name to count its pods in');
    }
    case 'custom-resources': {
      if (!crdCascading) {
        return {
          allowed: false,
          message: `${DELETION_PROTECTION_REFUSAL} for ${LABEL_DELETE_PROTECTION}=Cascading: feature gate DeletionProtectionForCRDCascadingGate is not enabled, so the custom resources cannot be counted`,
        };
      }
      const list = customResourceListOf(obj);
      if (!list) return refuse(value, 'no storage version to count its custom resources by');
      return { count: 'custom-resources', list };
    }
  }
}

/** The answer once the namespace's or the CRD's contents are counted. */
export function judgeCounts(counts: Counts): { allowed: true } | { allowed: false; message: string } {
  if ((counts.activePods ?? 0) > 0) return refuse('Cascading', `active pods ${counts.activePods}>0`);
  if ((counts.boundClaims ?? 0) > 0) return refuse('Cascading', `"Bound" status pvc ${counts.boundClaims}>0`);
  if ((counts.activeCustomResources ?? 0) > 0) return refuse('Cascading', `active CRs ${counts.activeCustomResources}>0`);
  return ALLOW;
}

/** Kubernetes' "active" pod: not finished and not being deleted. */
export function isActivePod(pod: KubeObject): boolean {
  const phase = (pod.status as { phase?: unknown } | undefined)?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata?.deletionTimestamp;
}

/** A claim that still holds a volume: Bound and not being deleted. */
export function isBoundClaim(pvc: KubeObject): boolean {
  return (pvc.status as { phase?: unknown } | undefined)?.phase === 'Bound' && !pvc.metadata?.deletionTimestamp;
}

/** A custom resource not being deleted. */
export function isActiveObject(obj: KubeObject): boolean {
  return !obj.metadata?.deletionTimestamp;
}

/** Why a count could not be made, as a refusal (protection that cannot check must not let the deletion through). */
export function countFailed(what: string, err: unknown): { allowed: false; message: string } {
  return { allowed: false, message: `${DELETION_PROTECTION_REFUSAL}: cannot count ${what}: ${(err as Error).message ?? String(err)}` };
}

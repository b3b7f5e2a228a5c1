/**
 * Deletion protection (upstream `policy.kruise.io/delete-protection`, gate ResourcesDeletionProtection): which kinds
 * take the label, which of its two values each kind honours, and the admission path the bundled runtime answers the
 * DELETEs on. The constructs, the policy rules, the install and the runtime's webhook all read this one table.
 *
 * @module
 */
import { KRUISE_GROUP, KRUISE_VERSION } from './groups.js';
import { LABEL_DELETE_PROTECTION } from './keys.js';

/** `Always`: never deleted while labelled. `Cascading`: not deleted while it still holds something (per kind). */
export const DELETION_PROTECTION_MODES = Object.freeze(['Always', 'Cascading'] as const);
export type DeletionProtectionMode = (typeof DELETION_PROTECTION_MODES)[number];

export function isDeletionProtectionMode(v: unknown): v is DeletionProtectionMode {
  return typeof v === 'string' && (DELETION_PROTECTION_MODES as readonly string[]).includes(v);
}

/** What a `Cascading` deletion of a kind waits for. */
export type CascadingCheck = 'replicas' | 'namespace-contents' | 'custom-resources';

/** One kind that takes the label. */
export interface DeletionProtectedKind {
  readonly group: string;
  /** The versions registered for its DELETEs (the review carries the object at the first). */
  readonly versions: readonly string[];
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** What `Cascading` means for it; absent where upstream honours only `Always`. */
  readonly cascading?: CascadingCheck;
  /**
   * Whether the bundled runtime answers its DELETEs. Upstream also protects its Advanced StatefulSet and
   * UnitedDeployment, kinds the bundled runtime does not serve.
   */
  readonly bundled: boolean;
}

function k(
  group: string,
  versions: readonly string[],
  resource: string,
  kind: string,
  namespaced: boolean,
  cascading: CascadingCheck | undefined,
  bundled = true,
): DeletionProtectedKind {
  return Object.freeze({ group, versions, resource, kind, namespaced, ...(cascading ? { cascading } : {}), bundled });
}

/** Every kind upstream v1.9 protects (its deletion-protection webhooks), in the order the install registers them. */
export const DELETION_PROTECTED_KINDS: readonly DeletionProtectedKind[] = Object.freeze([
  k('', ['v1'], 'namespaces', 'Namespace', false, 'namespace-contents'),
  k('apiextensions.k8s.io', ['v1'], 'customresourcedefinitions', 'CustomResourceDefinition', false, 'custom-resources'),
  k('apps', ['v1'], 'deployments', 'Deployment', true, 'replicas'),
  k('apps', ['v1'], 'replicasets', 'ReplicaSet', true, 'replicas'),
  k('apps', ['v1'], 'statefulsets', 'StatefulSet', true, 'replicas'),
  k(KRUISE_GROUP, [KRUISE_VERSION], 'clonesets', 'CloneSet', true, 'replicas'),
  k('', ['v1'], 'services', 'Service', true, undefined),
  k('networking.k8s.io', ['v1'], 'ingresses', 'Ingress', true, undefined),
  k(KRUISE_GROUP, ['v1beta1', 'v1alpha1'], 'statefulsets', 'StatefulSet', true, 'replicas', false),
  k(KRUISE_GROUP, [KRUISE_VERSION], 'uniteddeployments', 'UnitedDeployment', true, 'replicas', false),
]);

/** The protected kind of an object (`apiVersion` and `kind` as written), or undefined when the label means nothing on it. */
export function deletionProtectedKind(apiVersion: string, kind: string): DeletionProtectedKind | undefined {
  const i = apiVersion.indexOf('/');
  const group = i < 0 ? '' : apiVersion.slice(0, i);
  return DELETION_PROTECTED_KINDS.find((p) => p.group === group && p.kind === kind);
}

/** The modes a kind honours. */
export function modesOf(p: DeletionProtectedKind): readonly DeletionProtectionMode[] {
  return p.cascading ? DELETION_PROTECTION_MODES : ['Always'];
}

/** Why a label value cannot protect an object of `p`, or undefined when it can. */
export function deletionProtectionValueProblem(p: DeletionProtectedKind, value: unknown): string | undefined {
  if (!isDeletionProtectionMode(value)) {
    return `${LABEL_DELETE_PROTECTION}=${JSON.stringify(value)} is neither Always nor Cascading, so the object is not protected at all`;
  }
  if (!modesOf(p).includes(value)) {
    return `${LABEL_DELETE_PROTECTION}=${value} is not honoured on a ${p.kind} (it takes only Always), so the object is not protected at all`;
  }
  return undefined;
}

/** The one admission path of the bundled runtime's deletion-protection webhook (every protected kind). */
export const DELETION_PROTECTION_PATH = '/validate-deletion-protection';

/** The substring every refusal carries, as upstream words it (clients and upstream's e2e suite match on it). */
export const DELETION_PROTECTION_REFUSAL = 'forbidden by ResourcesProtectionDeletion';

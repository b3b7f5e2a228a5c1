/** API group of every workload kind we model (CloneSet, SidecarSet, ImagePullJob, ...). */
export const KRUISE_GROUP = 'apps.kruise.io';
/** API group of Kruise's policy kinds (PodUnavailableBudget); recognised, not modelled. */
export const KRUISE_POLICY_GROUP = 'policy.kruise.io';
/** The one version we serve and emit (API-compatible with upstream v1alpha1). */
export const KRUISE_VERSION = 'v1alpha1';
/** `apiVersion` of every kind we model. */
export const KRUISE_API_VERSION = `${KRUISE_GROUP}/${KRUISE_VERSION}` as const;
/** Every Kruise API group, modelled or not. */
export const KRUISE_GROUPS: ReadonlySet<string> = new Set([KRUISE_GROUP, KRUISE_POLICY_GROUP]);

/** The group part of an `apiVersion` (`''` for the core group). */
export function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** True for any kind of a Kruise API group (modelled or not). */
export function isKruiseApiVersion(apiVersion: unknown): boolean {
  return typeof apiVersion === 'string' && KRUISE_GROUPS.has(groupOf(apiVersion));
}

/**
 * Object metadata every controller writes or reads: timestamps in the API server's own form, owner references
 * to the objects a controller creates, and the lookups of an object's owners. Pure; no I/O.
 */
import { KRUISE_API_VERSION, KRUISE_GROUP } from '../../contracts/index.js';
import type { KubeObject, OwnerReference } from './types.js';

/**
 * RFC 3339 at whole seconds (`2006-01-02T15:04:05Z`), the form metav1.Time serializes to: a condition or status
 * time written with milliseconds would differ from what the API server echoes back and look like a change.
 */
export function rfc3339(epochMs: number = Date.now()): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** How the owner governs the owned object: `controller` marks the one managing controller (at most one per object). */
export interface OwnerReferenceOptions {
  readonly controller?: boolean;
  /** The owner's foreground deletion waits for this object (needs delete permission on the owner's kind). */
  readonly blockOwnerDeletion?: boolean;
}

/**
 * An owner reference to `owner`, whose `apiVersion` and `kind` are given (cached objects do not always carry them).
 * Fields the options leave out are left out of the reference, so a patch with it stays as small as before.
 */
export function ownerReference(owner: KubeObject, apiVersion: string, kind: string, options: OwnerReferenceOptions = {}): OwnerReference {
  const name = owner.metadata.name;
  const uid = owner.metadata.uid;
  // An owner reference without name or uid is refused by the API server; fail here, where the cause is known.
  if (!name || !uid) throw new Error(`owner reference to ${kind} ${name ?? '<unnamed>'}: the owner has no ${name ? 'uid' : 'name'}`);
  return {
    apiVersion,
    kind,
    name,
    uid,
    ...(options.controller !== undefined ? { controller: options.controller } : {}),
    ...(options.blockOwnerDeletion !== undefined ? { blockOwnerDeletion: options.blockOwnerDeletion } : {}),
  };
}

/** An owner reference to a Kruise object of ours (`apps.kruise.io/v1alpha1`). */
export function kruiseOwnerReference(owner: KubeObject, kind: string, options: OwnerReferenceOptions = {}): OwnerReference {
  return ownerReference(owner, KRUISE_API_VERSION, kind, options);
}

/** An owner reference to a pod (`v1` Pod). */
export function podOwnerReference(pod: KubeObject, options: OwnerReferenceOptions = {}): OwnerReference {
  return ownerReference(pod, 'v1', 'Pod', options);
}

/** The object's controller owner reference (`controller: true`), if any. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((o) => o.controller === true);
}

/** The object's controller when it is an apps.kruise.io `kind` (at any version of the group). */
export function kruiseControllerOf(obj: KubeObject, kind: string): OwnerReference | undefined {
  const ref = controllerOf(obj);
  return ref?.kind === kind && ref.apiVersion.startsWith(`${KRUISE_GROUP}/`) ? ref : undefined;
}

/** The work-queue key (`namespace/name`) of the object's apps.kruise.io `kind` controller, if it has one. */
export function kruiseControllerKey(obj: KubeObject, kind: string): string | undefined {
  const ref = kruiseControllerOf(obj, kind);
  return ref ? `${obj.metadata.namespace}/${ref.name}` : undefined;
}

/** The object's first owner reference of `kind`, if any. */
export function ownerOfKind(obj: KubeObject, kind: string): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((o) => o.kind === kind);
}

/** Whether one of the references names the owner with `uid`. */
export function ownedBy(refs: readonly { readonly uid?: string }[] | undefined, uid: string): boolean {
  return (refs ?? []).some((o) => o.uid === uid);
}

/** Whether `conditions` (a Node's or a Pod's status conditions) hold `type` with status "True". */
export function conditionIsTrue(
  conditions: ReadonlyArray<{ readonly type: string; readonly status: string }> | undefined,
  type: string,
): boolean {
  return (conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

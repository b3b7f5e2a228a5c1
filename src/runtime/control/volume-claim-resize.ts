/**
 * Claim resizing of an Advanced StatefulSet (`volumeClaimUpdateStrategy.type: OnPodRollingUpdate`, gate
 * StatefulSetAutoResizePVCGate), pure: how a pod's claim compares with its template, which the webhook reads to
 * admit a template change and the controller to resize claims during a rolling update and count them in status.
 *
 * A claim matches its template apart from size when their storage classes agree (either unset counts as the
 * default class) and their access modes are the same in the same order. Only the storage request may grow
 * afterwards; the storage driver then grows the volume and reports the new capacity in the claim's status.
 */
import { quantityValue } from '../../contracts/quantity.js';
import type { KubeObject } from '../core/types.js';

/** The parts of a claim (or claim template) the comparison reads. */
export interface ClaimLike {
  readonly metadata?: KubeObject['metadata'];
  readonly spec?: {
    readonly storageClassName?: string | null;
    readonly accessModes?: readonly string[];
    readonly resources?: { readonly requests?: Record<string, string>; readonly limits?: Record<string, string> };
  };
  readonly status?: {
    readonly capacity?: Record<string, string>;
    readonly conditions?: ReadonlyArray<{ readonly type?: string; readonly status?: string }>;
  };
}

export const VOLUME_CLAIM_UPDATE_ON_POD_ROLLING_UPDATE = 'OnPodRollingUpdate';

/** The condition a claim carries once its volume grew and only the node's file system resize is left. */
export const CONDITION_FILE_SYSTEM_RESIZE_PENDING = 'FileSystemResizePending';

/** The storage request (or limit) in bytes; undefined when absent or not a quantity. */
export function storageOf(q: Record<string, string> | undefined): number | undefined {
  const text = q?.storage;
  return typeof text === 'string' ? quantityValue(text) : undefined;
}

/** Same class (when both name one) and the same access modes, whatever their sizes. */
export function compatibleApartFromSize(claim: ClaimLike, template: ClaimLike): boolean {
  const a = claim.spec?.storageClassName;
  const b = template.spec?.storageClassName;
  if (a && b && a !== b) return false;
  const ma = claim.spec?.accessModes ?? [];
  const mb = template.spec?.accessModes ?? [];
  return ma.length === mb.length && ma.every((m, i) => m === mb[i]);
}

/** The claim asks for less storage than its template: it is to be grown. */
export function needsExpansion(claim: ClaimLike, template: ClaimLike): boolean {
  const have = storageOf(claim.spec?.resources?.requests);
  const want = storageOf(template.spec?.resources?.requests);
  return have !== undefined && want !== undefined && have < want;
}

/** The claim needs nothing from its template: same class and access modes, and at least its size. */
export function matchesTemplate(claim: ClaimLike, template: ClaimLike): boolean {
  return compatibleApartFromSize(claim, template) && !needsExpansion(claim, template);
}

/** How a claim stands against its template: compatible (asks at least the template's size), ready (grown to it). */
export function claimStanding(claim: ClaimLike, template: ClaimLike): { readonly compatible: boolean; readonly ready: boolean } {
  if (!compatibleApartFromSize(claim, template)) return { compatible: false, ready: false };
  const asked = storageOf(claim.spec?.resources?.requests);
  const want = storageOf(template.spec?.resources?.requests);
  const capacity = storageOf(claim.status?.capacity);
  return {
    compatible: asked !== undefined && want !== undefined && asked >= want,
    ready: capacity !== undefined && asked !== undefined && capacity >= asked,
  };
}

/** The resize needs nothing more from the controller: grown, or only the node's file system resize is left. */
export function resizeCompleted(claim: ClaimLike, template: ClaimLike): boolean {
  const { compatible, ready } = claimStanding(claim, template);
  if (!compatible) return false;
  return ready || (claim.status?.conditions ?? []).some((c) => c.type === CONDITION_FILE_SYSTEM_RESIZE_PENDING && c.status === 'True');
}

/**
 * An UPDATE of claim templates under OnPodRollingUpdate: the same templates by name, each keeping its class and
 * access modes (as upstream, other fields are not compared). Returns the templates whose storage request or limit
 * changed, or a refusal: the JSON pointer, what is wrong and how to fix it.
 */
export function templateResizes(
  next: readonly ClaimLike[],
  prev: readonly ClaimLike[],
): { readonly resized: readonly ClaimLike[] } | { readonly pointer: string; readonly message: string; readonly fix: string } {
  if (next.length !== prev.length) {
    return {
      pointer: '/spec/volumeClaimTemplates',
      message: 'volumeClaimTemplate can not be added or deleted when OnRollingUpdate',
      fix: 'keep the same claim templates, or set volumeClaimUpdateStrategy.type to OnPVCDelete',
    };
  }
  const byName = new Map(prev.map((t) => [t?.metadata?.name, t]));
  const resized: ClaimLike[] = [];
  for (const [i, t] of next.entries()) {
    if (t === null || typeof t !== 'object') {
      return {
        pointer: `/spec/volumeClaimTemplates/${i}`,
        message: 'a volumeClaimTemplate must be an object',
        fix: 'give each entry metadata.name and spec, as a PersistentVolumeClaim',
      };
    }
    const old = byName.get(t.metadata?.name);
    if (!old) {
      return {
        pointer: `/spec/volumeClaimTemplates/${i}/metadata/name`,
        message: 'volumeClaimTemplate name can not be modified',
        fix: `keep the name ${JSON.stringify(prev[i]?.metadata?.name ?? '')}`,
      };
    }
    if (!compatibleApartFromSize(old, t)) {
      return {
        pointer: `/spec/volumeClaimTemplates/${i}`,
        message: 'volumeClaimTemplate can not be modified when OnRollingUpdate',
        fix: 'keep its storageClassName and accessModes, or set volumeClaimUpdateStrategy.type to OnPVCDelete',
      };
    }
    const sameSize =
      storageOf(t.spec?.resources?.requests) === storageOf(old.spec?.resources?.requests) &&
      storageOf(t.spec?.resources?.limits) === storageOf(old.spec?.resources?.limits);
    if (sameSize) continue;
    resized.push(t);
  }
  return { resized };
}

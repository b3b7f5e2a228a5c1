/**
 * SidecarSet revision history (upstream processor's truncateHistory), pure: which of a set's
 * ControllerRevisions to delete so that at most `revisionHistoryLimit` remain, never one still in use.
 */
import type { SidecarSet } from '../../../api/kinds/sidecarset.js';
import { injectedSidecarSets, podSidecarSetHash } from '../../control/sidecarset-pod.js';
import { LABEL_SIDECARSET_CUSTOM_VERSION } from '../../../contracts/index.js';
import type { KubeObject, Pod } from '../../core/types.js';

/** Revisions kept when the set does not say (upstream default). */
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;

/** A ControllerRevision as cached (the fields the history decision reads). */
export type SidecarSetRevision = KubeObject & { revision?: number };

export interface HistoryInput {
  readonly set: Pick<SidecarSet, 'metadata' | 'spec'>;
  /** Every ControllerRevision of this set (labelled with its name, in the revision namespace). */
  readonly revisions: readonly SidecarSetRevision[];
  /** The revision of the set's current spec: never deleted, even when nothing uses it yet. */
  readonly latest: string;
  /** Pods that name the set in their injected list (their hash annotation names the revision they run). */
  readonly pods: readonly Pod[];
}

/** Oldest first: by revision number, then creation time, then name (a stable order for equal numbers). */
function olderFirst(a: SidecarSetRevision, b: SidecarSetRevision): number {
  const byNumber = (a.revision ?? 0) - (b.revision ?? 0);
  if (byNumber !== 0) return byNumber;
  const at = a.metadata.creationTimestamp ?? '';
  const bt = b.metadata.creationTimestamp ?? '';
  if (at !== bt) return at < bt ? -1 : 1;
  return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
}

/**
 * The revisions still in use: those a pod records in its `kruise.io/sidecarset-hash` entry for the set,
 * the one `injectionStrategy.revision.revisionName` pins, and the newest of `customVersion` (the one the pod
 * webhook injects for that pin).
 */
export function activeRevisions(input: HistoryInput): Set<string> {
  const name = input.set.metadata.name!;
  const active = new Set<string>([input.latest]);
  for (const p of input.pods) {
    if (!injectedSidecarSets(p.metadata.annotations).includes(name)) continue;
    const rev = podSidecarSetHash(p.metadata.annotations, name)?.controllerRevision;
    if (rev) active.add(rev);
  }
  const pin = input.set.spec.injectionStrategy?.revision;
  if (pin?.revisionName) active.add(pin.revisionName);
  if (pin?.customVersion) {
    const newest = input.revisions
      .filter((r) => r.metadata.labels?.[LABEL_SIDECARSET_CUSTOM_VERSION] === pin.customVersion)
      .sort(olderFirst)
      .at(-1);
    if (newest) active.add(newest.metadata.name!);
  }
  return active;
}

/**
 * The names to delete, oldest first. As upstream: the limit counts every revision (in use or not, at least
 * 1); when there are more, the oldest unused ones go until the count is down to the limit or only revisions
 * in use are left (then more than the limit stay).
 */
export function revisionsToPrune(input: HistoryInput): string[] {
  const limit = Math.max(1, input.set.spec.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT);
  let excess = input.revisions.length - limit;
  if (excess <= 0) return [];
  const active = activeRevisions(input);
  const out: string[] = [];
  for (const r of [...input.revisions].sort(olderFirst)) {
    if (excess <= 0) break;
    if (active.has(r.metadata.name!)) continue;
    out.push(r.metadata.name!);
    excess--;
  }
  return out;
}

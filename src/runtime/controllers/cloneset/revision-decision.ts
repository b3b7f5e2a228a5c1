/**
 * CloneSet revisions, pure: what CloneSet adds to the shared ControllerRevision rules (control/controller-revision.ts):
 * the hash of its volumeClaimTemplates, recorded on each revision.
 */
import { ANNOTATION_CLONESET_VCT_HASH } from '../../../contracts/index.js';
import { fnv1a, newRevision, sortedJson, type NewRevisionInput, type Revision } from '../../control/controller-revision.js';
import type { KubeObject } from '../../core/types.js';

/** FNV-1a of the name-sorted `[{name,spec}]` of the volumeClaimTemplates, or `""` without any. */
export function vctHash(vcts: readonly KubeObject[] | undefined): string {
  if (!vcts || vcts.length === 0) return '';
  const items = vcts
    .map((v) => ({ name: v.metadata?.name ?? '', spec: v.spec }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return String(fnv1a(Buffer.from(sortedJson(items), 'utf8')));
}

/** What a CloneSet's ControllerRevision carries beyond the shared one: its volumeClaimTemplates hash. */
export function cloneSetRevisionAnnotations(vcts: readonly KubeObject[] | undefined): Record<string, string> {
  return { [ANNOTATION_CLONESET_VCT_HASH]: vctHash(vcts) };
}

/** The CloneSet's ControllerRevision for a template: the shared revision plus its volumeClaimTemplates hash. */
export function cloneSetRevision(i: Omit<NewRevisionInput, 'extraAnnotations'> & { readonly vcts?: readonly KubeObject[] }): Revision {
  const { vcts, ...rest } = i;
  return newRevision({ ...rest, extraAnnotations: cloneSetRevisionAnnotations(vcts) });
}

/**
 * Whether the volumeClaimTemplates let a pod move from one revision to another in place. Only with gate
 * RecreatePodWhenChangeVCTInCloneSetGate does a changed hash ask for a recreate (the pod gets new PVCs), and never
 * under InPlaceOnly, which does not recreate. A revision without the hash (written before it was recorded) does not
 * block, as upstream: its templates cannot be known.
 */
export function vctsAllowInPlace(
  from: Revision,
  to: Revision,
  o: { readonly recreateOnChange: boolean; readonly inPlaceOnly: boolean },
): boolean {
  if (!o.recreateOnChange || o.inPlaceOnly) return true;
  const a = from.metadata.annotations?.[ANNOTATION_CLONESET_VCT_HASH];
  const b = to.metadata.annotations?.[ANNOTATION_CLONESET_VCT_HASH];
  return a === undefined || b === undefined || a === b;
}

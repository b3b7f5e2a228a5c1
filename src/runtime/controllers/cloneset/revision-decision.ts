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

/** The CloneSet's ControllerRevision for a template: the shared revision plus its volumeClaimTemplates hash. */
export function cloneSetRevision(i: Omit<NewRevisionInput, 'extraAnnotations'> & { readonly vcts?: readonly KubeObject[] }): Revision {
  const { vcts, ...rest } = i;
  return newRevision({ ...rest, extraAnnotations: { [ANNOTATION_CLONESET_VCT_HASH]: vctHash(vcts) } });
}

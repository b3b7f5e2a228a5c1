/**
 * Advanced StatefulSet revisions, the I/O half (upstream's `getStatefulSetRevisions` and `truncateHistory`): finds
 * or writes the update revision (reuse, renumber an older equal one, or create; a name taken by another revision
 * bumps `collisionCount`) and deletes the history beyond `revisionHistoryLimit` that no pod uses.
 * control/controller-revision.ts decides.
 */
import { ADVANCED_STATEFULSETS, CONTROLLER_REVISIONS, LABEL_CONTROLLER_REVISION_HASH } from '../../../contracts/index.js';
import { newRevision, planUpdateRevision, revisionsToTruncate, type Revision } from '../../control/controller-revision.js';
import { isAlreadyExists, isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext } from '../../core/controller.js';
import { controllerOf } from '../../core/meta.js';
import type { Pod } from '../../core/types.js';
import { statefulSetOwnerReference, type StatefulSetObject } from './identity-decision.js';

/** Upstream's default `revisionHistoryLimit`. */
const DEFAULT_REVISION_HISTORY_LIMIT = 10;

export interface RevisionSet {
  readonly update: Revision;
  readonly current: Revision;
  readonly collisionCount: number;
  readonly all: Revision[];
}

export class RevisionSync {
  constructor(private readonly ctx: ControllerContext) {}

  async sync(set: StatefulSetObject, owned: readonly Revision[]): Promise<RevisionSet> {
    const ns = set.metadata.namespace!;
    let collisionCount = set.status?.collisionCount ?? 0;
    const template = set.spec.template as Record<string, unknown>;
    const build = (cc: number, revision: number) =>
      newRevision({
        parentName: set.metadata.name!,
        namespace: ns,
        template,
        templateLabels: ((template.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}) as Record<string, string>,
        parentAnnotations: set.metadata.annotations ?? {},
        collisionCount: cc,
        revision,
        ownerReference: statefulSetOwnerReference(set),
      });
    const plan = planUpdateRevision(owned, build(collisionCount, 0));
    let update: Revision | undefined;
    if (plan.action === 'reuse') update = plan.revision;
    else if (plan.action === 'bump') {
      update = await this.ctx.client.patch<Revision>(
        CONTROLLER_REVISIONS,
        plan.revision.metadata.name!,
        ns,
        { revision: plan.to },
        PatchStrategy.MergePatch,
      );
    }
    const createAs = plan.revision.revision ?? 1;
    for (let attempt = 0; !update; attempt++) {
      const wanted = build(collisionCount, createAs);
      try {
        update = await this.ctx.client.create<Revision>(CONTROLLER_REVISIONS, wanted, ns);
      } catch (err) {
        if (!isAlreadyExists(err) || attempt > 10) throw err;
        const existing = await this.ctx.client.get<Revision>(CONTROLLER_REVISIONS, wanted.metadata.name!, ns);
        if (controllerOf(existing)?.uid === set.metadata.uid && planUpdateRevision([existing], wanted).action !== 'create') {
          update = existing;
          break;
        }
        // Another revision holds the name: count the collision (kept in status) and hash again.
        collisionCount++;
        await this.ctx.client.patch(
          ADVANCED_STATEFULSETS,
          set.metadata.name!,
          ns,
          { status: { collisionCount } },
          PatchStrategy.MergePatch,
          {
            subresource: 'status',
          },
        );
      }
    }
    const all = [...owned.filter((r) => r.metadata.name !== update.metadata.name), update];
    const current = all.find((r) => r.metadata.name === set.status?.currentRevision) ?? update;
    return { update, current, collisionCount, all };
  }

  /** Deletes the revisions beyond the history limit that are neither update, current, nor any pod's. */
  async truncate(set: StatefulSetObject, pods: readonly Pod[], revs: RevisionSet): Promise<void> {
    const podRevs = new Set(pods.map((p) => p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? ''));
    const keep = new Set([revs.update.metadata.name!, revs.current.metadata.name!]);
    for (const r of revisionsToTruncate(revs.all, keep, podRevs, set.spec.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT)) {
      try {
        await this.ctx.client.delete(CONTROLLER_REVISIONS, r.metadata.name!, set.metadata.namespace!);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}

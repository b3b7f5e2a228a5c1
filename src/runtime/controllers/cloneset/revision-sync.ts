/**
 * CloneSet revisions, the I/O half (upstream's `revision` and history handling): finds or writes the update
 * revision (reuse, renumber an older equal one, or create; a name collision bumps `collisionCount`), and
 * deletes the history beyond `revisionHistoryLimit` that no pod uses. control/controller-revision.ts decides.
 */
import {
  CLONESET_DEFAULT_REVISION_HISTORY_LIMIT,
  CLONESETS,
  CONTROLLER_REVISIONS,
  LABEL_CONTROLLER_REVISION_HASH,
} from '../../../contracts/index.js';
import { isAlreadyExists, isInvalid, isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext } from '../../core/controller.js';
import { controllerOf } from '../../core/meta.js';
import { objectKey, type KubeObject, type Pod } from '../../core/types.js';
import { planUpdateRevision, revisionsToTruncate, type Revision } from '../../control/controller-revision.js';
import type { CloneSetObject } from './pods.js';
import { cloneSetRevision } from './revision-decision.js';
import { cloneSetOwnerReference } from './scale-decision.js';

export interface RevisionSet {
  readonly update: Revision;
  readonly current: Revision;
  readonly collisionCount: number;
  /** The CloneSet's revisions, the update revision included. */
  readonly all: Revision[];
}

export class RevisionSync {
  constructor(private readonly ctx: ControllerContext) {}

  /** The update and current revisions, given the CloneSet's cached revisions `owned`. */
  async sync(cs: CloneSetObject, owned: readonly Revision[]): Promise<RevisionSet> {
    const ns = cs.metadata.namespace!;
    let collisionCount = cs.status?.collisionCount ?? 0;
    const template = cs.spec.template as Record<string, unknown>;
    const build = (cc: number, revision: number) =>
      cloneSetRevision({
        parentName: cs.metadata.name!,
        namespace: ns,
        template,
        templateLabels: ((template.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}) as Record<string, string>,
        parentAnnotations: cs.metadata.annotations ?? {},
        vcts: cs.spec.volumeClaimTemplates as KubeObject[] | undefined,
        collisionCount: cc,
        revision,
        ownerReference: cloneSetOwnerReference(cs),
      });
    const plan = planUpdateRevision(owned, build(collisionCount, 0));
    // The revision written this round is used at once (not after the revisions cache shows it): the
    // decision never waits on a watch, and a stale cache only repeats an idempotent write.
    const persistCollisionCount = () =>
      this.ctx.client.patch(CLONESETS, cs.metadata.name!, ns, { status: { collisionCount } }, PatchStrategy.MergePatch, {
        subresource: 'status',
      });
    let update: Revision | undefined;
    let createAs = plan.revision.revision ?? 1;
    if (plan.action === 'reuse') {
      update = plan.revision;
    } else if (plan.action === 'bump') {
      try {
        update = await this.ctx.client.patch<Revision>(
          CONTROLLER_REVISIONS,
          plan.revision.metadata.name!,
          ns,
          { revision: plan.to },
          PatchStrategy.MergePatch,
        );
        this.ctx.logger.info(
          { cloneset: objectKey(cs), revision: update.metadata.name, number: plan.to },
          'update revision: an older revision again',
        );
      } catch (err) {
        if (!isInvalid(err)) throw err;
        // The API server refuses to renumber a revision whose stored data no longer equals itself once
        // it re-encodes it (written with a literal `&`, `<` or `>` before requests were encoded the Go
        // way): a new revision under the next collision count takes its place instead of a stall.
        this.ctx.logger.warn(
          { cloneset: objectKey(cs), revision: plan.revision.metadata.name, err: (err as Error).message },
          'update revision: the older equal revision cannot be renumbered; creating a new one',
        );
        collisionCount++;
        await persistCollisionCount();
        createAs = plan.to;
      }
    }
    for (let attempt = 0; !update; attempt++) {
      const wanted = { ...build(collisionCount, createAs) };
      try {
        update = await this.ctx.client.create<Revision>(CONTROLLER_REVISIONS, wanted, ns);
        this.ctx.logger.info({ cloneset: objectKey(cs), revision: update.metadata.name }, 'update revision: created');
      } catch (err) {
        if (!isAlreadyExists(err) || attempt > 10) throw err;
        const existing = await this.ctx.client.get<Revision>(CONTROLLER_REVISIONS, wanted.metadata.name!, ns);
        if (controllerOf(existing)?.uid === cs.metadata.uid && planUpdateRevision([existing], wanted).action !== 'create') {
          update = existing;
          break;
        }
        // A different revision holds the name: count the collision (persisted in status) and rehash.
        collisionCount++;
        await persistCollisionCount();
      }
    }
    const revisions = [...owned.filter((r) => r.metadata.name !== update.metadata.name), update];
    const current = revisions.find((r) => r.metadata.name === cs.status?.currentRevision) ?? update;
    return { update, current, collisionCount, all: revisions };
  }

  /** Deletes the revisions beyond the history limit that are neither update, current, nor any pod's. */
  async truncate(cs: CloneSetObject, owned: readonly Pod[], revs: RevisionSet): Promise<void> {
    const podRevs = new Set(owned.map((p) => p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? ''));
    const keep = new Set([revs.update.metadata.name!, revs.current.metadata.name!]);
    const limit = cs.spec.revisionHistoryLimit ?? CLONESET_DEFAULT_REVISION_HISTORY_LIMIT;
    for (const r of revisionsToTruncate(revs.all, keep, podRevs, limit)) {
      try {
        await this.ctx.client.delete(CONTROLLER_REVISIONS, r.metadata.name!, cs.metadata.namespace!);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}

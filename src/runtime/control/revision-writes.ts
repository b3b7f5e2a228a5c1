/**
 * ControllerRevision writes of the workloads that version only their pod template (CloneSet, Advanced StatefulSet,
 * Advanced DaemonSet), the I/O half of controller-revision.ts: finds or writes the update revision (reuse, renumber
 * an older equal one, or create; a name taken by another revision bumps `collisionCount`, persisted in the
 * workload's status) and deletes the history beyond the limit. controller-revision.ts decides.
 */
import {
  CONTROLLER_REVISIONS,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_CONTROLLER_REVISION_HASH_KEY,
  type ResourceType,
} from '../../contracts/index.js';
import { isAlreadyExists, isInvalid, isNotFound, PatchStrategy } from '../core/client.js';
import type { ControllerContext } from '../core/controller.js';
import { controllerOf } from '../core/meta.js';
import { objectKey, type KubeObject, type Pod } from '../core/types.js';
import { newRevision, planUpdateRevision, revisionsToTruncate, type NewRevisionInput, type Revision } from './controller-revision.js';

/** The workload, as far as its revisions read it. */
export interface RevisionOwner extends KubeObject {
  readonly spec: { readonly template?: unknown; readonly revisionHistoryLimit?: number };
  readonly status?: { readonly collisionCount?: number; readonly currentRevision?: string };
}

export interface RevisionSet {
  readonly update: Revision;
  /** The revision `status.currentRevision` names, else the update revision. */
  readonly current: Revision;
  readonly collisionCount: number;
  /** The workload's revisions, the update revision included. */
  readonly all: Revision[];
}

/** Upstream's default `revisionHistoryLimit` of CloneSet, StatefulSet and DaemonSet. */
const DEFAULT_REVISION_HISTORY_LIMIT = 10;
/** A create that keeps meeting other revisions under its name gives up after this many collisions. */
const MAX_COLLISIONS = 10;

export class RevisionWrites {
  /**
   * @param owners the workload's resource, whose status subresource keeps `collisionCount`
   * @param logKey the field that names the workload in log lines
   */
  constructor(
    private readonly ctx: ControllerContext,
    private readonly owners: ResourceType,
    private readonly logKey: string,
  ) {}

  /** The update and current revisions, given the workload's cached revisions `owned`. */
  async sync(
    owner: RevisionOwner,
    owned: readonly Revision[],
    o: Pick<NewRevisionInput, 'ownerReference' | 'extraAnnotations'>,
  ): Promise<RevisionSet> {
    const ns = owner.metadata.namespace!;
    let collisionCount = owner.status?.collisionCount ?? 0;
    const template = owner.spec.template as Record<string, unknown>;
    const build = (cc: number, revision: number) =>
      newRevision({
        parentName: owner.metadata.name!,
        namespace: ns,
        template,
        templateLabels: (template.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {},
        parentAnnotations: owner.metadata.annotations ?? {},
        extraAnnotations: o.extraAnnotations,
        collisionCount: cc,
        revision,
        ownerReference: o.ownerReference,
      });
    const plan = planUpdateRevision(owned, build(collisionCount, 0));
    // The revision written this round is used at once (not after the revisions cache shows it): the
    // decision never waits on a watch, and a stale cache only repeats an idempotent write.
    const persistCollisionCount = () =>
      this.ctx.client.patch(this.owners, owner.metadata.name!, ns, { status: { collisionCount } }, PatchStrategy.MergePatch, {
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
          { [this.logKey]: objectKey(owner), revision: update.metadata.name, number: plan.to },
          'update revision: an older revision again',
        );
      } catch (err) {
        if (!isInvalid(err)) throw err;
        // The API server refuses to renumber a revision whose stored data no longer equals itself once
        // it re-encodes it (written with a literal `&`, `<` or `>` before requests were encoded the Go
        // way): a new revision under the next collision count takes its place instead of a stall.
        this.ctx.logger.warn(
          { [this.logKey]: objectKey(owner), revision: plan.revision.metadata.name, err: (err as Error).message },
          'update revision: the older equal revision cannot be renumbered; creating a new one',
        );
        collisionCount++;
        await persistCollisionCount();
        createAs = plan.to;
      }
    }
    for (let attempt = 0; !update; attempt++) {
      const wanted = build(collisionCount, createAs);
      try {
        update = await this.ctx.client.create<Revision>(CONTROLLER_REVISIONS, wanted, ns);
        this.ctx.logger.info({ [this.logKey]: objectKey(owner), revision: update.metadata.name }, 'update revision: created');
      } catch (err) {
        if (!isAlreadyExists(err) || attempt > MAX_COLLISIONS) throw err;
        const existing = await this.ctx.client.get<Revision>(CONTROLLER_REVISIONS, wanted.metadata.name!, ns);
        if (controllerOf(existing)?.uid === owner.metadata.uid && planUpdateRevision([existing], wanted).action !== 'create') {
          update = existing;
          break;
        }
        // A different revision holds the name: count the collision (persisted in status) and rehash.
        collisionCount++;
        await persistCollisionCount();
      }
    }
    const all = [...owned.filter((r) => r.metadata.name !== update.metadata.name), update];
    const current = all.find((r) => r.metadata.name === owner.status?.currentRevision) ?? update;
    return { update, current, collisionCount, all };
  }

  /**
   * Deletes the revisions beyond `spec.revisionHistoryLimit` that are neither update, current, nor any pod's. A
   * pod's label names its revision (CloneSet, StatefulSet) or holds only the revision's hash (DaemonSet).
   */
  async truncate(owner: RevisionOwner, pods: readonly Pod[], revs: RevisionSet): Promise<void> {
    const podLabels = new Set(pods.flatMap((p) => p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? []));
    const inUse = new Set(
      revs.all
        .filter((r) => podLabels.has(r.metadata.name!) || podLabels.has(r.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH_KEY] ?? ''))
        .map((r) => r.metadata.name!),
    );
    const keep = new Set([revs.update.metadata.name!, revs.current.metadata.name!]);
    const limit = owner.spec.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT;
    for (const r of revisionsToTruncate(revs.all, keep, inUse, limit)) {
      try {
        await this.ctx.client.delete(CONTROLLER_REVISIONS, r.metadata.name!, owner.metadata.namespace!);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}

import type { NodeImage as ApiNodeImage } from '../../../api/kinds/nodeimage.js';
import {
  NODE_IMAGES,
  PatchStrategy,
  SECRETS,
  isNotFound,
  type Informer,
  type KubeObject,
  type ProcessResult,
  type Secret,
} from '../../core/index.js';
import type { DaemonContext } from '../context.js';
import { nextStatus, pendingPulls, type TagResult } from './decision.js';
import { Puller } from './puller.js';

export type NodeImage = ApiNodeImage & KubeObject;

/** Writes the status only when something in it changed (counters or any tag state). */
function sameStatus(ni: NodeImage, next: ReturnType<typeof nextStatus>): boolean {
  const cur = ni.status;
  if (!cur) return false;
  for (const k of ['desired', 'pulling', 'waiting', 'succeeded', 'failed'] as const) if ((cur[k] ?? 0) !== next[k]) return false;
  const curImages = cur.imageStatuses ?? {};
  for (const [image, v] of Object.entries(next.imageStatuses)) {
    if (v === null) {
      if (image in curImages) return false;
      continue;
    }
    if (JSON.stringify(curImages[image]?.tags ?? []) !== JSON.stringify(v.tags)) return false;
  }
  return true;
}

/** I/O of the daemon's image pulls: its NodeImage from the cache, pulls through Puller, status by merge patch. */
export class NodeImageReconciler {
  private readonly results = new Map<string, TagResult>();
  readonly puller: Puller;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly nodeImages: Informer<NodeImage>,
    maxWorkers: number,
    configNamespace: string,
    enqueue: (key: string) => void,
  ) {
    this.puller = new Puller(
      ctx.cri,
      async (namespace, name) => {
        try {
          return await ctx.client.get<Secret>(SECRETS, name, namespace ?? configNamespace);
        } catch (err) {
          if (isNotFound(err)) return null;
          throw err;
        }
      },
      maxWorkers,
      ctx.logger,
      (r) => {
        this.results.set(`${r.image}\u0000${r.tag}`, r);
        enqueue(ctx.nodeName);
      },
    );
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const ni = this.nodeImages.get(key);
    if (!ni) return;
    // Forget results of tags the spec no longer lists (the map stays as small as the spec).
    const wanted = new Set(
      Object.entries(ni.spec?.images ?? {}).flatMap(([image, spec]) => spec.tags.map((t) => `${image}\u0000${t.tag}`)),
    );
    for (const k of this.results.keys()) if (!wanted.has(k)) this.results.delete(k);
    for (const task of pendingPulls(ni, this.puller.inFlight)) {
      // A result we hold for this version already answers it (written, or about to be).
      const held = this.results.get(`${task.image}\u0000${task.tag}`);
      if (held && (held.status.version ?? 0) === task.version) {
        if (held.status.phase === 'Succeeded' || held.status.phase === 'Failed') continue;
      }
      this.puller.submit(task);
    }
    const next = nextStatus(ni, [...this.results.values()]);
    if (sameStatus(ni, next)) return;
    await this.ctx.client.patch(NODE_IMAGES, key, undefined, { status: next }, PatchStrategy.MergePatch, { subresource: 'status' });
  }
}

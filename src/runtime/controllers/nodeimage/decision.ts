/**
 * NodeImage lifecycle (upstream `nodeimage-controller`): one NodeImage per Ready Node, same name,
 * labels copied from the Node (ImagePullJob selectors match them); deleted with the Node unless
 * labelled as fake; tags pruned once no owning job exists or their TTL after finishing passed.
 */
import type { ImageTagSpec, NodeImage } from '../../../api/kinds/nodeimage.js';

export const FAKE_NODE_IMAGE_LABEL = 'apps.kruise.io/fake-nodeimage';

export interface NodeView {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly ready: boolean;
  readonly deleting: boolean;
}

export type NodeImageView = NodeImage & { metadata: { name?: string; labels?: Record<string, string>; resourceVersion?: string } };

export type NodeImageAction =
  | { readonly type: 'create'; readonly name: string; readonly labels: Record<string, string> }
  | { readonly type: 'delete'; readonly name: string }
  | {
      readonly type: 'patch';
      readonly name: string;
      readonly resourceVersion?: string;
      readonly labels?: Record<string, string | null>;
      /** Per image: the remaining tags, or null to drop the image. */
      readonly images?: Record<string, ImageTagSpec[] | null>;
    };

export interface NodeImageDecision {
  readonly actions: NodeImageAction[];
  readonly requeueAfterMs?: number;
}

export interface NodeImageInput {
  readonly node: NodeView | null;
  readonly nodeImage: NodeImageView | null;
  /** Whether an owner (namespace, name, uid) of a tag still exists. */
  readonly ownerExists: (namespace: string, name: string, uid: string) => boolean;
  readonly nowMs: number;
}

function labelDiff(want: Record<string, string>, have: Record<string, string>): Record<string, string | null> | undefined {
  const diff: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(want)) if (have[k] !== v) diff[k] = v;
  for (const k of Object.keys(have)) if (!(k in want) && k !== FAKE_NODE_IMAGE_LABEL) diff[k] = null;
  return Object.keys(diff).length ? diff : undefined;
}

export function decideNodeImage(input: NodeImageInput): NodeImageDecision {
  const { node, nodeImage: ni, nowMs } = input;
  if (!node || node.deleting) {
    if (ni && !ni.metadata.labels?.[FAKE_NODE_IMAGE_LABEL]) return { actions: [{ type: 'delete', name: ni.metadata.name! }] };
    if (!ni || !node) return { actions: [] };
  }
  if (!ni) return node.ready ? { actions: [{ type: 'create', name: node.name, labels: { ...node.labels } }] } : { actions: [] };

  let requeueAfterMs: number | undefined;
  const images: Record<string, ImageTagSpec[] | null> = {};
  for (const [image, spec] of Object.entries(ni.spec?.images ?? {})) {
    const statuses = ni.status?.imageStatuses?.[image]?.tags ?? [];
    const kept: ImageTagSpec[] = [];
    let changed = false;
    for (const tag of spec.tags) {
      const owners = (tag.ownerReferences ?? []).filter(
        (o) => o.namespace && o.name && o.uid && input.ownerExists(o.namespace, o.name, o.uid),
      );
      if ((tag.ownerReferences ?? []).length > 0 && owners.length === 0) {
        changed = true;
        continue;
      }
      const st = statuses.find((s) => s.tag === tag.tag);
      const ttl = tag.pullPolicy?.ttlSecondsAfterFinished;
      if (
        ttl !== undefined &&
        st &&
        (st.version ?? 0) === (tag.version ?? 0) &&
        (st.phase === 'Succeeded' || st.phase === 'Failed') &&
        st.completionTime
      ) {
        const dueMs = Date.parse(st.completionTime) + ttl * 1000;
        if (dueMs <= nowMs) {
          changed = true;
          continue;
        }
        requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, dueMs - nowMs);
      }
      if (owners.length !== (tag.ownerReferences ?? []).length) {
        kept.push({ ...tag, ownerReferences: owners });
        changed = true;
      } else kept.push(tag);
    }
    if (changed) images[image] = kept.length ? kept : null;
  }
  const labels = node ? labelDiff(node.labels, ni.metadata.labels ?? {}) : undefined;
  const actions: NodeImageAction[] =
    labels || Object.keys(images).length
      ? [
          {
            type: 'patch',
            name: ni.metadata.name!,
            ...(ni.metadata.resourceVersion ? { resourceVersion: ni.metadata.resourceVersion } : {}),
            ...(labels ? { labels } : {}),
            ...(Object.keys(images).length ? { images } : {}),
          },
        ]
      : [];
  return { actions, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
}

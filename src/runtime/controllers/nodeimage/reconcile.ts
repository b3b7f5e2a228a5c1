import {
  NODE_IMAGES,
  PatchStrategy,
  conditionIsTrue,
  isAlreadyExists,
  isNotFound,
  type ControllerContext,
  type Informer,
  type Node,
  type ProcessResult,
  type Reconciler,
} from '../../core/index.js';
import { KRUISE_API_VERSION } from '../../../contracts/index.js';
import type { ImagePullJobObject, NodeImageObject } from '../../core/types.js';
import { decideNodeImage, type NodeView } from './decision.js';

function nodeView(n: Node): NodeView {
  return {
    name: n.metadata.name!,
    labels: { ...(n.metadata.labels ?? {}) },
    ready: conditionIsTrue(n.status?.conditions as Array<{ type: string; status: string }> | undefined, 'Ready'),
    deleting: !!n.metadata.deletionTimestamp,
  };
}

/** I/O half of the NodeImage controller. Key: node name (= NodeImage name). */
export class NodeImageReconciler implements Reconciler {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly nodes: Informer<Node>,
    private readonly nodeImages: Informer<NodeImageObject>,
    private readonly jobs: Informer<ImagePullJobObject>,
  ) {}

  async reconcile(key: string): Promise<ProcessResult> {
    const node = this.nodes.get(key);
    const ni = this.nodeImages.get(key) ?? null;
    const decision = decideNodeImage({
      node: node ? nodeView(node) : null,
      nodeImage: ni,
      ownerExists: (namespace, name, uid) => this.jobs.get(`${namespace}/${name}`)?.metadata.uid === uid,
      nowMs: Date.now(),
    });
    for (const a of decision.actions) {
      if (a.type === 'create') {
        await this.ctx.client
          .create(NODE_IMAGES, {
            apiVersion: KRUISE_API_VERSION,
            kind: 'NodeImage',
            metadata: { name: a.name, labels: a.labels },
            spec: {},
          })
          .catch((err) => {
            if (!isAlreadyExists(err)) throw err;
          });
        this.ctx.logger.info({ node: a.name }, 'NodeImage created');
      } else if (a.type === 'delete') {
        await this.ctx.client.delete(NODE_IMAGES, a.name).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
        this.ctx.logger.info({ node: a.name }, 'NodeImage deleted with its node');
      } else {
        const images = a.images
          ? Object.fromEntries(Object.entries(a.images).map(([k, tags]) => [k, tags === null ? null : { tags }]))
          : undefined;
        await this.ctx.client.patch(
          NODE_IMAGES,
          a.name,
          undefined,
          {
            metadata: { ...(a.resourceVersion ? { resourceVersion: a.resourceVersion } : {}), ...(a.labels ? { labels: a.labels } : {}) },
            ...(images ? { spec: { images } } : {}),
          },
          PatchStrategy.MergePatch,
        );
      }
    }
    return decision.requeueAfterMs !== undefined ? { requeueAfterMs: decision.requeueAfterMs } : undefined;
  }
}

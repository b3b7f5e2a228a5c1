import {
  NODE_POD_PROBES,
  PODS,
  PatchStrategy,
  conditionIsTrue,
  isAlreadyExists,
  isNotFound,
  type ControllerContext,
  type Informer,
  type Node,
  type Pod,
  type ProcessResult,
  type Reconciler,
} from '../../core/index.js';
import { KRUISE_API_VERSION } from '../../../contracts/index.js';
import {
  decideNodePodProbe,
  VIRTUAL_KUBELET_LABEL,
  type MarkedPodView,
  type NodePodProbeObject,
  type NodeView,
  type PodProbeMarkerObject,
} from './decision.js';

function nodeView(n: Node): NodeView {
  return {
    name: n.metadata.name!,
    ready: conditionIsTrue(n.status?.conditions as Array<{ type: string; status: string }> | undefined, 'Ready'),
    deleting: !!n.metadata.deletionTimestamp,
    virtual: n.metadata.labels?.[VIRTUAL_KUBELET_LABEL.key] === VIRTUAL_KUBELET_LABEL.value,
  };
}

export function markedPodView(p: Pod): MarkedPodView {
  const phase = p.status?.phase;
  return {
    namespace: p.metadata.namespace ?? '',
    name: p.metadata.name ?? '',
    uid: p.metadata.uid ?? '',
    active: !p.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed',
    labels: p.metadata.labels ?? {},
    annotations: p.metadata.annotations ?? {},
    conditions: p.status?.conditions ?? [],
  };
}

/** I/O half of the NodePodProbe controller. Key: node name (= NodePodProbe name). */
export class NodePodProbeReconciler implements Reconciler {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly nodes: Informer<Node>,
    private readonly nodePodProbes: Informer<NodePodProbeObject>,
    private readonly pods: Informer<Pod>,
    private readonly markers: Informer<PodProbeMarkerObject>,
  ) {}

  async reconcile(key: string): Promise<ProcessResult> {
    const node = this.nodes.get(key);
    const actions = decideNodePodProbe({
      node: node ? nodeView(node) : null,
      nodePodProbe: this.nodePodProbes.get(key) ?? null,
      pod: (ns, name) => {
        const p = this.pods.get(`${ns}/${name}`);
        return p ? markedPodView(p) : undefined;
      },
      marker: (ns, name) => this.markers.get(`${ns}/${name}`),
    });
    const { client, logger } = this.ctx;
    for (const a of actions) {
      if (a.type === 'create') {
        await client
          .create(NODE_POD_PROBES, { apiVersion: KRUISE_API_VERSION, kind: 'NodePodProbe', metadata: { name: a.name }, spec: {} })
          .catch((err) => {
            if (!isAlreadyExists(err)) throw err;
          });
        logger.info({ node: a.name }, 'NodePodProbe created');
      } else if (a.type === 'delete') {
        await client.delete(NODE_POD_PROBES, a.name).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
        logger.info({ node: a.name }, 'NodePodProbe deleted with its node');
      } else if (a.type === 'prune') {
        await client.patch(
          NODE_POD_PROBES,
          a.name,
          undefined,
          { metadata: { resourceVersion: a.resourceVersion }, spec: { podProbes: a.podProbes } },
          PatchStrategy.MergePatch,
        );
      } else {
        // The uid precondition keeps a result of the old pod off a new pod of the same name.
        try {
          if (a.labels || a.annotations) {
            await client.patch(
              PODS,
              a.name,
              a.namespace,
              {
                metadata: {
                  uid: a.uid,
                  ...(a.labels ? { labels: a.labels } : {}),
                  ...(a.annotations ? { annotations: a.annotations } : {}),
                },
              },
              PatchStrategy.MergePatch,
            );
          }
          if (a.conditions) {
            await client.patch(
              PODS,
              a.name,
              a.namespace,
              { metadata: { uid: a.uid }, status: { conditions: a.conditions } },
              PatchStrategy.StrategicMergePatch,
              { subresource: 'status' },
            );
          }
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }
  }
}

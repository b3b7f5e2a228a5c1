import { LABEL_NODE_TYPE, NODE_TYPE_VIRTUAL_KUBELET } from '../../../api/pod-contracts.js';
import { ContainerRecreateRequestDefinition } from '../../../api/registry.js';
import { kindWebhookPath } from '../../../contracts/index.js';
import { isNotFound, type KubeClient } from '../../core/client.js';
import type { WebhookDefinition } from '../../core/controller.js';
import { NODES, PODS } from '../../../contracts/index.js';
import type { KubeObject, Node, Pod } from '../../core/types.js';
import { defaultCrr, validateCrrSpec, validateCrrUpdate } from './decision.js';

async function getOrUndefined<T extends KubeObject>(
  client: KubeClient,
  type: typeof PODS,
  name: string,
  ns?: string,
): Promise<T | undefined> {
  try {
    return await client.get<T>(type, name, ns);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Defaulting (mutate) and validation of ContainerRecreateRequests. The pod is read from the API server,
 * not a cache: statusContext must carry the container instance the user saw when creating the CRR.
 */
export const containerRecreateRequestWebhook: WebhookDefinition = {
  name: 'containerrecreaterequest',
  // Reads no cache: the pod is read live (see above).
  reads: [],
  setup(ctx) {
    return [
      {
        name: 'mcontainerrecreaterequest',
        path: kindWebhookPath('mutate', ContainerRecreateRequestDefinition),
        type: 'mutating',
        async handle(req) {
          if (req.operation !== 'CREATE' || !req.object) return { allowed: true };
          const crr = req.object as Parameters<typeof defaultCrr>[0];
          const ns = req.namespace ?? crr.metadata.namespace;
          const podName = (crr.spec as { podName?: string } | undefined)?.podName;
          if (!podName) return defaultCrr(crr, undefined, false);
          const pod = await getOrUndefined<Pod>(ctx.client, PODS, podName, ns);
          let virtual = false;
          if (pod?.spec?.nodeName) {
            const node = await getOrUndefined<Node>(ctx.client, NODES, pod.spec.nodeName);
            virtual = node?.metadata.labels?.[LABEL_NODE_TYPE] === NODE_TYPE_VIRTUAL_KUBELET;
          }
          return defaultCrr(crr, pod, virtual);
        },
      },
      {
        name: 'vcontainerrecreaterequest',
        path: kindWebhookPath('validate', ContainerRecreateRequestDefinition),
        type: 'validating',
        async handle(req) {
          const crr = req.object as Parameters<typeof validateCrrSpec>[0] | undefined;
          if (!crr) return { allowed: true };
          if (req.operation === 'UPDATE' && req.oldObject) return validateCrrUpdate(crr, req.oldObject as typeof crr);
          const msg = validateCrrSpec(crr);
          return msg ? { allowed: false, code: 400, message: msg } : { allowed: true };
        },
      },
    ];
  },
};

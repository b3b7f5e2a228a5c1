import type { ControllerDefinition } from '../../core/controller.js';
import { podOwnerReference } from '../../core/meta.js';
import {
  CONFIGMAPS,
  PODS,
  PatchStrategy,
  isAlreadyExists,
  isNotFound,
  objectKey,
  splitKey,
  type KubeObject,
  type Pod,
} from '../../core/index.js';
import { decideBarrier, hasBarrier } from './decision.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** Container launch priority barriers (upstream `container-launch-priority-controller`; gate PodWebhook). */
export const launchPriorityController: ControllerDefinition = {
  name: 'containerlaunchpriority',
  featureGate: 'PodWebhook',
  defaultWorkers: 4,
  reads: [
    {
      resource: PODS,
      fields: [
        'spec.containers[].name',
        'spec.containers[].env[name^=KRUISE_].name',
        'spec.containers[].env[name^=KRUISE_].valueFrom',
        'status.conditions[].type',
        'status.conditions[].status',
        'status.containerStatuses[].name',
        'status.containerStatuses[].ready',
      ],
    },
  ],
  setup(ctx, enqueue) {
    const pods = ctx.informers.for<Pod>(PODS);
    const onPod = (p: Pod) => {
      if (hasBarrier(p) && !p.metadata.deletionTimestamp) enqueue(objectKey(p));
    };
    pods.addHandlers({ add: onPod, update: onPod });
    return {
      async reconcile(key) {
        const { namespace, name } = splitKey(key);
        const pod = pods.get(key);
        if (!pod) return;
        // The barrier is read from the API server: caching every ConfigMap of the cluster would cost far more.
        let barrier: ConfigMap | undefined;
        try {
          barrier = await ctx.client.get<ConfigMap>(CONFIGMAPS, `${name}-barrier`, namespace);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        const d = decideBarrier({ pod, barrier: barrier ? (barrier.data ?? {}) : undefined });
        if (d.action === 'create') {
          try {
            await ctx.client.create<ConfigMap>(CONFIGMAPS, {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: {
                name: d.name,
                namespace,
                ownerReferences: [podOwnerReference(pod)],
              },
            });
          } catch (err) {
            if (!isAlreadyExists(err)) throw err;
          }
          // Look again at once: the first key may be due already.
          return { requeueAfterMs: 1 };
        }
        if (d.action === 'release') {
          await ctx.client.patch(CONFIGMAPS, d.name, namespace, { data: { [d.key]: 'true' } }, PatchStrategy.MergePatch);
          ctx.logger.debug({ pod: key, key: d.key }, 'launch barrier released');
        }
      },
    };
  },
};

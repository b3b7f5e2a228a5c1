import type { SidecarSet } from '../../../api/kinds/sidecarset.js';
import { injectedSidecarSets } from '../../../api/sidecarset-pod.js';
import { NAMESPACES, PODS, SIDECARSETS } from '../../../contracts/index.js';
import type { ControllerDefinition } from '../../core/controller.js';
import { SIDECARSET_REVISION_NAMESPACE } from './options.js';
import type { KubeObject, Pod } from '../../core/types.js';
import { SidecarSetReconciler } from './reconcile.js';

/** SidecarSet status, revisions and in-place sidecar image upgrade (upstream sidecarset controller). */
export const sidecarSetController: ControllerDefinition = {
  name: 'sidecarset',
  featureGate: 'PodWebhook',
  // Upstream runs 5 workers; a reconcile is one list over the pod cache and a few patches.
  defaultWorkers: 5,
  options: [SIDECARSET_REVISION_NAMESPACE],
  reads: [
    { resource: SIDECARSETS, fields: ['metadata.annotations', 'metadata.labels', 'spec', 'status'] },
    { resource: NAMESPACES, fields: ['metadata.labels'] },
    {
      resource: PODS,
      fields: [
        'metadata.labels',
        'metadata.annotations',
        'spec.containers[].name',
        'spec.containers[].image',
        'spec.initContainers[].name',
        'spec.initContainers[].image',
        'spec.initContainers[].restartPolicy',
        'status.phase',
        'status.conditions[].type',
        'status.conditions[].status',
        'status.containerStatuses[].name',
        'status.containerStatuses[].image',
        'status.containerStatuses[].imageID',
        'status.containerStatuses[].ready',
        'status.initContainerStatuses[].name',
        'status.initContainerStatuses[].image',
        'status.initContainerStatuses[].imageID',
        'status.initContainerStatuses[].ready',
      ],
    },
  ],
  setup(ctx, enqueue) {
    const sets = ctx.informers.for<SidecarSet & KubeObject>(SIDECARSETS);
    const pods = ctx.informers.for<Pod>(PODS);
    const namespaces = ctx.informers.for<KubeObject>(NAMESPACES);
    sets.addHandlers({ add: (s) => enqueue(s.metadata.name!), update: (s) => enqueue(s.metadata.name!) });
    // A pod counts for the sets it was injected by (the injected-list annotation names them).
    const onPod = (p: Pod) => {
      for (const name of injectedSidecarSets(p.metadata.annotations)) enqueue(name);
    };
    pods.addHandlers({ add: onPod, update: onPod, delete: onPod });
    return new SidecarSetReconciler(ctx, sets, pods, namespaces, ctx.options.get(SIDECARSET_REVISION_NAMESPACE));
  },
};

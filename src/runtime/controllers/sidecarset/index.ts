import type { SidecarSet } from '../../../api/kinds/sidecarset.js';
import { CONTROLLER_REVISIONS, LABEL_SIDECARSET_NAME, NAMESPACES, PODS, SIDECARSETS } from '../../../contracts/index.js';
import type { ControllerDefinition } from '../../core/controller.js';
import { SIDECARSET_REVISION_NAMESPACE } from '../../control/sidecarset-options.js';
import type { KubeObject, Pod } from '../../core/types.js';
import type { SidecarSetRevision } from './history.js';
import { PODS_BY_INJECTED_SIDECARSET, podInjectedSidecarSets, sidecarSetsOfUpdate } from './pod-index.js';
import { SidecarSetReconciler } from './reconcile.js';

/** How long pod creations are gathered into one reconcile of their SidecarSet. */
export const POD_ADD_COALESCE_MS = 500;

/** SidecarSet status, revisions (and their history limit) and in-place sidecar image upgrade (upstream sidecarset controller). */
export const sidecarSetController: ControllerDefinition = {
  name: 'sidecarset',
  featureGate: 'PodWebhook',
  // Upstream runs 5 workers; a reconcile is one list over the pod cache and a few patches.
  defaultWorkers: 5,
  reads: [
    { resource: SIDECARSETS, fields: ['metadata.annotations', 'metadata.labels', 'spec', 'status'] },
    { resource: NAMESPACES, fields: ['metadata.labels'] },
    // Its own revisions only (revision namespace, set-name label): the history limit counts and prunes them.
    { resource: CONTROLLER_REVISIONS, fields: ['metadata.labels', 'metadata.creationTimestamp', 'revision'] },
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
    const revisionNamespace = ctx.options.get(SIDECARSET_REVISION_NAMESPACE);
    const revisions = ctx.informers.for<SidecarSetRevision>(CONTROLLER_REVISIONS, {
      namespace: revisionNamespace,
      labelSelector: LABEL_SIDECARSET_NAME,
    });
    sets.addHandlers({ add: (s) => enqueue(s.metadata.name!), update: (s) => enqueue(s.metadata.name!) });
    // A pod counts for the sets it was injected by (the injected-list annotation names them).
    pods.addIndex(PODS_BY_INJECTED_SIDECARSET, podInjectedSidecarSets);
    // A new pod only adds to matchedPods (the webhook injected the current version): during a burst of
    // creates (a rollout, a scale-up) one reconcile per window instead of one per pod keeps the manager's
    // CPU for admission. Updates and deletes (readiness, the kubelet finishing an in-place upgrade) still
    // reconcile at once.
    const pendingAdds = new Map<string, NodeJS.Timeout>();
    const onPodAdded = (p: Pod) => {
      for (const name of podInjectedSidecarSets(p)) {
        if (pendingAdds.has(name)) continue;
        pendingAdds.set(
          name,
          setTimeout(() => {
            pendingAdds.delete(name);
            enqueue(name);
          }, POD_ADD_COALESCE_MS).unref(),
        );
      }
    };
    pods.addHandlers({
      add: onPodAdded,
      update: (p, old) => {
        for (const name of sidecarSetsOfUpdate(p, old)) enqueue(name);
      },
      delete: (p) => {
        for (const name of podInjectedSidecarSets(p)) enqueue(name);
      },
    });
    // A new revision in the cache may take the set over its history limit.
    revisions.addHandlers({
      add: (r) => {
        const name = r.metadata.labels?.[LABEL_SIDECARSET_NAME];
        if (name) enqueue(name);
      },
    });
    return new SidecarSetReconciler(ctx, sets, pods, namespaces, revisions, revisionNamespace);
  },
};

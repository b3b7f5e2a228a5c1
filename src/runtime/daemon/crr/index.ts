import type { ContainerRecreateRequest as ApiCrr } from '../../../api/kinds/containerrecreaterequest.js';
import { CONTAINER_RECREATE_REQUESTS } from '../../core/index.js';
import type { KubeObject } from '../../core/index.js';
import type { DaemonControllerDefinition } from '../context.js';
import { CrrKeys } from './decide.js';
import { CrrReconciler } from './reconcile.js';

/** The API type, as the cache holds it (plain JSON with the KubeObject shape). */
type ContainerRecreateRequest = ApiCrr & KubeObject;

/**
 * ContainerRecreateRequest execution (upstream kruise-daemon `crr` controller). Watches only the CRRs
 * labelled for this node; the key is `namespace/podName` so one pod's CRRs are never worked on by two
 * workers at once.
 */
export const containerRecreateController: DaemonControllerDefinition = {
  name: 'daemon-containerrecreaterequest',
  defaultWorkers: 4,
  reads: [{ resource: CONTAINER_RECREATE_REQUESTS, fields: ['*'] }],
  setup(ctx, enqueue) {
    const crrs = ctx.informers.for<ContainerRecreateRequest>(CONTAINER_RECREATE_REQUESTS, {
      labelSelector: `${CrrKeys.nodeName}=${ctx.nodeName}`,
    });
    const onCrr = (c: ContainerRecreateRequest) => enqueue(`${c.metadata.namespace}/${c.spec.podName}`);
    crrs.addHandlers({ add: onCrr, update: onCrr, delete: onCrr });
    ctx.onCriRecovered(() => {
      for (const c of crrs.list()) if (!c.status?.completionTime) onCrr(c);
    });
    const reconciler = new CrrReconciler(ctx, crrs);
    crrs.addHandlers({ delete: (c) => reconciler.forget(c) });
    return reconciler;
  },
};

import type { ContainerRecreateRequest as ApiCrr } from '../../../api/kinds/containerrecreaterequest.js';
import { CONTAINER_RECREATE_REQUESTS, PODS, type Pod } from '../../core/index.js';
import type { KubeObject } from '../../core/index.js';
import type { ControllerDefinition } from '../../core/controller.js';
import type { DaemonContext } from '../context.js';
import { CrrKeys } from './decision.js';
import { CrrReconciler } from './reconcile.js';
import { NodeLocalSidecarTerminator } from './node-local.js';
import { NODE_LOCAL_SIDECAR_TERMINATOR } from './options.js';

/** The API type, as the cache holds it (plain JSON with the KubeObject shape). */
type ContainerRecreateRequest = ApiCrr & KubeObject;

/**
 * ContainerRecreateRequest execution (upstream kruise-daemon `crr` controller). Watches only the CRRs
 * labelled for this node; the key is `namespace/podName` so one pod's CRRs are never worked on by two
 * workers at once.
 */
export const containerRecreateController: ControllerDefinition<DaemonContext> = {
  name: 'daemon-containerrecreaterequest',
  defaultWorkers: 4,
  reads: [
    { resource: CONTAINER_RECREATE_REQUESTS, fields: ['*'] },
    // The node-local sidecar terminator: this node's pods (field selector spec.nodeName), what `decide` reads of
    // them, and what a kill needs (the pod's own preStop, named ports, grace period, IP).
    {
      resource: PODS,
      fields: [
        'metadata.annotations',
        'spec.nodeName',
        'spec.restartPolicy',
        'spec.terminationGracePeriodSeconds',
        'spec.containers[].name',
        'spec.containers[].image',
        'spec.containers[].env[name^=KRUISE_].name',
        'spec.containers[].env[name^=KRUISE_].value',
        'spec.containers[].ports',
        'spec.containers[].lifecycle.preStop',
        'status.phase',
        'status.podIP',
      ],
    },
  ],
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
    // Same queue and key as the CRR execution: a node-local stop and a CRR of one pod never run at once.
    if (ctx.options.get(NODE_LOCAL_SIDECAR_TERMINATOR) && ctx.featureGates.get('SidecarTerminator') !== false) {
      const pods = ctx.informers.for<Pod>(PODS, { fieldSelector: `spec.nodeName=${ctx.nodeName}` });
      const nodeLocal = new NodeLocalSidecarTerminator(ctx, pods, crrs, reconciler.writes(), enqueue);
      reconciler.nodeLocal = nodeLocal;
      ctx.onStop(async () => nodeLocal.close());
    }
    return reconciler;
  },
};

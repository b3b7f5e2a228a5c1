import { LABEL_NODE_TYPE, NODE_TYPE_VIRTUAL_KUBELET } from '../../../api/pod-contracts.js';
import { CONTAINER_RECREATE_REQUESTS, kindWebhookPath } from '../../../contracts/index.js';
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

/** Live reads in flight at most (cache misses only); further misses wait their turn. */
export const CRR_WEBHOOK_LIVE_READS = 4;

/** A counting semaphore: at most `limit` calls of `run` at once, the rest queued in order. */
class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  async run<T>(f: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await f();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** Pod fields the defaulting reads (kept in the shared pod cache; see defaultCrr). */
const POD_FIELDS = [
  'spec.nodeName',
  'spec.terminationGracePeriodSeconds',
  'spec.containers[].name',
  'spec.containers[].lifecycle.preStop',
  'spec.containers[].ports',
  'status.phase',
  'status.conditions[].type',
  'status.conditions[].status',
  'status.containerStatuses[].name',
  'status.containerStatuses[].containerID',
  'status.containerStatuses[].restartCount',
] as const;

export const containerRecreateRequestWebhook: WebhookDefinition = {
  name: 'containerrecreaterequest',
  reads: [
    { resource: PODS, fields: POD_FIELDS },
    { resource: NODES, fields: ['metadata.labels'] },
  ],
  setup(ctx) {
    const pods = ctx.informers.for<Pod>(PODS);
    const nodes = ctx.informers.for<Node>(NODES);
    const live = new Limiter(CRR_WEBHOOK_LIVE_READS);
    const isVirtual = async (nodeName: string | undefined): Promise<boolean> => {
      if (!nodeName) return false;
      const node =
        (nodes.hasSynced() ? nodes.get(nodeName) : undefined) ?? (await live.run(() => getOrUndefined<Node>(ctx.client, NODES, nodeName)));
      return node?.metadata.labels?.[LABEL_NODE_TYPE] === NODE_TYPE_VIRTUAL_KUBELET;
    };
    // One webhook both defaults and validates (CREATE and UPDATE), as upstream: the install registers no
    // validating webhook for CRRs (BUNDLED_ADMISSION.validatedByMutatingKinds), so each CRR write costs the
    // API server one review, not two.
    return [
      {
        name: 'mcontainerrecreaterequest',
        path: kindWebhookPath('mutate', CONTAINER_RECREATE_REQUESTS),
        type: 'mutating',
        async handle(req) {
          if (!req.object) return { allowed: true };
          const crr = req.object as Parameters<typeof defaultCrr>[0];
          if (req.operation === 'UPDATE') {
            if (req.oldObject) return validateCrrUpdate(crr, req.oldObject as typeof crr);
            const msg = validateCrrSpec(crr);
            return msg ? { allowed: false, code: 400, message: msg } : { allowed: true };
          }
          if (req.operation !== 'CREATE') return { allowed: true };
          const ns = req.namespace ?? crr.metadata.namespace;
          const podName = (crr.spec as { podName?: string } | undefined)?.podName;
          if (!podName) return defaultCrr(crr, undefined, false);
          const cached = pods.hasSynced() ? pods.get(`${ns}/${podName}`) : undefined;
          if (cached) {
            const decision = defaultCrr(crr, cached, await isVirtual(cached.spec?.nodeName));
            if (decision.allowed) return decision;
          }
          const pod = await live.run(() => getOrUndefined<Pod>(ctx.client, PODS, podName, ns));
          return defaultCrr(crr, pod, await isVirtual(pod?.spec?.nodeName));
        },
      },
    ];
  },
};

import { DELETION_PROTECTION_PATH, PERSISTENT_VOLUME_CLAIMS, PODS, type ResourceType } from '../../../contracts/index.js';
import type { KubeClient } from '../../core/client.js';
import type { WebhookDefinition } from '../../core/controller.js';
import type { KubeObject } from '../../core/types.js';
import type { AdmissionResult } from '../../core/webhook/server.js';
import {
  countFailed,
  firstLook,
  isActiveObject,
  isActivePod,
  isBoundClaim,
  judgeCounts,
  protectedKindOf,
  type CustomResourceList,
} from './decision.js';

/** Page size of the counting lists: only whether one exists matters, so the first page that has one ends the count. */
const PAGE = 500;

/** Whether `type` (in `namespace`, or everywhere) holds an object that `counts`, listed page by page and stopping at the first. */
async function anyOf(
  client: KubeClient,
  type: ResourceType,
  counts: (o: KubeObject) => boolean,
  opts: { namespace?: string; fieldSelector?: string } = {},
): Promise<number> {
  let found = 0;
  let cont: string | undefined;
  do {
    const page = await client.list(type, { ...opts, limit: PAGE, ...(cont ? { continue: cont } : {}) });
    found += page.items.filter(counts).length;
    cont = page.metadata.continue || undefined;
  } while (cont && found === 0);
  return found;
}

function crType(l: CustomResourceList): ResourceType {
  return { group: l.group, version: l.version, resource: l.resource, kind: l.kind, namespaced: l.namespaced };
}

/**
 * Refuses DELETEs of objects labelled `policy.kruise.io/delete-protection` (decision.ts). The install registers it
 * with an object selector on the label's honoured values, so the API server sends nothing else: an unlabelled
 * object's deletion never waits on the runtime.
 */
export const deletionProtectionWebhook: WebhookDefinition = {
  name: 'deletionprotection',
  featureGate: 'ResourcesDeletionProtection',
  // Reads no cache: a namespace's pods and claims and a CRD's objects are listed at the moment of the DELETE, so a
  // cache behind the API server can never let a deletion through that the server's state would refuse.
  reads: [],
  setup(ctx) {
    const crdCascading = ctx.featureGates.get('DeletionProtectionForCRDCascadingGate') === true;
    const client = ctx.client;
    return [
      {
        name: 'vdeletionprotection',
        path: DELETION_PROTECTION_PATH,
        type: 'validating',
        async handle(req): Promise<AdmissionResult> {
          if (req.operation !== 'DELETE' || req.subResource || !req.oldObject) return { allowed: true };
          const p = protectedKindOf(req.kind.group, req.kind.kind);
          if (!p) return { allowed: true };
          const look = firstLook(p, req.oldObject as KubeObject, crdCascading);
          if (!('count' in look)) return look.allowed ? { allowed: true } : { allowed: false, code: 403, message: look.message };
          let verdict;
          if (look.count === 'namespace-contents') {
            const ns = look.namespace;
            try {
              const activePods = await anyOf(client, PODS, isActivePod, {
                namespace: ns,
                fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed',
              });
              const boundClaims = activePods > 0 ? 0 : await anyOf(client, PERSISTENT_VOLUME_CLAIMS, isBoundClaim, { namespace: ns });
              verdict = judgeCounts({ activePods, boundClaims });
            } catch (err) {
              verdict = countFailed(`the pods and claims of namespace ${ns}`, err);
            }
          } else {
            const l = look.list;
            try {
              verdict = judgeCounts({ activeCustomResources: await anyOf(client, crType(l), isActiveObject) });
            } catch (err) {
              verdict = countFailed(`the ${l.resource}.${l.group} objects`, err);
            }
          }
          return verdict.allowed ? { allowed: true } : { allowed: false, code: 403, message: verdict.message };
        },
      },
    ];
  },
};

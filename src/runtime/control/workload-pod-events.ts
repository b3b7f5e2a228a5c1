/**
 * The events of the workloads that adopt orphan pods by selector (CloneSet, Advanced StatefulSet), routed as
 * upstream's event handlers do: a workload's own events concern it; the scale expectations see each pod event first
 * (a reconcile the event starts finds it observed); a pod with a controller of the kind concerns that owner; an orphan
 * concerns every workload of its namespace whose selector matches it; a pod released or orphaned still concerns its
 * previous owner. The routes are returned for the other objects the workloads own (revisions, claims).
 */
import { selectorMatches, type KruiseKindName, type LabelSelectorLike } from '../../contracts/index.js';
import { scaleExpectationHandlers, type ScaleExpectations } from '../core/expectations.js';
import type { Informer } from '../core/informer.js';
import { controllerOf, kruiseControllerKey } from '../core/meta.js';
import { objectKey, type KubeObject, type Pod } from '../core/types.js';

type SelectingWorkload = KubeObject & { readonly spec: { readonly selector?: LabelSelectorLike } };

export interface ClaimingWorkloadEvents<W extends SelectingWorkload> {
  readonly kind: KruiseKindName;
  readonly workloads: Informer<W>;
  readonly pods: Informer<Pod>;
  /** The name of the workloads' index by namespace. */
  readonly namespaceIndex: string;
  readonly expectations: ScaleExpectations;
  /** Drops what the workload's writes expect of a deleted pod. */
  readonly forget: (p: Pod) => void;
  readonly enqueue: (key: string) => void;
}

export interface ClaimingRoutes {
  /** Enqueues the object's controller when it is one of these workloads. */
  readonly toOwner: (o: KubeObject) => void;
  /** Enqueues every workload of the object's namespace whose selector matches the object's labels. */
  readonly toMatching: (o: KubeObject) => void;
}

export function addClaimingWorkloadHandlers<W extends SelectingWorkload>(o: ClaimingWorkloadEvents<W>): ClaimingRoutes {
  const ownerKey = (obj: KubeObject) => kruiseControllerKey(obj, o.kind);
  const toOwner = (obj: KubeObject) => {
    const key = ownerKey(obj);
    if (key) o.enqueue(key);
  };
  const toMatching = (obj: KubeObject) => {
    for (const w of o.workloads.byIndex(o.namespaceIndex, obj.metadata.namespace ?? '')) {
      if (selectorMatches(w.spec.selector ?? {}, obj.metadata.labels ?? {})) o.enqueue(objectKey(w));
    }
  };
  const own = (w: W) => o.enqueue(objectKey(w));
  o.workloads.addHandlers({ add: own, update: own, delete: own });
  o.pods.addHandlers(scaleExpectationHandlers(o.expectations, ownerKey));
  const onPod = (p: Pod) => {
    if (ownerKey(p)) return toOwner(p);
    if (!controllerOf(p)) toMatching(p);
  };
  o.pods.addHandlers({
    add: onPod,
    update: (p, old) => {
      onPod(p);
      if (old !== p) toOwner(old);
    },
    delete: (p) => {
      o.forget(p);
      onPod(p);
    },
  });
  return { toOwner, toMatching };
}

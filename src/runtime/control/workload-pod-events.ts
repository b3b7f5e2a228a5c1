/**
 * The pod events of the workloads that adopt orphan pods by selector (CloneSet, Advanced StatefulSet), as upstream's
 * pod event handler routes them: the scale expectations see each event first (a reconcile the event starts finds it
 * observed); a pod with a controller of the kind concerns that owner; an orphan concerns every workload of its
 * namespace whose selector matches it; a pod released or orphaned still concerns its previous owner.
 */
import { selectorMatches, type LabelSelectorLike } from '../../contracts/index.js';
import { scaleExpectationHandlers, type ScaleExpectations } from '../core/expectations.js';
import type { Informer } from '../core/informer.js';
import { controllerOf } from '../core/meta.js';
import { objectKey, type KubeObject, type Pod } from '../core/types.js';

export interface ClaimingPodEvents<W extends KubeObject & { readonly spec: { readonly selector?: LabelSelectorLike } }> {
  readonly pods: Informer<Pod>;
  readonly workloads: Informer<W>;
  /** The name of the workloads' index by namespace. */
  readonly namespaceIndex: string;
  /** The workload key of an object whose controller is one of these workloads. */
  readonly ownerKey: (o: KubeObject) => string | undefined;
  readonly expectations: ScaleExpectations;
  /** Drops what the workload's writes expect of a deleted pod. */
  readonly forget: (p: Pod) => void;
  readonly enqueue: (key: string) => void;
}

export function addClaimingPodHandlers<W extends KubeObject & { readonly spec: { readonly selector?: LabelSelectorLike } }>(
  o: ClaimingPodEvents<W>,
): void {
  o.pods.addHandlers(scaleExpectationHandlers(o.expectations, o.ownerKey));
  const toOwner = (p: Pod) => {
    const key = o.ownerKey(p);
    if (key) o.enqueue(key);
  };
  const onPod = (p: Pod) => {
    if (o.ownerKey(p)) return toOwner(p);
    if (controllerOf(p)) return;
    for (const w of o.workloads.byIndex(o.namespaceIndex, p.metadata.namespace ?? '')) {
      if (selectorMatches(w.spec.selector ?? {}, p.metadata.labels ?? {})) o.enqueue(objectKey(w));
    }
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
}

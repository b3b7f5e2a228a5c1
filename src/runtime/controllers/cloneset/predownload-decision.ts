/**
 * CloneSet image pre-download, pure: how a CloneSet's update strategy reads for the shared pre-download rules
 * (control/image-predownload.ts): ReCreate recreates; partition and maxUnavailable (default 20%, rounded down) count
 * pods as the CloneSet's update does; a change is made in place when the update phase would make it in place.
 */
import { templateOf, type Revision } from '../../control/controller-revision.js';
import type { PreDownloadStrategy } from '../../control/image-predownload.js';
import { inPlaceSpec } from '../../control/inplace-update.js';
import type { CloneSetObject } from './pods.js';
import { vctsAllowInPlace } from './revision-decision.js';
import { partitionReplicas, scaledValue } from './scale-decision.js';

/** Upstream's default CloneSet maxUnavailable. */
const DEFAULT_MAX_UNAVAILABLE = '20%';

/** A count or percentage that does not parse reads as `dflt` (the validating webhook refuses it before it gets here). */
function safely(f: () => number, dflt: number): number {
  try {
    return f();
  } catch {
    return dflt;
  }
}

export function cloneSetPreDownloadStrategy(
  cs: CloneSetObject,
  current: Revision,
  update: Revision,
  o: { readonly recreateOnVctChange: boolean },
): PreDownloadStrategy {
  const us = cs.spec.updateStrategy ?? {};
  const replicas = cs.spec.replicas ?? 1;
  return {
    recreate: (us.type ?? 'ReCreate') === 'ReCreate',
    partition: safely(() => partitionReplicas(us.partition, replicas), 0),
    maxUnavailable: safely(() => scaledValue(us.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE, replicas, false, 0), 0),
    canUpdateInPlace: () =>
      vctsAllowInPlace(current, update, { recreateOnChange: o.recreateOnVctChange, inPlaceOnly: us.type === 'InPlaceOnly' }) &&
      inPlaceSpec(templateOf(current), templateOf(update)) !== undefined,
  };
}

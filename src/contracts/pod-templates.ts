import { KRUISE_GROUP } from './groups.js';

/**
 * Where each pod-template owner keeps its pod template(s), by API group and kind (`''` is the core group). Kinds not
 * listed carry no pod: the pod-level rules skip them, and pre-pull does not treat them as workloads.
 */
export const POD_TEMPLATE_PATHS: Readonly<Record<string, Readonly<Record<string, readonly (readonly string[])[]>>>> = {
  '': { Pod: [[]], ReplicationController: [['spec', 'template']], PodTemplate: [['template']] },
  apps: {
    Deployment: [['spec', 'template']],
    StatefulSet: [['spec', 'template']],
    DaemonSet: [['spec', 'template']],
    ReplicaSet: [['spec', 'template']],
  },
  batch: { Job: [['spec', 'template']], CronJob: [['spec', 'jobTemplate', 'spec', 'template']] },
  [KRUISE_GROUP]: {
    CloneSet: [['spec', 'template']],
    StatefulSet: [['spec', 'template']],
    DaemonSet: [['spec', 'template']],
    BroadcastJob: [['spec', 'template']],
    AdvancedCronJob: [
      ['spec', 'template', 'jobTemplate', 'spec', 'template'],
      ['spec', 'template', 'broadcastJobTemplate', 'spec', 'template'],
    ],
  },
};

/** A path into a JSON value: object keys and array indexes. */
export type JsonPath = Array<string | number>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The path of the first place two JSON values differ, or undefined when they are equal (absent reads as undefined). */
function firstDifference(a: unknown, b: unknown, at: JsonPath): JsonPath | undefined {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], [...at, i]);
      if (d) return d;
    }
    return undefined;
  }
  if (isRecord(a) && isRecord(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[k], b[k], [...at, k]);
      if (d) return d;
    }
    return undefined;
  }
  return a === b ? undefined : at;
}

/**
 * What an InPlaceOnly update (CloneSet `updateStrategy.type`, Advanced StatefulSet `podUpdatePolicy`) cannot carry
 * out: the first place, under the pod spec, where `now` differs from `was` other than in a container's image; undefined
 * when only images differ. Upstream's CloneSet webhook refuses such an update; the policy rule KRUISE-INPLACE-001
 * reports it against the previous output before it is applied.
 */
export function firstChangeNotInPlace(now: unknown, was: unknown): JsonPath | undefined {
  const withoutImages = (spec: unknown) => {
    const s = isRecord(spec) ? spec : {};
    const containers: unknown[] = Array.isArray(s.containers) ? s.containers : [];
    return { ...s, containers: containers.map((c): unknown => (isRecord(c) ? { ...c, image: undefined } : c)) };
  };
  return firstDifference(withoutImages(now), withoutImages(was), []);
}

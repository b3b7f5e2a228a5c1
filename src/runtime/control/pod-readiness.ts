/**
 * The KruisePodReady condition as upstream keeps it: its message is a JSON list of the reasons the pod is held not
 * ready, `{userAgent, key}` sorted by user agent then key; the condition is False while the list has a reason and
 * True once it is empty. Several units hold a pod not ready through it (the CloneSet controller for its lifecycle
 * hooks' markPodNotReady, the daemon for a ContainerRecreateRequest's unreadyGracePeriodSeconds), each adding and
 * removing only its own reasons, so one cannot release a pod another still holds.
 */
import { CONDITION_KRUISE_POD_READY } from '../../contracts/index.js';
import type { Pod, PodCondition } from '../core/types.js';

export interface NotReadyKey {
  readonly userAgent: string;
  readonly key: string;
}

/** The reasons in a KruisePodReady condition's message; a message that is not such a list holds none. */
export function parseNotReadyKeys(c: PodCondition | undefined): NotReadyKey[] {
  if (!c?.message) return [];
  try {
    const v = JSON.parse(c.message) as unknown;
    if (!Array.isArray(v)) return [];
    return v
      .filter((x): x is NotReadyKey => {
        const o = x as Partial<Record<keyof NotReadyKey, unknown>> | null;
        return typeof o === 'object' && o !== null && typeof o.userAgent === 'string' && typeof o.key === 'string';
      })
      .map((x) => ({ userAgent: x.userAgent, key: x.key }));
  } catch {
    return [];
  }
}

const byAgentThenKey = (a: NotReadyKey, b: NotReadyKey): number =>
  a.userAgent === b.userAgent ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : a.userAgent < b.userAgent ? -1 : 1;

/**
 * The pod's KruisePodReady condition after `userAgent` sets its own reasons to `keys` (the other agents' stay);
 * undefined when nothing changes. The transition time moves only when the status does.
 */
export function kruisePodReadyWithKeys(pod: Pod, userAgent: string, keys: readonly string[], now: string): PodCondition | undefined {
  const c = pod.status?.conditions?.find((x) => x.type === CONDITION_KRUISE_POD_READY);
  const before = parseNotReadyKeys(c);
  const next = [...before.filter((k) => k.userAgent !== userAgent), ...[...new Set(keys)].map((key) => ({ userAgent, key }))].sort(
    byAgentThenKey,
  );
  const status = next.length === 0 ? 'True' : 'False';
  // Written also when empty (`[]`, as upstream): a strategic merge would otherwise keep the old reasons in the message.
  const message = JSON.stringify(next);
  if (JSON.stringify([...before].sort(byAgentThenKey)) === message && c?.status === status) return undefined;
  return {
    type: CONDITION_KRUISE_POD_READY,
    status,
    message,
    lastTransitionTime: c?.status === status && c.lastTransitionTime ? c.lastTransitionTime : now,
  };
}

/** The keys `userAgent` holds the pod not ready with. */
export function notReadyKeysOf(pod: Pod, userAgent: string): string[] {
  return parseNotReadyKeys(pod.status?.conditions?.find((x) => x.type === CONDITION_KRUISE_POD_READY))
    .filter((k) => k.userAgent === userAgent)
    .map((k) => k.key);
}

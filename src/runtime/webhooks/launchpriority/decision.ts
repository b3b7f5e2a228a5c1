/**
 * Pod webhook step for container launch priority (upstream's semantics, so the same manifests behave the
 * same under upstream OpenKruise and this runtime). `apps.kruise.io/container-launch-priority: Ordered`
 * gives container i priority -i (spec order); otherwise each container's `KRUISE_CONTAINER_PRIORITY` env
 * (default 0) is its priority, and equal priorities everywhere mean nothing to do. Every container then gets
 * env `KRUISE_CONTAINER_BARRIER` from key `p_<priority>` of ConfigMap `<pod>-barrier`: the kubelet cannot
 * start a container whose key is missing, and the barrier controller adds the keys highest first.
 */
import { randomInt } from 'node:crypto';
import {
  ANNOTATION_CONTAINER_LAUNCH_PRIORITY,
  ENV_CONTAINER_BARRIER,
  ENV_CONTAINER_PRIORITY,
  LAUNCH_PRIORITY_ORDERED,
  launchBarrierConfigMapName,
  launchBarrierKey,
  parseLaunchPriority,
} from '../../../api/pod-contracts.js';
import type { Pod } from '../../core/types.js';
import type { PodMutation } from '../../core/webhook/pod-mutator.js';

/** The launch priority of each container in spec order, or undefined when the pod needs none. */
export function launchPriorities(pod: Pod): { priorities?: number[]; error?: string } {
  const containers = pod.spec?.containers ?? [];
  if (containers.length <= 1) return {};
  if (pod.metadata.annotations?.[ANNOTATION_CONTAINER_LAUNCH_PRIORITY] === LAUNCH_PRIORITY_ORDERED) {
    return { priorities: containers.map((_, i) => (i === 0 ? 0 : -i)) };
  }
  const priorities: number[] = [];
  for (const [i, c] of containers.entries()) {
    const raw = (c.env ?? []).find((e) => e.name === ENV_CONTAINER_PRIORITY)?.value;
    const parsed = parseLaunchPriority(raw);
    if (parsed.issues.length > 0) {
      return { error: `container "${c.name}" (at /spec/containers/${i}): ${parsed.issues.map((x) => x.message).join('; ')}` };
    }
    priorities.push(parsed.value ?? 0);
  }
  if (priorities.every((p) => p === priorities[0])) return {};
  return { priorities };
}

// The API server's generated-name alphabet and length, so a name we fill in looks like one it would make.
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATE_NAME_BASE = 58;

/** A name like the API server generates from `generateName`. */
export function generatePodName(generateName: string, random: (n: number) => number = randomInt): string {
  const base = generateName.length > MAX_GENERATE_NAME_BASE ? generateName.slice(0, MAX_GENERATE_NAME_BASE) : generateName;
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_ALPHABET[random(NAME_ALPHABET.length)];
  return base + suffix;
}

/** Adds the barrier env to every container (in place); fills in the pod name when only generateName is set. */
export function wireLaunchPriority(pod: Pod, random?: (n: number) => number): PodMutation {
  // Called again (reinvocation after a later webhook changed the pod): the order was decided on the first call, and
  // the barrier ConfigMap's keys with it. A container added since starts without a barrier, as an unordered one.
  if (pod.spec?.containers.some((c) => (c.env ?? []).some((e) => e.name === ENV_CONTAINER_BARRIER))) return;
  const { priorities, error } = launchPriorities(pod);
  if (error) return { deny: `container launch priority: ${error}` };
  if (!priorities) return;
  // The barrier ConfigMap is named after the pod, so the pod needs its name now.
  if (!pod.metadata.name && pod.metadata.generateName) pod.metadata.name = generatePodName(pod.metadata.generateName, random);
  const configMap = launchBarrierConfigMapName(pod.metadata.name ?? '');
  pod.spec!.containers.forEach((c, i) => {
    c.env = [
      ...(c.env ?? []),
      { name: ENV_CONTAINER_BARRIER, valueFrom: { configMapKeyRef: { name: configMap, key: launchBarrierKey(priorities[i]!) } } },
    ];
  });
}

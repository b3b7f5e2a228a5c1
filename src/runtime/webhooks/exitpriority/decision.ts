/**
 * Pod webhook step for container exit priority (cdk8s-kruise; never shipped upstream). A pod that carries
 * `kruise.io/container-exit-priority` is checked with the same checker as `validate` (a refusal carries the
 * same messages), and every container above level 0 gets a preStop `httpGet` to the node daemon on the node's
 * loopback. The container's own preStop travels inside that hook, so the daemon runs it after the wait: the
 * kubelet allows one handler per preStop, and nothing is needed inside the user's images.
 */
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS,
  MAX_CARRIED_PRESTOP_CHARS,
  checkExitPriority,
  exitPriorityPreStop,
  formatExitPriority,
  parseExitPriority,
  readExitPriorityHook,
  type ExitPriorityPod,
} from '../../../api/pod-contracts.js';
import type { V1LifecycleHandler } from '../../../api/core/k8s-core-types.js';
import { exitPrioritiesFromPatterns } from '../../../api/container-patterns.js';
import type { Pod } from '../../core/types.js';
import type { PodMutation } from '../../core/webhook/pod-mutator.js';

/** Wires the exit-priority hooks into `pod` (in place), or refuses it. `token` names the pod in the hooks. */
export function wireExitPriority(pod: Pod, namespace: string, token: string): PodMutation {
  resolveExitPriorityPatterns(pod);
  const raw = pod.metadata.annotations?.[ANNOTATION_CONTAINER_EXIT_PRIORITY];
  if (raw === undefined) return;
  const findings = checkExitPriority(pod as ExitPriorityPod);
  if (findings.length > 0) {
    return { deny: findings.map((f) => `${f.message} (at ${f.jsonPointer}). ${f.hint}`).join('; ') };
  }
  const priorities = parseExitPriority(raw).value ?? {};
  for (const container of pod.spec?.containers ?? []) {
    if ((priorities[container.name] ?? 0) <= 0) continue;
    const lifecycle = (container.lifecycle ?? {}) as { preStop?: V1LifecycleHandler; [k: string]: unknown };
    // A spec copied from a live pod already carries a hook: keep the container's own handler, not ours.
    const ours = readExitPriorityHook(lifecycle.preStop);
    const own = ours ? ours.own : lifecycle.preStop;
    if (own && JSON.stringify(own).length > MAX_CARRIED_PRESTOP_CHARS) {
      return {
        deny:
          `container "${container.name}" has exit priority ${priorities[container.name]} and a preStop hook of more than ` +
          `${MAX_CARRIED_PRESTOP_CHARS} characters, which the exit-priority hook cannot carry. Shorten the hook (e.g. run a script from the image).`,
      };
    }
    container.lifecycle = { ...lifecycle, preStop: exitPriorityPreStop({ namespace, token, container: container.name }, own) };
  }
}

/**
 * Names the containers `kruise.cdk8s.io/container-exit-priority-patterns` matches in `kruise.io/container-exit-priority`
 * (in place), for those it does not name yet: the rest of this step and the daemon then see ordinary names. Containers
 * another webhook adds after ours are reached when the API server calls ours again (reinvocationPolicy IfNeeded); the
 * names resolved on the first call stay as they are. A hostile explicit annotation is left for the checker to refuse.
 */
export function resolveExitPriorityPatterns(pod: Pod): void {
  const annotations = pod.metadata.annotations;
  if (annotations?.[ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS] === undefined) return;
  const raw = annotations[ANNOTATION_CONTAINER_EXIT_PRIORITY];
  let named: Record<string, number> = {};
  if (raw !== undefined) {
    const parsed = parseExitPriority(raw);
    if (parsed.issues.length > 0 || !parsed.value) return;
    named = { ...parsed.value };
  }
  const found = exitPrioritiesFromPatterns(annotations, pod.spec?.containers ?? [], named);
  if (Object.keys(found).length === 0) return;
  annotations[ANNOTATION_CONTAINER_EXIT_PRIORITY] = formatExitPriority({ ...named, ...found });
}

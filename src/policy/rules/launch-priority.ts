import { parseExitPriority, parseLaunchPriority, isSidecar } from '../../api/pod-contracts.js';
import { decideLaunchLowering } from '../../api/launch-lowering.js';
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  ANNOTATION_CONTAINER_LAUNCH_PRIORITY,
  ANNOTATION_LAUNCH_PRIORITY_LOWERED,
  ENV_CONTAINER_PRIORITY,
  LAUNCH_PRIORITY_ORDERED,
} from '../../contracts/keys.js';
import { arr, containers, envVar, obj, podTemplates, type PodTemplate } from '../k8s.js';
import type { Rule, RuleFinding } from '../types.js';

/** The env's value check is the API model's, so `validate`, the construct and the refusing pod webhook say the same. */
export const launchPriorityValue: Rule = {
  id: 'KRUISE-LAUNCHPRIO-001',
  severity: 'error',
  title: `${ENV_CONTAINER_PRIORITY} is not an integer within ±2147483647`,
  doc:
    `Container launch priority reads env ${ENV_CONTAINER_PRIORITY} as an integer within ±2147483647 (higher starts ` +
    'first, absent = 0; negative values are allowed). The pod webhook of both the bundled runtime and upstream ' +
    'OpenKruise refuses a pod with any other value, so its workload never creates a pod.',
  check: (manifests) => {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      for (const t of podTemplates(m)) {
        // Where the webhooks read no env (one container, or the Ordered annotation), nothing is refused.
        const cs = containers(t);
        if (cs.length <= 1 || obj(t.metadata.annotations)[ANNOTATION_CONTAINER_LAUNCH_PRIORITY] === LAUNCH_PRIORITY_ORDERED) continue;
        for (const c of cs) {
          const env = envVar(c, ENV_CONTAINER_PRIORITY);
          // Only a literal value counts (upstream reads `value`); valueFrom is left to the cluster.
          if (!env || env.value === undefined) continue;
          const raw = typeof env.value === 'string' ? env.value : JSON.stringify(env.value);
          const issue = parseLaunchPriority(raw).issues[0];
          if (!issue) continue;
          out.push({
            manifest: m,
            jsonPointer: `${c.pointer}/env/${env.index}/value`,
            message: `container "${c.name}": ${issue.message}`,
            hint: `Write a quoted integer such as "10" (higher starts first) or "-1"; or use ContainerLaunchPriority.of(workload).set(...).`,
          });
        }
      }
    }
    return out;
  },
};

const escapePointer = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');

/** The barrier priorities of a pod template as both webhooks read them, or undefined when they would do nothing. */
function barrierPriorities(t: PodTemplate): Map<string, number> | undefined {
  const cs = containers(t);
  if (cs.length <= 1) return undefined;
  if (obj(t.metadata.annotations)[ANNOTATION_CONTAINER_LAUNCH_PRIORITY] === LAUNCH_PRIORITY_ORDERED) {
    return new Map(cs.map((c, i) => [c.name, -i]));
  }
  const out = new Map<string, number>();
  for (const c of cs) {
    const env = envVar(c, ENV_CONTAINER_PRIORITY);
    const value = env && typeof env.value === 'string' ? parseLaunchPriority(env.value).value : undefined;
    out.set(c.name, value ?? 0);
  }
  const values = [...out.values()];
  return values.every((v) => v === values[0]) ? undefined : out;
}

/** Whether the barrier order of `t` would lower to native sidecars, and if not why (the compiler's own decision). */
function loweringVerdict(t: PodTemplate, priorities: Map<string, number>): string {
  const cs = containers(t);
  const exitRaw = obj(t.metadata.annotations)[ANNOTATION_CONTAINER_EXIT_PRIORITY];
  const exit = typeof exitRaw === 'string' ? (parseExitPriority(exitRaw).value ?? {}) : {};
  const policy = t.spec.restartPolicy;
  const decision = decideLaunchLowering({
    containers: cs.map((c) => c.name),
    ordered: false,
    priorities,
    mechanism: 'auto',
    strategyNative: true,
    nativeAvailable: true,
    versionText: '',
    ...(typeof policy === 'string' ? { restartPolicy: policy } : {}),
    jobSidecars: new Set(cs.filter((c) => isSidecar(c.value as Parameters<typeof isSidecar>[0])).map((c) => c.name)),
    exitPriority: new Map(Object.entries(exit).filter((e): e is [string, number] => typeof e[1] === 'number')),
  });
  if (decision.kind === 'native') {
    return (
      `On Kubernetes >= 1.29 the constructs lower this order to native sidecars (${decision.sidecars.join(', ')} first), ` +
      'with no ConfigMap: set context cdk8s-kruise:kubernetesVersion.'
    );
  }
  return decision.kind === 'barrier' ? `It does not lower to native sidecars: ${decision.reason}.` : '';
}

export const launchPriorityMechanism: Rule = {
  id: 'KRUISE-LAUNCHPRIO-002',
  severity: 'info',
  title: 'How each launch order is carried out: native sidecars or the barrier',
  doc:
    'A launch order is carried out either by native sidecars (Kubernetes >= 1.29: the containers that start first are ' +
    `restartable init containers, recorded in annotation ${ANNOTATION_LAUNCH_PRIORITY_LOWERED}; the kubelet orders the start, ` +
    "no runtime and no ConfigMap) or by upstream's barrier (the pod webhook of either runtime gives each container a key " +
    'of ConfigMap <pod>-barrier, one per pod, which the barrier controller fills highest priority first). A note per ' +
    'pod template, so the output says which one each workload got and, for a barrier, whether and why it would not lower.',
  check: (manifests) => {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      for (const t of podTemplates(m)) {
        const annotations = obj(t.metadata.annotations);
        const lowered = annotations[ANNOTATION_LAUNCH_PRIORITY_LOWERED];
        if (typeof lowered === 'string') {
          let names: unknown;
          try {
            names = JSON.parse(lowered);
          } catch {
            names = undefined;
          }
          const init = arr(t.spec.initContainers).map(obj);
          const list = Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : [];
          const missing = list.filter((n) => !init.some((c) => c.name === n && c.restartPolicy === 'Always'));
          out.push({
            manifest: m,
            jsonPointer: `${t.pointer}/metadata/annotations/${escapePointer(ANNOTATION_LAUNCH_PRIORITY_LOWERED)}`,
            message:
              missing.length > 0 || list.length === 0
                ? `the launch order was lowered to native sidecars, but ${list.length === 0 ? 'the annotation names no container' : `${missing.join(', ')} is not a restartable init container`}; the kubelet starts the containers in no declared order`
                : `launch priority compiled to native sidecars: ${list.join(', ')} start${list.length === 1 ? 's' : ''} first as restartable init container${list.length === 1 ? '' : 's'}; no <pod>-barrier ConfigMap and no pod webhook`,
            hint:
              missing.length > 0 || list.length === 0
                ? 'Regenerate the output with synth instead of editing it, or remove the annotation.'
                : 'Nothing to do. ContainerLaunchPriority.of(workload, { mechanism: LaunchMechanism.BARRIER }) keeps the barrier instead.',
          });
          continue;
        }
        const priorities = barrierPriorities(t);
        if (!priorities) continue;
        const ordered = annotations[ANNOTATION_CONTAINER_LAUNCH_PRIORITY] === LAUNCH_PRIORITY_ORDERED;
        const firstEnv = containers(t).find((c) => envVar(c, ENV_CONTAINER_PRIORITY));
        out.push({
          manifest: m,
          jsonPointer: ordered
            ? `${t.pointer}/metadata/annotations/${escapePointer(ANNOTATION_CONTAINER_LAUNCH_PRIORITY)}`
            : `${firstEnv!.pointer}/env/${envVar(firstEnv!, ENV_CONTAINER_PRIORITY)!.index}`,
          message: 'launch priority uses the barrier: one <pod>-barrier ConfigMap per pod, made by the pod webhook and its controller',
          hint: loweringVerdict(t, priorities) || 'Nothing to do.',
        });
      }
    }
    return out;
  },
};

export const launchPriorityOnInitContainer: Rule = {
  id: 'KRUISE-LAUNCHPRIO-003',
  severity: 'warning',
  title: `${ENV_CONTAINER_PRIORITY} on an init container has no effect`,
  doc:
    `Both runtimes' pod webhooks read ${ENV_CONTAINER_PRIORITY} on spec.containers only. On an init container (a native ` +
    'sidecar included) it is ignored: init containers start one at a time in declaration order, before the regular ones.',
  check: (manifests) => {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      for (const t of podTemplates(m)) {
        arr(t.spec.initContainers).forEach((raw, i) => {
          const c = obj(raw);
          const env = arr(c.env).findIndex((e) => obj(e).name === ENV_CONTAINER_PRIORITY);
          if (env < 0) return;
          out.push({
            manifest: m,
            jsonPointer: `${t.specPointer}/initContainers/${i}/env/${env}`,
            message: `init container "${String(c.name)}" sets ${ENV_CONTAINER_PRIORITY}, which no webhook reads there`,
            hint: 'Order init containers by their place in the list; remove the env var.',
          });
        });
      }
    }
    return out;
  },
};

export const LAUNCH_PRIORITY_RULES = [launchPriorityValue, launchPriorityMechanism, launchPriorityOnInitContainer];

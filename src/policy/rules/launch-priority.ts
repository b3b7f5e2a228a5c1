import { parseLaunchPriority } from '../../api/pod-contracts.js';
import { ANNOTATION_CONTAINER_LAUNCH_PRIORITY, ENV_CONTAINER_PRIORITY, LAUNCH_PRIORITY_ORDERED } from '../../contracts/keys.js';
import { containers, envVar, obj, podTemplates } from '../k8s.js';
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

export const LAUNCH_PRIORITY_RULES = [launchPriorityValue];

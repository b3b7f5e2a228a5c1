import { arr, isKind, obj } from '../k8s.js';
import type { Rule, RuleFinding } from '../types.js';

export const crrTarget: Rule = {
  id: 'KRUISE-CRR-001',
  severity: 'error',
  title: 'ContainerRecreateRequest without podName or containers',
  doc:
    'A ContainerRecreateRequest restarts named containers of one pod in place; spec.podName and a non-empty ' +
    'spec.containers (each with a name) are what it acts on. Without them the webhook rejects it, and its spec is ' +
    'immutable, so it cannot be fixed after creation.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      if (!isKind(m, 'apps.kruise.io', 'ContainerRecreateRequest')) continue;
      const spec = obj(m.object.spec);
      if (typeof spec.podName !== 'string' || spec.podName === '') {
        out.push({
          manifest: m,
          jsonPointer: '/spec/podName',
          message: 'spec.podName is missing or empty',
          hint: 'Set spec.podName to the pod (in the same namespace) whose containers should be recreated.',
        });
      }
      const cs = arr(spec.containers);
      if (cs.length === 0) {
        out.push({
          manifest: m,
          jsonPointer: '/spec/containers',
          message: 'spec.containers is missing or empty',
          hint: 'List the containers to recreate, e.g. containers: [{name: app}].',
        });
      }
      cs.forEach((c, i) => {
        const name = obj(c).name;
        if (typeof name !== 'string' || name === '') {
          out.push({
            manifest: m,
            jsonPointer: `/spec/containers/${i}`,
            message: `spec.containers[${i}] has no name`,
            hint: 'Give each entry the name of a container of the pod.',
          });
        }
      });
    }
    return out;
  },
};

export const CRR_RULES = [crrTarget];

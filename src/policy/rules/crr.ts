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

/** True when a path goes through the operations directory synth writes (`ops/`), which no sync applies. */
function inOpsDir(file: string): boolean {
  return file.split(/[\\/]/).slice(0, -1).includes(OPS_DIR_NAME);
}

/** Directory name, inside an output, of one-shot operations (what `cdk8s-kruise synth` writes them to). */
export const OPS_DIR_NAME = 'ops';

export const crrInSyncedTree: Rule = {
  id: 'KRUISE-CRR-002',
  severity: 'warning',
  title: 'ContainerRecreateRequest in a synced manifest tree',
  doc:
    'A ContainerRecreateRequest is a one-shot operation, not desired state: it runs once, finishes and is deleted by ' +
    'its TTL. In a directory Argo CD or Flux syncs it is re-created after every TTL (restarting the containers again) ' +
    'or reported as drift and pruned. cdk8s-kruise synth writes operations to ops/, which no kustomization lists; ' +
    'this warning fires for a request read from a file outside an ops/ directory. Create it with kubectl create -f ' +
    'when the restart is wanted.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      if (!isKind(m, 'apps.kruise.io', 'ContainerRecreateRequest') || !m.source || m.source.file === '<stdin>') continue;
      if (inOpsDir(m.source.file)) continue;
      out.push({
        manifest: m,
        jsonPointer: '',
        message: 'a ContainerRecreateRequest sits in a manifest tree a GitOps sync applies; every sync would re-create or prune it',
        hint: 'Move it to an ops/ directory no kustomization lists (cdk8s-kruise synth does this) and run it with kubectl create -f.',
      });
    }
    return out;
  },
};

export const CRR_RULES = [crrTarget, crrInSyncedTree];

import { toPointer } from '../locate.js';
import { isKind, isObj, obj } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';
import { firstChangeNotInPlace } from '../../contracts/pod-templates.js';

type Obj = Record<string, unknown>;

/** Whether a CloneSet or an Advanced StatefulSet updates its pods only in place (what the rule below judges). */
export function updatesOnlyInPlace(o: Obj): boolean {
  const m: Manifest = { object: o };
  const spec = obj(o.spec);
  if (isKind(m, 'apps.kruise.io', 'CloneSet')) return obj(spec.updateStrategy).type === 'InPlaceOnly';
  if (isKind(m, 'apps.kruise.io', 'StatefulSet')) return obj(obj(spec.updateStrategy).rollingUpdate).podUpdatePolicy === 'InPlaceOnly';
  return false;
}

/** The longest leading part of `path` that exists in `root` (a field removed is reported at its parent). */
function existing(root: unknown, path: ReadonlyArray<string | number>): Array<string | number> {
  const out: Array<string | number> = [];
  let node = root;
  for (const seg of path) {
    if (Array.isArray(node) && typeof seg === 'number' && seg < node.length) node = node[seg];
    else if (isObj(node) && typeof seg === 'string' && node[seg] !== undefined) node = node[seg];
    else break;
    out.push(seg);
  }
  return out;
}

export const inPlaceOnlyChange: Rule = {
  id: 'KRUISE-INPLACE-001',
  severity: 'error',
  title: 'InPlaceOnly update with a pod template change that cannot be done in place',
  doc:
    'A CloneSet with updateStrategy.type InPlaceOnly, or an Advanced StatefulSet with podUpdatePolicy InPlaceOnly, ' +
    "updates pods only in place, and an update in place changes containers' images and the pod's labels and " +
    'annotations, nothing else. Compared with the previous output (synth), any other change to the pod template ' +
    "cannot be rolled out: upstream's CloneSet webhook refuses it and the StatefulSet controller stops at every pod " +
    'with an error. Without a previous output there is nothing to compare with and the rule is silent.',
  check(manifests, ctx) {
    const previousOf = ctx.previousOf;
    if (!previousOf) return [];
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      if (!updatesOnlyInPlace(m.object)) continue;
      const before = previousOf(m.object);
      if (!before) continue;
      const now = obj(obj(obj(m.object.spec).template).spec);
      const was = obj(obj(obj(before.spec).template).spec);
      const diff = firstChangeNotInPlace(now, was);
      if (!diff) continue;
      const at = ['spec', 'template', 'spec', ...existing(now, diff)];
      out.push({
        manifest: m,
        jsonPointer: toPointer(at),
        message: `the pod template changed at ${toPointer(['spec', 'template', 'spec', ...diff])} since the previous output, which no update in place carries out (InPlaceOnly changes images and pod metadata only)`,
        hint: 'Roll out only image and metadata changes under InPlaceOnly, or set the update to InPlaceIfPossible for this change (pods that cannot update in place are recreated).',
      });
    }
    return out;
  },
};

import type { Rule } from '../types.js';
import { ANNOTATION_PRE_PULL_CHANGED_IMAGES, ANNOTATION_PRE_PULL_FOR } from '../../contracts/keys.js';
import { isPrePullJob, prePullWorkloadOf } from '../pre-pull.js';
import { quoteValue } from '../../api/quote.js';

const pointer = (key: string) => `/metadata/annotations/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** What synth emitted and why: one note per pre-pull job, so a reviewer of `dist/` sees each pull before it runs. */
export const prePullEmitted: Rule = {
  id: 'KRUISE-PREPULL-001',
  severity: 'info',
  title: 'ImagePullJob emitted to pre-pull a changed image',
  doc:
    'With pre-pull on (`ImagePrePull.enableIn` or `synth --pre-pull`), synth compares each workload with the previous ' +
    'output and, where its container images changed, emits an ImagePullJob per new image aimed at the nodes running ' +
    "the workload's pods, in a phase applied before the app (15-pre-pull.yaml, Flux pre-pull/, an Argo CD Sync hook of " +
    'wave -1). The job stays in the output until that workload\u2019s images change again, so a repeated synth writes the ' +
    'same output.',
  check(manifests) {
    return manifests
      .filter((m) => isPrePullJob(m.object))
      .map((m) => {
        const spec = (m.object.spec ?? {}) as { image?: unknown };
        const annotations = ((m.object.metadata as Record<string, unknown>).annotations ?? {}) as Record<string, unknown>;
        return {
          manifest: m,
          jsonPointer: '/spec/image',
          message: `pulls ${quoteValue(spec.image)} onto the nodes running ${String(annotations[ANNOTATION_PRE_PULL_FOR])}'s pods before the app is applied: the image is new to that workload since the previous output`,
          hint: 'Nothing to do; to stop pre-pulling, remove ImagePrePull.enableIn (or --pre-pull) and synth again.',
        };
      });
  },
};

/** An opted-in workload whose pods cannot be found: its changed images would never be pre-pulled. */
export const prePullNoSelector: Rule = {
  id: 'KRUISE-PREPULL-002',
  severity: 'warning',
  title: 'Workload opted into pre-pull has no pod selector or pod labels',
  doc:
    "Pre-pull aims each ImagePullJob at the nodes running the workload's pods through a podSelector, taken from the " +
    "workload's spec.selector or, for Jobs and CronJobs, from its pod template's labels. A workload with neither gives " +
    'no way to find its pods, so its changed images are not pre-pulled.',
  check(manifests) {
    return manifests.flatMap((m) => {
      const w = prePullWorkloadOf(m.object);
      if (!w?.optedIn || w.podSelector) return [];
      return [
        {
          manifest: m,
          jsonPointer: pointer(ANNOTATION_PRE_PULL_CHANGED_IMAGES),
          message: `${w.ref} opts into pre-pull but has neither spec.selector nor pod template labels to find its pods by`,
          hint: 'Give its pod template a label (e.g. app: <name>), or remove the pre-pull annotation from it.',
        },
      ];
    });
  },
};

export const PRE_PULL_RULES: readonly Rule[] = [prePullEmitted, prePullNoSelector];

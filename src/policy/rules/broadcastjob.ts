import { isObj, obj } from '../k8s.js';
import { neverCompletionWithDeadline } from './completion-policy.js';
import { specRuleFor } from './kind-rule.js';
import { quoteValue } from '../../api/quote.js';

/** The pod labels the BroadcastJob controller sets on every pod of a job (upstream's keys). */
const RESERVED_LABELS = ['broadcastjob-name', 'broadcastjob-controller-uid'] as const;

const rule = specRuleFor('apps.kruise.io', 'BroadcastJob');

export const broadcastJobRestartPolicy = rule(
  'KRUISE-BROADCASTJOB-001',
  'BroadcastJob pod template restartPolicy is not Never or OnFailure',
  'A BroadcastJob completes when the pod on every node has finished; a pod with restartPolicy Always (the Kubernetes ' +
    'default when unset) never finishes, so the job could never complete. Upstream rejects any restartPolicy but Never and OnFailure.',
  (_m, spec) => {
    const podSpec = obj(obj(spec.template).spec);
    const policy = podSpec.restartPolicy;
    if (policy === 'Never' || policy === 'OnFailure') return [];
    const set = policy !== undefined && policy !== null;
    return [
      {
        jsonPointer: set ? '/spec/template/spec/restartPolicy' : '/spec/template/spec',
        message: set
          ? `restartPolicy ${quoteValue(policy)} is not Never or OnFailure`
          : 'restartPolicy is unset, so it defaults to Always; a BroadcastJob pod must be Never or OnFailure',
        hint: 'Set spec.template.spec.restartPolicy to Never (one attempt per node) or OnFailure (restart the failed containers).',
      },
    ];
  },
);

export const broadcastJobNeverWithDeadline = rule(
  'KRUISE-BROADCASTJOB-002',
  'BroadcastJob completionPolicy Never with activeDeadlineSeconds or ttlSecondsAfterFinished',
  'A job with completionPolicy.type Never keeps running pods on new nodes and never finishes, so it has no deadline ' +
    'and no TTL after finishing. Upstream rejects activeDeadlineSeconds and ttlSecondsAfterFinished with Never.',
  (_m, spec) => neverCompletionWithDeadline(spec),
);

export const broadcastJobReservedLabels = rule(
  'KRUISE-BROADCASTJOB-003',
  'BroadcastJob pod template presets the labels its controller sets',
  'The controller finds the pods of a job by the labels broadcastjob-name and broadcastjob-controller-uid, which it ' +
    'sets on every pod it creates; a template that presets them could tie pods to another job. Upstream rejects them.',
  (_m, spec) => {
    const labels = obj(obj(spec.template).metadata).labels;
    if (!isObj(labels)) return [];
    return RESERVED_LABELS.filter((k) => k in labels).map((k) => ({
      jsonPointer: `/spec/template/metadata/labels/${k}`,
      message: `pod label ${k} is set by the BroadcastJob controller and may not be preset`,
      hint: `Remove the ${k} label from the pod template; select the job's pods by your own labels.`,
    }));
  },
);

export const BROADCASTJOB_RULES = [broadcastJobRestartPolicy, broadcastJobNeverWithDeadline, broadcastJobReservedLabels];

import { obj } from '../k8s.js';
import { specRuleFor } from './kind-rule.js';
import { quoteValue } from '../../api/quote.js';

const rule = specRuleFor('apps.kruise.io', 'DaemonSet');

/** A count or percentage's number (the digits of a percentage); undefined when it is neither. */
function amount(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const m = /^(\d+)%?$/.exec(v);
  return m ? Number(m[1]) : undefined;
}

export const daemonSetRestartPolicy = rule(
  'KRUISE-DAEMONSET-001',
  'Advanced DaemonSet pod template restartPolicy is not Always',
  'A daemon pod runs for as long as its node should run it; a pod that finishes (Never or OnFailure) leaves the node ' +
    'without its daemon until the controller replaces the failed pod. Upstream rejects any restartPolicy but Always.',
  (_m, spec) => {
    const policy = obj(obj(spec.template).spec).restartPolicy;
    if (policy === undefined || policy === null || policy === 'Always') return [];
    return [
      {
        jsonPointer: '/spec/template/spec/restartPolicy',
        message: `restartPolicy ${quoteValue(policy)} is not Always`,
        hint: 'Remove spec.template.spec.restartPolicy (it defaults to Always) or set it to Always.',
      },
    ];
  },
);

export const daemonSetRollingUpdateLimits = rule(
  'KRUISE-DAEMONSET-002',
  'Advanced DaemonSet rolling update that cannot proceed or surges where it cannot',
  'A rolling update replaces pods either by taking nodes unavailable (maxUnavailable) or by running the new pod beside ' +
    'the old one (maxSurge): exactly one of them must be non-zero, and an in-place update (InPlaceIfPossible) has no ' +
    'second pod to surge with. Upstream rejects the other combinations; unset, maxUnavailable defaults to 1.',
  (_m, spec) => {
    const us = obj(spec.updateStrategy);
    if (us.type === 'OnDelete' || us.rollingUpdate === undefined) return [];
    const ru = obj(us.rollingUpdate);
    const base = '/spec/updateStrategy/rollingUpdate';
    const unavailable = amount(ru.maxUnavailable);
    const surge = amount(ru.maxSurge);
    const hasUnavailable = ru.maxUnavailable !== undefined && unavailable !== 0;
    const hasSurge = ru.maxSurge !== undefined && surge !== 0;
    if (hasUnavailable && hasSurge) {
      return [
        {
          jsonPointer: `${base}/maxSurge`,
          message: `maxSurge ${quoteValue(ru.maxSurge)} is set beside maxUnavailable ${quoteValue(ru.maxUnavailable)}`,
          hint: 'Set maxUnavailable to 0 to surge, or remove maxSurge.',
        },
      ];
    }
    if (ru.maxUnavailable !== undefined && !hasUnavailable && !hasSurge) {
      return [
        {
          jsonPointer: `${base}/maxUnavailable`,
          message: 'maxUnavailable is 0 and maxSurge is 0, so the update could never start',
          hint: 'Set maxUnavailable (e.g. 1) or maxSurge above 0.',
        },
      ];
    }
    if (ru.rollingUpdateType === 'InPlaceIfPossible' && hasSurge) {
      return [
        {
          jsonPointer: `${base}/maxSurge`,
          message: 'maxSurge is set with rollingUpdateType InPlaceIfPossible, which updates the pod itself',
          hint: 'Remove maxSurge and use maxUnavailable, or use rollingUpdateType Standard to surge.',
        },
      ];
    }
    return [];
  },
);

export const DAEMONSET_RULES = [daemonSetRestartPolicy, daemonSetRollingUpdateLimits];

import { obj } from '../k8s.js';
import { specRuleFor } from './kind-rule.js';
import { quoteValue } from '../../api/quote.js';

const rule = specRuleFor('apps.kruise.io', 'StatefulSet');

export const statefulSetInPlaceGate = rule(
  'KRUISE-STATEFULSET-001',
  'Advanced StatefulSet in-place update without the InPlaceUpdateReady readiness gate',
  'An in-place update (podUpdatePolicy InPlaceIfPossible or InPlaceOnly) marks a pod not ready through the ' +
    'InPlaceUpdateReady readiness gate while its containers restart; without the gate in the pod template the pod ' +
    'would stay Ready during the restart. Upstream rejects the set.',
  (_m, spec) => {
    const ru = obj(obj(spec.updateStrategy).rollingUpdate);
    const policy = ru.podUpdatePolicy;
    if (policy !== 'InPlaceIfPossible' && policy !== 'InPlaceOnly') return [];
    const gates = obj(obj(spec.template).spec).readinessGates;
    if (Array.isArray(gates) && gates.some((g) => obj(g).conditionType === 'InPlaceUpdateReady')) return [];
    return [
      {
        jsonPointer: '/spec/updateStrategy/rollingUpdate/podUpdatePolicy',
        message: `podUpdatePolicy ${quoteValue(policy)} needs the InPlaceUpdateReady readiness gate in the pod template`,
        hint: 'Add readinessGates: [{conditionType: InPlaceUpdateReady}] to spec.template.spec (the AdvancedStatefulSet construct adds it).',
      },
    ];
  },
);

/** A count or percentage other than exactly 1. */
function aboveOne(v: unknown): boolean {
  return v !== undefined && v !== null && v !== 1;
}

export const statefulSetParallelOnly = rule(
  'KRUISE-STATEFULSET-002',
  'Advanced StatefulSet setting that only Parallel pod management allows',
  'OrderedReady creates, deletes and updates one pod at a time in ordinal order, so a maxUnavailable other than 1 ' +
    '(update or scale) and an unordered update contradict it. Upstream rejects them unless podManagementPolicy is Parallel.',
  (_m, spec) => {
    if (spec.podManagementPolicy === 'Parallel') return [];
    const ru = obj(obj(spec.updateStrategy).rollingUpdate);
    const found: Array<{ jsonPointer: string; message: string; hint: string }> = [];
    const hint = 'Set spec.podManagementPolicy to Parallel, or remove the setting.';
    if (aboveOne(ru.maxUnavailable)) {
      found.push({
        jsonPointer: '/spec/updateStrategy/rollingUpdate/maxUnavailable',
        message: `maxUnavailable ${quoteValue(ru.maxUnavailable)} needs podManagementPolicy Parallel`,
        hint,
      });
    }
    if (ru.unorderedUpdate !== undefined) {
      found.push({
        jsonPointer: '/spec/updateStrategy/rollingUpdate/unorderedUpdate',
        message: 'unorderedUpdate needs podManagementPolicy Parallel',
        hint,
      });
    }
    const scaleMax = obj(spec.scaleStrategy).maxUnavailable;
    if (aboveOne(scaleMax)) {
      found.push({
        jsonPointer: '/spec/scaleStrategy/maxUnavailable',
        message: `scaleStrategy.maxUnavailable ${quoteValue(scaleMax)} needs podManagementPolicy Parallel`,
        hint,
      });
    }
    return found;
  },
);

export const STATEFULSET_RULES = [statefulSetInPlaceGate, statefulSetParallelOnly];

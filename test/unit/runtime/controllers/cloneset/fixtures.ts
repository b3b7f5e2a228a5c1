// Inputs of the CloneSet decision tests; the pods come from the shared workload fixtures.
import type { DiffInput } from '../../../../../src/runtime/controllers/cloneset/scale-decision.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import { NEW, OLD, NOW } from '../../control/workload-pod-fixtures.js';

export { many, NEW, NOW, OLD, pod, type PodOpts } from '../../control/workload-pod-fixtures.js';

export function diffInput(pods: Pod[], o: Partial<DiffInput> = {}): DiffInput {
  return {
    replicas: 5,
    minReadySeconds: 0,
    pods,
    updateRevision: NEW,
    currentRevision: OLD,
    podsToDelete: new Set(),
    excludePreparingDelete: false,
    nowMs: NOW,
    ...o,
  };
}

import type { Rule } from '../types.js';
import { BROADCASTJOB_RULES } from './broadcastjob.js';
import { CLONESET_RULES } from './cloneset-lifecycle.js';
import { CRR_RULES } from './crr.js';
import { DAEMONSET_RULES } from './daemonset.js';
import { STATEFULSET_RULES } from './statefulset.js';
import { DELETION_PROTECTION_RULES } from './deletion-protection.js';
import { ENHANCED_LIVENESS_RULES } from './enhanced-liveness.js';
import { EXIT_PRIORITY_RULES } from './exit-priority.js';
import { FEATURE_GATE_RULES } from './feature-gates.js';
import { IMAGE_RULES } from './images.js';
import { IMAGELISTPULLJOB_RULES } from './imagelistpulljob.js';
import { IMAGEPULLJOB_RULES } from './imagepulljob.js';
import { inPlaceOnlyChange } from './inplace-only.js';
import { INPUT_RULES } from './input.js';
import { LAUNCH_PRIORITY_RULES } from './launch-priority.js';
import { PODPROBEMARKER_RULES } from './podprobemarker.js';
import { PODUNAVAILABLEBUDGET_RULES } from './podunavailablebudget.js';
import { PRE_PULL_RULES } from './pre-pull.js';
import { RUNTIME_IMAGE_RULES } from './runtime-image.js';
import { RUNTIME_SUPPORT_RULES } from './runtime-support.js';
import { SCHEMA_RULES } from './schema.js';
import { SIDECAR_TERMINATOR_RULES } from './sidecar-terminator.js';
import { SIDECARSET_RULES } from './sidecarset.js';

/** Every rule, in report order. */
export const RULES: readonly Rule[] = Object.freeze([
  ...INPUT_RULES,
  ...SCHEMA_RULES,
  ...IMAGE_RULES,
  ...SIDECAR_TERMINATOR_RULES,
  ...EXIT_PRIORITY_RULES,
  ...LAUNCH_PRIORITY_RULES,
  ...ENHANCED_LIVENESS_RULES,
  ...SIDECARSET_RULES,
  ...IMAGEPULLJOB_RULES,
  ...IMAGELISTPULLJOB_RULES,
  ...PRE_PULL_RULES,
  ...BROADCASTJOB_RULES,
  ...DAEMONSET_RULES,
  ...STATEFULSET_RULES,
  ...PODPROBEMARKER_RULES,
  ...PODUNAVAILABLEBUDGET_RULES,
  ...CLONESET_RULES,
  inPlaceOnlyChange,
  ...CRR_RULES,
  ...DELETION_PROTECTION_RULES,
  ...FEATURE_GATE_RULES,
  ...RUNTIME_SUPPORT_RULES,
  ...RUNTIME_IMAGE_RULES,
]);

const BY_ID = new Map(RULES.map((r) => [r.id, r]));

export function findRule(id: string): Rule | undefined {
  return BY_ID.get(id.toUpperCase());
}

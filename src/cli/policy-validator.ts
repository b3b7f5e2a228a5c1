import { validateManifests } from '../policy/engine.js';
import type { ObjectValidator } from '../runtime/core/controller.js';

/** The policy engine as the runtime's admission validator: the error findings of one object. */
export const policyObjectValidator: ObjectValidator = (obj) =>
  validateManifests([obj])
    .filter((f) => f.severity === 'error')
    .map((f) => ({ ruleId: f.ruleId, jsonPointer: f.jsonPointer, message: f.message, hint: f.hint }));

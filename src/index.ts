/**
 * cdk8s-kruise, the library entry point (`import ... from 'cdk8s-kruise'`): the API model and the in-process
 * policy engine. It loads no cdk8s, so checking manifests needs neither cdk8s nor constructs installed.
 *
 * - The cdk8s constructs live at `cdk8s-kruise/constructs` (they need the cdk8s, cdk8s-plus-27 and constructs peers).
 * - The cdk8s validation plugin is `cdk8s-kruise/cdk8s-plugin` (CommonJS, as cdk8s-cli loads plugins).
 *
 * @module
 */
export * from './api/index.js';
export * from './policy/index.js';
// Both modules name their result type ValidationResult; at the root, the policy engine's (validateManifests)
// keeps the name and the schema validator's (validateObject) is renamed.
export type { ValidationResult } from './policy/index.js';
export type { ValidationResult as ObjectValidationResult } from './api/index.js';
export {
  FEATURE_GATES,
  GateStage,
  gateSpec,
  prerequisitesOf,
  requiredGates,
  resolveGates,
  gatesMarkdownTable,
  type GateSpec,
  type GateRequirement,
  type ResolvedGates,
} from './install/feature-gates.js';
export { packageVersion } from './version.js';

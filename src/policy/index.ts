/**
 * The cdk8s-kruise policy engine, in process: validate rendered objects in unit tests
 * (`validateManifests(Testing.synth(chart))`), or text and files as the CLI does.
 *
 * @module
 */
export { validateManifests, validateInputs, runRules, selectRules, summarize, failing, UsageError } from './engine.js';
export type { RuleSelection, TextInput, ValidationResult, Summary } from './engine.js';
export { validateChart, errorsOf, type ConstructLike } from './chart.js';
export { RULES, findRule } from './rules/index.js';
export { parseText } from './parse.js';
export { KruiseValidation, type KruiseValidationProps, type Cdk8sValidationContext } from './cdk8s-plugin.js';
export type { Finding, Rule, RuleFinding, Manifest, Severity, ResourceRef, SourceRef } from './types.js';
export { formatSarif } from './format/sarif.js';
export { formatJson } from './format/json.js';
export { formatText } from './format/text.js';

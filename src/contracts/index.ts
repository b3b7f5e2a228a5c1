/**
 * The contract layer: every fact that more than one part of cdk8s-kruise relies on, declared once.
 * API groups and versions, resource identities, label/annotation/env keys, names of install objects and
 * webhook paths, the runtime's permission list, the feature table (gates, what each feature needs, which
 * runtime carries it out) and the shared validators.
 *
 * This folder imports nothing of ours and no library: constructs, policy, install and runtime all stand
 * on it, and an architecture test keeps it that way.
 *
 * @module
 */
export * from './groups.js';
export * from './resources.js';
export * from './pod-templates.js';
export * from './keys.js';
export * from './names.js';
export * from './permissions.js';
export * from './quantity.js';
export * from './node-options.js';
export * from './validators.js';
export * from './features.js';
export * from './defaults.js';
export * from './deletion-protection.js';

/**
 * The cdk8s-kruise API model: one TypeBox schema per kind (apps.kruise.io/v1alpha1) from which the
 * TypeScript types, the ajv validator, the CRDs and the editor JSON Schemas are all derived.
 *
 * @module
 */
export * from './common.js';
export * from './core.js';
export * from './kinds/sidecarset.js';
export * from './kinds/cloneset.js';
export * from './kinds/imagepulljob.js';
export * from './kinds/containerrecreaterequest.js';
export * from './kinds/nodeimage.js';
export * from './kinds/broadcastjob.js';
export * from './kinds/imagelistpulljob.js';
export * from './kinds/podprobemarker.js';
export * from './kinds/podunavailablebudget.js';
export * from './kinds/statefulset.js';
export * from './kinds/daemonset.js';
export * from './pod-contracts.js';
export * from './pod-contract-schemas.js';
export * from './registry.js';
export * from './validate.js';
export * from './crd.js';
export * from './sidecarset-conversion.js';
export * from './json-schema.js';
export { coreDefinitions } from './resolve.js';
export * from './crd-structural.js';

import type { ValidateFunction } from 'ajv';

/**
 * Validators compiled at build time, by kind name. In the sources this is empty and `validatorFor`
 * compiles each kind's validator on first use with `compileValidator`; the package build
 * (scripts/build-package.ts) replaces this module for the CLI with ajv standalone code of every kind from
 * `precompiledValidatorsSource` and a `compileValidator` that is never needed, so the CLI neither compiles
 * schemas nor loads the compiler (most of a one-file `validate`).
 */
export const PRECOMPILED_VALIDATORS: Readonly<Record<string, ValidateFunction>> = {};
// The core kinds' validators: compiled on first use here; in the CLI, loaded on first use from a file of their
// own (only a run that meets a core kind pays for them).
export { compileValidator, compileCoreKindValidator } from './validate-compile.js';

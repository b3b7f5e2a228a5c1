import type { ValidateFunction } from 'ajv';

/**
 * Validators compiled at build time, by kind name. In the sources this is empty and `validatorFor`
 * compiles each kind's validator on first use; the package build (scripts/build-package.ts) replaces this
 * module with ajv standalone code from `precompiledValidatorsSource`, so the published CLI and library skip
 * the compile (most of a one-file `validate`).
 */
export const PRECOMPILED_VALIDATORS: Readonly<Record<string, ValidateFunction>> = {};

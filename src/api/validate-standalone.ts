/**
 * Build-time code generation of the kind validators (ajv standalone code), used by the package build
 * to replace `precompiled-validators.ts`. Same ajv options, keywords, formats and schemas as
 * `validate.ts` compiles at run time, so both give the same issues (a unit test compares them).
 *
 * @module
 */
import standaloneCode from 'ajv/dist/standalone/index.js';
import { _ } from 'ajv';
import { KINDS } from './registry.js';
import { CORE_KINDS } from './core-kinds.js';
import { coreKindDefinitions, coreKindSchema, createValidatorAjv, validationSchema, withoutDescriptions } from './validate-compile.js';

const KIND_SCHEMA_ID = (kind: string) => `kruise-kind-${kind}`;

/**
 * An ES module exporting `PRECOMPILED_VALIDATORS` (kind name → validate function) and a `compileValidator`
 * that refuses: every kind is precompiled, so nothing may ask to compile (and the compiler is not bundled).
 */
export function precompiledValidatorsSource(): string {
  const kinds = KINDS.map((def) => def.kind);
  if (new Set(kinds).size !== kinds.length) throw new Error(`kind names must be unique to key precompiled validators: ${kinds.join(', ')}`);
  // Generated code gets the format checks from ajv-formats' own module, as the run-time instance does.
  const ajv = createValidatorAjv(
    { source: true, esm: true, optimize: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
    {},
    { describe: false },
  );
  for (const def of KINDS) ajv.addSchema({ ...withoutDescriptions(validationSchema(def)), $id: KIND_SCHEMA_ID(def.kind) });
  // ajv's standalone module is CommonJS with a default export; under NodeNext the callable sits on .default.
  type Generate = (ajv: unknown, refs: Record<string, string>) => string;
  const generate = ((standaloneCode as unknown as { default?: Generate }).default ?? standaloneCode) as Generate;
  const code = generate(ajv, Object.fromEntries(KINDS.map((def) => [`validate${def.kind}`, KIND_SCHEMA_ID(def.kind)])));
  return (
    `${code}\nexport const PRECOMPILED_VALIDATORS = { ${KINDS.map((def) => `${JSON.stringify(def.kind)}: validate${def.kind}`).join(', ')} };\n` +
    'export function compileValidator(def) {\n' +
    '  throw new Error(`cdk8s-kruise: no precompiled validator for kind ${def.kind} in this build (rebuild the package)`);\n}\n' +
    CORE_KIND_LOADER
  );
}

/** File name of the core kinds' validators, next to the CLI bundle. */
export const CORE_KIND_VALIDATORS_FILE = 'core-kind-validators.cjs';

// Loads the core kinds' validators synchronously on first use (the rules are synchronous), from the CLI's
// directory; the module may sit in a chunk one level below.
const CORE_KIND_LOADER = `
import { createRequire as __coreKindRequire } from 'node:module';
import { existsSync as __coreKindExists } from 'node:fs';
import { fileURLToPath as __coreKindPath } from 'node:url';
let coreKindValidators;
export function compileCoreKindValidator(definition) {
  if (!coreKindValidators) {
    const url = [${JSON.stringify(`./${CORE_KIND_VALIDATORS_FILE}`)}, ${JSON.stringify(`../${CORE_KIND_VALIDATORS_FILE}`)}].map((p) => new URL(p, import.meta.url)).find((u) => __coreKindExists(u));
    if (!url) throw new Error('cdk8s-kruise: ${CORE_KIND_VALIDATORS_FILE} is missing next to the CLI (rebuild the package)');
    coreKindValidators = __coreKindRequire(import.meta.url)(__coreKindPath(url));
  }
  const fn = coreKindValidators[definition];
  if (!fn) throw new Error(\`cdk8s-kruise: no precompiled validator for core kind \${definition} in this build (rebuild the package)\`);
  return fn;
}
`;

/** A CommonJS module exporting the core kinds' validators by definition name (loaded lazily by the CLI). */
export function coreKindValidatorsSource(): string {
  const names = [...new Set(Object.values(CORE_KINDS))];
  const ajv = createValidatorAjv(
    { source: true, optimize: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
    coreKindDefinitions(),
    { describe: false },
  );
  for (const name of names) ajv.addSchema({ ...coreKindSchema(name), $id: `core-kind-${name}` });
  type Generate = (ajv: unknown, refs: Record<string, string>) => string;
  const generate = ((standaloneCode as unknown as { default?: Generate }).default ?? standaloneCode) as Generate;
  return generate(ajv, Object.fromEntries(names.map((n) => [n, `core-kind-${n}`])));
}

/**
 * Compiling the kind validators with ajv: one instance holds the generated core definitions once, with our
 * options, annotation keywords and formats. `validate.ts` compiles through it on first use of a kind; the
 * package build generates standalone code with the same setup (`validate-standalone.ts`), so the published CLI
 * never loads this module.
 *
 * @module
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import coreKindsDoc from './core/k8s-core-kinds.schema.json' with { type: 'json' };
import { coreDefinitions, resolveSchema, type Json } from './resolve.js';
import type { KindDefinition } from './registry.js';

const CORE_ID = 'k8s-core';
const REF_PREFIX = `${CORE_ID}#/definitions/`;

/** Keys our schemas carry for other consumers (API server, generators); ajv must accept them. */
const ANNOTATION_KEYWORDS = [
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kruise-format',
  'x-kruise-served-in',
  'x-kruise-served-in-elsewhere',
];

// ajv-formats is CommonJS with a default export; under NodeNext the callable sits on .default.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
  formats: string[],
) => Ajv;

/**
 * A new ajv instance with our options, keywords, formats and the core definitions. `code` adds code
 * generation options (the build passes `source`/`esm` to emit standalone validators).
 */
/** Schema keywords whose values are maps of sub-schemas by name: their keys are names, never keywords. */
const SUBSCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas']);

/**
 * `schema` without its `description` keywords, which validation never reads. Generated validator code embeds the
 * schemas (verbose errors carry `parentSchema`), so the package build strips them there: most of the core kinds'
 * bytes are documentation.
 */
export function withoutDescriptions<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((s: unknown) => withoutDescriptions(s)) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    if (k === 'description' && typeof v === 'string') continue;
    out[k] =
      SUBSCHEMA_MAPS.has(k) && v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, sub]) => [name, withoutDescriptions(sub)]))
        : withoutDescriptions(v);
  }
  return out as T;
}

/**
 * The ajv instance of every validator. `describe: false` leaves the schemas' descriptions out (generated code for
 * the package; see {@link withoutDescriptions}).
 */
export function createValidatorAjv(
  code: Record<string, unknown> = {},
  extraDefinitions: Record<string, Json> = {},
  { describe = true }: { describe?: boolean } = {},
): Ajv {
  const a = new Ajv({
    allErrors: true,
    verbose: true, // errors carry parentSchema (for "did you mean") and data (for messages)
    strict: true,
    strictTypes: false,
    allowUnionTypes: true,
    // Kubernetes schemas use regexes without the unicode flag semantics; plain RegExp is faster.
    unicodeRegExp: false,
    // ajv's code optimizer makes compiling the pod-spec closure ~3-4× slower for a few percent of
    // validation speed (measured by bench/api-validate.bench.ts); a CLI run pays compile time once.
    code: { optimize: false, ...code },
  });
  a.addVocabulary(ANNOTATION_KEYWORDS);
  addFormats(a, [...VALIDATOR_FORMATS]);
  const definitions = { ...coreDefinitions(), ...extraDefinitions };
  a.addSchema({ $id: CORE_ID, definitions: describe ? definitions : withoutDescriptions(definitions) });
  return a;
}

/** The ajv-formats formats our schemas use. */
export const VALIDATOR_FORMATS = ['date-time', 'int32', 'int64', 'byte', 'double', 'float'] as const;

let ajvInstance: Ajv | undefined;
function ajv(): Ajv {
  return (ajvInstance ??= createValidatorAjv());
}

/** The plain JSON Schema our validator compiles for `def` (core types referenced via `k8s-core`). */
export function validationSchema(def: KindDefinition): Json {
  return resolveSchema(def.schema, { refPrefix: REF_PREFIX });
}

/** Compiles the validator of `def` (each call compiles anew: `validate.ts` caches). */
export function compileValidator(def: KindDefinition): ValidateFunction {
  return ajv().compile(validationSchema(def));
}

/** Definitions of the core kinds `validate` checks (those the base document lacks). */
export function coreKindDefinitions(): Record<string, Json> {
  return (coreKindsDoc as unknown as { definitions: Record<string, Json> }).definitions;
}

/** The schema of the core kind generated as `definition` (a reference into the core definitions). */
export function coreKindSchema(definition: string): Json {
  return { $ref: `${REF_PREFIX}${definition}` };
}

// A separate instance: the Kruise kinds' validators never pay for the core kinds' definitions.
let coreKindAjv: Ajv | undefined;

/** Compiles the validator of the core kind generated as `definition` (`validate.ts` caches). */
export function compileCoreKindValidator(definition: string): ValidateFunction {
  if (!coreKindDefinitions()[definition] && !coreDefinitions()[definition])
    throw new Error(`core kind definition ${definition} is not generated; add it to CORE_KINDS and regenerate`);
  return (coreKindAjv ??= createValidatorAjv({}, coreKindDefinitions())).compile(coreKindSchema(definition));
}

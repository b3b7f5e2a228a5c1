/**
 * The JSON Schemas the npm package ships (`lib/schemas/<version>/`), one file per kind the compiler models: every
 * Kruise kind of the API model and every core kind `validate` checks, from the definitions the validator compiles.
 * Named as kubeconform looks schemas up (`{{ .ResourceKind }}{{ .KindSuffix }}.json`: kind, first part of the group,
 * version, lowercased), so one `-schema-location` covers them; editors map the same files with `yaml.schemas`.
 * The kind's own fields keep their descriptions (editor hovers); the core types under `definitions` ship without
 * theirs, which are Kubernetes' API reference and most of the size (1.8 MB with them, 0.5 MB without).
 *
 * @module
 */
import { CORE_KINDS } from './core-kinds.js';
import { jsonSchemaFor, JSON_SCHEMA_DRAFT } from './json-schema.js';
import { KINDS } from './registry.js';
import { coreDefinitions, rebaseRefs, type Json } from './resolve.js';
import { coreKindDefinitions } from './validate-compile.js';

/**
 * The directory the schemas are versioned under: the OpenKruise API release the Kruise kinds are field-for-field
 * compatible with. A later release with other fields gets a directory of its own, so a pinned path keeps meaning.
 */
export const SCHEMA_SET_VERSION = 'v1.9';

/** kubeconform's file name of a kind: `cloneset-apps-v1alpha1.json`, `pod-v1.json`. */
export function schemaFileNameOf(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return `${[kind, ...(group ? [group.split('.')[0]!] : []), version].join('-').toLowerCase()}.json`;
}

/** One shipped schema: its file name, the kind it covers and the schema. */
export interface SchemaFile {
  readonly file: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly schema: Json;
}

/** Every schema the package ships, Kruise kinds first, in the registry's and the core table's order. */
export function schemaFiles(): SchemaFile[] {
  const kruise = KINDS.map((def) => {
    const apiVersion = `${def.group}/${def.version}`;
    return { file: schemaFileNameOf(apiVersion, def.kind), apiVersion, kind: def.kind, schema: withPlainDefinitions(jsonSchemaFor(def)) };
  });
  const core = Object.entries(CORE_KINDS).map(([key, definition]) => {
    const [apiVersion, kind] = key.split(' ') as [string, string];
    return {
      file: schemaFileNameOf(apiVersion, kind),
      apiVersion,
      kind,
      schema: withPlainDefinitions(coreKindJsonSchema(apiVersion, kind, definition)),
    };
  });
  return [...kruise, ...core];
}

/** A core kind's definition with the closure of the definitions it references, as one draft-07 document. */
function coreKindJsonSchema(apiVersion: string, kind: string, definition: string): Json {
  // The validator compiles the core kinds against the base definitions plus the kinds' own (validate-compile.ts).
  const all: Record<string, Json> = { ...coreDefinitions(), ...coreKindDefinitions() };
  const needed = new Set<string>();
  const visit = (name: string) => {
    if (needed.has(name)) return;
    const d = all[name];
    if (!d) throw new Error(`core definition ${name} (of ${apiVersion} ${kind}) is not generated`);
    needed.add(name);
    collectRefs(d, visit);
  };
  visit(definition);
  needed.delete(definition);
  const root = rebaseRefs(all[definition], '#/definitions/') as Json;
  const { description, ...rest } = root;
  return {
    $schema: JSON_SCHEMA_DRAFT,
    $id: `urn:cdk8s-kruise:core:${apiVersion}:${kind}`,
    title: `${kind} (${apiVersion})`,
    ...(typeof description === 'string' ? { description } : {}),
    ...rest,
    definitions: Object.fromEntries([...needed].sort().map((n) => [n, rebaseRefs(all[n], '#/definitions/')])),
  };
}

/** The schema with the descriptions under `definitions` dropped (validation is unchanged). */
function withPlainDefinitions(schema: Json): Json {
  const strip = (n: unknown): unknown =>
    Array.isArray(n)
      ? n.map(strip)
      : n !== null && typeof n === 'object'
        ? Object.fromEntries(Object.entries(n).flatMap(([k, v]) => (k === 'description' && typeof v === 'string' ? [] : [[k, strip(v)]])))
        : n;
  return { ...schema, definitions: strip(schema.definitions ?? {}) };
}

function collectRefs(node: unknown, visit: (name: string) => void): void {
  if (Array.isArray(node)) for (const n of node) collectRefs(n, visit);
  else if (node !== null && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/definitions/')) visit(v.slice('#/definitions/'.length));
      else collectRefs(v, visit);
    }
}

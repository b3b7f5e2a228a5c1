/**
 * Standalone JSON Schemas (draft-07) per kind for editors, e.g. the YAML language server:
 * `# yaml-language-server: $schema=./schemas/cloneset.json`. Same schema as the validator: closed
 * objects, so editors flag typos; core types travel along as `definitions`.
 *
 * @module
 */
import { coreClosure, coreDefinition, rebaseRefs, resolveSchema, type Json } from './resolve.js';
import type { KindDefinition } from './registry.js';

/** Draft of the exported schemas (what the YAML language server supports best). */
export const JSON_SCHEMA_DRAFT = 'http://json-schema.org/draft-07/schema#';

/** File name the `schema` command uses for a kind, e.g. `cloneset.json`. */
export function jsonSchemaFileName(def: KindDefinition): string {
  return `${def.singular}.json`;
}

/** The standalone JSON Schema of a kind. */
export function jsonSchemaFor(def: KindDefinition): Json {
  const direct = new Set<string>();
  const body = resolveSchema(def.schema, { refPrefix: '#/definitions/', onCoreRef: (n) => direct.add(n) });
  const definitions: Json = {};
  for (const name of coreClosure(direct)) definitions[name] = rebaseRefs(coreDefinition(name), '#/definitions/');
  const { description, ...rest } = body;
  return {
    $schema: JSON_SCHEMA_DRAFT,
    $id: `urn:cdk8s-kruise:${def.group}:${def.version}:${def.kind}`,
    title: `${def.kind} (${def.group}/${def.version})`,
    ...(description ? { description } : {}),
    ...rest,
    definitions,
  };
}

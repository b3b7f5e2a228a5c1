/**
 * Test helpers: validate objects against a CRD openAPIV3Schema the way the API server does (ajv on
 * the OpenAPI subset, int-or-string and nullable honoured), and list the fields the API server
 * would prune (unknown fields are not errors there; they silently disappear).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, unknown>;

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv, f: string[]) => Ajv;

/** The OpenAPI schema as JSON Schema: int-or-string → type union, nullable → null allowed. */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const n = node as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(n)) {
    if (k.startsWith('x-kubernetes-') || k === 'nullable') continue;
    if (k === 'anyOf' && n['x-kubernetes-int-or-string'] === true) continue;
    out[k] = toJsonSchema(v);
  }
  if (n['x-kubernetes-int-or-string'] === true) out.type = ['integer', 'string'];
  if (n.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  if (n.nullable === true && Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
  return out;
}

export function compileOpenApi(schema: Json): ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, logger: false });
  addFormats(ajv, ['date-time', 'int32', 'int64', 'byte', 'double', 'float']);
  return ajv.compile(toJsonSchema(schema) as Json);
}

/** JSON pointers of fields that a structural schema would prune from `obj`. */
export function prunedFields(schema: Json, obj: unknown, at = ''): string[] {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true && !schema.properties && !schema.items && !schema.additionalProperties)
    return [];
  if (Array.isArray(obj)) {
    const items = schema.items as Json | undefined;
    return items ? obj.flatMap((v, i) => prunedFields(items, v, `${at}/${i}`)) : [];
  }
  if (obj === null || typeof obj !== 'object') return [];
  // ObjectMeta is pruned by the API server's own rules, not by the CRD schema.
  if (at === '/metadata') return [];
  const props = schema.properties as Json | undefined;
  const extra = schema.additionalProperties;
  const out: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    const ptr = `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const sub = props?.[k] ?? (extra && typeof extra === 'object' ? extra : undefined);
    if (sub) out.push(...prunedFields(sub as Json, v, ptr));
    else if (schema['x-kubernetes-preserve-unknown-fields'] !== true && !(at === '' && (k === 'apiVersion' || k === 'kind'))) out.push(ptr);
  }
  return out;
}

/** Property paths of a schema (`spec.updateStrategy.maxUnavailable`, `[]` for items, `{}` for map values). */
export function propertyPaths(schema: Json, prefix = '', out = new Set<string>()): Set<string> {
  const props = schema.properties as Json | undefined;
  if (props)
    for (const [k, v] of Object.entries(props)) {
      const p = prefix ? `${prefix}.${k}` : k;
      out.add(p);
      propertyPaths(v as Json, p, out);
    }
  if (schema.items && typeof schema.items === 'object') propertyPaths(schema.items as Json, `${prefix}[]`, out);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
    propertyPaths(schema.additionalProperties as Json, `${prefix}{}`, out);
  return out;
}

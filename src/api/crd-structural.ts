/**
 * Local checks of the apiextensions.k8s.io/v1 rules for CRD schemas (structural schema, allowed
 * keys, metadata restrictions, int-or-string shape). A real API server is the final judge; these
 * checks catch the mistakes early and name the offending schema path.
 *
 * @module
 */
type Json = Record<string, unknown>;

/** Fields of apiextensions.k8s.io/v1 JSONSchemaProps we may emit. */
const ALLOWED_KEYS = new Set([
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'nullable',
  'example',
  'externalDocs',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const JUNCTORS = ['allOf', 'anyOf', 'oneOf', 'not'] as const;
const FORBIDDEN_IN_JUNCTORS = ['description', 'type', 'default', 'additionalProperties', 'nullable'];

function isIntOrStringAnyOf(v: unknown): boolean {
  return (
    Array.isArray(v) &&
    v.length === 2 &&
    JSON.stringify(v[0]) === JSON.stringify({ type: 'integer' }) &&
    JSON.stringify(v[1]) === JSON.stringify({ type: 'string' })
  );
}

/** Problems of an openAPIV3Schema, each as `<schema path>: <problem>`; empty when none found. */
export function structuralSchemaProblems(root: Json): string[] {
  const problems: string[] = [];
  const add = (path: string, msg: string) => problems.push(`${path || '<root>'}: ${msg}`);
  if (root.type !== 'object') add('', 'root type must be object');

  const visit = (node: Json, path: string, inJunctor: boolean) => {
    for (const k of Object.keys(node)) if (!ALLOWED_KEYS.has(k)) add(path, `key "${k}" is not allowed in a CRD schema`);
    const intOrString = node['x-kubernetes-int-or-string'] === true;
    const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
    if (!inJunctor) {
      if (node.type === undefined && !intOrString && !preserve) add(path, 'has no type (nor int-or-string / preserve-unknown-fields)');
      if (node.type !== undefined && (typeof node.type !== 'string' || !TYPES.has(node.type)))
        add(path, `invalid type ${JSON.stringify(node.type)}`);
      if (node.nullable !== undefined && node.type === undefined && !preserve) add(path, 'nullable without type');
    } else {
      for (const k of FORBIDDEN_IN_JUNCTORS) if (k in node) add(path, `"${k}" inside a logical junctor`);
    }
    if (intOrString) {
      if (node.type !== undefined) add(path, 'int-or-string must not set type');
      if (node.anyOf !== undefined && !isIntOrStringAnyOf(node.anyOf))
        add(path, 'int-or-string anyOf must be [{type: integer}, {type: string}]');
    }
    if (node.properties !== undefined && node.additionalProperties !== undefined)
      add(path, 'properties and additionalProperties are mutually exclusive');
    if (node.additionalProperties === false) add(path, 'additionalProperties: false is not allowed');
    if (node['x-kubernetes-preserve-unknown-fields'] === false) add(path, 'x-kubernetes-preserve-unknown-fields must be true when set');
    if (node['x-kubernetes-embedded-resource'] === true && node.type !== 'object') add(path, 'embedded resources must be objects');
    if (Array.isArray(node.enum) && typeof node.type === 'string') {
      const t = node.type;
      for (const v of node.enum) {
        const ok =
          (t === 'string' && typeof v === 'string') ||
          (t === 'integer' && Number.isInteger(v)) ||
          (t === 'number' && typeof v === 'number') ||
          (t === 'boolean' && typeof v === 'boolean');
        if (!ok) add(path, `enum value ${JSON.stringify(v)} does not match type ${t}`);
      }
    }
    if (Array.isArray(node.required) && node.properties && typeof node.properties === 'object') {
      for (const r of node.required)
        if (!(String(r) in (node.properties as Json))) add(path, `required field "${String(r)}" is not in properties`);
    }
    if (node.type === 'array' && node.items === undefined) add(path, 'arrays need items');
    if (node.properties && typeof node.properties === 'object') {
      for (const [k, v] of Object.entries(node.properties as Json)) visit(v as Json, `${path}.properties.${k}`, inJunctor);
    }
    if (node.items && typeof node.items === 'object') visit(node.items as Json, `${path}.items`, inJunctor);
    if (node.additionalProperties && typeof node.additionalProperties === 'object')
      visit(node.additionalProperties as Json, `${path}.additionalProperties`, inJunctor);
    for (const j of JUNCTORS) {
      const v = node[j];
      if (v === undefined) continue;
      if (intOrString && j === 'anyOf' && isIntOrStringAnyOf(v)) continue; // the one allowed exception
      const list = Array.isArray(v) ? v : [v];
      list.forEach((s, i) => visit(s as Json, `${path}.${j}[${i}]`, true));
    }
  };
  visit(root, '', false);

  // metadata: only name/generateName restrictions.
  const meta = (root.properties as Json | undefined)?.metadata as Json | undefined;
  if (meta) {
    const allowed = new Set(['type', 'properties', 'description']);
    for (const k of Object.keys(meta)) if (!allowed.has(k)) add('.properties.metadata', `"${k}" is not allowed on metadata`);
    for (const k of Object.keys((meta.properties as Json | undefined) ?? {}))
      if (k !== 'name' && k !== 'generateName') add('.properties.metadata', `only name and generateName may be restricted, not "${k}"`);
  }
  return problems;
}

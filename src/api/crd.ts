/**
 * CustomResourceDefinitions (apiextensions.k8s.io/v1) generated from the same TypeBox schemas the
 * validator uses.
 *
 * The openAPIV3Schema is made structural: closed objects are opened again (structural schemas forbid
 * `additionalProperties` next to `properties`; the API server prunes unknown fields instead),
 * IntOrString becomes the canonical `anyOf` + `x-kubernetes-int-or-string`, `const` becomes a
 * one-value `enum`, nullable types become `nullable: true`, and core types follow upstream:
 * `x-kubernetes-preserve-unknown-fields` for pod templates, volumeClaimTemplates and SidecarSet
 * volumes, and for SidecarSet containers the Kruise fields typed next to an unpruned core Container.
 * Core nodes marked `inline` are expanded into full structural schemas. Our ajv validator stays
 * strict everywhere (closed core types). Validator-only hints (`x-kruise-*`) are dropped.
 *
 * @module
 */
import type { TSchema } from '@sinclair/typebox';
import { SERVED_IN } from './common.js';
import { CORE_CRD_MODE, CORE_REF } from './core.js';
import { coreDefinition, type Json } from './resolve.js';
import type { KindDefinition } from './registry.js';

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';
const INT_OR_STRING = 'x-kubernetes-int-or-string';
const LOCAL_REF = '#/definitions/';

/** Keys that never reach a CRD schema. */
const DROPPED_KEYS = new Set(['$id', '$schema', '$comment', 'title', 'examples']);

function preserved(description: unknown): Json {
  return { ...(typeof description === 'string' ? { description } : {}), [PRESERVE]: true };
}

/** Structural form of one schema node (TypeBox or generated-core JSON). */
function structural(node: Json, stack: readonly string[]): Json {
  const description = node.description;

  // Core-type markers.
  const core = node[CORE_REF];
  if (typeof core === 'string') {
    if (node[CORE_CRD_MODE] === 'preserve') {
      if (!node.properties) return preserved(description);
      // Upstream's SidecarSet containers: Kruise fields typed, the embedded core Container unpruned.
      const extra = mapValues(node.properties as Json, (v) => structural(v as Json, stack));
      return { ...preserved(description), type: 'object', properties: extra };
    }
    const def = coreDefinition(core);
    if (node.properties) {
      const base = structural({ ...def, description: description ?? def.description }, [...stack, core]);
      const extra = mapValues(node.properties as Json, (v) => structural(v as Json, stack));
      return { ...base, properties: { ...(base.properties as Json), ...extra } };
    }
    return structural({ ...def, description: description ?? def.description }, [...stack, core]);
  }
  if (node[CORE_CRD_MODE] === 'preserve') return preserved(description);

  if (typeof node.$ref === 'string' && node.$ref.startsWith(LOCAL_REF)) {
    const name = node.$ref.slice(LOCAL_REF.length);
    const def = coreDefinition(name);
    const d = description ?? def.description;
    // Recursive core types (none in the pod closure today) stop at an unpruned object.
    if (stack.includes(name)) return { ...preserved(d), type: 'object' };
    return structural({ ...def, description: d }, [...stack, name]);
  }

  if (node[INT_OR_STRING] === true) {
    const out: Json = {};
    if (typeof description === 'string') out.description = description;
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
    if (typeof node.pattern === 'string') out.pattern = node.pattern;
    if (typeof node.minimum === 'number') out.minimum = node.minimum;
    out[INT_OR_STRING] = true;
    return out;
  }

  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (DROPPED_KEYS.has(k) || k.startsWith('x-kruise-')) continue;
    switch (k) {
      case 'type':
        if (Array.isArray(v)) {
          const nonNull = v.filter((t) => t !== 'null');
          if (nonNull.length !== 1) throw new Error(`cannot express type ${JSON.stringify(v)} structurally`);
          out.type = nonNull[0];
          if (nonNull.length !== v.length) out.nullable = true;
        } else out.type = v;
        break;
      case 'const':
        out.enum = [v];
        break;
      case 'properties':
        out.properties = mapValues(v as Json, (p) => structural(p as Json, stack));
        break;
      case 'items':
        out.items = structural(v as Json, stack);
        break;
      case 'additionalProperties':
        if (v !== null && typeof v === 'object') out.additionalProperties = structural(v as Json, stack);
        break; // `false` (closed object) is the validator's business
      case 'patternProperties': {
        const values = Object.values(v as Json);
        if (values.length !== 1) throw new Error('only single-pattern records are supported');
        out.additionalProperties = structural(values[0] as Json, stack);
        break;
      }
      case 'anyOf':
      case 'oneOf':
      case 'allOf':
        throw new Error(`${k} outside int-or-string is not structural; model it differently`);
      default:
        out[k] = v;
    }
  }
  // Closed object whose fields are all optional and unknown: keep the object type.
  if (out.type === undefined && out.properties) out.type = 'object';
  if (out.properties && out.additionalProperties) delete out.additionalProperties;
  return out;
}

function mapValues(o: Json, f: (v: unknown) => Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(o)) out[k] = f(v);
  return out;
}

/**
 * The schema as served at `version`: every field marked {@link SERVED_IN} for other versions left out (and out of
 * `required`). Nodes without such a field below them are returned as they are.
 */
export function schemaAtVersion(node: Json, version: string): Json {
  let changed = false;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    let next: unknown = v;
    if (k === 'properties' && v && typeof v === 'object') {
      const props: Json = {};
      for (const [name, p] of Object.entries(v as Json)) {
        const served = (p as Json)[SERVED_IN];
        if (Array.isArray(served) && !served.includes(version)) {
          changed = true;
          continue;
        }
        const q = schemaAtVersion(p as Json, version);
        if (q !== p) changed = true;
        props[name] = q;
      }
      next = props;
    } else if (Array.isArray(v)) {
      const items = (v as unknown[]).map((x) =>
        x && typeof x === 'object' && !Array.isArray(x) ? schemaAtVersion(x as Json, version) : x,
      );
      if (items.some((x, i) => x !== v[i])) {
        changed = true;
        next = items;
      }
    } else if (v && typeof v === 'object') {
      const q = schemaAtVersion(v as Json, version);
      if (q !== v) {
        changed = true;
        next = q;
      }
    }
    out[k] = next;
  }
  if (!changed) return node;
  if (Array.isArray(out.required) && out.properties) {
    const props = out.properties as Json;
    out.required = (out.required as string[]).filter((r) => r in props);
  }
  return out;
}

/** The structural openAPIV3Schema of a kind, as served at `version` (default: the model's version). */
export function openApiV3Schema(def: KindDefinition, version: string = def.version): Json {
  const whole = schemaAtVersion(def.schema as TSchema as unknown as Json, version);
  const { metadata: _metadata, ...withoutMetadata } = whole.properties as Json;
  const root = structural({ ...whole, properties: withoutMetadata }, []);
  const props = { ...(root.properties as Json) };
  props.apiVersion = {
    description: 'APIVersion defines the versioned schema of this representation of an object.',
    type: 'string',
  };
  props.kind = { description: 'Kind is a string value representing the REST resource this object represents.', type: 'string' };
  // The API server owns metadata validation; a CRD may only restrict name/generateName here.
  props.metadata = { type: 'object' };
  const { required: _required, ...rest } = root;
  return { ...rest, type: 'object', properties: props };
}

/** Options of {@link toCustomResourceDefinition}. */
export interface CrdOptions {
  /** Extra labels on the CRD object. */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * The webhook Service converting a kind marked `conversionWebhook` (the install's); without it such a CRD says
   * conversion None, which only relabels objects and prunes the fields the target version lacks.
   */
  readonly conversionService?: { readonly name: string; readonly namespace: string; readonly path: string; readonly port?: number };
  /** Extra annotations on the CRD object. */
  readonly annotations?: Readonly<Record<string, string>>;
}

/** The apiextensions.k8s.io/v1 CustomResourceDefinition of a kind (its storage version and any also served). */
export function toCustomResourceDefinition(def: KindDefinition, options: CrdOptions = {}): Json {
  const metadata: Json = { name: `${def.plural}.${def.group}` };
  if (options.labels && Object.keys(options.labels).length) metadata.labels = { ...options.labels };
  if (options.annotations && Object.keys(options.annotations).length) metadata.annotations = { ...options.annotations };
  const names: Json = { kind: def.kind, listKind: def.listKind, plural: def.plural, singular: def.singular };
  if (def.shortNames?.length) names.shortNames = [...def.shortNames];
  if (def.categories?.length) names.categories = [...def.categories];
  const subresources: Json = {};
  if (def.subresources.status) subresources.status = {};
  if (def.subresources.scale) subresources.scale = { ...def.subresources.scale };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata,
    spec: {
      group: def.group,
      names,
      scope: def.scope,
      // The model version first, then the other versions upstream serves, each with the fields it has (conversion
      // None: the API server only rewrites apiVersion and prunes what the target version lacks); the storage version
      // is the model's unless upstream stores one of the others.
      versions: [def.version, ...(def.alsoServed ?? [])].map((name) => {
        const columns = def.printerColumns.filter((c) => !c.servedIn || c.servedIn.includes(name)).map(({ servedIn: _s, ...c }) => c);
        return {
          name,
          served: true,
          storage: name === (def.storageVersion ?? def.version),
          ...(columns.length ? { additionalPrinterColumns: columns } : {}),
          schema: { openAPIV3Schema: openApiV3Schema(def, name) },
          subresources,
        };
      }),
      ...(def.conversionWebhook && options.conversionService
        ? {
            conversion: {
              strategy: 'Webhook',
              // caBundle is left out like the webhook configurations': the runtime or cert-manager's CA injector fills it.
              webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { port: 443, ...options.conversionService } } },
            },
          }
        : {}),
    },
  };
}

/**
 * Turns a kind's TypeBox schema into plain JSON Schema with the core-type markers resolved against
 * the generated core definitions. Shared by the validator, the JSON-schema exporter and the CRD
 * generator so the three cannot drift.
 *
 * @module
 */
import type { TSchema } from '@sinclair/typebox';
import coreDoc from './core/k8s-core.schema.json' with { type: 'json' };
import { CORE_CRD_MODE, CORE_REF } from './core.js';

/** A plain JSON Schema node. */
export type Json = Record<string, unknown>;

const CORE_DEFS = (coreDoc as unknown as { definitions: Record<string, Json> }).definitions;

/** The generated core definitions, keyed by client-node model name (read-only). */
export function coreDefinitions(): Readonly<Record<string, Json>> {
  return CORE_DEFS;
}

/** The core definition `name`; throws for names that were not generated. */
export function coreDefinition(name: string): Json {
  const d = CORE_DEFS[name];
  if (!d) throw new Error(`core definition ${name} is not in k8s-core.schema.json; add its root to CORE_ROOTS and regenerate`);
  return d;
}

const LOCAL_REF = '#/definitions/';

/** Rewrites `#/definitions/X` refs inside a core definition to `${prefix}X`. */
export function rebaseRefs(node: unknown, prefix: string): unknown {
  if (Array.isArray(node)) return node.map((n) => rebaseRefs(n, prefix));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith(LOCAL_REF) ? prefix + v.slice(LOCAL_REF.length) : rebaseRefs(v, prefix);
  }
  return out;
}

/** Options of {@link resolveSchema}. */
export interface ResolveOptions {
  /** Prefix that replaces `#/definitions/` in refs to core definitions, e.g. `k8s-core#/definitions/`. */
  readonly refPrefix: string;
  /** Called with every core definition name the output references directly. */
  readonly onCoreRef?: (name: string) => void;
}

/**
 * Plain JSON Schema of a TypeBox schema: TypeBox symbols dropped, core markers replaced by `$ref`s
 * (or, for CoreExtend nodes, by the merged closed object). `x-kruise-crd` hints are dropped; other
 * `x-` keys are kept for the caller to use or strip.
 */
export function resolveSchema(schema: TSchema | Json, options: ResolveOptions): Json {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const n = node as Json;
    const core = n[CORE_REF];
    if (typeof core === 'string') {
      options.onCoreRef?.(core);
      const def = coreDefinition(core);
      const description = n.description ?? def.description;
      if (n.properties) {
        // CoreExtend: core properties + extra ones, one closed object.
        const extra = walk(n.properties) as Json;
        const baseProps = rebaseRefs(def.properties, options.refPrefix) as Json;
        for (const v of Object.values(baseProps)) collectRefs(v, options);
        return {
          ...(description ? { description } : {}),
          type: 'object',
          properties: { ...baseProps, ...extra },
          ...(def.required ? { required: def.required } : {}),
          additionalProperties: false,
        };
      }
      return { ...(description ? { description } : {}), $ref: options.refPrefix + core };
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(n)) {
      if (k === CORE_CRD_MODE) continue;
      // TypeBox spells string-keyed records as patternProperties "^(.*)$"; additionalProperties is
      // the same constraint, faster in ajv and the only form structural CRD schemas allow.
      if (k === 'patternProperties' && isAnyKeyRecord(v)) {
        out.additionalProperties = walk((v as Json)[ANY_KEY]);
        continue;
      }
      out[k] = walk(v);
    }
    return out;
  };
  return walk(schema) as Json;
}

const ANY_KEY = '^(.*)$';
function isAnyKeyRecord(v: unknown): boolean {
  return v !== null && typeof v === 'object' && Object.keys(v).length === 1 && ANY_KEY in v;
}

function collectRefs(node: unknown, options: ResolveOptions): void {
  if (!options.onCoreRef || node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) collectRefs(n, options);
    return;
  }
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith(options.refPrefix)) options.onCoreRef(v.slice(options.refPrefix.length));
    else collectRefs(v, options);
  }
}

/** Names of all core definitions reachable from `names` (transitive closure, sorted). */
export function coreClosure(names: Iterable<string>): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const stack: unknown[] = [coreDefinition(name)];
    while (stack.length) {
      const n = stack.pop();
      if (n === null || typeof n !== 'object') continue;
      if (Array.isArray(n)) {
        stack.push(...(n as unknown[]));
        continue;
      }
      for (const [k, v] of Object.entries(n)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith(LOCAL_REF)) visit(v.slice(LOCAL_REF.length));
        else stack.push(v);
      }
    }
  };
  for (const n of names) visit(n);
  return [...seen].sort();
}

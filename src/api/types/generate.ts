/**
 * Generates `generated.ts`: TypeScript interfaces for every kind, with each schema `description` as
 * the field's TSDoc, so editors show the same documentation the CRD and the JSON Schemas carry.
 * TypeBox's `Static` types are structurally right but carry no per-field docs; these interfaces are
 * derived from the same schemas, and a unit test type-checks that both are mutually assignable and
 * that the committed file is what this generator produces.
 *
 * Run `npx tsx src/api/types/generate.ts` after changing a schema.
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as common from '../common.js';
import { CORE_REF } from '../core.js';
import * as cloneset from '../kinds/cloneset.js';
import * as crr from '../kinds/containerrecreaterequest.js';
import * as imagepulljob from '../kinds/imagepulljob.js';
import * as nodeimage from '../kinds/nodeimage.js';
import * as broadcastjob from '../kinds/broadcastjob.js';
import * as imagelistpulljob from '../kinds/imagelistpulljob.js';
import * as podprobemarker from '../kinds/podprobemarker.js';
import * as podunavailablebudget from '../kinds/podunavailablebudget.js';
import * as daemonset from '../kinds/daemonset.js';
import * as sidecarset from '../kinds/sidecarset.js';

type Json = Record<string, unknown>;

/** Modules whose `*Schema` exports become named interfaces, in output order. */
const MODULES: readonly (readonly [string, Record<string, unknown>])[] = [
  ['common', common],
  ['sidecarset', sidecarset],
  ['cloneset', cloneset],
  ['imagepulljob', imagepulljob],
  ['containerrecreaterequest', crr],
  ['nodeimage', nodeimage],
  ['broadcastjob', broadcastjob],
  ['imagelistpulljob', imagelistpulljob],
  ['podprobemarker', podprobemarker],
  ['podunavailablebudget', podunavailablebudget],
  ['daemonset', daemonset],
];

/** Canonical structure of a schema node, ignoring its own description (same shape = same type). */
function shapeKey(node: Json): string {
  const { description: _d, ...rest } = node;
  return JSON.stringify(rest, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function docComment(text: unknown, indent: string): string {
  if (typeof text !== 'string' || !text) return '';
  const lines = text.replace(/\*\//g, '*\\/').split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ' ' + l : ''}`).join('\n')}\n${indent} */\n`;
}

export function generateTypes(): string {
  const named = new Map<string, string>(); // shapeKey → interface name
  const order: { name: string; schema: Json }[] = [];
  for (const [, mod] of MODULES) {
    // Sorted: module namespace key order differs between loaders (Node sorts, vite keeps source order).
    for (const [exportName, value] of Object.entries(mod).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (!exportName.endsWith('Schema') || !value || typeof value !== 'object') continue;
      const s = value as Json;
      if (s.type !== 'object' || !(s.properties || typeof s[CORE_REF] === 'string')) continue;
      const name = exportName.slice(0, -'Schema'.length);
      const key = shapeKey(s);
      if (named.has(key)) continue;
      named.set(key, name);
      order.push({ name, schema: s });
    }
  }
  const coreImports = new Set<string>();

  const typeOf = (node: Json, indent: string, self?: string): string => {
    const ref = named.get(shapeKey(node));
    if (ref && ref !== self) return ref;
    const core = node[CORE_REF];
    if (typeof core === 'string') {
      coreImports.add(core);
      return node.properties ? `${core} & ${objectLiteral(node, indent)}` : core;
    }
    if ('const' in node) return JSON.stringify(node.const);
    if (Array.isArray(node.enum)) return node.enum.map((v) => JSON.stringify(v)).join(' | ');
    if (node['x-kubernetes-int-or-string'] === true) return 'number | string';
    if (node['x-kubernetes-preserve-unknown-fields'] === true && !node.properties) return 'Record<string, unknown>';
    const t = node.type;
    if (Array.isArray(t)) return t.map((x) => scalar(String(x))).join(' | ');
    switch (t) {
      case 'array': {
        const item = typeOf(node.items as Json, indent);
        return /[|&]/.test(item) && !item.startsWith('{') ? `Array<${item}>` : `${item}[]`;
      }
      case 'object': {
        const pp = node.patternProperties as Json | undefined;
        if (pp) return `Record<string, ${typeOf(Object.values(pp)[0] as Json, indent)}>`;
        if (node.additionalProperties && typeof node.additionalProperties === 'object')
          return `Record<string, ${typeOf(node.additionalProperties as Json, indent)}>`;
        return node.properties ? objectLiteral(node, indent) : 'Record<string, unknown>';
      }
      default:
        return scalar(String(t));
    }
  };

  const scalar = (t: string): string =>
    t === 'integer' || t === 'number'
      ? 'number'
      : t === 'null'
        ? 'null'
        : t === 'boolean'
          ? 'boolean'
          : t === 'string'
            ? 'string'
            : 'unknown';

  const members = (node: Json, indent: string): string => {
    const required = new Set((node.required as string[] | undefined) ?? []);
    let out = '';
    for (const [k, v] of Object.entries((node.properties as Json | undefined) ?? {})) {
      const p = v as Json;
      const key = IDENT.test(k) ? k : JSON.stringify(k);
      out += docComment(p.description, indent);
      out += `${indent}${key}${required.has(k) ? '' : '?'}: ${typeOf(p, indent)};\n`;
    }
    return out;
  };

  const objectLiteral = (node: Json, indent: string): string => `{\n${members(node, indent + '  ')}${indent}}`;

  let body = '';
  for (const { name, schema } of order) {
    body += '\n' + docComment(schema.description, '');
    const core = schema[CORE_REF];
    if (typeof core === 'string') {
      coreImports.add(core);
      body += `export interface ${name} extends ${core} {\n${members(schema, '  ')}}\n`;
    } else {
      body += `export interface ${name} {\n${members(schema, '  ')}}\n`;
    }
  }
  const header =
    '// Generated by src/api/types/generate.ts from the TypeBox schemas in src/api. Do not edit.\n' +
    '// Field docs are the schema descriptions (the same text the CRDs and JSON Schemas carry).\n' +
    '/* eslint-disable */\n' +
    (coreImports.size ? `import type { ${[...coreImports].sort().join(', ')} } from '../core/k8s-core-types.js';\n` : '');
  return header + body;
}

export const TYPES_FILE = join(dirname(fileURLToPath(import.meta.url)), 'generated.ts');

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(TYPES_FILE, generateTypes());
  process.stdout.write(`wrote ${TYPES_FILE}\n`);
}

// kubeconform, the validator teams run on cdk8s output, as a peer of `cdk8s-kruise validate`: the binary
// (built from Go modules by test/prepare.d/25-kubeconform.sh) and the JSON Schemas it validates against,
// generated offline the way kubeconform's users generate them with openapi2jsonschema (`--kubernetes --expanded
// --stand-alone --strict`): core kinds from an API server's OpenAPI v2 document, custom kinds from CRD files.
//
//   const dir = writeKubeconformSchemas(outDir, { openapi: await fetchOpenApiV2(kubectl, kubeconfig), crds });
//   const report = runKubeconform(findKubeconform(), dir, [file]);
//
// File names follow kubeconform's `{{ .ResourceKind }}{{ .KindSuffix }}.json` (kind lowercased, then `-<first
// part of the group>` when there is a group, then `-<version>`), so one -schema-location covers every kind.
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import { projectCacheDir } from './cache.js';

/** The kubeconform release the prepare step builds (test/prepare.d/25-kubeconform.sh reads it from here). */
export const KUBECONFORM_VERSION = 'v0.7.0';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Schema = { [k: string]: Json };

/** Where the prepare step puts kubeconform: KUBECONFORM, else the build cache (same rule as the script). */
export function kubeconformPath(): string {
  if (process.env.KUBECONFORM) return process.env.KUBECONFORM;
  return projectCacheDir('kubeconform', KUBECONFORM_VERSION, 'kubeconform');
}

/** Where generated schemas are cached, one directory per `key` (e.g. the Kubernetes and Kruise versions). */
export function kubeconformSchemaCacheDir(key: string): string {
  return projectCacheDir('kubeconform', 'schemas', key);
}

/** The prepared kubeconform binary; throws with the command that prepares it when it is missing. */
export function findKubeconform(): string {
  const bin = kubeconformPath();
  try {
    accessSync(bin, constants.X_OK);
  } catch {
    throw new Error(
      `kubeconform ${KUBECONFORM_VERSION} is not prepared at ${bin}: run \`bash test/prepare.sh\` ` +
        '(or `bash test/prepare.d/25-kubeconform.sh`), or set KUBECONFORM to a kubeconform binary.',
    );
  }
  return bin;
}

/** The API server's OpenAPI v2 document, read with kubectl (`get --raw /openapi/v2`). */
export function fetchOpenApiV2(kubectl: string, kubeconfig: string): Schema {
  const text = execFileSync(kubectl, ['--kubeconfig', kubeconfig, 'get', '--raw', '/openapi/v2'], {
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
  });
  return JSON.parse(text) as Schema;
}

/** kubeconform's KindSuffix file name of a kind: `deployment-apps-v1.json`, `configmap-v1.json`. */
export function schemaFileName(kind: string, group: string, version: string): string {
  return `${[kind, ...(group ? [group.split('.')[0]!] : []), version].join('-').toLowerCase()}.json`;
}

const isObject = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The openapi2jsonschema rewrites of one (already expanded) schema node, applied depth first:
 * `format: int-or-string` (and CRDs' `x-kubernetes-int-or-string`) becomes `oneOf` string/integer; strict: an
 * object with `properties` and no `additionalProperties` gets `additionalProperties: false`; Kubernetes: an
 * optional property with a single type also accepts null.
 */
function rewrite(node: Json, opts: { strict: boolean; nullableOptional: boolean }): Json {
  if (Array.isArray(node)) return node.map((n) => rewrite(n, opts));
  if (!isObject(node)) return node;
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === 'properties' || k === 'enum' || k === 'example' ? v : rewrite(v, opts);
  if (out.format === 'int-or-string' || out['x-kubernetes-int-or-string'] === true) {
    delete out.type;
    delete out.format;
    out.oneOf = [{ type: 'string' }, { type: 'integer' }];
  }
  if (isObject(out.properties)) {
    const required = new Set(Array.isArray(out.required) ? out.required : []);
    const props: Schema = {};
    for (const [name, sub] of Object.entries(out.properties)) {
      const p = rewrite(sub, opts);
      if (opts.nullableOptional && isObject(p) && typeof p.type === 'string' && !required.has(name)) p.type = [p.type, 'null'];
      props[name] = p;
    }
    out.properties = props;
    if (opts.strict && !('additionalProperties' in out) && out['x-kubernetes-preserve-unknown-fields'] !== true) {
      out.additionalProperties = false;
    }
  }
  return out;
}

/** Replaces every `$ref: #/definitions/<name>` by a copy of that definition; a reference cycle becomes `{}`. */
function expand(node: Json, definitions: Schema, stack: readonly string[]): Json {
  if (Array.isArray(node)) return node.map((n) => expand(n, definitions, stack));
  if (!isObject(node)) return node;
  const ref = node.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/definitions/')) {
    const name = ref.slice('#/definitions/'.length);
    if (stack.includes(name) || !isObject(definitions[name])) return {};
    const { $ref: _ref, ...rest } = node;
    return { ...(expand(definitions[name], definitions, [...stack, name]) as Schema), ...rest };
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) out[k] = expand(v, definitions, stack);
  return out;
}

/** One standalone strict schema per group/version/kind the OpenAPI v2 document defines. */
export function openApiV2ToJsonSchemas(openapi: Schema): Map<string, Schema> {
  const definitions = isObject(openapi.definitions) ? openapi.definitions : {};
  const out = new Map<string, Schema>();
  for (const [name, def] of Object.entries(definitions)) {
    if (!isObject(def) || !Array.isArray(def['x-kubernetes-group-version-kind'])) continue;
    const schema = rewrite(expand(def, definitions, [name]), { strict: true, nullableOptional: true }) as Schema;
    for (const gvk of def['x-kubernetes-group-version-kind']) {
      if (!isObject(gvk) || typeof gvk.kind !== 'string' || typeof gvk.version !== 'string') continue;
      out.set(schemaFileName(gvk.kind, typeof gvk.group === 'string' ? gvk.group : '', gvk.version), schema);
    }
  }
  return out;
}

/** One strict schema per served version of each CustomResourceDefinition in the YAML text. */
export function crdToJsonSchemas(yamlText: string): Map<string, Schema> {
  const out = new Map<string, Schema>();
  for (const doc of loadAll(yamlText)) {
    if (!isObject(doc) || doc.kind !== 'CustomResourceDefinition' || !isObject(doc.spec)) continue;
    const spec = doc.spec;
    const group = typeof spec.group === 'string' ? spec.group : '';
    const kind = isObject(spec.names) && typeof spec.names.kind === 'string' ? spec.names.kind : '';
    for (const v of Array.isArray(spec.versions) ? spec.versions : []) {
      if (!isObject(v) || typeof v.name !== 'string' || !isObject(v.schema) || !isObject(v.schema.openAPIV3Schema)) continue;
      const schema = rewrite(v.schema.openAPIV3Schema, { strict: true, nullableOptional: false }) as Schema;
      // As openapi2jsonschema does for CRDs: the root stays open (apiVersion, kind and metadata are often undeclared).
      delete schema.additionalProperties;
      out.set(schemaFileName(kind, group, v.name), schema);
    }
  }
  return out;
}

/**
 * Writes the schemas into `dir` (replaced as a whole: written beside it, then renamed) and returns `dir`.
 * Custom kinds win over a core kind of the same file name.
 */
export function writeKubeconformSchemas(dir: string, sources: { openapi?: Schema; crdFiles?: readonly string[] }): string {
  const all = sources.openapi ? openApiV2ToJsonSchemas(sources.openapi) : new Map<string, Schema>();
  for (const file of sources.crdFiles ?? []) for (const [name, s] of crdToJsonSchemas(readFileSync(file, 'utf8'))) all.set(name, s);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  for (const [name, schema] of all) writeFileSync(path.join(tmp, name), JSON.stringify(schema));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.dirname(dir), { recursive: true });
  renameSync(tmp, dir);
  return dir;
}

/** The CRD files of a directory, sorted. */
export function crdFilesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => path.join(dir, f));
}

/** kubeconform's arguments to validate strictly against the schemas in `schemaDir` (no network: no default location). */
export function kubeconformArgs(schemaDir: string): string[] {
  return ['-strict', '-schema-location', path.join(schemaDir, '{{ .ResourceKind }}{{ .KindSuffix }}.json')];
}

/** One resource kubeconform did not find valid, from its `-output json` report. */
export interface KubeconformResource {
  readonly filename: string;
  readonly kind: string;
  readonly name: string;
  readonly version: string;
  readonly status: string;
  readonly msg: string;
  readonly validationErrors?: ReadonlyArray<{ readonly path: string; readonly msg: string }>;
}

/** Runs kubeconform with JSON output over `files`; returns the resources it reports (every one not valid). */
export function runKubeconform(bin: string, schemaDir: string, files: readonly string[]): KubeconformResource[] {
  const r = spawnSync(bin, [...kubeconformArgs(schemaDir), '-output', 'json', ...files], { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
  if (r.status !== 0 && r.status !== 1) throw new Error(`kubeconform exited ${r.status}: ${r.stderr.slice(0, 2000)}`);
  return (JSON.parse(r.stdout) as { resources: KubeconformResource[] }).resources;
}

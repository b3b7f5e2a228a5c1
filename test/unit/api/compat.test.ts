/**
 * Compatibility with upstream OpenKruise: every apps.kruise.io object we emit (dist/) and a set of
 * representative objects validate against the upstream CRDs' v1alpha1 schemas (upstream's CRDs of the pinned
 * version, which test/prepare.d/05-upstream-crds.sh copies out of the Go module) without a field being pruned, and our generated CRD schemas
 * accept the same objects. Also: our schemas know every field upstream v1alpha1 has.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { KINDS, findKind, openApiV3Schema, validateObject, type KindDefinition } from '../../../src/api/index.js';
import { SAMPLES } from './samples.js';
import { preparedUpstreamCrdDir, upstreamCrd } from '../../harness/upstream-crds.js';
import { compileOpenApi, propertyPaths, prunedFields } from './openapi.js';

type Json = Record<string, any>;
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Status fields only the bundled runtime writes, with our CRDs (upstream CRDs would prune them, which only
 * loses the diagnostic): the SidecarSet RolloutStuck condition.
 */
const RUNTIME_ONLY_STATUS = ['status.conditions'];

function upstreamV1alpha1(def: KindDefinition): Json {
  const v = upstreamCrd(def.group, def.plural).spec.versions.find((x: Json) => x.name === def.version);
  if (!v) throw new Error(`upstream ${def.plural} has no ${def.version}`);
  return v;
}

/** Every apps.kruise.io object in dist/ plus the representative samples. */
function objectsUnderTest(): { source: string; obj: Json }[] {
  const out: { source: string; obj: Json }[] = [];
  const distDir = resolve(repoRoot, 'dist');
  if (existsSync(distDir)) {
    // Recursive: one-shot operations (ops/) are emitted too.
    for (const f of readdirSync(distDir, { recursive: true })
      .map(String)
      .filter((n) => /\.ya?ml$/.test(n))
      .sort()) {
      parseAllDocuments(readFileSync(resolve(distDir, f), 'utf8')).forEach((d, i) => {
        const obj = d.toJS() as Json | null;
        if (obj && typeof obj.apiVersion === 'string' && obj.apiVersion.startsWith('apps.kruise.io/'))
          out.push({ source: `dist/${f}#${i}`, obj });
      });
    }
  }
  for (const [kind, make] of Object.entries(SAMPLES)) out.push({ source: `sample ${kind}`, obj: make() as Json });
  return out;
}

const objects = objectsUnderTest();

describe('upstream reference data', () => {
  it('is prepared (test/prepare.d/05-upstream-crds.sh)', () => {
    expect(existsSync(preparedUpstreamCrdDir())).toBe(true);
  });
});

describe("objects validate against upstream's and our CRD schemas of their own version", () => {
  it('covers every kind', () => {
    const kinds = new Set(objects.map((o) => o.obj.kind));
    for (const k of KINDS) expect(kinds.has(k.kind)).toBe(true);
  });

  // By kind and version: an object written at v1beta1 (an Advanced StatefulSet's lifecycle) is upstream's v1beta1.
  const upstreamValidators = new Map<string, ReturnType<typeof compileOpenApi>>();
  const ourValidators = new Map<string, ReturnType<typeof compileOpenApi>>();

  for (const { source, obj } of objects) {
    it(`${source}: ${obj.kind}/${obj.metadata?.name}`, () => {
      const def = findKind(obj.apiVersion, obj.kind);
      expect(def, `${obj.apiVersion} ${obj.kind} is not modelled`).toBeDefined();
      const d = def!;
      expect(validateObject(obj).issues).toEqual([]);

      const version = String(obj.apiVersion).split('/')[1]!;
      const key = `${d.kind}/${version}`;
      const upstream = upstreamAt(d, version);
      if (!upstreamValidators.has(key)) upstreamValidators.set(key, compileOpenApi(upstream));
      const up = upstreamValidators.get(key)!;
      expect(up(obj), JSON.stringify(up.errors)).toBe(true);
      expect(prunedFields(upstream, obj), 'fields upstream would prune').toEqual([]);

      const ours = openApiV3Schema(d, version) as Json;
      if (!ourValidators.has(key)) ourValidators.set(key, compileOpenApi(ours));
      const our = ourValidators.get(key)!;
      expect(our(obj), JSON.stringify(our.errors)).toBe(true);
      expect(prunedFields(ours, obj), 'fields our CRD would prune').toEqual([]);
    });
  }

  it('the upstream check is not vacuous: a pruned field and a wrong type are caught', () => {
    const d = findKind('apps.kruise.io/v1alpha1', 'CloneSet')!;
    const upstream = upstreamV1alpha1(d).schema.openAPIV3Schema as Json;
    const bad = SAMPLES.CloneSet() as Json;
    bad.spec.updateStrategy.maxUnavaliable = 1;
    expect(prunedFields(upstream, bad)).toEqual(['/spec/updateStrategy/maxUnavaliable']);
    bad.spec.replicas = 'three';
    expect(compileOpenApi(upstream)(bad)).toBe(false);
  });
});

/**
 * Upstream v1alpha1 fields we deliberately do not model. Each entry: path → reason. Keep empty
 * unless there is a reason a user must not set the field through us.
 */
export const DELIBERATE_OMISSIONS: Readonly<Record<string, string>> = {};

function upstreamAt(def: KindDefinition, version: string): Json {
  const v = upstreamCrd(def.group, def.plural).spec.versions.find((x: Json) => x.name === version);
  if (!v) throw new Error(`upstream ${def.plural} has no ${version}`);
  return v.schema.openAPIV3Schema as Json;
}

describe('our schemas know every upstream field, at every version served', () => {
  for (const def of KINDS)
    for (const version of [def.version, ...(def.alsoServed ?? [])]) {
      it(`${def.kind} ${version}`, () => {
        const upstream = propertyPaths(upstreamAt(def, version));
        const ours = propertyPaths(openApiV3Schema(def, version));
        const missing = [...upstream].filter((p) => !ours.has(p) && !(p in DELIBERATE_OMISSIONS)).sort();
        expect(missing, `upstream fields missing from our ${def.kind} schema`).toEqual([]);
        expect(upstream.size).toBeGreaterThan(10);
      });

      it(`${def.kind} ${version}: no field beyond upstream (a cluster running upstream CRDs would prune it)`, () => {
        const upstream = propertyPaths(upstreamAt(def, version));
        const ours = propertyPaths(openApiV3Schema(def, version));
        const extra = [...ours].filter((p) => !upstream.has(p) && !RUNTIME_ONLY_STATUS.some((r) => p.startsWith(r))).sort();
        expect(extra).toEqual([]);
      });
    }
});

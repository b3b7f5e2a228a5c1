// The feature table classifies every part of an app the compiler models: each field path of each kind (walked in the
// CRDs we emit) and each Kruise annotation, label and env key of the contracts. A field or key added later without a
// classification fails here, with the path and the place to classify it.
import { describe, expect, it } from 'vitest';
import { classifyFieldPath, featureUsesIn, parseFieldPath } from '../../src/api/feature-uses.js';
import { openApiV3Schema } from '../../src/api/crd.js';
import { KINDS, type KindDefinition } from '../../src/api/registry.js';
import {
  ANNOTATION_FEATURES,
  AppFeature,
  ENV_FEATURES,
  FEATURES,
  FIELD_FEATURES,
  fieldTableOf,
  kindFeatureOf,
  LABEL_FEATURES,
  type FieldTable,
} from '../../src/contracts/features.js';
import * as KEYS from '../../src/contracts/keys.js';
import * as POD_CONTRACTS from '../../src/api/pod-contracts.js';

type Node = Record<string, unknown>;
const PRESERVE = 'x-kubernetes-preserve-unknown-fields';

/** Every node of a CRD schema: `path` in the table's syntax, whether it is an item/value node, whether it is unpruned. */
function schemaNodes(schema: Node): Array<{ path: string; transparent: boolean; preserve: boolean }> {
  const out: Array<{ path: string; transparent: boolean; preserve: boolean }> = [];
  const visit = (n: Node, path: string, transparent: boolean) => {
    out.push({ path, transparent, preserve: n[PRESERVE] === true });
    for (const [k, v] of Object.entries((n.properties ?? {}) as Record<string, Node>)) visit(v, path ? `${path}.${k}` : k, false);
    if (n.items) visit(n.items as Node, `${path}[]`, true);
    if (n.additionalProperties && typeof n.additionalProperties === 'object') visit(n.additionalProperties as Node, `${path}.*`, true);
  };
  visit(schema, '', true);
  return out;
}

/** The part of a path an item/value node stands for: `a.b[]` → `a.b`, `a.*` → `a`. */
function owner(path: string): string {
  return path.endsWith('[]') ? path.slice(0, -2) : path.endsWith('.*') ? path.slice(0, -2) : path;
}

/** The unclassified nodes of one CRD schema, with where to classify them. */
function unclassified(def: KindDefinition, schema: Node, table: FieldTable): string[] {
  const where = `FIELD_FEATURES['${def.group}/${def.kind}'] in src/contracts/features.ts`;
  const out: string[] = [];
  for (const n of schemaNodes(schema)) {
    if (n.path === '') continue; // the root is the kind's (KIND_FEATURES)
    // Item and value nodes are their array's or map's; a node the CRD leaves unpruned must be classified for its content.
    const path = n.transparent ? owner(n.path) : n.path;
    if (n.transparent && !n.preserve) continue;
    if (classifyFieldPath(table, path) === undefined) {
      out.push(`${def.kind} field ${n.path} is not classified: add it to ${where} (a feature, or INERT)`);
    }
  }
  return out;
}

function crdSchema(def: KindDefinition, version: string = def.version): Node {
  return openApiV3Schema(def, version) as Node;
}

/** The schema of every version a kind is served at, merged: the table classifies the fields of all of them. */
function allVersionsSchema(def: KindDefinition): Node {
  const merge = (a: Node, b: Node): Node => {
    const out: Node = { ...a, ...b };
    const ap = a.properties as Record<string, Node> | undefined;
    const bp = b.properties as Record<string, Node> | undefined;
    if (ap && bp) {
      const props: Record<string, Node> = { ...ap };
      for (const [k, v] of Object.entries(bp)) props[k] = ap[k] ? merge(ap[k], v) : v;
      out.properties = props;
    }
    if (a.items && b.items) out.items = merge(a.items as Node, b.items as Node);
    if (typeof a.additionalProperties === 'object' && typeof b.additionalProperties === 'object')
      out.additionalProperties = merge(a.additionalProperties as Node, b.additionalProperties as Node);
    return out;
  };
  return (def.alsoServed ?? []).reduce((acc, v) => merge(acc, crdSchema(def, v)), crdSchema(def));
}

describe('the feature table classifies every field path of every kind we model', () => {
  for (const def of KINDS) {
    const apiVersion = `${def.group}/${def.version}`;
    it(`${def.kind}: every path of its CRD schema at every served version, and nothing that is not in them`, () => {
      const feature = kindFeatureOf(apiVersion, def.kind);
      expect(feature, `${def.kind} needs a KIND_FEATURES entry in src/contracts/features.ts`).toBeDefined();
      expect(feature).not.toBe(AppFeature.OTHER_KRUISE_KIND);
      const table = fieldTableOf(apiVersion, def.kind);
      expect(table, `${def.kind} needs a FIELD_FEATURES['${def.group}/${def.kind}'] table in src/contracts/features.ts`).toBeDefined();
      const schema = allVersionsSchema(def);
      expect(unclassified(def, schema, table!)).toEqual([]);
      // No stale entries: every classified path names a node of the schema.
      const paths = new Set(schemaNodes(schema).map((n) => n.path));
      const stale = Object.keys(table!).filter((p) => {
        const { segments } = parseFieldPath(p);
        const plain = segments.join('.').replace(/\.\[\]/g, '[]');
        return !paths.has(plain);
      });
      expect(stale, `${def.kind}: classified paths missing from the schema`).toEqual([]);
    });
  }

  it('a kind is its feature at the versions it is also served at (BroadcastJob v1beta1), other versions are unmodelled', () => {
    expect(kindFeatureOf('apps.kruise.io/v1beta1', 'BroadcastJob')).toBe(AppFeature.BROADCAST_JOB);
    expect(fieldTableOf('apps.kruise.io/v1beta1', 'BroadcastJob')).toBe(fieldTableOf('apps.kruise.io/v1alpha1', 'BroadcastJob'));
    expect(kindFeatureOf('apps.kruise.io/v1beta1', 'CloneSet')).toBe(AppFeature.OTHER_KRUISE_KIND);
    expect(kindFeatureOf('apps.kruise.io/v1beta2', 'BroadcastJob')).toBe(AppFeature.OTHER_KRUISE_KIND);
  });

  it('fails, naming the path and the place to classify it, for a field added to a schema without a classification', () => {
    const def = KINDS.find((k) => k.kind === 'CloneSet')!;
    const schema = structuredClone(crdSchema(def));
    const spec = (schema.properties as Record<string, Node>).spec!;
    const strategy = (spec.properties as Record<string, Node>).updateStrategy!;
    (strategy.properties as Record<string, Node>).newKnob = { type: 'integer' };
    (spec.properties as Record<string, Node>).newList = { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } } } };
    expect(unclassified(def, schema, fieldTableOf(`${def.group}/${def.version}`, def.kind)!)).toEqual([
      "CloneSet field spec.updateStrategy.newKnob is not classified: add it to FIELD_FEATURES['apps.kruise.io/CloneSet'] in src/contracts/features.ts (a feature, or INERT)",
      "CloneSet field spec.newList is not classified: add it to FIELD_FEATURES['apps.kruise.io/CloneSet'] in src/contracts/features.ts (a feature, or INERT)",
      "CloneSet field spec.newList[].x is not classified: add it to FIELD_FEATURES['apps.kruise.io/CloneSet'] in src/contracts/features.ts (a feature, or INERT)",
    ]);
  });

  it('classifies paths the way the walker reads them: a subtree covers its fields, an unpruned node its content', () => {
    const table = FIELD_FEATURES['apps.kruise.io/SidecarSet']!;
    expect(classifyFieldPath(table, 'spec.selector.matchExpressions[].key')).toBe(AppFeature.SIDECARSET);
    expect(classifyFieldPath(table, 'spec.containers[].resourcesPolicy.resourcesExpr.limits.cpu')).toBe(
      AppFeature.SIDECARSET_RESOURCES_POLICY,
    );
    expect(classifyFieldPath(table, 'spec.containers[].shareVolumeDevicePolicy.type')).toBe(AppFeature.SIDECARSET);
    expect(classifyFieldPath(table, 'spec.notAField')).toBeUndefined();
  });

  it('counts what it classifies (reported in the commit that introduced it)', () => {
    const counts = Object.fromEntries(
      KINDS.map((def) => [def.kind, schemaNodes(crdSchema(def)).filter((n) => n.path !== '' && (!n.transparent || n.preserve)).length]),
    );
    for (const n of Object.values(counts)) expect(n).toBeGreaterThan(20);
  });
});

/** The string constants a module exports under `prefix` (ANNOTATION_, LABEL_, ENV_). */
function keysOf(module: Record<string, unknown>, prefix: string): Map<string, string> {
  return new Map(
    Object.entries(module)
      .filter(([name, v]) => name.startsWith(prefix) && typeof v === 'string')
      .map(([name, v]) => [name, v as string]),
  );
}

describe('the feature table classifies every Kruise annotation, label and env key of the contracts', () => {
  const tables = [
    ['ANNOTATION_', ANNOTATION_FEATURES, 'ANNOTATION_FEATURES'],
    ['LABEL_', LABEL_FEATURES, 'LABEL_FEATURES'],
    ['ENV_', ENV_FEATURES, 'ENV_FEATURES'],
  ] as const;
  for (const [prefix, table, name] of tables) {
    it(`${prefix}* keys (src/contracts/keys.ts, src/api/pod-contracts.ts) are all in ${name}, and ${name} holds only those`, () => {
      const keys = new Map([...keysOf(KEYS, prefix), ...keysOf(POD_CONTRACTS as Record<string, unknown>, prefix)]);
      const missing = [...keys]
        .filter(([, key]) => !(key in table))
        .map(([n, key]) => `${n} (${key}): add it to ${name} in src/contracts/features.ts`);
      expect(missing).toEqual([]);
      const values = new Set(keys.values());
      expect(Object.keys(table).filter((k) => !values.has(k))).toEqual([]);
    });
  }

  it('a classified key is a use wherever it is written (pod template annotations, container env, object labels)', () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j', labels: { [KEYS.LABEL_DELETE_PROTECTION]: 'Always' } },
      spec: {
        template: {
          metadata: { annotations: { [KEYS.ANNOTATION_USING_ENHANCED_LIVENESS]: 'true', [KEYS.ANNOTATION_POD_DELETION_COST]: '1' } },
          spec: { containers: [{ name: 'a', image: 'a', env: [{ name: KEYS.ENV_CONTAINER_PRIORITY, value: '1' }] }] },
        },
      },
    };
    expect(featureUsesIn(job)).toEqual([
      { feature: AppFeature.DELETION_PROTECTION, pointer: '/metadata/labels/policy.kruise.io~1delete-protection' },
      {
        feature: AppFeature.ENHANCED_LIVENESS_PROBE,
        pointer: '/spec/template/metadata/annotations/apps.kruise.io~1using-enhanced-liveness',
      },
      { feature: AppFeature.CONTAINER_LAUNCH_PRIORITY, pointer: '/spec/template/spec/containers/0/env/0' },
    ]);
  });
});

describe('every feature says who carries it out', () => {
  it('each feature of the enum has a row, and each row a runtime or an explicit "neither"', () => {
    for (const f of Object.values(AppFeature)) expect(FEATURES[f], f).toBeDefined();
    const neither = Object.values(AppFeature).filter((f) => !FEATURES[f].carriedOutBy.bundled && !FEATURES[f].carriedOutBy.upstream);
    expect(neither).toEqual([]);
  });
});

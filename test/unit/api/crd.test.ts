import { describe, expect, it } from 'vitest';
import {
  CloneSetDefinition,
  ContainerRecreateRequestDefinition,
  KINDS,
  SidecarSetDefinition,
  openApiV3Schema,
  structuralSchemaProblems,
  toCustomResourceDefinition,
  type KindDefinition,
} from '../../../src/api/index.js';
import { upstreamCrd } from '../../harness/upstream-crds.js';

type Json = Record<string, any>;
const upstream = (def: KindDefinition): Json => upstreamCrd(def.group, def.plural);

function walk(node: unknown, visit: (n: Json, path: string) => void, path = ''): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach((n, i) => walk(n, visit, `${path}[${i}]`));
  visit(node as Json, path);
  for (const [k, v] of Object.entries(node)) walk(v, visit, `${path}.${k}`);
}

describe('generated CRDs', () => {
  for (const def of KINDS) {
    describe(def.kind, () => {
      const crd = toCustomResourceDefinition(def) as Json;
      const version = crd.spec.versions[0];
      const schema = version.schema.openAPIV3Schema;

      it('passes the local structural-schema checks', () => {
        expect(structuralSchemaProblems(schema)).toEqual([]);
      });

      it('has one storage version, the one upstream stores where that is not v1alpha1 (plus the versions also served, same schema), and the identity upstream has', () => {
        const up = upstream(def);
        expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
        expect(crd.metadata.name).toBe(up.metadata.name);
        expect(crd.spec.group).toBe(up.spec.group);
        expect(crd.spec.scope).toBe(up.spec.scope);
        expect(crd.spec.names).toEqual(up.spec.names);
        expect(crd.spec.versions.map((v: Json) => v.name)).toEqual(['v1alpha1', ...(def.alsoServed ?? [])]);
        expect(version).toMatchObject({ name: 'v1alpha1', served: true });
        expect(crd.spec.versions.filter((v: Json) => v.storage).map((v: Json) => v.name)).toEqual([def.storageVersion ?? 'v1alpha1']);
        if (def.storageVersion) expect(up.spec.versions.find((v: Json) => v.storage).name).toBe(def.storageVersion);
        for (const other of crd.spec.versions.slice(1)) {
          // Upstream serves these too; each version's schema is the one schema less the fields of other versions, and
          // its printer columns are upstream's at that version.
          const upOther = up.spec.versions.find((v: Json) => v.name === other.name);
          expect(upOther, other.name).toBeDefined();
          expect(other.subresources).toEqual(version.subresources);
          expect(other.schema.openAPIV3Schema).toEqual(openApiV3Schema(def, other.name));
          expect((other.additionalPrinterColumns ?? []).map((c: Json) => [c.name, c.type, c.jsonPath, c.priority ?? 0])).toEqual(
            (upOther.additionalPrinterColumns ?? []).map((c: Json) => [c.name, c.type, c.jsonPath, c.priority ?? 0]),
          );
        }
        const upV = up.spec.versions.find((v: Json) => v.name === 'v1alpha1');
        expect(version.subresources).toEqual(upV.subresources);
        expect((version.additionalPrinterColumns ?? []).map((c: Json) => [c.name, c.type, c.jsonPath, c.priority ?? 0])).toEqual(
          (upV.additionalPrinterColumns ?? []).map((c: Json) => [c.name, c.type, c.jsonPath, c.priority ?? 0]),
        );
      });

      it('keeps metadata unrestricted and drops validator-only keys', () => {
        expect(schema.properties.metadata).toEqual({ type: 'object' });
        expect(schema.required).toBeUndefined();
        walk(schema, (n, p) => {
          expect(n.additionalProperties, p).not.toBe(false);
          for (const k of Object.keys(n))
            expect(k.startsWith('x-kruise-') || k === 'const' || k === '$ref' || k === 'patternProperties', `${p}.${k}`).toBe(false);
        });
      });

      it('carries descriptions from the TypeBox schema', () => {
        expect(schema.description).toBe((def.schema as Json).description);
        expect(schema.properties.spec.description).toMatch(/^Desired state/);
      });
    });
  }

  it('renders IntOrString in the canonical form, with short names and scale for CloneSet', () => {
    const crd = toCustomResourceDefinition(CloneSetDefinition) as Json;
    const us = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.updateStrategy.properties;
    expect(us.maxUnavailable).toMatchObject({ anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true });
    expect(us.maxUnavailable.type).toBeUndefined();
    expect(crd.spec.names.shortNames).toEqual(['clone']);
    expect(crd.spec.versions[0].subresources.scale).toEqual({
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.labelSelector',
    });
    expect((toCustomResourceDefinition(ContainerRecreateRequestDefinition) as Json).spec.names.shortNames).toEqual(['crr']);
  });

  it('follows upstream for core types: templates unpruned, SidecarSet containers typed Kruise fields + unpruned core', () => {
    const cs = openApiV3Schema(CloneSetDefinition) as Json;
    expect(cs.properties.spec.properties.template).toEqual({ description: 'Pod template.', 'x-kubernetes-preserve-unknown-fields': true });
    expect(cs.properties.spec.properties.volumeClaimTemplates['x-kubernetes-preserve-unknown-fields']).toBe(true);
    const ss = openApiV3Schema(SidecarSetDefinition) as Json;
    const item = ss.properties.spec.properties.containers.items;
    expect(item.type).toBe('object');
    expect(item['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(Object.keys(item.properties).sort()).toEqual([
      'podInjectPolicy',
      'resourcesPolicy',
      'shareVolumeDevicePolicy',
      'shareVolumePolicy',
      'transferEnv',
      'upgradeStrategy',
    ]);
    // Small core types are inlined as full structural schemas.
    expect(ss.properties.spec.properties.imagePullSecrets.items).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string' } },
    });
  });

  it('is deterministic', () => {
    for (const def of KINDS) expect(JSON.stringify(toCustomResourceDefinition(def))).toBe(JSON.stringify(toCustomResourceDefinition(def)));
  });

  it('applies labels and annotations when asked', () => {
    const crd = toCustomResourceDefinition(CloneSetDefinition, { labels: { a: 'b' }, annotations: { c: 'd' } }) as Json;
    expect(crd.metadata).toEqual({ name: 'clonesets.apps.kruise.io', labels: { a: 'b' }, annotations: { c: 'd' } });
  });
});

describe('structuralSchemaProblems catches what the API server rejects', () => {
  const ok = { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } };
  it('accepts a structural schema', () => {
    expect(structuralSchemaProblems(ok)).toEqual([]);
  });
  it('flags each violation with its path', () => {
    expect(structuralSchemaProblems({ type: 'object', properties: { a: { description: 'no type' } } })).toEqual([
      '.properties.a: has no type (nor int-or-string / preserve-unknown-fields)',
    ]);
    expect(
      structuralSchemaProblems({
        type: 'object',
        properties: { a: { type: 'object', properties: {}, additionalProperties: { type: 'string' } } },
      }),
    ).toEqual(['.properties.a: properties and additionalProperties are mutually exclusive']);
    expect(structuralSchemaProblems({ type: 'object', properties: { a: { type: 'object', additionalProperties: false } } })).toEqual([
      '.properties.a: additionalProperties: false is not allowed',
    ]);
    expect(structuralSchemaProblems({ type: 'object', properties: { a: { type: 'string', const: 'x' } } })).toEqual([
      '.properties.a: key "const" is not allowed in a CRD schema',
    ]);
    expect(
      structuralSchemaProblems({
        type: 'object',
        properties: { a: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'boolean' }] } },
      }),
    ).toContain('.properties.a: int-or-string anyOf must be [{type: integer}, {type: string}]');
    expect(structuralSchemaProblems({ type: 'object', properties: { a: { type: 'string', anyOf: [{ type: 'string' }] } } })).toEqual([
      '.properties.a.anyOf[0]: "type" inside a logical junctor',
    ]);
    expect(
      structuralSchemaProblems({
        type: 'object',
        properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
      }),
    ).toEqual(['.properties.metadata: only name and generateName may be restricted, not "labels"']);
    expect(structuralSchemaProblems({ type: 'object', properties: { a: { type: 'string', enum: [1] } } })).toEqual([
      '.properties.a: enum value 1 does not match type string',
    ]);
  });
});

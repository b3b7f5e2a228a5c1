import { Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { KruiseRuntime } from '../../../constructs/kruise-runtime.js';
import { structuralSchemaProblems } from '../../../src/api/crd-structural.js';
import { KINDS } from '../../../src/api/registry.js';
import { customResourceDefinitions, servedKinds } from '../../../src/install/crds.js';
import { upstreamCrd } from '../../harness/upstream-crds.js';

type Obj = Record<string, any>;

describe('CRDs', () => {
  const crds = customResourceDefinitions() as Obj[];

  it('has one CRD per kind of the API model, named <plural>.<group>', () => {
    expect(crds.map((c) => c.metadata.name)).toEqual(KINDS.map((k) => `${k.plural}.${k.group}`));
    expect(servedKinds().map((k) => k.kind)).toEqual(KINDS.map((k) => k.kind));
  });

  it('passes the apiextensions structural-schema rules', () => {
    for (const crd of crds) {
      for (const v of crd.spec.versions) {
        expect(structuralSchemaProblems(v.schema.openAPIV3Schema), `${crd.metadata.name} ${v.name}`).toEqual([]);
      }
      expect(crd.spec.versions.filter((v: Obj) => v.storage)).toHaveLength(1);
      expect(crd.spec.versions[0].subresources.status).toEqual({});
    }
  });

  it('matches upstream names, scope and version (drop-in compatible with OpenKruise)', () => {
    for (const crd of crds) {
      const up = upstreamCrd(crd.spec.group, crd.spec.names.plural);
      expect(crd.spec.names.kind).toBe(up.spec.names.kind);
      expect(crd.spec.names.listKind).toBe(up.spec.names.listKind);
      expect(crd.spec.names.singular).toBe(up.spec.names.singular);
      expect(crd.spec.names.shortNames ?? []).toEqual(up.spec.names.shortNames ?? []);
      expect(crd.spec.scope).toBe(up.spec.scope);
      expect(up.spec.versions.map((v: Obj) => v.name)).toContain(crd.spec.versions[0].name);
    }
  });

  it('is what the CRD chart of KruiseRuntime renders, labelled as part of cdk8s-kruise', () => {
    const app = Testing.app();
    const rt = new KruiseRuntime(app, 'kruise');
    new Chart(app, 'app');
    const rendered = Testing.synth(rt.crds!) as Obj[];
    expect(rendered.map((c) => c.metadata.name)).toEqual(crds.map((c) => c.metadata.name));
    for (const c of rendered) expect(c.metadata.labels['app.kubernetes.io/part-of']).toBe('cdk8s-kruise');
    expect(app.charts.indexOf(rt.crds!)).toBeLessThan(app.charts.indexOf(rt));
  });
});

/**
 * The versions a kind is served at besides v1alpha1 (upstream v1.9's v1beta1): one schema per kind holds every
 * version's fields, a field of some versions only is marked `servedIn`, each CRD version carries its own fields, and
 * `validate` refuses a field of another version with the pointer and the version that has it.
 */
import { describe, expect, it } from 'vitest';
import {
  findKind,
  ImagePullJobDefinition,
  KINDS,
  NodeImageDefinition,
  openApiV3Schema,
  schemaAtVersion,
  toCustomResourceDefinition,
  validateObject,
} from '../../../src/api/index.js';
import { KRUISE_KINDS } from '../../../src/contracts/index.js';

type Json = Record<string, any>;

function nodeImage(version: string, secret: Json): Json {
  return {
    apiVersion: `apps.kruise.io/${version}`,
    kind: 'NodeImage',
    metadata: { name: 'node-a' },
    spec: { images: { 'docker.io/library/nginx': { pullSecrets: [secret], tags: [{ tag: '1.27' }] } } },
  };
}

describe('kinds served at v1beta1 as upstream v1.9 serves them', () => {
  it('are found at both versions and stored where upstream stores them', () => {
    for (const kind of ['ImagePullJob', 'NodeImage', 'ImageListPullJob', 'BroadcastJob'] as const) {
      const def = findKind('apps.kruise.io/v1beta1', kind);
      expect(def, kind).toBe(findKind('apps.kruise.io/v1alpha1', kind));
      const crd = toCustomResourceDefinition(def!) as Json;
      expect(crd.spec.versions.map((v: Json) => [v.name, v.served, v.storage])).toEqual([
        ['v1alpha1', true, false],
        ['v1beta1', true, true],
      ]);
      expect(KRUISE_KINDS[kind].storageVersion).toBe('v1beta1');
      // Conversion None: the API server rewrites apiVersion and prunes what the version lacks.
      expect(crd.spec.conversion).toBeUndefined();
    }
  });

  it("gives each CRD version only its own fields: a NodeImage pull secret's mode is v1beta1's", () => {
    const secretProps = (v: string) =>
      Object.keys(
        (openApiV3Schema(NodeImageDefinition, v) as Json).properties.spec.properties.images.additionalProperties.properties.pullSecrets
          .items.properties,
      );
    expect(secretProps('v1alpha1')).toEqual(['namespace', 'name']);
    expect(secretProps('v1beta1')).toEqual(['namespace', 'name', 'mode']);
  });

  it("gives each CRD version upstream's printer columns: an ImagePullJob's MESSAGE is v1alpha1's", () => {
    const crd = toCustomResourceDefinition(ImagePullJobDefinition) as Json;
    const columns = (v: string) => crd.spec.versions.find((x: Json) => x.name === v).additionalPrinterColumns.map((c: Json) => c.name);
    expect(columns('v1alpha1')).toContain('MESSAGE');
    expect(columns('v1beta1')).not.toContain('MESSAGE');
    for (const v of crd.spec.versions) for (const c of v.additionalPrinterColumns) expect(c.servedIn).toBeUndefined();
  });

  it('leaves a schema without version-marked fields untouched (same object)', () => {
    const def = KINDS.find((k) => k.kind === 'CloneSet')!;
    expect(schemaAtVersion(def.schema as unknown as Json, 'v1alpha1')).toBe(def.schema);
  });

  it('validate refuses a field of another version with its pointer and the version that has it', () => {
    const secret = { namespace: 'default', name: 'pull', mode: 'batch' };
    expect(validateObject(nodeImage('v1beta1', secret)).issues).toEqual([]);
    expect(validateObject(nodeImage('v1alpha1', secret)).issues).toEqual([
      {
        jsonPointer: '/spec/images/docker.io~1library~1nginx/pullSecrets/0/mode',
        keyword: 'apiVersion',
        message: 'field "mode" is not served at apps.kruise.io/v1alpha1 (the API server would drop it silently)',
        hint: 'it is a field of apps.kruise.io/v1beta1: set apiVersion to apps.kruise.io/v1beta1',
      },
    ]);
    expect(validateObject(nodeImage('v1alpha1', { namespace: 'default', name: 'pull' })).issues).toEqual([]);
  });

  it('validate still refuses a version no CRD serves', () => {
    const issues = validateObject({ ...nodeImage('v1beta2', { name: 'pull' }) }).issues;
    expect(issues.map((i) => i.jsonPointer)).toEqual(['/apiVersion']);
  });
});

import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { KINDS, findKind, jsonSchemaFileName, jsonSchemaFor } from '../../../src/api/index.js';
import { SAMPLES } from './samples.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv, f: string[]) => Ajv;

/** A plain draft-07 validator, as an editor would use the exported file (no access to our code). */
function editorValidator(schema: object) {
  const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, logger: false });
  addFormats(ajv, ['date-time']);
  return ajv.compile(JSON.parse(JSON.stringify(schema)));
}

describe('standalone JSON Schemas', () => {
  for (const def of KINDS) {
    it(`${def.kind}: self-contained, accepts the sample, flags a typo`, () => {
      const schema = jsonSchemaFor(def) as Record<string, any>;
      expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
      expect(schema.properties.kind.const).toBe(def.kind);
      const refs = JSON.stringify(schema).match(/"\$ref":"([^"]+)"/g) ?? [];
      for (const r of refs) {
        const name = /#\/definitions\/(.+)"$/.exec(r)?.[1];
        expect(name && schema.definitions[name], r).toBeTruthy();
      }
      const validate = editorValidator(schema);
      const sample = (SAMPLES as Record<string, () => any>)[def.kind]!();
      expect(validate(sample), JSON.stringify(validate.errors)).toBe(true);
      sample.spec.bogusField = 1;
      expect(validate(sample)).toBe(false);
      expect(validate.errors!.some((e) => e.keyword === 'additionalProperties' && e.params.additionalProperty === 'bogusField')).toBe(true);
    });
  }

  it('carries documentation for editors and names files by kind', () => {
    const def = findKind('apps.kruise.io/v1alpha1', 'CloneSet')!;
    const s = jsonSchemaFor(def) as Record<string, any>;
    expect(s.properties.spec.properties.scaleStrategy.properties.disablePVCReuse.description).toMatch(/PVC/);
    expect(s.definitions.V1Container.properties.image.description).toMatch(/Container image name/);
    expect(jsonSchemaFileName(def)).toBe('cloneset.json');
  });

  it('catches unknown container fields through the core definitions', () => {
    const validate = editorValidator(jsonSchemaFor(findKind('apps.kruise.io/v1alpha1', 'CloneSet')!));
    const o = SAMPLES.CloneSet() as any;
    o.spec.template.spec.containers[0].imagee = 'x';
    expect(validate(o)).toBe(false);
  });
});

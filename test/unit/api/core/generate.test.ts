import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CORE_ROOTS, CORE_SCHEMA_FILE, generateCoreSchema, serializeCoreSchema } from '../../../../src/api/core/generate.js';
import { coreDefinitions } from '../../../../src/api/index.js';

describe('generated core definitions', () => {
  it('are up to date with the installed @kubernetes/client-node (run: npx tsx src/api/core/generate.ts)', async () => {
    const fresh = serializeCoreSchema(await generateCoreSchema());
    expect(readFileSync(CORE_SCHEMA_FILE, 'utf8') === fresh).toBe(true);
  });

  it('contain the roots, closed and with required fields and quantities', () => {
    const defs = coreDefinitions() as Record<string, any>;
    for (const r of CORE_ROOTS) expect(defs[r], r).toBeDefined();
    expect(defs.V1Container.additionalProperties).toBe(false);
    expect(defs.V1Container.required).toEqual(['name']);
    expect(defs.V1ContainerPort.required).toEqual(['containerPort']);
    expect(defs.V1ResourceRequirements.properties.limits.additionalProperties['x-kubernetes-int-or-string']).toBe(true);
    expect(defs.V1HTTPGetAction.properties.port['x-kubernetes-int-or-string']).toBe(true);
    expect(defs.V1ObjectMeta.properties.creationTimestamp.type).toEqual(['string', 'null']);
    expect(defs.V1PodSpec.properties.containers.items).toEqual({ $ref: '#/definitions/V1Container' });
  });
});

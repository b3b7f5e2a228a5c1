// The core-type interfaces the published typings use in place of client-node's models: generated from the
// committed core schema, so a schema regeneration without a types regeneration fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CORE_TYPES_FILE, generateCoreTypes, readCoreSchema } from '../../../../src/api/core/generate-types.js';

describe('k8s core TypeScript types', () => {
  it('the committed k8s-core-types.ts is what the generator produces from k8s-core.schema.json', () => {
    expect(readFileSync(CORE_TYPES_FILE, 'utf8')).toBe(generateCoreTypes(readCoreSchema()));
  });

  it('renders refs, int-or-string, enums, maps and required fields as manifest JSON has them', () => {
    const text = generateCoreTypes({
      definitions: {
        V1Thing: {
          type: 'object',
          required: ['name'],
          description: 'A thing.',
          properties: {
            name: { type: 'string' },
            port: { 'x-kubernetes-int-or-string': true },
            policy: { type: 'string', enum: ['Always', 'Never'] },
            labels: { type: 'object', additionalProperties: { type: 'string' } },
            refs: { type: 'array', items: { $ref: '#/definitions/V1Other' } },
          },
        },
      },
    });
    expect(text).toContain('/** A thing. */\nexport interface V1Thing {');
    expect(text).toContain('  name: string;');
    expect(text).toContain('  port?: number | string;');
    expect(text).toContain('  policy?: "Always" | "Never";');
    expect(text).toContain('  labels?: Record<string, string>;');
    expect(text).toContain('  refs?: V1Other[];');
    expect(() =>
      generateCoreTypes({ definitions: { V1X: { type: 'object', properties: { a: { $ref: 'http://elsewhere/V1Y' } } } } }),
    ).toThrow(/unexpected \$ref/);
  });
});

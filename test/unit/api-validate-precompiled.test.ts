// The validators the package build precompiles (ajv standalone code, bundled into the CLI) against the ones
// `validate.ts` compiles at run time: the same issues for valid and broken objects of every kind.
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { KINDS } from '../../src/api/registry.js';
import { toIssues, validateAgainst } from '../../src/api/validate.js';
import { precompiledValidatorsSource } from '../../src/api/validate-standalone.js';
import { SAMPLES } from './api-samples.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let precompiled: Record<string, ValidateFunction>;

beforeAll(async () => {
  // Bundled the way the package build does (the generated code requires ajv's runtime helpers).
  const out = await build({
    stdin: { contents: precompiledValidatorsSource(), loader: 'js', resolveDir: repoRoot },
    bundle: true,
    write: false,
    format: 'cjs',
    platform: 'node',
    logLevel: 'silent',
  });
  const module = { exports: {} as { PRECOMPILED_VALIDATORS?: Record<string, ValidateFunction> } };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- evaluates the bundled validators exactly as the CLI bundle does
  new Function('module', 'exports', 'require', out.outputFiles[0]!.text)(module, module.exports, createRequire(import.meta.url));
  precompiled = module.exports.PRECOMPILED_VALIDATORS!;
}, 120_000);

function issuesOf(fn: ValidateFunction, obj: unknown) {
  return fn(obj) ? [] : toIssues(fn.errors ?? []);
}

describe('precompiled validators', () => {
  it('exist for every kind', () => {
    expect(Object.keys(precompiled).sort()).toEqual(KINDS.map((k) => k.kind).sort());
  });

  it('report exactly what the run-time compiled validators report, on valid and broken samples', () => {
    for (const def of KINDS) {
      const sample = (SAMPLES as unknown as Record<string, () => Record<string, unknown>>)[def.kind]!();
      const broken = {
        ...sample,
        metadata: { ...(sample.metadata as object), nmae: 'typo' },
        spec: { ...(sample.spec as object), unknownField: 1, replicas: 'three' },
      };
      for (const obj of [sample, broken, { apiVersion: sample.apiVersion, kind: def.kind }]) {
        const expected = validateAgainst(def, obj);
        expect(issuesOf(precompiled[def.kind]!, obj), `${def.kind}`).toEqual(expected);
      }
      expect(validateAgainst(def, sample), `${def.kind} sample is valid`).toEqual([]);
      expect(validateAgainst(def, broken).length, `${def.kind} broken sample has issues`).toBeGreaterThan(0);
    }
  });
});

// The validators the package build precompiles (ajv standalone code, bundled into the CLI) against the ones
// `validate.ts` compiles at run time: the same issues for valid and broken objects of every kind.
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { KINDS } from '../../../src/api/registry.js';
import { toIssues, validateAgainst } from '../../../src/api/validate.js';
import { precompiledValidatorsSource } from '../../../src/api/validate-standalone.js';
import { precompiledValidatorsPlugin } from '../../../scripts/build-package.js';
import { SAMPLES } from './samples.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
let precompiled: Record<string, ValidateFunction>;
let compileValidator: (def: unknown) => unknown;

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
  const module = {
    exports: {} as { PRECOMPILED_VALIDATORS?: Record<string, ValidateFunction>; compileValidator?: (def: unknown) => unknown },
  };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- evaluates the bundled validators exactly as the CLI bundle does
  new Function('module', 'exports', 'require', out.outputFiles[0]!.text)(module, module.exports, createRequire(import.meta.url));
  precompiled = module.exports.PRECOMPILED_VALIDATORS!;
  compileValidator = module.exports.compileValidator!;
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

  it('cap the unknown fields of a wide object exactly as the run-time validators do', () => {
    const def = KINDS.find((k) => k.kind === 'CloneSet')!;
    const sample = SAMPLES.CloneSet();
    const spec: Record<string, unknown> = { ...(sample.spec as object) };
    const metadata: Record<string, unknown> = { ...(sample.metadata as object) };
    for (let i = 0; i < 20_000; i++) spec[`unknownField${i}`] = i;
    for (let i = 0; i < 30; i++) metadata[`extra${i}`] = i;
    const wide = { ...sample, metadata, spec };
    const issues = issuesOf(precompiled.CloneSet!, wide);
    expect(issues).toEqual(validateAgainst(def, wide));
    expect(issues).toHaveLength(42);
    expect(issues.map((i) => i.message)).toContain(
      '… and 19,980 more unknown fields under /spec (not listed, from "unknownField20" on; the API server would drop them silently)',
    );
  });

  it('replace the compiler: the CLI build loads neither ajv nor the core definitions to validate', async () => {
    expect(() => compileValidator({ kind: 'Unknown' })).toThrow(/no precompiled validator for kind Unknown/);
    // The policy engine as the CLI bundles it: the modules it loads, with the generated validators in place.
    const result = await build({
      entryPoints: [path.join(repoRoot, 'src/policy/engine.ts')],
      plugins: [precompiledValidatorsPlugin()],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('src/api/precompiled-validators.ts');
    for (const absent of [
      'src/api/validate-compile.ts',
      'src/api/resolve.ts',
      'src/api/core/k8s-core.schema.json',
      'src/api/core/k8s-core-kinds.schema.json',
      'node_modules/ajv/dist/core.js',
    ])
      expect(inputs, absent).not.toContain(absent);
  });
});

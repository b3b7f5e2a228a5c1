import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { TYPES_FILE, generateTypes } from '../../../../src/api/types/generate.js';
import { CORE_REF, KINDS } from '../../../../src/api/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../../../..');

describe('generated TypeScript interfaces', () => {
  it('are up to date with the schemas (run: npx tsx src/api/types/generate.ts)', () => {
    expect(readFileSync(TYPES_FILE, 'utf8') === generateTypes()).toBe(true);
  });

  it('carry the schema descriptions as TSDoc', () => {
    const text = readFileSync(TYPES_FILE, 'utf8');
    expect(text).toContain(
      '  /** Do not reuse PVCs of failed pods; new pods get fresh PVCs (default false). */\n  disablePVCReuse?: boolean;',
    );
    expect(text).toContain('export interface SidecarContainer extends V1Container {');
  });

  it('are mutually assignable with the TypeBox Static types (type-checks generated.check.ts)', () => {
    const configPath = resolve(repoRoot, 'tsconfig.json');
    const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, repoRoot);
    const program = ts.createProgram([resolve(here, 'generated.check.ts')], { ...parsed.options, noEmit: true });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file?.fileName.includes('/src/api/') || d.file?.fileName.endsWith('generated.check.ts'));
    const text = diagnostics.map((d) => `${d.file?.fileName}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(text).toEqual([]);
  }, 120_000);
});

describe('documentation', () => {
  it('every field of every kind has a description (the TSDoc, CRD and JSON-schema text)', () => {
    const missing: string[] = [];
    const walk = (n: Record<string, any>, path: string): void => {
      if (n[CORE_REF] && !n.properties) return; // core types are documented by client-node's model docs
      for (const [k, v] of Object.entries<Record<string, any>>(n.properties ?? {})) {
        if (!v.description) missing.push(`${path}.${k}`);
        walk(v, `${path}.${k}`);
        if (v.items) walk(v.items, `${path}.${k}[]`);
        const rec = v.patternProperties ? Object.values<Record<string, any>>(v.patternProperties)[0] : v.additionalProperties;
        if (rec && typeof rec === 'object') walk(rec, `${path}.${k}{}`);
      }
    };
    for (const k of KINDS) walk(k.schema as Record<string, any>, k.kind);
    expect(missing).toEqual([]);
  });
});

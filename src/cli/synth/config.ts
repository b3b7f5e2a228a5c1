import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { UsageError } from '../../policy/engine.js';

/** The keys of cdk8s.yaml that `synth` reads (the file the cdk8s CLI reads, so one config serves both). */
export interface Cdk8sConfig {
  readonly app?: string;
  readonly output?: string;
}

/** Reads cdk8s.yaml from `dir`; a missing file is an empty config, a malformed one a UsageError. */
export async function readCdk8sConfig(file: string): Promise<Cdk8sConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
  }
  let value: unknown;
  try {
    value = parse(text);
  } catch (e) {
    throw new UsageError(`${file} is not valid YAML: ${(e as Error).message}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(`${file} must be a YAML mapping with keys such as app and output`);
  const v = value as Record<string, unknown>;
  for (const key of ['app', 'output'] as const) {
    if (v[key] !== undefined && typeof v[key] !== 'string') throw new UsageError(`${file}: "${key}" must be a string`);
  }
  return { app: v.app as string | undefined, output: v.output as string | undefined };
}

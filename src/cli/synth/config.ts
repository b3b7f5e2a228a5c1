import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { UsageError } from '../../policy/engine.js';

/** The keys of cdk8s.yaml that `synth` reads (the file the cdk8s CLI reads, so one config serves both). */
export interface Cdk8sConfig {
  readonly app?: string;
  readonly output?: string;
  /**
   * The Argo CD Application's source, from the properties of the KruiseValidation plugin entry
   * (`validations[].properties.repoURL` / `targetRevision`), so `cdk8s synth` and `cdk8s-kruise synth` write the same one.
   */
  readonly repoURL?: string;
  readonly targetRevision?: string;
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
  const props = kruisePluginProperties(file, v.validations);
  return { app: v.app as string | undefined, output: v.output as string | undefined, ...props };
}

/** repoURL and targetRevision of the `validations` entry whose class is KruiseValidation, if there is one. */
function kruisePluginProperties(file: string, validations: unknown): { repoURL?: string; targetRevision?: string } {
  if (!Array.isArray(validations)) return {};
  const entry = validations.find((e) => typeof e === 'object' && e !== null && (e as { class?: unknown }).class === 'KruiseValidation') as
    { properties?: unknown } | undefined;
  const props = entry?.properties;
  if (typeof props !== 'object' || props === null) return {};
  const out: { repoURL?: string; targetRevision?: string } = {};
  for (const key of ['repoURL', 'targetRevision'] as const) {
    const value = (props as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new UsageError(`${file}: KruiseValidation property "${key}" must be a string`);
    out[key] = value;
  }
  return out;
}

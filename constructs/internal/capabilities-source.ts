import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  CAPABILITIES_CONFIGMAP,
  CapabilitiesError,
  capabilitiesInManifests,
  parseCapabilities,
  type RuntimeCapabilities,
} from '../../src/install/capabilities.js';
import type { KubeObject } from '../../src/install/types.js';

/** Largest manifest file looked into for the capabilities ConfigMap (a platform's CRD file is a few MB). */
const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;
/** How deep a directory of manifests is searched (the Flux layout nests one level). */
const MAX_DEPTH = 3;
const MAX_FILES = 2000;

/**
 * Reads capabilities from `file`: a capabilities JSON document, a YAML manifest holding the install's
 * `kruise-runtime-capabilities` ConfigMap, or a directory of manifests (the platform's synth output). Every failure is
 * a CapabilitiesError naming the path.
 */
export function readCapabilitiesFile(file: string): RuntimeCapabilities {
  let st;
  try {
    st = statSync(file);
  } catch (e) {
    throw new CapabilitiesError(
      `cannot read runtime capabilities from "${file}": ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  if (st.isDirectory()) return fromDirectory(file);
  if (!st.isFile()) throw new CapabilitiesError(`runtime capabilities "${file}" is neither a file nor a directory`);
  if (file.toLowerCase().endsWith('.json')) {
    if (st.size > 1024 * 1024) throw new CapabilitiesError(`${file}: ${st.size} bytes is too large for a capabilities document`);
    return parseCapabilities(readFileSync(file, 'utf8'), file);
  }
  const found = fromManifestFile(file, st.size);
  if (!found) {
    throw new CapabilitiesError(
      `${file} holds no ConfigMap ${CAPABILITIES_CONFIGMAP}: point at the platform's synth output (its runtime file or directory) or a capabilities JSON file`,
    );
  }
  return found;
}

function fromManifestFile(file: string, size: number): RuntimeCapabilities | undefined {
  if (size > MAX_MANIFEST_BYTES) throw new CapabilitiesError(`${file}: ${size} bytes is more than the ${MAX_MANIFEST_BYTES} read`);
  const text = readFileSync(file, 'utf8');
  // Most manifests (CRDs, the apps) do not hold it: skip parsing them.
  if (!text.includes(CAPABILITIES_CONFIGMAP)) return undefined;
  const objects: KubeObject[] = [];
  for (const doc of parseAllDocuments(text, { uniqueKeys: true })) {
    if (doc.errors.length > 0) throw new CapabilitiesError(`${file}: not valid YAML (${doc.errors[0]!.message.slice(0, 200)})`);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      throw new CapabilitiesError(`${file}: ${(e as Error).message.slice(0, 200)}`);
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) objects.push(value as KubeObject);
  }
  return capabilitiesInManifests(objects, file);
}

function fromDirectory(dir: string): RuntimeCapabilities {
  const found: { file: string; caps: RuntimeCapabilities }[] = [];
  let files = 0;
  const walk = (d: string, depth: number) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory() && depth < MAX_DEPTH) walk(p, depth + 1);
      if (!st.isFile() || !/\.ya?ml$/i.test(name)) continue;
      if (++files > MAX_FILES)
        throw new CapabilitiesError(`${dir}: more than ${MAX_FILES} manifest files; point at the runtime's file instead`);
      const caps = fromManifestFile(p, st.size);
      if (caps) found.push({ file: p, caps });
    }
  };
  walk(dir, 0);
  if (found.length === 0) {
    throw new CapabilitiesError(
      `${dir} holds no ConfigMap ${CAPABILITIES_CONFIGMAP} in its manifests: is it the synth output of a platform app whose KruiseRuntime targets BUNDLED?`,
    );
  }
  if (found.length > 1) {
    throw new CapabilitiesError(
      `${dir}: ${found.map((f) => f.file).join(' and ')} each hold a ${CAPABILITIES_CONFIGMAP}; point at one of them`,
    );
  }
  return found[0]!.caps;
}

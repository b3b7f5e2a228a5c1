import { toCustomResourceDefinition } from '../api/crd.js';
import { KINDS } from '../api/registry.js';
import { COMMON_LABELS, SYNC_WAVE_ANNOTATION, type ServedKind } from './spec.js';
import type { KubeObject } from './types.js';

/** The kinds the runtime serves, from the API registry (one row per kind, in registry order). */
export function servedKinds(): ServedKind[] {
  return KINDS.map((k) => ({
    group: k.group,
    version: k.version,
    ...(k.alsoServed?.length ? { alsoServed: k.alsoServed } : {}),
    kind: k.kind,
    plural: k.plural,
    namespaced: k.scope === 'Namespaced',
  }));
}

/**
 * One CRD per kind of the API model, generated from its TypeBox schema (never hand-written), labelled
 * like the rest of the install and optionally put in an Argo CD sync wave.
 */
export function customResourceDefinitions(options: { syncWave?: number } = {}): KubeObject[] {
  const annotations = options.syncWave === undefined ? undefined : { [SYNC_WAVE_ANNOTATION]: String(options.syncWave) };
  return KINDS.map((k) => toCustomResourceDefinition(k, { labels: COMMON_LABELS, annotations }) as unknown as KubeObject);
}

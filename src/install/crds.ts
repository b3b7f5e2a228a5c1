import { toCustomResourceDefinition } from '../api/crd.js';
import { KINDS } from '../api/registry.js';
import { COMMON_LABELS, NAMES, SYNC_WAVE_ANNOTATION, type ServedKind } from './spec.js';
import { CONVERSION_PATH, DEFAULT_RUNTIME_NAMESPACE } from '../contracts/index.js';
import { CERT_MANAGER_INJECT_ANNOTATION } from './webhooks.js';
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
 * like the rest of the install and optionally put in an Argo CD sync wave. A kind whose versions need a conversion
 * webhook (SidecarSet) converts through the webhook Service of the runtime in `runtimeNamespace` at `/convert`; with
 * `certManager`, cert-manager's CA injector fills its caBundle (else the manager does).
 */
export function customResourceDefinitions(
  options: { syncWave?: number; runtimeNamespace?: string; certManager?: boolean } = {},
): KubeObject[] {
  const base: Record<string, string> = options.syncWave === undefined ? {} : { [SYNC_WAVE_ANNOTATION]: String(options.syncWave) };
  const namespace = options.runtimeNamespace ?? DEFAULT_RUNTIME_NAMESPACE;
  const conversionService = { name: NAMES.webhookService, namespace, path: CONVERSION_PATH };
  return KINDS.map((k) => {
    const annotations: Record<string, string> = { ...base };
    if (k.conversionWebhook && options.certManager) annotations[CERT_MANAGER_INJECT_ANNOTATION] = `${namespace}/${NAMES.certificate}`;
    return toCustomResourceDefinition(k, {
      labels: COMMON_LABELS,
      ...(Object.keys(annotations).length ? { annotations } : {}),
      conversionService,
    }) as unknown as KubeObject;
  });
}

import type { KubeObject } from './types.js';
import { meta, type InstallSpec } from './spec.js';

/**
 * The runtime namespace carries `control-plane: openkruise` like upstream's, so selectors written for
 * upstream Kruise (e.g. webhook exclusions) keep working; the daemon-config namespace only exists when
 * the daemon does.
 */
export function namespaces(spec: InstallSpec): KubeObject[] {
  if (spec.createNamespaces === false) return [];
  const ns = (name: string, labels: Record<string, string>): KubeObject => {
    const m = meta(spec, name, false, labels);
    return { apiVersion: 'v1', kind: 'Namespace', metadata: m as KubeObject['metadata'] };
  };
  const out = [ns(spec.namespace, { 'control-plane': 'openkruise' })];
  if (spec.daemon && spec.daemonConfigNamespace !== spec.namespace) out.push(ns(spec.daemonConfigNamespace, {}));
  return out;
}

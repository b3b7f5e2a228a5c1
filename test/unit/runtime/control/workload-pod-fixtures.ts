// Pods shared by the decision tests of the workloads with lifecycle hooks and in-place update (table rows stay short).
import type { Pod } from '../../../../src/runtime/core/types.js';

export const NOW = Date.parse('2026-01-01T00:10:00Z');
export const OLD = 'cs-old1';
export const NEW = 'cs-new2';

export interface PodOpts {
  rev?: string;
  state?: string;
  ready?: boolean;
  phase?: string;
  node?: string | null;
  labels?: Record<string, string>;
  finalizers?: string[];
  created?: string;
  readySince?: string;
  gates?: string[];
  conditions?: Array<{ type: string; status: string; message?: string }>;
  annotations?: Record<string, string>;
}

export function pod(name: string, o: PodOpts = {}): Pod {
  const ready = o.ready ?? true;
  return {
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
      labels: { 'controller-revision-hash': o.rev ?? OLD, ...(o.state ? { 'lifecycle.apps.kruise.io/state': o.state } : {}), ...o.labels },
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      ...(o.node === null ? {} : { nodeName: o.node ?? 'n1' }),
      containers: [{ name: 'app', image: 'app:2' }],
      readinessGates: (o.gates ?? []).map((conditionType) => ({ conditionType })),
    },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: o.readySince ?? '2026-01-01T00:01:00Z' },
        ...(o.conditions ?? []),
      ],
    },
  };
}

export const many = (n: number, o: PodOpts = {}, prefix = 'p') => Array.from({ length: n }, (_, i) => pod(`${prefix}${i}`, o));

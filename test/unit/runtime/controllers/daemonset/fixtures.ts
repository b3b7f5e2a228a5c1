import type { Node, Pod } from '../../../../../src/runtime/core/types.js';
import type { DaemonSetObject } from '../../../../../src/runtime/controllers/daemonset/placement-decision.js';

export const NOW = Date.parse('2026-01-01T00:10:00Z');

export function ds(spec: Partial<DaemonSetObject['spec']> = {}, extra: Partial<DaemonSetObject['metadata']> = {}): DaemonSetObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'ns', uid: 'ds-uid', generation: 3, ...extra },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'a', image: 'agent:1' }] } },
      ...spec,
    },
  } as DaemonSetObject;
}

export function node(name: string, labels: Record<string, string> = {}, spec: Record<string, unknown> = {}): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec } as Node;
}

let seq = 0;
/** A pod bound to `nodeName` at revision hash `hash`; `ready` sets Running and Ready since long ago. */
export function pod(
  nodeName: string,
  hash: string,
  o: { ready?: boolean; state?: string; labels?: Record<string, string>; phase?: string; created?: string } = {},
): Pod {
  seq++;
  const ready = o.ready ?? true;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `agent-${seq}`,
      namespace: 'ns',
      uid: `uid-${seq}`,
      creationTimestamp: o.created ?? `2026-01-01T00:0${seq % 10}:00Z`,
      labels: {
        app: 'agent',
        'controller-revision-hash': hash,
        ...(o.state ? { 'lifecycle.apps.kruise.io/state': o.state } : {}),
        ...(o.labels ?? {}),
      },
      ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true }],
    },
    spec: {
      containers: [{ name: 'a', image: 'agent:1' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
          },
        },
      },
    },
    status: {
      phase: o.phase ?? (ready ? 'Running' : 'Pending'),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    },
  } as Pod;
}

import type { KubeObject } from './types.js';
import { NAMES, meta, type InstallSpec } from './spec.js';

/**
 * API Priority and Fairness for the runtime. Without a FlowSchema of its own every request of a ServiceAccount
 * falls into the built-in `service-accounts` schema and the `workload-low` level, where a noisy neighbour's queue
 * delays the manager's Lease renewals until it loses leadership. Two levels of our own keep it apart:
 *
 * - `kruise-leader-election`: the manager's leader-election Lease calls only, a small level that lends nothing, so
 *   a renewal never waits behind the runtime's own controller traffic nor anyone else's.
 * - `kruise-runtime`: every other request of the manager and the daemons (informers, writes, webhook lookups).
 *
 * Precedence 900/1000 sits after the built-in system schemas (exempt, probes, system-leader-election,
 * kube-controller-manager, ...) and before `service-accounts` (9000), which would otherwise take these requests.
 */

const FLOW_CONTROL = 'flowcontrol.apiserver.k8s.io/v1';
export const LEADER_ELECTION_FLOW = 'kruise-leader-election';
export const RUNTIME_FLOW = 'kruise-runtime';

function level(spec: InstallSpec, name: string, limited: Record<string, unknown>): KubeObject {
  return {
    apiVersion: FLOW_CONTROL,
    kind: 'PriorityLevelConfiguration',
    metadata: meta(spec, name, false) as KubeObject['metadata'],
    spec: { type: 'Limited', limited },
  };
}

function serviceAccount(spec: InstallSpec, name: string): Record<string, unknown> {
  return { kind: 'ServiceAccount', serviceAccount: { name, namespace: spec.namespace } };
}

function flowSchema(spec: InstallSpec, name: string, precedence: number, body: Record<string, unknown>): KubeObject {
  return {
    apiVersion: FLOW_CONTROL,
    kind: 'FlowSchema',
    metadata: meta(spec, name, false) as KubeObject['metadata'],
    spec: { priorityLevelConfiguration: { name }, matchingPrecedence: precedence, ...body },
  };
}

/** The runtime's PriorityLevelConfigurations and FlowSchemas (the daemon's ServiceAccount only with a daemon). */
export function flowControl(spec: InstallSpec): KubeObject[] {
  const runtimeSubjects = [
    serviceAccount(spec, NAMES.managerServiceAccount),
    ...(spec.daemon ? [serviceAccount(spec, NAMES.daemonServiceAccount)] : []),
  ];
  return [
    level(spec, LEADER_ELECTION_FLOW, {
      // A handful of renewals every few seconds per replica: few seats, none lent, a short queue.
      nominalConcurrencyShares: 10,
      lendablePercent: 0,
      limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 2, queueLengthLimit: 20 } },
    }),
    level(spec, RUNTIME_FLOW, {
      nominalConcurrencyShares: 30,
      lendablePercent: 25,
      limitResponse: { type: 'Queue', queuing: { queues: 32, handSize: 4, queueLengthLimit: 50 } },
    }),
    flowSchema(spec, LEADER_ELECTION_FLOW, 900, {
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [serviceAccount(spec, NAMES.managerServiceAccount)],
          resourceRules: [
            {
              apiGroups: ['coordination.k8s.io'],
              resources: ['leases'],
              verbs: ['get', 'create', 'update'],
              namespaces: [spec.namespace],
            },
          ],
        },
      ],
    }),
    flowSchema(spec, RUNTIME_FLOW, 1000, {
      // By namespace: one busy namespace's objects queue apart from the others'.
      distinguisherMethod: { type: 'ByNamespace' },
      rules: [
        {
          subjects: runtimeSubjects,
          resourceRules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'], namespaces: ['*'], clusterScope: true }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        },
      ],
    }),
  ];
}

import { describe, expect, it } from 'vitest';
import {
  nodeMisfit,
  planPlacement,
  podFor,
  scaled,
  withDaemonTolerations,
} from '../../../../../src/runtime/controllers/daemonset/placement-decision.js';
import { assignedNode } from '../../../../../src/runtime/control/node-placement.js';
import { ds, node, pod } from './fixtures.js';

const names = (ps: readonly { metadata: { name?: string } }[]) => ps.map((p) => p.metadata.name);

describe('Advanced DaemonSet placement', () => {
  it('adds the native DaemonSet tolerations, network-unavailable only for host-network pods', () => {
    const keys = (t: { key?: string }[]) => t.map((x) => x.key);
    expect(keys(withDaemonTolerations(undefined, false))).toEqual([
      'node.kubernetes.io/not-ready',
      'node.kubernetes.io/unreachable',
      'node.kubernetes.io/disk-pressure',
      'node.kubernetes.io/memory-pressure',
      'node.kubernetes.io/pid-pressure',
      'node.kubernetes.io/unschedulable',
    ]);
    expect(keys(withDaemonTolerations(undefined, true))).toContain('node.kubernetes.io/network-unavailable');
    // One the template already has (same key and effect) is not repeated.
    const own = withDaemonTolerations(
      [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', value: 'x' }],
      false,
    );
    expect(own.filter((t) => t.key === 'node.kubernetes.io/not-ready')).toHaveLength(1);
  });

  it.each([
    ['a plain node', node('n1'), undefined],
    ['a cordoned node (tolerated as natively)', node('n1', {}, { unschedulable: true }), undefined],
    [
      'a not-ready node (tolerated as natively)',
      node('n1', {}, { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] }),
      undefined,
    ],
    [
      'a NoSchedule taint of its own',
      node('n1', {}, { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }),
      'untolerated taint dedicated=gpu:NoSchedule',
    ],
    ['a PreferNoSchedule taint', node('n1', {}, { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }), undefined],
  ])('a pod should run on %s', (_what, n, why) => {
    expect(nodeMisfit(ds(), n)).toBe(why);
  });

  it('follows the template nodeSelector', () => {
    const d = ds({
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: { nodeSelector: { pool: 'edge' }, containers: [{ name: 'a', image: 'agent:1' }] },
      },
    });
    expect(nodeMisfit(d, node('n1', { pool: 'edge' }))).toBeUndefined();
    expect(nodeMisfit(d, node('n2'))).toBe('node label pool is not edge');
  });

  it('makes the pod of a node: bound by metadata.name, revision label, tolerations, owner', () => {
    const d = ds({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 1 } },
    });
    const p = podFor(d, 'n7', 'abc123');
    expect(assignedNode(p)).toBe('n7');
    expect(p.metadata.labels).toEqual({ app: 'agent', 'controller-revision-hash': 'abc123' });
    expect(p.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true });
    expect(p.spec?.readinessGates).toEqual([{ conditionType: 'InPlaceUpdateReady' }]);
    expect((p.spec as { tolerations?: unknown[] }).tolerations).toHaveLength(6);
  });

  it('creates a new pod in PreparingNormal without the preNormal handlers: the hook operator puts them on', () => {
    const d = ds({ lifecycle: { preNormal: { labelsHandler: { gate: 'open' }, finalizersHandler: ['example.com/lb'] } } });
    const p = podFor(d, 'n1', 'h');
    expect(p.metadata.labels?.['lifecycle.apps.kruise.io/state']).toBe('PreparingNormal');
    expect(p.metadata.labels?.gate).toBeUndefined();
    expect(p.metadata.finalizers).toBeUndefined();
    expect(podFor(ds(), 'n1', 'h').metadata.labels?.['lifecycle.apps.kruise.io/state']).toBeUndefined();
  });

  it('creates on nodes without a pod, deletes on nodes that no longer fit, extras and pods of gone nodes', () => {
    const keep = pod('n1', 'h');
    const extra = pod('n1', 'h', { created: '2026-01-01T00:09:59Z' });
    const tainted = pod('n3', 'h');
    const gone = pod('n9', 'h');
    const failed = pod('n4', 'h', { phase: 'Failed', ready: false });
    const nodes = [node('n1'), node('n2'), node('n3', {}, { taints: [{ key: 'x', effect: 'NoExecute' }] }), node('n4')];
    const p = planPlacement({ ds: ds(), nodes, pods: [keep, extra, tainted, gone, failed], hash: 'h', surge: false });
    expect(p.desired).toEqual(['n1', 'n2', 'n4']);
    expect(p.createOn).toEqual(['n2', 'n4']);
    expect(names(p.deletePods).sort()).toEqual(names([extra, tainted, gone, failed]).sort());
  });

  it('a NoSchedule taint or a cordon keeps new pods away but does not evict; NoExecute does', () => {
    const kept = pod('n1', 'h');
    const evicted = pod('n2', 'h');
    const nodes = [
      node('n1', {}, { taints: [{ key: 'maintenance', effect: 'NoSchedule' }] }),
      node('n2', {}, { taints: [{ key: 'maintenance', effect: 'NoExecute' }] }),
      node('n3', {}, { taints: [{ key: 'maintenance', effect: 'NoSchedule' }] }),
    ];
    const p = planPlacement({ ds: ds(), nodes, pods: [kept, evicted], hash: 'h', surge: false });
    expect(p.desired).toEqual([]);
    expect(p.createOn).toEqual([]);
    expect(names(p.deletePods)).toEqual(names([evicted]));
  });

  it('a pod in PreparingDelete is up for deletion and holds its node’s replacement back (no surge)', () => {
    const leaving = pod('n1', 'old', { state: 'PreparingDelete' });
    const p = planPlacement({ ds: ds(), nodes: [node('n1')], pods: [leaving], hash: 'h', surge: false });
    expect(names(p.deletePods)).toEqual(names([leaving]));
    expect(p.createOn).toEqual([]);
    // With surge the node gets its new pod at once.
    expect(planPlacement({ ds: ds(), nodes: [node('n1')], pods: [leaving], hash: 'h', surge: true }).createOn).toEqual(['n1']);
  });

  it('with surge, a node keeps one old and one new pod', () => {
    const old = pod('n1', 'old');
    const fresh = pod('n1', 'h');
    const p = planPlacement({ ds: ds(), nodes: [node('n1')], pods: [old, fresh], hash: 'h', surge: true });
    expect(p.deletePods).toEqual([]);
    expect(planPlacement({ ds: ds(), nodes: [node('n1')], pods: [old, fresh], hash: 'h', surge: false }).deletePods).toHaveLength(1);
  });

  it('burstReplicas bounds the creates of a round', () => {
    const nodes = ['a', 'b', 'c', 'd', 'e'].map((n) => node(n));
    const p = planPlacement({ ds: ds({ burstReplicas: 2 }), nodes, pods: [], hash: 'h', surge: false });
    expect(p.createOn).toEqual(['a', 'b']);
    expect(p.heldBack).toBe(3);
    expect(planPlacement({ ds: ds({ burstReplicas: '40%' }), nodes, pods: [], hash: 'h', surge: false }).createOn).toHaveLength(2);
  });

  it('partitionedScaling creates only on the nodes the partition leaves to the update revision', () => {
    const nodes = ['a', 'b', 'c', 'd'].map((n) => node(n));
    const ru = { type: 'RollingUpdate' as const, rollingUpdate: { partition: 3, maxUnavailable: 1 } };
    const field = planPlacement({
      ds: ds({ updateStrategy: ru, scaleStrategy: { partitionedScaling: true } }),
      nodes,
      pods: [],
      hash: 'h',
      surge: false,
    });
    expect(field.createOn).toEqual(['a']);
    const annotation = ds({ updateStrategy: ru }, { annotations: { 'daemonset.kruise.io/progressive-create-pod': 'true' } });
    expect(planPlacement({ ds: annotation, nodes, pods: [], hash: 'h', surge: false }).createOn).toEqual(['a']);
    // Without it, every node gets its pod.
    expect(planPlacement({ ds: ds({ updateStrategy: ru }), nodes, pods: [], hash: 'h', surge: false }).createOn).toHaveLength(4);
  });

  it.each([
    [undefined, 10, true, 7, 7],
    [3, 10, true, 0, 3],
    ['25%', 10, true, 0, 3],
    ['25%', 10, false, 0, 2],
    ['junk', 10, true, 1, 1],
  ] as const)('scaled(%s of %i, roundUp %s, default %i) = %i', (v, total, up, dflt, want) => {
    expect(scaled(v, total, up, dflt)).toBe(want);
  });
});

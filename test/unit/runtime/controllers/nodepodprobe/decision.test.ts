import { describe, expect, it } from 'vitest';
import {
  decideNodePodProbe,
  type MarkedPodView,
  type NodePodProbeObject,
  type NodeView,
  type PodProbeMarkerObject,
} from '../../../../../src/runtime/controllers/nodepodprobe/decision.js';

const node = (over: Partial<NodeView> = {}): NodeView => ({ name: 'n1', ready: true, deleting: false, virtual: false, ...over });

const marker: PodProbeMarkerObject = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'PodProbeMarker',
  metadata: { name: 'm', namespace: 'ns' },
  spec: {
    selector: { matchLabels: { app: 'game' } },
    probes: [
      {
        name: 'healthy',
        containerName: 'main',
        probe: { exec: { command: ['true'] } },
        podConditionType: 'game/healthy',
        markerPolicy: [
          { state: 'Succeeded', labels: { nginx: 'healthy' }, annotations: { cost: '10' } },
          { state: 'Failed', labels: { broken: 'yes' }, annotations: { cost: '-10' } },
        ],
      },
      { name: 'cond-only', containerName: 'main', probe: { exec: { command: ['true'] } }, podConditionType: 'game/other' },
    ],
  },
};

function pod(over: Partial<MarkedPodView> = {}): MarkedPodView {
  return { namespace: 'ns', name: 'p', uid: 'u1', active: true, labels: {}, annotations: {}, conditions: [], ...over };
}

function npp(states: Array<{ name: string; state: 'Succeeded' | 'Failed' | 'Unknown'; message?: string }>, uid = 'u1'): NodePodProbeObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodePodProbe',
    metadata: { name: 'n1', resourceVersion: '3' },
    spec: { podProbes: [{ name: 'p', namespace: 'ns', uid, IP: '10.0.0.1', probes: [] }] },
    status: {
      podProbeStatuses: [
        {
          name: 'p',
          namespace: 'ns',
          uid,
          probeStates: states.map((s) => ({ ...s, lastProbeTime: '2026-01-01T00:00:01Z', lastTransitionTime: '2026-01-01T00:00:00Z' })),
        },
      ],
    },
  };
}

const lookups = (p: MarkedPodView | undefined) => ({
  pod: (ns: string, name: string) => (p && p.namespace === ns && p.name === name ? p : undefined),
  marker: (ns: string, name: string) => (ns === 'ns' && name === 'm' ? marker : undefined),
});

describe('decideNodePodProbe', () => {
  it.each([
    ['creates one for a Ready node', node(), null, [{ type: 'create', name: 'n1' }]],
    ['waits for a node that is not Ready', node({ ready: false }), null, []],
    ['creates none for a virtual-kubelet node', node({ virtual: true }), null, []],
    ['deletes it with its node', null, npp([]), [{ type: 'delete', name: 'n1' }]],
    ['deletes it when its node is being deleted', node({ deleting: true }), npp([]), [{ type: 'delete', name: 'n1' }]],
  ])('%s', (_n, nd, np, want) => {
    expect(decideNodePodProbe({ node: nd, nodePodProbe: np, ...lookups(pod()) })).toEqual(want);
  });

  it('marks a Succeeded result: condition True, the Succeeded labels and annotations, the Failed keys removed', () => {
    const p = pod({ labels: { broken: 'yes' } });
    expect(
      decideNodePodProbe({ node: node(), nodePodProbe: npp([{ name: 'm#healthy', state: 'Succeeded', message: 'ok' }]), ...lookups(p) }),
    ).toEqual([
      {
        type: 'mark',
        namespace: 'ns',
        name: 'p',
        uid: 'u1',
        labels: { broken: null, nginx: 'healthy' },
        annotations: { cost: '10' },
        conditions: [
          {
            type: 'game/healthy',
            status: 'True',
            lastProbeTime: '2026-01-01T00:00:01Z',
            lastTransitionTime: '2026-01-01T00:00:00Z',
            message: 'ok',
          },
        ],
      },
    ]);
  });

  it('flips on a Failed result: condition False, the Succeeded label removed, the Failed ones set', () => {
    const p = pod({ labels: { nginx: 'healthy' }, annotations: { cost: '10' }, conditions: [{ type: 'game/healthy', status: 'True' }] });
    const [a] = decideNodePodProbe({ node: node(), nodePodProbe: npp([{ name: 'm#healthy', state: 'Failed' }]), ...lookups(p) });
    expect(a).toMatchObject({
      labels: { nginx: null, broken: 'yes' },
      annotations: { cost: '-10' },
      conditions: [{ type: 'game/healthy', status: 'False' }],
    });
  });

  it('writes nothing when the pod already shows the result', () => {
    const p = pod({
      labels: { nginx: 'healthy' },
      annotations: { cost: '10' },
      conditions: [
        { type: 'game/healthy', status: 'True', message: 'ok' },
        { type: 'game/other', status: 'False' },
      ],
    });
    const states = [
      { name: 'm#healthy', state: 'Succeeded' as const, message: 'ok' },
      { name: 'm#cond-only', state: 'Failed' as const },
    ];
    expect(decideNodePodProbe({ node: node(), nodePodProbe: npp(states), ...lookups(p) })).toEqual([]);
  });

  it('an Unknown result sets the condition False and leaves labels and annotations alone', () => {
    const p = pod({ labels: { nginx: 'healthy' } });
    const [a] = decideNodePodProbe({ node: node(), nodePodProbe: npp([{ name: 'm#healthy', state: 'Unknown' }]), ...lookups(p) });
    expect(a).toEqual({
      type: 'mark',
      namespace: 'ns',
      name: 'p',
      uid: 'u1',
      conditions: [expect.objectContaining({ type: 'game/healthy', status: 'False' })],
    });
  });

  it('ignores results of a marker that is gone or being deleted, or of a probe it no longer has', () => {
    const states = [
      { name: 'gone#healthy', state: 'Succeeded' as const },
      { name: 'm#nope', state: 'Succeeded' as const },
      { name: 'no-separator', state: 'Succeeded' as const },
    ];
    expect(decideNodePodProbe({ node: node(), nodePodProbe: npp(states), ...lookups(pod()) })).toEqual([]);
  });

  it('prunes the entry of a pod that is gone, finished or replaced by a pod of another uid, and marks none of them', () => {
    for (const p of [undefined, pod({ active: false }), pod({ uid: 'u2' })]) {
      const actions = decideNodePodProbe({ node: node(), nodePodProbe: npp([{ name: 'm#healthy', state: 'Succeeded' }]), ...lookups(p) });
      expect(actions).toEqual([{ type: 'prune', name: 'n1', resourceVersion: '3', podProbes: [] }]);
    }
  });
});

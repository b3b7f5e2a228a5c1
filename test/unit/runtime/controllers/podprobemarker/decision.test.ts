import { describe, expect, it } from 'vitest';
import {
  decidePodProbeMarker,
  nodeProbesFor,
  probeTarget,
  type NodePodProbeObject,
  type PodProbeMarkerObject,
  type ProbePodView,
} from '../../../../../src/runtime/controllers/podprobemarker/decision.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import type { PodProbe } from '../../../../../src/api/kinds/podprobemarker.js';

const FIN = 'kruise.io/node-pod-probe-cleanup';

function marker(
  over: Partial<PodProbeMarkerObject['metadata']> = {},
  probes?: PodProbeMarkerObject['spec']['probes'],
): PodProbeMarkerObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'PodProbeMarker',
    metadata: { name: 'm', namespace: 'ns', generation: 2, resourceVersion: '5', finalizers: [FIN], ...over },
    spec: {
      selector: { matchLabels: { app: 'game' } },
      probes: probes ?? [
        { name: 'idle', containerName: 'main', probe: { exec: { command: ['true'] } }, podConditionType: 'game/idle' },
        { name: 'http', containerName: 'main', probe: { httpGet: { port: 'web', path: '/' } }, podConditionType: 'game/http' },
      ],
    },
    status: { observedGeneration: 2, matchedPods: 1 },
  };
}

function pod(name: string, over: Partial<ProbePodView> = {}): ProbePodView {
  return {
    namespace: 'ns',
    name,
    uid: `uid-${name}`,
    ip: `10.0.0.${name.length}`,
    nodeName: 'n1',
    labels: { app: 'game' },
    containers: [{ name: 'main', ports: [{ name: 'web', containerPort: 8080 }] }],
    ...over,
  };
}

function npp(name: string, podProbes: PodProbe[] = []): NodePodProbeObject {
  return { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'NodePodProbe', metadata: { name, resourceVersion: '9' }, spec: { podProbes } };
}

const exec = { name: 'm#idle', containerName: 'main', probe: { exec: { command: ['true'] } } };
const http = { name: 'm#http', containerName: 'main', probe: { httpGet: { port: 8080, path: '/' } } };

describe('probeTarget', () => {
  const base: Pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: { nodeName: 'n1', containers: [{ name: 'main', ports: [{ name: 'web', containerPort: 80 }] }] },
    status: { phase: 'Running', podIP: '10.1.1.1', conditions: [{ type: 'Initialized', status: 'True' }] },
  };
  it.each([
    ['a running, initialized, bound pod', base, true],
    ['an unbound pod', { ...base, spec: { ...base.spec!, nodeName: undefined } }, false],
    ['a pod not initialized', { ...base, status: { ...base.status, conditions: [{ type: 'Initialized', status: 'False' }] } }, false],
    ['a finished pod', { ...base, status: { ...base.status, phase: 'Succeeded' } }, false],
    ['a pod being deleted', { ...base, metadata: { ...base.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, false],
  ])('%s: %s', (_name, p, want) => {
    expect(!!probeTarget(p as Pod)).toBe(want);
  });
  it('keeps the IP and the named ports', () => {
    expect(probeTarget(base)).toMatchObject({
      ip: '10.1.1.1',
      containers: [{ name: 'main', ports: [{ name: 'web', containerPort: 80 }] }],
    });
  });
});

describe('nodeProbesFor', () => {
  it('names each probe <marker>#<probe> and resolves a named port against the container', () => {
    expect(nodeProbesFor(marker(), pod('p'))).toEqual({ probes: [exec, http], problems: [] });
  });
  it('leaves out a probe whose named port the container lacks, and says why', () => {
    const r = nodeProbesFor(marker(), pod('p', { containers: [{ name: 'main', ports: [] }] }));
    expect(r.probes).toEqual([exec]);
    expect(r.problems).toEqual(['probe "http": container "main" of pod ns/p has no port named "web"']);
  });
  it('takes a numeric string port as a number', () => {
    const m = marker({}, [{ name: 't', containerName: 'main', probe: { tcpSocket: { port: '81' } } }]);
    expect(nodeProbesFor(m, pod('p')).probes[0]!.probe.tcpSocket!.port).toBe(81);
  });
});

describe('decidePodProbeMarker', () => {
  it('adds the finalizer to a new marker and lists its probes for each selected pod on its node', () => {
    const d = decidePodProbeMarker({
      marker: marker({ finalizers: [] }),
      pods: [pod('a'), pod('b', { nodeName: 'n2' })],
      nodePodProbes: [npp('n1'), npp('n2')],
    });
    expect(d.finalizer).toBe('add');
    expect(d.writes).toEqual([
      { name: 'n1', resourceVersion: '9', podProbes: [{ name: 'a', namespace: 'ns', uid: 'uid-a', IP: '10.0.0.1', probes: [exec, http] }] },
      { name: 'n2', resourceVersion: '9', podProbes: [{ name: 'b', namespace: 'ns', uid: 'uid-b', IP: '10.0.0.1', probes: [exec, http] }] },
    ]);
    expect(d.status).toEqual({ observedGeneration: 2, matchedPods: 2 });
  });

  it('writes nothing when the NodePodProbes already hold what it selects', () => {
    const d = decidePodProbeMarker({
      marker: marker(),
      pods: [pod('a')],
      nodePodProbes: [npp('n1', [{ name: 'a', namespace: 'ns', uid: 'uid-a', IP: '10.0.0.1', probes: [exec, http] }])],
    });
    expect(d).toEqual({ writes: [], problems: [] });
  });

  it("keeps other markers' probes in place and replaces its own in place (no back-and-forth between markers)", () => {
    const other = { name: 'o#x', containerName: 'main', probe: { exec: { command: ['x'] } } };
    const old = { ...exec, probe: { exec: { command: ['false'] } } };
    const d = decidePodProbeMarker({
      marker: marker(),
      pods: [pod('a')],
      nodePodProbes: [npp('n1', [{ name: 'a', namespace: 'ns', uid: 'uid-a', IP: '10.0.0.1', probes: [old, other] }])],
    });
    expect(d.writes[0]!.podProbes[0]!.probes).toEqual([exec, other, http]);
  });

  it('drops its probes from a pod it no longer selects, and the pod entry once it holds none', () => {
    const d = decidePodProbeMarker({
      marker: marker(),
      pods: [pod('a', { labels: { app: 'other' } })],
      nodePodProbes: [
        npp('n1', [
          { name: 'a', namespace: 'ns', uid: 'uid-a', IP: '10.0.0.1', probes: [exec, http] },
          { name: 'z', namespace: 'other-ns', uid: 'uid-z', IP: '10.0.0.9', probes: [{ ...exec }] },
        ]),
      ],
    });
    expect(d.writes).toEqual([
      { name: 'n1', resourceVersion: '9', podProbes: [{ name: 'z', namespace: 'other-ns', uid: 'uid-z', IP: '10.0.0.9', probes: [exec] }] },
    ]);
    expect(d.status).toEqual({ observedGeneration: 2, matchedPods: 0 });
  });

  it('drops a probe removed from the spec', () => {
    const d = decidePodProbeMarker({
      marker: marker({}, [{ name: 'idle', containerName: 'main', probe: { exec: { command: ['true'] } }, podConditionType: 'c' }]),
      pods: [pod('a')],
      nodePodProbes: [npp('n1', [{ name: 'a', namespace: 'ns', uid: 'uid-a', IP: '10.0.0.1', probes: [exec, http] }])],
    });
    expect(d.writes[0]!.podProbes[0]!.probes).toEqual([exec]);
  });

  it('updates a pod IP that changed', () => {
    const d = decidePodProbeMarker({
      marker: marker(),
      pods: [pod('a', { ip: '10.9.9.9' })],
      nodePodProbes: [npp('n1', [{ name: 'a', namespace: 'ns', uid: 'uid-a', IP: '', probes: [exec, http] }])],
    });
    expect(d.writes[0]!.podProbes[0]!.IP).toBe('10.9.9.9');
  });

  it('skips a node without a NodePodProbe yet, but counts its pods', () => {
    const m = { ...marker(), status: { observedGeneration: 1 } };
    const d = decidePodProbeMarker({ marker: m, pods: [pod('a', { nodeName: 'n9' })], nodePodProbes: [npp('n1')] });
    expect(d.writes).toEqual([]);
    expect(d.status).toEqual({ observedGeneration: 2, matchedPods: 1 });
  });

  it('on deletion removes its probes everywhere, then its finalizer', () => {
    const d = decidePodProbeMarker({
      marker: marker({ deletionTimestamp: '2026-01-01T00:00:00Z' }),
      pods: [pod('a')],
      nodePodProbes: [npp('n1', [{ name: 'a', namespace: 'ns', uid: 'uid-a', IP: '10.0.0.1', probes: [exec, http] }])],
    });
    expect(d).toEqual({ writes: [{ name: 'n1', resourceVersion: '9', podProbes: [] }], problems: [], finalizer: 'remove' });
  });

  it('on deletion without its finalizer does nothing', () => {
    const d = decidePodProbeMarker({
      marker: marker({ deletionTimestamp: 't', finalizers: [] }),
      pods: [pod('a')],
      nodePodProbes: [npp('n1')],
    });
    expect(d).toEqual({ writes: [], problems: [] });
  });

  it('ignores pods of other namespaces', () => {
    const d = decidePodProbeMarker({ marker: marker(), pods: [pod('a', { namespace: 'x' })], nodePodProbes: [npp('n1')] });
    expect(d.writes).toEqual([]);
    expect(d.status?.matchedPods).toBe(0);
  });
});

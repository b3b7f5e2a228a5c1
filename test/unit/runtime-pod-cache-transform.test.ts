import { describe, expect, it } from 'vitest';
import { podCacheTransform } from '../../src/runtime/manager/transforms.js';
import type { KubeObject } from '../../src/runtime/core/types.js';

describe('pod cache transform: container statuses', () => {
  const pod = (statuses: object[]): KubeObject =>
    ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [] }, status: { phase: 'Running', containerStatuses: statuses } }) as unknown as KubeObject;

  it('keeps the previous instance exit code (and nothing else of lastState), which the sidecar terminator reads', () => {
    const slim = podCacheTransform(
      pod([
        {
          name: 'sidecar',
          containerID: 'containerd://b',
          restartCount: 1,
          image: 'example.io/x:1',
          state: { running: { startedAt: 't' } },
          lastState: { terminated: { exitCode: 1, reason: 'Error', containerID: 'containerd://a', finishedAt: 't0' } },
        },
      ]),
    );
    expect(slim.status?.containerStatuses).toEqual([
      { name: 'sidecar', containerID: 'containerd://b', restartCount: 1, state: { running: { startedAt: 't' } }, lastState: { terminated: { exitCode: 1 } } },
    ]);
  });

  it('adds no lastState when the container never terminated before', () => {
    const slim = podCacheTransform(pod([{ name: 'main', restartCount: 0, state: { running: {} }, lastState: {} }]));
    expect(slim.status?.containerStatuses?.[0]).not.toHaveProperty('lastState');
  });
});

import { describe, expect, it } from 'vitest';
import { PODS } from '../../../../src/contracts/index.js';
import { cachePlanOf } from '../../../../src/runtime/core/controller.js';
import { CONTROLLERS, WEBHOOKS } from '../../../../src/runtime/manager/registry.js';
import type { KubeObject, Pod } from '../../../../src/runtime/core/types.js';

// The manager's pod cache, as the registered controllers' declared reads make it.
const podCacheTransform = (o: KubeObject) =>
  cachePlanOf([...CONTROLLERS, ...WEBHOOKS])
    .for(PODS)
    .transform(o) as Pod;

describe('pod cache transform: container statuses', () => {
  const pod = (statuses: object[]): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns', uid: 'u' },
      spec: { containers: [] },
      status: { phase: 'Running', containerStatuses: statuses },
    }) as unknown as KubeObject;

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
      {
        name: 'sidecar',
        containerID: 'containerd://b',
        restartCount: 1,
        // The SidecarSet controller compares the running image with the spec's; the CloneSet controller reads it for
        // in-place update completion.
        image: 'example.io/x:1',
        state: { running: { startedAt: 't' } },
        lastState: { terminated: { exitCode: 1 } },
      },
    ]);
  });

  it('keeps no exit code when the container never terminated before', () => {
    const slim = podCacheTransform(pod([{ name: 'main', restartCount: 0, state: { running: {} }, lastState: {} }]));
    expect(slim.status?.containerStatuses?.[0]?.lastState?.terminated).toBeUndefined();
  });
});

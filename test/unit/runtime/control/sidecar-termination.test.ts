import { describe, expect, it } from 'vitest';
import { decide, isCandidate, NODE_UNKNOWN_REQUEUE_MS } from '../../../../src/runtime/control/sidecar-termination.js';
import { crr, pod, QUICK, rows } from './sidecar-termination-table.js';

describe('sidecar terminator decision', () => {
  for (const r of rows) {
    it(r.name, () => {
      const d = decide({ pod: pod(r.pod), nodeKind: 'node' in r ? r.node : 'normal', crrExists: r.crrExists ?? false });
      if (r.expect.action === 'act') expect(d).toEqual(r.expect);
      else {
        expect(d.action).toBe(r.expect.action);
        expect((d as { reason: string }).reason).toMatch(/\S/);
        // Only an unknown node asks for a timed requeue; every other wait is woken by a watch event.
        expect(d.action === 'wait' ? d.requeueAfterMs : undefined).toBe(
          'node' in r && r.node === undefined ? NODE_UNKNOWN_REQUEUE_MS : undefined,
        );
      }
    });
  }

  it('Never x exit codes x node kinds: a kill sidecar is stopped on normal nodes for every exit code', () => {
    for (const code of [0, 1, 2, 127, 137, 143, 255]) {
      for (const node of ['normal', 'virtual-kubelet'] as const) {
        const d = decide({
          pod: pod({ mains: { app: code }, sidecars: { envoy: ['kill+image', 'running'] } }),
          nodeKind: node,
          crrExists: false,
        });
        if (node === 'normal') expect(d).toEqual(crr('envoy'));
        else expect(d).toEqual({ action: 'act', swapImages: [{ container: 'envoy', image: QUICK }] });
      }
    }
  });

  it('OnFailure x exit codes: acts only for 0', () => {
    for (const code of [0, 1, 2, 137, 143]) {
      const d = decide({
        pod: pod({ restartPolicy: 'OnFailure', mains: { app: code }, sidecars: { envoy: ['kill', 'running'] } }),
        nodeKind: 'normal',
        crrExists: false,
      });
      expect(d.action).toBe(code === 0 ? 'act' : 'wait');
    }
  });

  it('the image already swapped is not swapped again', () => {
    const p = pod({ mains: { app: 0 }, sidecars: { envoy: ['image', 'running'] } });
    p.spec!.containers[1]!.image = QUICK;
    expect(decide({ pod: p, nodeKind: 'virtual-kubelet', crrExists: false }).action).toBe('skip');
  });

  it('isCandidate filters informer events cheaply', () => {
    expect(isCandidate(pod({ mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } }))).toBe(true);
    expect(isCandidate(pod({ restartPolicy: 'Always', mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } }))).toBe(false);
    expect(isCandidate(pod({ mains: { app: 0 }, sidecars: {} }))).toBe(false);
    expect(isCandidate(pod({ mains: { app: 0 }, sidecars: { envoy: ['image', 'running'] } }))).toBe(true);
  });
});

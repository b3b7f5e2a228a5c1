import { describe, expect, it } from 'vitest';
import {
  decide,
  ignoresSidecarExitCode,
  isCandidate,
  NODE_UNKNOWN_REQUEUE_MS,
  sidecarShutdownOf,
} from '../../../../src/runtime/control/sidecar-termination.js';
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

describe('sidecar terminator decision: sidecars declared by name or pattern (kruise.cdk8s.io/terminate-sidecars)', () => {
  // An injected container carries no env marker: only the pod's annotation makes it a sidecar.
  const declared = (annotation: string, proxy: 'running' | number, app: 'running' | number, restartPolicy = 'Never') => {
    const p = pod({ restartPolicy, mains: { app, 'istio-proxy': proxy }, sidecars: {} });
    p.metadata.annotations = { 'kruise.cdk8s.io/terminate-sidecars': annotation };
    return p;
  };
  const ISTIO = '[{"name":"istio-proxy"}]';
  const ISTIO_IGNORE = '[{"name":"istio-proxy","ignoreExitCode":true}]';
  const table: Array<[string, ReturnType<typeof declared>, ReturnType<typeof decide>['action'], object?]> = [
    ['main running: wait', declared(ISTIO, 'running', 'running'), 'wait'],
    ['main done: the proxy is stopped through the CRR', declared(ISTIO, 'running', 0), 'act', crr('istio-proxy')],
    ['by image pattern', declared('[{"imagePattern":"istio-proxy:1$"}]', 'running', 1), 'act', crr('istio-proxy')],
    [
      'ignoreExitCode: the CRR plus the phase from the mains',
      declared(ISTIO_IGNORE, 'running', 0),
      'act',
      {
        ...crr('istio-proxy'),
        markTerminated: { phase: 'Succeeded' },
      },
    ],
    [
      'ignoreExitCode, main failed: Failed',
      declared(ISTIO_IGNORE, 'running', 3),
      'act',
      { ...crr('istio-proxy'), markTerminated: { phase: 'Failed' } },
    ],
    ['a pattern matching every container declares nothing', declared('[{"namePattern":"."}]', 'running', 0), 'skip'],
    ['a never-matching pattern declares nothing', declared('[{"namePattern":"(a+)+"}]', 'running', 0), 'skip'],
    ['no such container (not injected): nothing to do', declared('[{"name":"linkerd-proxy"}]', 'running', 0), 'skip'],
    ['restartPolicy Always: skipped', declared(ISTIO, 'running', 0, 'Always'), 'skip'],
  ];
  for (const [name, p, action, expected] of table) {
    it(name, () => {
      const d = decide({ pod: p, nodeKind: 'normal', crrExists: false });
      expect(d.action).toBe(action);
      if (expected) expect(d).toEqual(expected);
    });
  }

  it('isCandidate sees the declaration', () => {
    expect(isCandidate(declared(ISTIO, 'running', 'running'))).toBe(true);
    expect(isCandidate(declared('[{"name":"linkerd-proxy"}]', 'running', 'running'))).toBe(false);
  });

  it('the shutdown and ignore-exit-code the pod declares per container', () => {
    const p = declared(
      '[{"name":"istio-proxy","ignoreExitCode":true,"shutdown":{"exec":{"command":["pilot-agent","request","POST","quitquitquit"]}}}]',
      'running',
      0,
    );
    expect(sidecarShutdownOf(p, 'istio-proxy')).toEqual({ exec: { command: ['pilot-agent', 'request', 'POST', 'quitquitquit'] } });
    expect(sidecarShutdownOf(p, 'app')).toBeUndefined();
    expect(
      ignoresSidecarExitCode(
        p,
        p.spec!.containers.find((c) => c.name === 'istio-proxy')!,
      ),
    ).toBe(true);
    expect(
      ignoresSidecarExitCode(
        p,
        p.spec!.containers.find((c) => c.name === 'app')!,
      ),
    ).toBe(false);
  });
});

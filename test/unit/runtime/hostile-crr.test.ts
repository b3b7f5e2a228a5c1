// Creating a ContainerRecreateRequest must not be a way to exec into a pod: the webhook refuses
// user-supplied preStop/ports/statusContext and fills them from the pod; the daemon plans the preStop
// from the pod's own container only, and sends an httpGet hook only where the kubelet would.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/runtime/core/types.js';
import { planPreStop } from '../../../src/runtime/daemon/crr/kill.js';
import { defaultCrr, userSetReadOnlyField } from '../../../src/runtime/webhooks/containerrecreaterequest/decision.js';

const pod: Pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'uid-1' },
  spec: {
    nodeName: 'node-a',
    containers: [
      { name: 'app', image: 'a' },
      {
        name: 'envoy',
        image: 'e',
        lifecycle: { preStop: { httpGet: { port: 'admin', path: '/drain' } } },
        ports: [{ name: 'admin', containerPort: 15000 }],
      },
    ],
  },
  status: {
    phase: 'Running',
    containerStatuses: [
      { name: 'app', containerID: 'containerd://aaa', restartCount: 0 },
      { name: 'envoy', containerID: 'containerd://eee', restartCount: 2 },
    ],
  },
};

const crr = (containers: Array<Record<string, unknown>>) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'ContainerRecreateRequest',
  metadata: { name: 'c', namespace: 'ns' },
  spec: { podName: 'p', containers },
});

describe('CRR webhook refuses read-only container fields', () => {
  it.each([
    [
      'an exec preStop',
      { name: 'app', preStop: { exec: { command: ['sh', '-c', 'cat /var/run/secrets/token'] } } },
      /spec\.containers\[0\]\.preStop: Forbidden: filled from the pod/,
    ],
    [
      'an httpGet preStop to another host',
      { name: 'app', preStop: { httpGet: { host: '10.0.0.1', port: 80, path: '/admin' } } },
      /spec\.containers\[0\]\.preStop: Forbidden/,
    ],
    ['an empty preStop', { name: 'app', preStop: {} }, /spec\.containers\[0\]\.preStop/],
    ['ports', { name: 'app', ports: [{ name: 'x', containerPort: 1 }] }, /spec\.containers\[0\]\.ports: Forbidden/],
    [
      'statusContext',
      { name: 'app', statusContext: { containerID: 'containerd://other', restartCount: 0 } },
      /spec\.containers\[0\]\.statusContext: Forbidden/,
    ],
  ])('%s', (_name, container, message) => {
    const r = defaultCrr(crr([container]), pod, false);
    expect(r.allowed).toBe(false);
    if (r.allowed) return;
    expect(r.code).toBe(400);
    expect(r.message).toMatch(message);
  });

  it('names the offending container index', () => {
    expect(userSetReadOnlyField(crr([{ name: 'app' }, { name: 'envoy', ports: [] }]))).toMatch(/^spec\.containers\[1\]\.ports/);
  });

  it("fills preStop and ports from the pod's own container", () => {
    const r = defaultCrr(crr([{ name: 'envoy' }, { name: 'app' }]), pod, false);
    if (!r.allowed) throw new Error(r.message);
    expect(r.patch).toContainEqual({
      op: 'add',
      path: '/spec/containers/0/preStop',
      value: { httpGet: { port: 'admin', path: '/drain' } },
    });
    expect(r.patch).toContainEqual({ op: 'add', path: '/spec/containers/0/ports', value: [{ name: 'admin', containerPort: 15000 }] });
    expect(r.patch?.some((p) => p.path.startsWith('/spec/containers/1/preStop'))).toBe(false);
  });
});

describe("daemon plans the pod's own preStop", () => {
  const container = (preStop: unknown, ports?: unknown) => ({ name: 'c', image: 'i', lifecycle: { preStop }, ...(ports ? { ports } : {}) });
  it.each([
    ['no container in the pod', undefined, '10.1.2.3', { type: 'none' }],
    ['a container without hook', { name: 'c' }, '10.1.2.3', { type: 'none' }],
    ['exec', container({ exec: { command: ['sleep', '1'] } }), '10.1.2.3', { type: 'exec', command: ['sleep', '1'] }],
    [
      'httpGet without host goes to the pod IP',
      container({ httpGet: { port: 8080, path: 'quit' } }),
      '10.1.2.3',
      { type: 'httpGet', url: 'http://10.1.2.3:8080/quit', headers: {} },
    ],
    [
      'httpGet to an IPv6 pod IP',
      container({ httpGet: { port: 8080 } }),
      'fd00::5',
      { type: 'httpGet', url: 'http://[fd00::5]:8080/', headers: {} },
    ],
    [
      'httpGet with the host the pod names',
      container({ httpGet: { host: 'localhost', port: 9, scheme: 'HTTPS', httpHeaders: [{ name: 'X', value: 'y' }] } }),
      '10.1.2.3',
      { type: 'httpGet', url: 'https://localhost:9/', headers: { X: 'y' } },
    ],
    [
      'httpGet with a named port',
      container({ httpGet: { port: 'admin' } }, [{ name: 'admin', containerPort: 15000 }]),
      '10.1.2.3',
      { type: 'httpGet', url: 'http://10.1.2.3:15000/', headers: {} },
    ],
  ] as const)('%s', (_name, c, ip, want) => {
    expect(planPreStop(c as never, ip)).toEqual(want);
  });

  it('never falls back to the node loopback when the pod has no IP', () => {
    expect(planPreStop(container({ httpGet: { port: 8080 } }) as never, undefined)).toMatchObject({
      type: 'error',
      message: expect.stringMatching(/names no host and the pod has no IP/),
    });
  });

  it('refuses an unknown named port and a port out of range', () => {
    expect(planPreStop(container({ httpGet: { port: 'nope' } }) as never, '10.0.0.1')).toMatchObject({
      type: 'error',
      message: expect.stringMatching(/not a named port/),
    });
    expect(planPreStop(container({ httpGet: { port: 70000 } }) as never, '10.0.0.1')).toMatchObject({
      type: 'error',
      message: expect.stringMatching(/not a TCP port/),
    });
  });
});

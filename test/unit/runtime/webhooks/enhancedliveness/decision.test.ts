// The pod webhook's enhanced-liveness step, through the pod-mutator adapter: the JSON patch it answers, and its place
// in the admission order (after every other step, so injected sidecars' probes move too).
import { describe, expect, it } from 'vitest';
import { POD_MUTATOR_ORDER } from '../../../../../src/runtime/control/admission-order.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import { enhanceLiveness } from '../../../../../src/runtime/webhooks/enhancedliveness/decision.js';
import { enhancedLivenessWebhook } from '../../../../../src/runtime/webhooks/enhancedliveness/index.js';
import type { ControllerContext } from '../../../../../src/runtime/core/controller.js';
import type { AdmissionRequest } from '../../../../../src/runtime/core/webhook/server.js';

const probe = { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 3 };
const pod = (annotation?: string, withProbe = true): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'p',
    namespace: 'ns',
    ...(annotation !== undefined ? { annotations: { 'apps.kruise.io/using-enhanced-liveness': annotation } } : {}),
  },
  spec: { containers: [{ name: 'app', image: 'i', ...(withProbe ? { livenessProbe: probe } : {}) }] },
});

describe('enhanced liveness webhook step', () => {
  it('runs last on /mutate-pod', () => {
    const others = Object.entries(POD_MUTATOR_ORDER).filter(([k]) => k !== 'enhancedLiveness');
    for (const [, order] of others) expect(POD_MUTATOR_ORDER.enhancedLiveness).toBeGreaterThan(order);
  });

  it('moves the probes only of a pod annotated "true"', () => {
    for (const v of [undefined, 'false', 'TRUE', 'yes']) {
      const p = pod(v);
      expect(enhanceLiveness(p)).toBeUndefined();
      expect(p.spec!.containers[0]!.livenessProbe).toEqual(probe);
    }
    const p = pod('true');
    expect(enhanceLiveness(p)).toEqual({ moved: ['app'] });
    expect(p.spec!.containers[0]!.livenessProbe).toBeUndefined();
  });

  it('warns when the pod opts in with no liveness probe', () => {
    expect(enhanceLiveness(pod('true', false))).toEqual({ warnings: [expect.stringMatching(/no container declares a livenessProbe/)] });
  });

  it('answers a patch that removes the probe and adds the annotation, on CREATE only', async () => {
    const [handler] = enhancedLivenessWebhook.setup({ featureGates: new Map() } as unknown as ControllerContext) as never as [
      { handle(req: AdmissionRequest): Promise<{ allowed: boolean; patch?: unknown[] }> },
    ];
    const req = (operation: string): AdmissionRequest =>
      ({
        uid: '1',
        operation,
        namespace: 'ns',
        object: pod('true'),
        kind: { group: '', version: 'v1', kind: 'Pod' },
      }) as unknown as AdmissionRequest;
    const created = await handler.handle(req('CREATE'));
    expect(created.allowed).toBe(true);
    expect(created.patch).toEqual(
      expect.arrayContaining([
        { op: 'remove', path: '/spec/containers/0/livenessProbe' },
        {
          op: 'add',
          path: '/metadata/annotations/apps.kruise.io~1container-probe-context',
          value: JSON.stringify([{ name: 'app', livenessProbe: probe }]),
        },
      ]),
    );
    expect((await handler.handle(req('UPDATE'))).patch).toBeUndefined();
  });

  it('with PodProbeMarkerGate off, still moves the probe but warns that nothing runs it', async () => {
    const [handler] = enhancedLivenessWebhook.setup({
      featureGates: new Map([['PodProbeMarkerGate', false]]),
    } as unknown as ControllerContext) as never as [{ handle(req: AdmissionRequest): Promise<{ patch?: unknown[]; warnings?: string[] }> }];
    const res = await handler.handle({
      uid: '1',
      operation: 'CREATE',
      namespace: 'ns',
      object: pod('true'),
      kind: { group: '', version: 'v1', kind: 'Pod' },
    } as unknown as AdmissionRequest);
    expect(res.patch).toEqual(expect.arrayContaining([{ op: 'remove', path: '/spec/containers/0/livenessProbe' }]));
    expect(res.warnings).toEqual([expect.stringMatching(/^gate PodProbeMarkerGate is off in this runtime/)]);
  });
});

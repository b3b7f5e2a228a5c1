import { describe, expect, it } from 'vitest';
import { POD_MUTATOR_ORDER } from '../../../../../src/runtime/control/admission-order.js';
import { composeAdmission, type OrderedAdmissionHandler } from '../../../../../src/runtime/core/webhook/compose.js';
import type { AdmissionRequest, AdmissionResult } from '../../../../../src/runtime/core/webhook/server.js';
import { podMutator } from '../../../../../src/runtime/core/webhook/pod-mutator.js';
import type { KubeObject, Pod } from '../../../../../src/runtime/core/types.js';

const pod = (): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns' },
    spec: { containers: [{ name: 'app', image: 'a' }] },
  }) as KubeObject;

function request(object: KubeObject): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    operation: 'CREATE',
    object,
  };
}

function step(
  name: string,
  order: number | undefined,
  handle: (req: AdmissionRequest) => AdmissionResult,
  type: 'mutating' | 'validating' = 'mutating',
): OrderedAdmissionHandler {
  return { name, path: '/mutate-pod', type, order, handle: async (req) => handle(req) };
}

describe('composable admission', () => {
  it('runs the steps of one path in order; each sees what the previous left; one minimal patch comes back', async () => {
    const seen: string[][] = [];
    const inject = step('inject', POD_MUTATOR_ORDER.sidecarSetInjection, (req) => {
      seen.push((req.object!.spec as { containers: Array<{ name: string }> }).containers.map((c) => c.name));
      return { allowed: true, patch: [{ op: 'add', path: '/spec/containers/-', value: { name: 'logtail', image: 'l' } }] };
    });
    const gates = step('gates', POD_MUTATOR_ORDER.readinessGates, (req) => {
      seen.push((req.object!.spec as { containers: Array<{ name: string }> }).containers.map((c) => c.name));
      return {
        allowed: true,
        patch: [{ op: 'add', path: '/spec/readinessGates', value: [{ conditionType: 'KruisePodReady' }] }],
        warnings: ['w'],
      };
    });
    // Registered out of order: `order` decides, not registration.
    const [handler] = composeAdmission([gates, inject]);
    expect(handler!.path).toBe('/mutate-pod');
    const original = pod();
    const result = await handler!.handle(request(original));
    expect(seen).toEqual([['app'], ['app', 'logtail']]);
    expect(result).toEqual({
      allowed: true,
      warnings: ['w'],
      patch: expect.arrayContaining([
        { op: 'add', path: '/spec/containers/1', value: { name: 'logtail', image: 'l' } },
        { op: 'add', path: '/spec/readinessGates', value: [{ conditionType: 'KruisePodReady' }] },
      ]),
    });
    expect((result as { patch: unknown[] }).patch).toHaveLength(2);
    // The submitted object is never mutated in place.
    expect(original).toEqual(pod());
  });

  it('pod mutators share one copy along the chain (in place) and answer exactly what the per-step path answers', async () => {
    const seen: string[][] = [];
    const inject = podMutator('inject', POD_MUTATOR_ORDER.sidecarSetInjection, (p: Pod) => {
      seen.push(p.spec!.containers.map((c) => c.name));
      p.spec!.containers.unshift({ name: 'logtail', image: 'l' });
    });
    const gates = podMutator('gates', POD_MUTATOR_ORDER.readinessGates, (p: Pod) => {
      seen.push(p.spec!.containers.map((c) => c.name));
      (p.spec as Record<string, unknown>).readinessGates = [{ conditionType: 'KruisePodReady' }];
      return { warnings: ['w'] };
    });
    const [inPlace] = composeAdmission([gates, inject]);
    // The same steps without their in-place form take the copy-diff-apply path per step.
    const [perStep] = composeAdmission([
      { ...gates, mutateInPlace: undefined },
      { ...inject, mutateInPlace: undefined },
    ]);
    const original = pod();
    const fast = await inPlace!.handle(request(original));
    const slow = await perStep!.handle(request(pod()));
    expect(fast).toEqual(slow);
    expect(fast).toMatchObject({ allowed: true, warnings: ['w'] });
    expect(seen).toEqual([['app'], ['logtail', 'app'], ['app'], ['logtail', 'app']]);
    expect(original).toEqual(pod());
    const deny = podMutator('deny', 500, () => ({ deny: 'no', code: 403 }));
    const [withDeny] = composeAdmission([inject, deny]);
    expect(await withDeny!.handle(request(pod()))).toEqual({ allowed: false, code: 403, message: 'no' });
  });

  it('the first denial ends the chain', async () => {
    let ran = false;
    const deny = step('deny', 1, () => ({ allowed: false, code: 422, reason: 'Invalid', message: 'no' }));
    const later = step('later', 2, () => {
      ran = true;
      return { allowed: true };
    });
    const [handler] = composeAdmission([deny, later]);
    expect(await handler!.handle(request(pod()))).toEqual({ allowed: false, code: 422, reason: 'Invalid', message: 'no' });
    expect(ran).toBe(false);
  });

  it('no patch when no step changed anything; a lone handler passes through unchanged', async () => {
    const a = step('a', 1, () => ({ allowed: true }));
    const b = step('b', 2, () => ({ allowed: true, patch: [] }));
    const [handler] = composeAdmission([a, b]);
    expect(await handler!.handle(request(pod()))).toEqual({ allowed: true });
    const lone = { ...a, path: '/validate-x' };
    expect(composeAdmission([lone])[0]).toBe(lone);
  });

  it('refuses shared paths without distinct orders, or mixing mutating and validating', () => {
    expect(() => composeAdmission([step('a', undefined, () => ({ allowed: true })), step('b', 1, () => ({ allowed: true }))])).toThrow(
      /each needs a distinct `order`/,
    );
    expect(() => composeAdmission([step('a', 1, () => ({ allowed: true })), step('b', 1, () => ({ allowed: true }))])).toThrow(
      /distinct `order`/,
    );
    expect(() =>
      composeAdmission([step('a', 1, () => ({ allowed: true })), step('b', 2, () => ({ allowed: true }), 'validating')]),
    ).toThrow(/mix mutating and validating/);
  });
});

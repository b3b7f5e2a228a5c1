// The pod webhook's readiness-gate step (pure decision) and the pod-mutator adapter that turns an edited
// copy into the step's patch, composed on /mutate-pod as the manager composes it.
import { describe, expect, it } from 'vitest';
import { POD_MUTATOR_ORDER } from '../../../../../src/runtime/control/admission-order.js';
import { composeAdmission } from '../../../../../src/runtime/core/webhook/compose.js';
import { podMutator } from '../../../../../src/runtime/core/webhook/pod-mutator.js';
import type { AdmissionRequest } from '../../../../../src/runtime/core/webhook/server.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import { addReadinessGates, requiredReadinessGates } from '../../../../../src/runtime/webhooks/podreadinessgates/decision.js';
import { POD_MUTATORS, WEBHOOKS } from '../../../../../src/runtime/manager/registry.js';
import type { ControllerContext } from '../../../../../src/runtime/core/controller.js';

function pod(owner?: { apiVersion: string; kind: string; controller?: boolean }, readinessGates?: unknown[]): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'web-',
      namespace: 'ns',
      ...(owner ? { ownerReferences: [{ name: 'web', uid: 'u1', ...owner }] } : {}),
    },
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...(readinessGates ? { readinessGates } : {}) },
  } as Pod;
}

function create(object: Pod): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    operation: 'CREATE',
    namespace: 'ns',
    object,
  };
}

const cloneSet = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', controller: true };

describe('readiness gates decision', () => {
  it.each([
    ['CloneSet controller owner', pod(cloneSet), false, ['KruisePodReady', 'InPlaceUpdateReady']],
    [
      'Advanced StatefulSet (v1beta1) owner',
      pod({ apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', controller: true }),
      false,
      ['KruisePodReady', 'InPlaceUpdateReady'],
    ],
    ['apps/v1 ReplicaSet owner', pod({ apiVersion: 'apps/v1', kind: 'ReplicaSet', controller: true }), false, []],
    ['Kruise owner that is not the controller', pod({ ...cloneSet, controller: false }), false, []],
    ['look-alike group', pod({ apiVersion: 'apps.kruise.io.evil/v1', kind: 'CloneSet', controller: true }), false, []],
    ['no owner', pod(), false, []],
    ['no owner, gate KruisePodReadinessGate', pod(), true, ['KruisePodReady']],
  ])('%s', (_name, p, allPods, want) => {
    expect(requiredReadinessGates(p, allPods)).toEqual(want);
  });

  it('appends only missing gates and keeps the user’s', () => {
    const p = pod(cloneSet, [{ conditionType: 'example.com/ready' }, { conditionType: 'KruisePodReady' }]);
    expect(addReadinessGates(p, false)).toBe(true);
    expect(p.spec!.readinessGates).toEqual([
      { conditionType: 'example.com/ready' },
      { conditionType: 'KruisePodReady' },
      { conditionType: 'InPlaceUpdateReady' },
    ]);
    expect(addReadinessGates(p, false)).toBe(false);
  });
});

describe('pod mutators on /mutate-pod', () => {
  // Empty caches: no SidecarSet matches, so only the readiness gates act.
  const informers = { for: () => ({ list: () => [], get: () => undefined }) };
  const ctx = { options: {}, featureGates: new Map(), informers } as unknown as ControllerContext;

  it('are registered in POD_MUTATORS, part of WEBHOOKS, on /mutate-pod with distinct orders', () => {
    const handlers = POD_MUTATORS.flatMap((w) => w.setup(ctx));
    expect(handlers.length).toBeGreaterThan(0);
    for (const h of handlers) {
      expect(h.path).toBe('/mutate-pod');
      expect(h.type).toBe('mutating');
      expect(Object.values(POD_MUTATOR_ORDER)).toContain(h.order);
    }
    for (const w of POD_MUTATORS) expect(WEBHOOKS).toContain(w);
    expect(new Set(handlers.map((h) => h.order)).size).toBe(handlers.length);
  });

  it('answer a Kruise-owned pod CREATE with a minimal patch adding the gates', async () => {
    const [handler] = composeAdmission(POD_MUTATORS.flatMap((w) => w.setup(ctx)));
    const r = await handler!.handle(create(pod(cloneSet)));
    expect(r).toEqual({
      allowed: true,
      patch: [
        { op: 'add', path: '/spec/readinessGates', value: [{ conditionType: 'KruisePodReady' }, { conditionType: 'InPlaceUpdateReady' }] },
      ],
    });
    expect(await handler!.handle(create(pod()))).toEqual({ allowed: true });
  });

  it('ignore UPDATE, subresources and missing objects; a refusal ends the chain with its message', async () => {
    const m = podMutator('t', 1, (p) => {
      p.metadata.labels = { x: 'y' };
    });
    expect(await m.handle({ ...create(pod()), operation: 'UPDATE' })).toEqual({ allowed: true });
    expect(await m.handle({ ...create(pod()), subResource: 'status' })).toEqual({ allowed: true });
    expect(await m.handle({ ...create(pod()), object: undefined })).toEqual({ allowed: true });
    expect(await m.handle(create(pod()))).toEqual({ allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }] });
    const deny = podMutator('d', 2, () => ({ deny: 'spec.containers[0]: bad', code: 422 }));
    expect(await deny.handle(create(pod()))).toEqual({ allowed: false, code: 422, message: 'spec.containers[0]: bad' });
    const original = pod();
    await m.handle(create(original));
    expect(original.metadata.labels).toBeUndefined();
  });
});

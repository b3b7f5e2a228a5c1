import { describe, expect, it } from 'vitest';
import { defaultCloneSet, validateCloneSetUpdate, validateStrategy } from '../../../../../src/runtime/webhooks/cloneset/decision.js';
import type { KubeObject } from '../../../../../src/runtime/core/types.js';

function cs(spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } },
      ...spec,
    },
  };
}

describe('CloneSet defaulting', () => {
  it('fills replicas, history and the update strategy as upstream', () => {
    expect(defaultCloneSet(cs({}))).toEqual([
      { op: 'add', path: '/spec/replicas', value: 1 },
      { op: 'add', path: '/spec/revisionHistoryLimit', value: 10 },
      { op: 'add', path: '/spec/updateStrategy', value: { type: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 } },
    ]);
  });
  it('keeps what the user set and fills only the gaps', () => {
    expect(
      defaultCloneSet(cs({ replicas: 0, revisionHistoryLimit: 3, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } })),
    ).toEqual([
      { op: 'add', path: '/spec/updateStrategy/partition', value: 0 },
      { op: 'add', path: '/spec/updateStrategy/maxSurge', value: 0 },
    ]);
  });
});

describe('CloneSet validation', () => {
  it.each([
    [{ updateStrategy: { type: 'OnDelete' } }, /OnDelete is not supported/],
    [{ updateStrategy: { type: 'InPlaceOnly', maxSurge: 1 } }, /maxSurge: must be 0 with InPlaceOnly/],
    [{ replicas: 3, updateStrategy: { maxUnavailable: '0%', maxSurge: 0 } }, /both below one pod/],
    [{ progressDeadlineSeconds: 0 }, /progressDeadlineSeconds: must be greater than minReadySeconds \(0\)/],
    [{ minReadySeconds: 10, progressDeadlineSeconds: 10 }, /must be greater than minReadySeconds \(10\)/],
  ])('refuses %j', (spec, message) => {
    expect(validateStrategy(cs(spec))).toMatchObject({ allowed: false, code: 422, message: expect.stringMatching(message) });
  });
  it.each([
    [{ updateStrategy: { type: 'InPlaceIfPossible', maxSurge: 1 } }],
    [{ replicas: 30, updateStrategy: { maxUnavailable: 0, maxSurge: '10%' } }],
    // Scaled to 0 (the defaults round to 0 pods): nothing to update until it scales up.
    [{ replicas: 0, updateStrategy: { maxUnavailable: '20%', maxSurge: 0 } }],
    [{ minReadySeconds: 10, progressDeadlineSeconds: 11 }],
    // MaxInt32 means no deadline, whatever minReadySeconds is.
    [{ minReadySeconds: 2147483647, progressDeadlineSeconds: 2147483647 }],
  ])('accepts %j', (spec) => {
    expect(validateStrategy(cs(spec))).toBeUndefined();
  });
  it('the selector is immutable', () => {
    const changed = cs({ selector: { matchLabels: { app: 'other' } } });
    expect(validateCloneSetUpdate(changed, cs({}))).toMatchObject({
      allowed: false,
      message: expect.stringMatching(/\/spec\/selector: field is immutable/),
    });
    expect(validateCloneSetUpdate(cs({ replicas: 5 }), cs({}))).toBeUndefined();
  });
  it('InPlaceOnly lets only images change', () => {
    const strategy = { updateStrategy: { type: 'InPlaceOnly' } };
    const image = cs({
      ...strategy,
      template: { metadata: { labels: { app: 'web', v: '2' } }, spec: { containers: [{ name: 'c', image: 'i:2' }] } },
    });
    expect(validateCloneSetUpdate(image, cs(strategy))).toBeUndefined();
    const env = cs({
      ...strategy,
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'c', image: 'i:2', env: [{ name: 'A', value: 'b' }] }] },
      },
    });
    expect(validateCloneSetUpdate(env, cs(strategy))).toMatchObject({
      allowed: false,
      message: expect.stringMatching(/only spec.containers\[\*\].image/),
    });
  });
});

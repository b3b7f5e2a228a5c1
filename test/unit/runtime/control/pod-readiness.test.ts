// KruisePodReady as several units share it (control/pod-readiness.ts): each writer sets only its own reasons in the
// message (upstream's sorted JSON list), the status is False while any reason is left, and an empty list is written
// as `[]` so a strategic merge cannot keep the old reasons.
import { describe, expect, it } from 'vitest';
import { kruisePodReadyWithKeys, notReadyKeysOf, parseNotReadyKeys } from '../../../../src/runtime/control/pod-readiness.js';
import type { Pod, PodCondition } from '../../../../src/runtime/core/types.js';

const pod = (c?: PodCondition): Pod => ({ metadata: { name: 'p', namespace: 'ns' }, status: { conditions: c ? [c] : [] } });
const held = (keys: { userAgent: string; key: string }[]) => ({ type: 'KruisePodReady', status: 'False', message: JSON.stringify(keys) });

describe('KruisePodReady reasons', () => {
  it('adds a reason beside the others, sorted by user agent then key (upstream text)', () => {
    const p = pod(held([{ userAgent: 'Lifecycle', key: 'preDeleteHook' }]));
    const c = kruisePodReadyWithKeys(p, 'ContainerRecreateRequest', ['ns/crr-1'], 'now')!;
    expect(c).toMatchObject({ type: 'KruisePodReady', status: 'False' });
    expect(c.message).toBe('[{"userAgent":"ContainerRecreateRequest","key":"ns/crr-1"},{"userAgent":"Lifecycle","key":"preDeleteHook"}]');
  });

  it("removing its own reasons leaves the others' and the status False; the last one gone turns it True with []", () => {
    const both = pod(
      held([
        { userAgent: 'ContainerRecreateRequest', key: 'ns/crr-1' },
        { userAgent: 'Lifecycle', key: 'preDeleteHook' },
      ]),
    );
    expect(kruisePodReadyWithKeys(both, 'ContainerRecreateRequest', [], 'now')).toMatchObject({
      status: 'False',
      message: '[{"userAgent":"Lifecycle","key":"preDeleteHook"}]',
    });
    const only = pod(held([{ userAgent: 'ContainerRecreateRequest', key: 'ns/crr-1' }]));
    expect(kruisePodReadyWithKeys(only, 'ContainerRecreateRequest', [], 'now')).toEqual({
      type: 'KruisePodReady',
      status: 'True',
      message: '[]',
      lastTransitionTime: 'now',
    });
  });

  it('no write when nothing changes (True without a message counts as no reason)', () => {
    expect(kruisePodReadyWithKeys(pod({ type: 'KruisePodReady', status: 'True' }), 'Lifecycle', [], 'now')).toBeUndefined();
    const p = pod({ ...held([{ userAgent: 'Lifecycle', key: 'a' }]), lastTransitionTime: 'then' });
    expect(kruisePodReadyWithKeys(p, 'Lifecycle', ['a', 'a'], 'now')).toBeUndefined();
    expect(kruisePodReadyWithKeys(p, 'Lifecycle', ['a', 'b'], 'now')).toMatchObject({ status: 'False', lastTransitionTime: 'then' });
  });

  it('a message that is not a list of reasons holds none', () => {
    for (const message of ['ContainerRecreateRequest x is recreating containers', '{"a":1}', '[1,{"userAgent":2}]', ''])
      expect(parseNotReadyKeys({ type: 'KruisePodReady', status: 'False', message })).toEqual([]);
    expect(notReadyKeysOf(pod(held([{ userAgent: 'A', key: 'k' }])), 'B')).toEqual([]);
  });
});

// The SidecarSet controller's pod event handling: creations are gathered into one reconcile per set per
// window (a burst of pod creates must not cost one walk over every pod each), updates and deletes are not;
// the index of each set's pods that a reconcile reads instead of every cached pod.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ANNOTATION_SIDECARSET_INJECTED_LIST, PODS } from '../../src/contracts/index.js';
import type { ControllerContext } from '../../src/runtime/core/controller.js';
import type { Pod } from '../../src/runtime/core/types.js';
import { POD_ADD_COALESCE_MS, sidecarSetController } from '../../src/runtime/controllers/sidecarset/index.js';
import { PodsBySidecarSet } from '../../src/runtime/controllers/sidecarset/pod-index.js';

type Handlers = { add?: (o: Pod) => void; update?: (o: Pod) => void; delete?: (o: Pod) => void };

function setUp(): { pods: Handlers; enqueued: string[] } {
  const handlers = new Map<unknown, Handlers>();
  const ctx = {
    informers: {
      for: (resource: unknown) => ({
        list: () => [],
        get: () => undefined,
        addHandlers: (h: Handlers) => handlers.set(resource, h),
      }),
    },
    options: { get: () => 'kruise-system' },
  } as unknown as ControllerContext;
  const enqueued: string[] = [];
  sidecarSetController.setup(ctx, (key) => enqueued.push(key));
  return { pods: handlers.get(PODS)!, enqueued };
}

const pod = (name: string, sets: string): Pod =>
  ({ metadata: { name, namespace: 'ns', annotations: { [ANNOTATION_SIDECARSET_INJECTED_LIST]: sets } } }) as unknown as Pod;

describe('sidecarset controller pod events', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('gathers a burst of pod creations into one reconcile per SidecarSet, after the window', () => {
    const { pods, enqueued } = setUp();
    for (let i = 0; i < 100; i++) pods.add!(pod(`p-${i}`, i % 2 ? 'logtail' : 'logtail,proxy'));
    expect(enqueued).toEqual([]);
    vi.advanceTimersByTime(POD_ADD_COALESCE_MS);
    expect(enqueued.sort()).toEqual(['logtail', 'proxy']);
    // The next creation opens a new window.
    pods.add!(pod('late', 'logtail'));
    vi.advanceTimersByTime(POD_ADD_COALESCE_MS);
    expect(enqueued.sort()).toEqual(['logtail', 'logtail', 'proxy']);
  });

  it('reconciles at once on pod updates and deletes', () => {
    const { pods, enqueued } = setUp();
    pods.update!(pod('a', 'logtail'));
    pods.delete!(pod('b', 'proxy'));
    expect(enqueued).toEqual(['logtail', 'proxy']);
  });
});

describe('PodsBySidecarSet', () => {
  const inNs = (ns: string, name: string, sets: string | undefined): Pod =>
    ({
      metadata: { name, namespace: ns, ...(sets === undefined ? {} : { annotations: { [ANNOTATION_SIDECARSET_INJECTED_LIST]: sets } }) },
    }) as unknown as Pod;

  it('keeps the pods of each set from the pod events', () => {
    const index = new PodsBySidecarSet();
    expect(index.put(inNs('a', 'p1', 'logtail,proxy'))).toEqual(['logtail', 'proxy']);
    expect(index.put(inNs('b', 'p1', 'logtail'))).toEqual(['logtail']);
    expect(index.put(inNs('a', 'plain', undefined))).toEqual([]);
    expect([...index.keysOf('logtail')].sort()).toEqual(['a/p1', 'b/p1']);
    expect([...index.keysOf('proxy')]).toEqual(['a/p1']);
    expect([...index.keysOf('unknown')]).toEqual([]);
  });

  it('moves a pod whose injected list changed, and names the set it left too', () => {
    const index = new PodsBySidecarSet();
    index.put(inNs('a', 'p1', 'logtail,proxy'));
    expect(index.put(inNs('a', 'p1', 'proxy')).sort()).toEqual(['logtail', 'proxy']);
    expect([...index.keysOf('logtail')]).toEqual([]);
    expect([...index.keysOf('proxy')]).toEqual(['a/p1']);
  });

  it('forgets a deleted pod and names the sets it counted for, even when the delete carries no annotations', () => {
    const index = new PodsBySidecarSet();
    index.put(inNs('a', 'p1', 'logtail'));
    expect(index.remove(inNs('a', 'p1', undefined))).toEqual(['logtail']);
    expect([...index.keysOf('logtail')]).toEqual([]);
    // A pod never seen: the sets its own annotation names.
    expect(index.remove(inNs('a', 'p2', 'proxy'))).toEqual(['proxy']);
  });
});

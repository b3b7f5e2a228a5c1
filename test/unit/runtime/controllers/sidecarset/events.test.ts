// The SidecarSet controller's pod event handling: creations are gathered into one reconcile per set per
// window (a burst of pod creates must not cost one walk over every pod each), updates and deletes are not;
// the index of each set's pods that a reconcile reads instead of every cached pod.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ANNOTATION_SIDECARSET_INJECTED_LIST, PODS } from '../../../../../src/contracts/index.js';
import type { ControllerContext } from '../../../../../src/runtime/core/controller.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import { POD_ADD_COALESCE_MS, sidecarSetController } from '../../../../../src/runtime/controllers/sidecarset/index.js';
import { podInjectedSidecarSets, sidecarSetsOfUpdate } from '../../../../../src/runtime/controllers/sidecarset/pod-index.js';

type Handlers = { add?: (o: Pod) => void; update?: (o: Pod, old: Pod) => void; delete?: (o: Pod) => void };

function setUp(): { pods: Handlers; enqueued: string[] } {
  const handlers = new Map<unknown, Handlers>();
  const ctx = {
    informers: {
      for: (resource: unknown) => ({
        list: () => [],
        get: () => undefined,
        addHandlers: (h: Handlers) => handlers.set(resource, h),
        addIndex: () => undefined,
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
    pods.update!(pod('a', 'logtail'), pod('a', 'logtail'));
    pods.delete!(pod('b', 'proxy'));
    expect(enqueued).toEqual(['logtail', 'proxy']);
  });
});

describe('pods by injected SidecarSet', () => {
  const inNs = (ns: string, name: string, sets: string | undefined): Pod =>
    ({
      metadata: { name, namespace: ns, ...(sets === undefined ? {} : { annotations: { [ANNOTATION_SIDECARSET_INJECTED_LIST]: sets } }) },
    }) as unknown as Pod;

  it.each([
    ['two sets', 'logtail,proxy', ['logtail', 'proxy']],
    ['one set', 'logtail', ['logtail']],
    ['no annotation', undefined, []],
  ])('indexes a pod with %s under each set it names', (_case, sets, want) => {
    expect(podInjectedSidecarSets(inNs('a', 'p1', sets))).toEqual(want);
  });

  it('names the set a pod left as well as those it names now, once each', () => {
    expect(sidecarSetsOfUpdate(inNs('a', 'p1', 'proxy'), inNs('a', 'p1', 'logtail,proxy')).sort()).toEqual(['logtail', 'proxy']);
    expect(sidecarSetsOfUpdate(inNs('a', 'p1', 'proxy'), inNs('a', 'p1', 'proxy'))).toEqual(['proxy']);
  });
});

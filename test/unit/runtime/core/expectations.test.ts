// The runtime's expectations tool (src/runtime/core/expectations.ts), as tables: what is written, which
// informer events arrive, and whether the controller may decide again.
import { describe, expect, it } from 'vitest';
import {
  EXPECTATION_TIMEOUT_MS,
  ResourceVersionExpectations,
  ScaleExpectations,
  scaleExpectationHandlers,
  type ScaleAction,
} from '../../../../src/runtime/core/expectations.js';
import type { KubeObject } from '../../../../src/runtime/core/types.js';

const KEY = 'ns/cs';

function pod(name: string, o: { uid?: string; rv?: string; deleting?: boolean; owner?: string } = {}): KubeObject {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: o.uid ?? `${name}-uid`,
      resourceVersion: o.rv ?? '1',
      ...(o.deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}),
      ownerReferences: [
        { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: o.owner ?? 'cs', uid: 'cs-uid', controller: true },
      ],
    },
  };
}

const ownerKey = (o: KubeObject) => {
  const ref = o.metadata.ownerReferences?.find((r) => r.controller);
  return ref ? `${o.metadata.namespace}/${ref.name}` : undefined;
};

type Step =
  | { expect: ScaleAction; name: string; uid?: string }
  | { created: string; rv: string }
  | { failed: ScaleAction; name: string }
  | { event: 'add' | 'update' | 'delete' | 'resync'; pod: KubeObject; old?: KubeObject }
  | { wait: number };

interface Case {
  name: string;
  steps: Step[];
  /** The informer's resourceVersion at the check. */
  cacheVersion?: string;
  ok: boolean;
  leaked?: string[];
}

const cases: Case[] = [
  { name: 'nothing expected', steps: [], ok: true },
  { name: 'a create before any event', steps: [{ expect: 'create', name: 'a' }], ok: false },
  {
    name: 'a create met by its Add',
    steps: [
      { expect: 'create', name: 'a' },
      { event: 'add', pod: pod('a') },
    ],
    ok: true,
  },
  {
    // The leak: the pod appeared and was deleted before the reconcile; it is not in the cache.
    name: 'a create met by its Add although the pod was deleted since',
    steps: [
      { expect: 'create', name: 'a' },
      { event: 'add', pod: pod('a') },
      { event: 'delete', pod: pod('a') },
    ],
    ok: true,
  },
  {
    name: 'an Add that came before the create answered',
    steps: [
      { expect: 'create', name: 'a' },
      { event: 'add', pod: pod('a', { rv: '7' }) },
      { created: 'a', rv: '7' },
    ],
    ok: true,
  },
  {
    name: 'an Add missed by a relist: met once the cache reached the create',
    steps: [
      { expect: 'create', name: 'a' },
      { created: 'a', rv: '120' },
    ],
    cacheVersion: '121',
    ok: true,
  },
  {
    name: 'a cache not yet at the create',
    steps: [
      { expect: 'create', name: 'a' },
      { created: 'a', rv: '120' },
    ],
    cacheVersion: '119',
    ok: false,
  },
  {
    name: 'versions compare as integers, not strings',
    steps: [
      { expect: 'create', name: 'a' },
      { created: 'a', rv: '10000' },
    ],
    cacheVersion: '9999',
    ok: false,
  },
  {
    name: 'a failed create',
    steps: [
      { expect: 'create', name: 'a' },
      { failed: 'create', name: 'a' },
    ],
    ok: true,
  },
  {
    name: 'the Add of another CloneSet’s pod of that name',
    steps: [
      { expect: 'create', name: 'a' },
      { event: 'add', pod: pod('a', { owner: 'other' }) },
    ],
    ok: false,
  },
  {
    name: 'a resync replay is no event',
    steps: [
      { expect: 'create', name: 'a' },
      { event: 'resync', pod: pod('a') },
    ],
    ok: false,
  },
  { name: 'a delete before any event', steps: [{ expect: 'delete', name: 'a', uid: 'u1' }], ok: false },
  {
    name: 'a delete met by its Delete',
    steps: [
      { expect: 'delete', name: 'a', uid: 'u1' },
      { event: 'delete', pod: pod('a', { uid: 'u1' }) },
    ],
    ok: true,
  },
  {
    name: 'a delete met by the update that shows the pod being deleted',
    steps: [
      { expect: 'delete', name: 'a', uid: 'u1' },
      { event: 'update', pod: pod('a', { uid: 'u1', deleting: true, rv: '2' }), old: pod('a', { uid: 'u1' }) },
    ],
    ok: true,
  },
  {
    name: 'an update without a deletion timestamp',
    steps: [
      { expect: 'delete', name: 'a', uid: 'u1' },
      { event: 'update', pod: pod('a', { uid: 'u1', rv: '2' }), old: pod('a', { uid: 'u1' }) },
    ],
    ok: false,
  },
  {
    name: 'the Delete of another pod of that name (other uid)',
    steps: [
      { expect: 'delete', name: 'a', uid: 'u1' },
      { event: 'delete', pod: pod('a', { uid: 'u2' }) },
    ],
    ok: false,
  },
  {
    name: 'the cache version never meets a delete',
    steps: [{ expect: 'delete', name: 'a', uid: 'u1' }],
    cacheVersion: '999999',
    ok: false,
  },
  {
    name: 'a failed delete',
    steps: [
      { expect: 'delete', name: 'a', uid: 'u1' },
      { failed: 'delete', name: 'a' },
    ],
    ok: true,
  },
  {
    name: 'three of ten creates deleted on sight, the rest seen',
    steps: [
      ...'abcdefghij'.split('').map((n): Step => ({ expect: 'create', name: n })),
      ...'abcdefghij'.split('').map((n): Step => ({ event: 'add', pod: pod(n) })),
      ...'abc'.split('').map((n): Step => ({ event: 'delete', pod: pod(n) })),
    ],
    ok: true,
  },
  {
    name: 'one of two creates still unseen',
    steps: [
      { expect: 'create', name: 'a' },
      { expect: 'create', name: 'b' },
      { event: 'add', pod: pod('a') },
    ],
    ok: false,
  },
  {
    name: 'an unmet expectation past the timeout is dropped and reported',
    steps: [{ expect: 'create', name: 'a' }, { wait: EXPECTATION_TIMEOUT_MS + 1 }],
    ok: true,
    leaked: ['a'],
  },
  {
    name: 'an unmet expectation within the timeout',
    steps: [{ expect: 'create', name: 'a' }, { wait: EXPECTATION_TIMEOUT_MS - 1 }],
    ok: false,
  },
];

describe('scale expectations are met by informer events', () => {
  it.each(cases)('$name', (c) => {
    let now = 1_000;
    const e = new ScaleExpectations(() => now);
    const handlers = scaleExpectationHandlers<KubeObject>(e, ownerKey);
    for (const s of c.steps) {
      if ('expect' in s) e.expect(KEY, s.expect, s.name, s.uid);
      else if ('created' in s) e.created(KEY, s.created, s.rv);
      else if ('failed' in s) e.failed(KEY, s.failed, s.name);
      else if ('wait' in s) now += s.wait;
      else if (s.event === 'add') handlers.add!(s.pod);
      else if (s.event === 'update') handlers.update!(s.pod, s.old!);
      else if (s.event === 'resync') handlers.update!(s.pod, s.pod);
      else handlers.delete!(s.pod);
    }
    const r = e.satisfied(KEY, c.cacheVersion);
    expect(r.ok).toBe(c.ok);
    expect(r.leaked).toEqual(c.leaked ?? []);
  });

  it('met expectations are dropped, and another key is not concerned', () => {
    const e = new ScaleExpectations();
    e.expect(KEY, 'create', 'a');
    e.expect('ns/other', 'create', 'x');
    e.observe(KEY, 'create', 'a');
    expect(e.satisfied(KEY).ok).toBe(true);
    expect(e.pending(KEY)).toEqual({ create: [], delete: [] });
    expect(e.satisfied('ns/other').ok).toBe(false);
    e.forget('ns/other');
    expect(e.satisfied('ns/other').ok).toBe(true);
  });
});

describe('resource-version expectations', () => {
  const obj = (name: string, resourceVersion?: string) => ({ metadata: { namespace: 'ns', name, resourceVersion } });
  type Row = [what: string, written: string | undefined, cached: string | undefined, met: boolean];
  const rows: Row[] = [
    ['never written', undefined, '1', true],
    ['cache older than our write', '1000', '999', false],
    ['cache at our write', '1000', '1000', true],
    ['cache newer than our write', '1000', '1001', true],
    ['integers, not strings', '10000', '9999', false],
    ['a written version that is not an integer is not held against the cache', 'abc', '1', true],
    ['a cached version that is not an integer is not held against the cache', '50', 'not-a-number', true],
  ];
  it.each(rows)('%s', (_what, written, cached, met) => {
    const e = new ResourceVersionExpectations<ReturnType<typeof obj>>();
    if (written) e.record(obj('a', written));
    expect(e.satisfiedBy(obj('a', cached))).toBe(met);
  });

  it('a met expectation is dropped (an older copy later is not compared again); forget drops one', () => {
    const e = new ResourceVersionExpectations<ReturnType<typeof obj>>();
    e.record(obj('a', '1000'));
    expect(e.satisfiedBy(obj('a', '1000'))).toBe(true);
    expect(e.satisfiedBy(obj('a', '5'))).toBe(true);
    e.record(obj('c', '50'));
    e.forget(obj('c'));
    expect(e.satisfiedBy(obj('c', '1'))).toBe(true);
  });

  it('keyed by uid with a timeout (the CloneSet controller’s pods)', () => {
    let now = 0;
    const e = new ResourceVersionExpectations<KubeObject>(
      (p) => p.metadata.uid,
      () => now,
      EXPECTATION_TIMEOUT_MS,
    );
    e.record(pod('a', { uid: 'u', rv: '120' }));
    expect(e.satisfiedBy(pod('a', { uid: 'u', rv: '119' }))).toBe(false);
    // Another pod of that name (a new uid) is not held to the old pod's write.
    expect(e.satisfiedBy(pod('a', { uid: 'v', rv: '1' }))).toBe(true);
    now = EXPECTATION_TIMEOUT_MS + 1;
    expect(e.satisfiedBy(pod('a', { uid: 'u', rv: '119' }))).toBe(true);
  });
});

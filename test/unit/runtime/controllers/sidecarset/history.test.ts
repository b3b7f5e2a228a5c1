// SidecarSet revision history (pure): revisionHistoryLimit (default 10, at least 1) counts every revision;
// the oldest unused ones are deleted first; the latest, those pods run and the injectionStrategy pins never.
import { describe, expect, it } from 'vitest';
import type { SidecarSet } from '../../../../../src/api/kinds/sidecarset.js';
import { activeRevisions, revisionsToPrune, type SidecarSetRevision } from '../../../../../src/runtime/controllers/sidecarset/history.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import { sidecarSetHash, sidecarSetRevisionData, sidecarSetRevisionName } from '../../../../../src/runtime/control/sidecarset-pod.js';

function set(spec: Partial<SidecarSet['spec']> = {}): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'logtail' },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'logtail', image: 'logtail:1' }], ...spec },
  };
}

/** Revisions r1..rN with revision numbers 1..N (r<N> is the latest unless a case says otherwise). */
function revs(n: number, custom: Record<string, string> = {}): SidecarSetRevision[] {
  return Array.from({ length: n }, (_, i) => ({
    metadata: {
      name: `r${i + 1}`,
      namespace: 'kruise-system',
      labels: {
        'kruise.io/sidecarset-name': 'logtail',
        ...(custom[`r${i + 1}`] ? { 'apps.kruise.io/sidecarset-custom-version': custom[`r${i + 1}`]! } : {}),
      },
    },
    revision: i + 1,
  }));
}

/** A pod injected by `setName` whose hash entry names `revision`. */
function pod(revision: string, setName = 'logtail', injectedList = setName): Pod {
  return {
    metadata: {
      name: `p-${revision}`,
      namespace: 'ns',
      annotations: {
        'kruise.io/sidecarset-injected-list': injectedList,
        'kruise.io/sidecarset-hash': JSON.stringify({ [setName]: { hash: 'h', sidecarSetName: setName, controllerRevision: revision } }),
      },
    },
  };
}

interface Case {
  name: string;
  set?: SidecarSet;
  revisions: SidecarSetRevision[];
  latest?: string;
  pods?: Pod[];
  want: string[];
}

const cases: Case[] = [
  { name: 'at the default limit of 10: nothing', revisions: revs(10), want: [] },
  { name: 'over the default limit: the oldest go', revisions: revs(12), want: ['r1', 'r2'] },
  { name: 'an explicit limit', set: set({ revisionHistoryLimit: 3 }), revisions: revs(5), want: ['r1', 'r2'] },
  { name: 'limit 0 keeps 1 (the latest)', set: set({ revisionHistoryLimit: 0 }), revisions: revs(3), want: ['r1', 'r2'] },
  {
    name: 'revisions pods still run are spared; the next oldest unused go instead',
    set: set({ revisionHistoryLimit: 2 }),
    revisions: revs(5),
    pods: [pod('r1'), pod('r3')],
    want: ['r2', 'r4'],
  },
  {
    name: 'when everything old is in use, more than the limit stay',
    set: set({ revisionHistoryLimit: 1 }),
    revisions: revs(3),
    pods: [pod('r1'), pod('r2')],
    want: [],
  },
  {
    name: "another set's pods do not protect this set's revisions",
    set: set({ revisionHistoryLimit: 1 }),
    revisions: revs(3),
    pods: [pod('r1', 'other')],
    want: ['r1', 'r2'],
  },
  {
    name: 'a pod that names the set in its list among others protects its revision',
    set: set({ revisionHistoryLimit: 1 }),
    revisions: revs(3),
    pods: [pod('r1', 'logtail', 'other,logtail')],
    want: ['r2'],
  },
  {
    name: 'injectionStrategy.revision.revisionName is spared',
    set: set({ revisionHistoryLimit: 1, injectionStrategy: { revision: { revisionName: 'r1' } } }),
    revisions: revs(3),
    want: ['r2'],
  },
  {
    name: 'customVersion: the newest revision of that version is spared, older ones of it are not',
    set: set({ revisionHistoryLimit: 1, injectionStrategy: { revision: { customVersion: 'v1' } } }),
    revisions: revs(4, { r1: 'v1', r2: 'v1' }),
    want: ['r1', 'r3'],
  },
  {
    name: 'the latest is never deleted, even with the lowest number (a rollback reused it)',
    set: set({ revisionHistoryLimit: 2 }),
    revisions: revs(4),
    latest: 'r1',
    want: ['r2', 'r3'],
  },
  {
    name: 'equal numbers: older creation first',
    set: set({ revisionHistoryLimit: 1 }),
    revisions: [
      { metadata: { name: 'b', creationTimestamp: '2026-01-01T00:00:02Z' }, revision: 1 },
      { metadata: { name: 'a', creationTimestamp: '2026-01-01T00:00:03Z' }, revision: 1 },
      { metadata: { name: 'c', creationTimestamp: '2026-01-01T00:00:01Z' }, revision: 1 },
      { metadata: { name: 'z' }, revision: 2 },
    ],
    latest: 'z',
    want: ['c', 'b', 'a'],
  },
];

describe('SidecarSet revision history', () => {
  it.each(cases)('$name', (c) => {
    const revisions = c.revisions;
    expect(
      revisionsToPrune({ set: c.set ?? set(), revisions, latest: c.latest ?? revisions.at(-1)!.metadata.name!, pods: c.pods ?? [] }),
    ).toEqual(c.want);
  });

  it('activeRevisions: latest, pod revisions and pins', () => {
    const s = set({ injectionStrategy: { revision: { revisionName: 'r2' } } });
    expect([...activeRevisions({ set: s, revisions: revs(5), latest: 'r5', pods: [pod('r1'), pod('r1')] })].sort()).toEqual([
      'r1',
      'r2',
      'r5',
    ]);
  });

  it('a pod with an unparsable hash annotation protects nothing and does not throw', () => {
    const broken: Pod = {
      metadata: { name: 'x', annotations: { 'kruise.io/sidecarset-injected-list': 'logtail', 'kruise.io/sidecarset-hash': '{not json' } },
    };
    expect(revisionsToPrune({ set: set({ revisionHistoryLimit: 1 }), revisions: revs(2), latest: 'r2', pods: [broken] })).toEqual(['r1']);
  });
});

describe('revision data and name', () => {
  it('records the five injected fields as upstream writes them: every key present, null when unset, under $patch replace', () => {
    const data = sidecarSetRevisionData(set({ imagePullSecrets: [{ name: 'secret-1' }] }));
    expect(data).toEqual({
      spec: {
        $patch: 'replace',
        volumes: null,
        containers: [{ name: 'logtail', image: 'logtail:1' }],
        initContainers: null,
        imagePullSecrets: [{ name: 'secret-1' }],
        patchPodMetadata: null,
      },
      native: false,
    });
    // What the API server stores and a Go client reads back keeps the keys.
    expect(Object.keys(JSON.parse(JSON.stringify(data)).spec).sort()).toEqual([
      '$patch',
      'containers',
      'imagePullSecrets',
      'initContainers',
      'patchPodMetadata',
      'volumes',
    ]);
  });

  it('a change of pull secrets or patched metadata alone is a new revision; the pods hash stays', () => {
    const one = set({ imagePullSecrets: [{ name: 'secret-1' }] });
    const two = set({ imagePullSecrets: [{ name: 'secret-2' }] });
    const patched = set({ imagePullSecrets: [{ name: 'secret-1' }], patchPodMetadata: [{ annotations: { a: 'b' } }] });
    expect(sidecarSetHash(one)).toBe(sidecarSetHash(two));
    expect(new Set([one, two, patched].map((s) => sidecarSetRevisionName(s))).size).toBe(3);
    expect(sidecarSetRevisionName(one)).toMatch(/^logtail-[bcdfghjklmnpqrstvwxz2456789]{10}$/);
    // Back to an earlier version: the same name, so the controller renumbers that revision.
    expect(sidecarSetRevisionName(set({ imagePullSecrets: [{ name: 'secret-1' }] }))).toBe(sidecarSetRevisionName(one));
    // Fields no revision records (selector, update strategy) keep the name.
    expect(sidecarSetRevisionName({ ...one, spec: { ...one.spec, updateStrategy: { partition: 1 } } })).toBe(sidecarSetRevisionName(one));
  });
});

import { describe, expect, it } from 'vitest';
import {
  LABEL_TEMPLATE_HASH,
  childFor,
  decide,
  isCurrent,
  statusChanged,
  templateHash,
  type ChildJob,
  type ImageListPullJobObject,
} from '../../../../../src/runtime/controllers/imagelistpulljob/decision.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const START = '2026-01-01T00:00:00Z';

function list(spec: Partial<ImageListPullJobObject['spec']> = {}, status?: ImageListPullJobObject['status']): ImageListPullJobObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImageListPullJob',
    metadata: { name: 'warm', namespace: 'ns', uid: 'list-uid' },
    spec: {
      images: ['nginx:1.25', 'busybox:1.36'],
      selector: { names: ['node-a'] },
      parallelism: 2,
      completionPolicy: { type: 'Always' },
      ...spec,
    },
    ...(status ? { status } : {}),
  } as ImageListPullJobObject;
}

type ChildStatus = NonNullable<ChildJob['status']>;
let seq = 0;
/** A child as the API returns it: the body the controller made, named and timestamped, with a status. */
function child(l: ImageListPullJobObject, image: string, status?: Partial<ChildStatus>, hash = templateHash(l)): ChildJob {
  const c = childFor(l, image, hash);
  seq++;
  return {
    ...c,
    metadata: {
      ...c.metadata,
      name: `warm-${seq}`,
      uid: `child-${seq}`,
      creationTimestamp: new Date(Date.parse(START) + seq * 1000).toISOString(),
    },
    ...(status ? { status: { desired: 1, ...status } as ChildStatus } : {}),
  };
}
const done = { startTime: START, completionTime: START, desired: 1, active: 0, succeeded: 1, failed: 0 };
const running = { startTime: START, desired: 1, active: 1, succeeded: 0, failed: 0 };
const failedOnOne = { startTime: START, completionTime: START, desired: 2, active: 0, succeeded: 1, failed: 1 };

describe('ImageListPullJob decision', () => {
  it('a new list: one child per image, named after the list, controlled by it, with the template and its hash', () => {
    const l = list({ pullSecrets: ['cred'], sandboxConfig: { labels: { a: 'b' } } });
    const d = decide({ list: l, children: [], nowMs: NOW });
    expect(d.create).toEqual(['nginx:1.25', 'busybox:1.36']);
    expect(d.delete).toEqual([]);
    expect(d.status).toEqual({ startTime: '2026-01-01T00:10:00Z', desired: 2, active: 0, completed: 0, succeeded: 0 });
    const c = childFor(l, 'nginx:1.25', templateHash(l));
    expect(c.metadata).toEqual({
      generateName: 'warm-',
      namespace: 'ns',
      labels: { [LABEL_TEMPLATE_HASH]: templateHash(l) },
      ownerReferences: [
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'ImageListPullJob',
          name: 'warm',
          uid: 'list-uid',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(c.spec).toEqual({
      image: 'nginx:1.25',
      selector: { names: ['node-a'] },
      parallelism: 2,
      completionPolicy: { type: 'Always' },
      pullSecrets: ['cred'],
      sandboxConfig: { labels: { a: 'b' } },
    });
  });

  it('the hash does not depend on field order and changes with the template, not with the images', () => {
    const a = list();
    const b = list({ completionPolicy: { type: 'Always' }, parallelism: 2, selector: { names: ['node-a'] } });
    expect(templateHash(a)).toBe(templateHash(b));
    expect(templateHash(list({ images: ['other:1'] }))).toBe(templateHash(a));
    expect(templateHash(list({ parallelism: 3 }))).not.toBe(templateHash(a));
    expect(templateHash(a)).toMatch(/^\d+$/);
  });

  it('children present: nothing to create; duplicates in the list make one child', () => {
    const l = list({ images: ['nginx:1.25', 'busybox:1.36', 'nginx:1.25'] });
    const d = decide({ list: l, children: [child(l, 'nginx:1.25'), child(l, 'busybox:1.36')], nowMs: NOW });
    expect(d.create).toEqual([]);
    expect(d.delete).toEqual([]);
    expect(d.status?.desired).toBe(2);
  });

  it('an image added gets a child; an image removed loses its child', () => {
    const before = list();
    const kids = [child(before, 'nginx:1.25', done), child(before, 'busybox:1.36', running)];
    const after = list({ images: ['nginx:1.25', 'redis:7'] });
    const d = decide({ list: after, children: kids, nowMs: NOW });
    expect(d.create).toEqual(['redis:7']);
    expect(d.delete).toEqual([
      { name: kids[1]!.metadata.name, uid: kids[1]!.metadata.uid, image: 'busybox:1.36', reason: 'image removed' },
    ]);
    // The removed image's child counts nowhere: one of two completed, the list is not finished.
    expect(d.status).toMatchObject({ desired: 2, completed: 1, succeeded: 1, active: 0 });
    expect(d.status?.completionTime).toBeUndefined();
  });

  it('a changed template replaces every child, and the stale children do not count', () => {
    const before = list();
    const kids = [child(before, 'nginx:1.25', done), child(before, 'busybox:1.36', done)];
    const after = list({ parallelism: 1 });
    const d = decide({ list: after, children: kids, nowMs: NOW });
    expect(d.create).toEqual(['nginx:1.25', 'busybox:1.36']);
    expect(d.delete.map((x) => x.reason)).toEqual(['template changed', 'template changed']);
    expect(d.status).toMatchObject({ desired: 2, completed: 0, succeeded: 0 });
    expect(d.status?.completionTime).toBeUndefined();
  });

  it('a child without the hash label is current when its template is equal', () => {
    const l = list();
    const c = child(l, 'nginx:1.25');
    delete c.metadata.labels;
    expect(isCurrent(c, l, templateHash(l))).toBe(true);
    expect(isCurrent(c, list({ parallelism: 9 }), templateHash(list({ parallelism: 9 })))).toBe(false);
    expect(isCurrent(child(l, 'nginx:1.25', undefined, 'other'), l, templateHash(l))).toBe(false);
  });

  it('two current children of one image: the older stays, the other is deleted', () => {
    const l = list({ images: ['nginx:1.25'] });
    const first = child(l, 'nginx:1.25', running);
    const second = child(l, 'nginx:1.25');
    const d = decide({ list: l, children: [second, first], nowMs: NOW });
    expect(d.create).toEqual([]);
    expect(d.delete).toEqual([{ name: second.metadata.name, uid: second.metadata.uid, image: 'nginx:1.25', reason: 'duplicate' }]);
    expect(d.status).toMatchObject({ active: 1 });
  });

  it.each([
    ['not started (no startTime): counts nowhere', { desired: 1 }, { active: 0, completed: 0, succeeded: 0 }],
    ['pulling', running, { active: 1, completed: 0, succeeded: 0 }],
    ['every node succeeded', done, { active: 0, completed: 1, succeeded: 1 }],
    ['one node failed', failedOnOne, { active: 0, completed: 1, succeeded: 0 }],
    ['no node matched (desired 0)', { startTime: START, desired: 0 }, { active: 0, completed: 1, succeeded: 1 }],
  ] as const)('child %s', (_name, st, want) => {
    const l = list({ images: ['nginx:1.25'], completionPolicy: { type: 'Never' } });
    const d = decide({ list: l, children: [child(l, 'nginx:1.25', st as Partial<ChildStatus>)], nowMs: NOW });
    expect(d.status).toMatchObject({ desired: 1, ...want });
  });

  it('failedImageStatuses names each image whose child has failed nodes, in list order', () => {
    const l = list({ images: ['a:1', 'b:1', 'c:1'] });
    const kids = [
      child(l, 'c:1', failedOnOne),
      child(l, 'a:1', { startTime: START, desired: 3, active: 1, succeeded: 1, failed: 1 }),
      child(l, 'b:1', done),
    ];
    const d = decide({ list: l, children: kids, nowMs: NOW });
    expect(d.status?.failedImageStatuses).toEqual([
      { imagePullJob: kids[1]!.metadata.name, name: 'a:1', message: expect.stringContaining('pull failed on 1 of 3 node(s)') },
      { imagePullJob: kids[0]!.metadata.name, name: 'c:1', message: expect.stringContaining(`ImagePullJob ${kids[0]!.metadata.name}`) },
    ]);
    expect(d.status).toMatchObject({ desired: 3, completed: 2, succeeded: 1, active: 1 });
    expect(d.status?.completionTime).toBeUndefined();
  });

  it('Always: every child finished completes the list (failed ones too); the TTL is looked at then', () => {
    const l = list({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 30 } }, { startTime: START, desired: 2 });
    const d = decide({ list: l, children: [child(l, 'nginx:1.25', done), child(l, 'busybox:1.36', failedOnOne)], nowMs: NOW });
    expect(d.status).toMatchObject({ startTime: START, completionTime: '2026-01-01T00:10:00Z', desired: 2, completed: 2, succeeded: 1 });
    expect(d.requeueAfterMs).toBe(30_000);
    expect(d.deleteJob).toBe(false);
  });

  it('Never: finished children never complete the list', () => {
    const l = list({ completionPolicy: { type: 'Never' } });
    const d = decide({ list: l, children: [child(l, 'nginx:1.25', done), child(l, 'busybox:1.36', done)], nowMs: NOW });
    expect(d.status).toMatchObject({ completed: 2, succeeded: 2 });
    expect(d.status?.completionTime).toBeUndefined();
  });

  it('finished: no writes, deleted once ttlSecondsAfterFinished has passed, requeued until then, kept without a TTL', () => {
    const finished = { startTime: START, completionTime: '2026-01-01T00:09:50Z', desired: 2, completed: 2, succeeded: 2 };
    const l = (ttl?: number) =>
      list(
        { completionPolicy: { type: 'Always', ...(ttl !== undefined ? { ttlSecondsAfterFinished: ttl } : {}) }, images: ['x:1'] },
        finished,
      );
    expect(decide({ list: l(5), children: [], nowMs: NOW })).toEqual({ create: [], delete: [], deleteJob: true });
    expect(decide({ list: l(0), children: [], nowMs: NOW })).toEqual({ create: [], delete: [], deleteJob: true });
    expect(decide({ list: l(30), children: [], nowMs: NOW })).toEqual({ create: [], delete: [], deleteJob: false, requeueAfterMs: 20_000 });
    expect(decide({ list: l(), children: [], nowMs: NOW })).toEqual({ create: [], delete: [], deleteJob: false });
  });

  it('statusChanged: a first status is a change; absent counters read as zero; a changed failed image is a change', () => {
    expect(statusChanged({ desired: 2 }, { desired: 2, active: 0, completed: 0, succeeded: 0 })).toBe(false);
    expect(statusChanged(undefined, { desired: 0 })).toBe(true);
    expect(statusChanged({ desired: 1, startTime: START }, { desired: 1, startTime: START, failedImageStatuses: [{ name: 'a' }] })).toBe(
      true,
    );
  });
});

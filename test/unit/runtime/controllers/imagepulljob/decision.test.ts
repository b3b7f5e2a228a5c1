import { describe, expect, it } from 'vitest';
import type { NodeImage } from '../../../../../src/api/kinds/nodeimage.js';
import {
  SECRET_COPY_MIN_LIFETIME_MS,
  secretCopiesReleaseAtMs,
  decideJob,
  nodeResult,
  parallelismOf,
  pullSecretReferences,
  secretCopyName,
  tagFor,
  type JobObject,
} from '../../../../../src/runtime/controllers/imagepulljob/decision.js';
import { decideNodeImage, type NodeImageView } from '../../../../../src/runtime/controllers/nodeimage/decision.js';

const T0 = Date.parse('2026-11-22T10:00:00Z');
const iso = (d: number) => new Date(T0 + d).toISOString().replace(/\.\d{3}Z$/, 'Z');
const UID = 'job-uid';

function job(spec: Partial<JobObject['spec']> = {}, status?: JobObject['status']): JobObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name: 'j', namespace: 'ns', uid: UID },
    spec: { image: 'reg:5000/app:1', completionPolicy: { type: 'Always' }, ...spec },
    ...(status ? { status } : {}),
  } as JobObject;
}

type NI = NodeImage & { metadata: { name: string; resourceVersion?: string } };
/** A node with our tag at `version`, and a status phase for `statusVersion`. */
function node(
  name: string,
  opts: {
    version?: number;
    phase?: 'Succeeded' | 'Failed' | 'Pulling';
    statusVersion?: number;
    message?: string;
    otherOwner?: boolean;
  } = {},
): NI {
  const tags =
    opts.version === undefined
      ? []
      : [
          {
            tag: '1',
            version: opts.version,
            ownerReferences: [{ uid: opts.otherOwner ? 'other' : UID, name: 'j', namespace: 'ns', kind: 'ImagePullJob' }],
          },
        ];
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodeImage',
    metadata: { name, resourceVersion: '7' },
    spec: tags.length ? { images: { 'reg:5000/app': { tags } } } : {},
    ...(opts.phase
      ? {
          status: {
            desired: 1,
            imageStatuses: {
              'reg:5000/app': {
                tags: [
                  {
                    tag: '1',
                    phase: opts.phase,
                    version: opts.statusVersion ?? opts.version ?? 0,
                    ...(opts.message ? { message: opts.message } : {}),
                  },
                ],
              },
            },
          },
        }
      : {}),
  } as NI;
}

describe('nodeResult (job state on one node: spec tag vs status tag)', () => {
  it.each([
    ['no tag', node('a'), 'none'],
    ['tag of another job only', node('a', { version: 1, otherOwner: true }), 'none'],
    ['tag without status', node('a', { version: 1 }), 'active'],
    ['status for an older version', node('a', { version: 2, phase: 'Succeeded', statusVersion: 1 }), 'active'],
    ['pulling', node('a', { version: 1, phase: 'Pulling' }), 'active'],
    ['succeeded', node('a', { version: 1, phase: 'Succeeded' }), 'succeeded'],
    ['failed', node('a', { version: 1, phase: 'Failed' }), 'failed'],
  ])('%s -> %s', (_t, ni, want) => expect(nodeResult(job(), ni).state).toBe(want));
});

describe('decideJob', () => {
  it('adds tags on up to `parallelism` nodes, counting active ones, in name order', () => {
    const d = decideJob({
      job: job({ parallelism: 2 }),
      targets: [node('c'), node('b', { version: 1 }), node('a')],
      secretCopies: [],
      nowMs: T0,
    });
    expect(d.writes.map((w) => w.nodeImage)).toEqual(['a']);
    expect(d.status).toMatchObject({ desired: 3, active: 2, succeeded: 0, failed: 0, startTime: iso(0) });
    expect(d.writes[0]).toMatchObject({ resourceVersion: '7', image: 'reg:5000/app', pullSecrets: [] });
    expect(d.writes[0]!.tags[0]).toMatchObject({
      tag: '1',
      version: 1,
      imagePullPolicy: 'IfNotPresent',
      ownerReferences: [{ uid: UID, name: 'j', namespace: 'ns', kind: 'ImagePullJob' }],
    });
  });
  it('parallelism 0 pauses; default is 1', () => {
    expect(decideJob({ job: job({ parallelism: 0 }), targets: [node('a')], secretCopies: [], nowMs: T0 })).toMatchObject({
      writes: [],
      status: { message: 'paused (parallelism 0)' },
    });
    expect(parallelismOf(job())).toBe(1);
    expect(parallelismOf(job({ parallelism: '3' }))).toBe(3);
  });
  it('joining a tag another job owns keeps its owner and bumps the version so the node pulls again', () => {
    const t = tagFor(job(), { tag: '1', version: 4, ownerReferences: [{ uid: 'other' }] }, T0);
    expect(t.version).toBe(5);
    expect(t.ownerReferences?.map((o) => o.uid)).toEqual(['other', UID]);
  });
  it('tag policy: timeout/backoff, remaining deadline, TTL (job TTL + 300 s under Always; a day under Never)', () => {
    const j = job(
      {
        pullPolicy: { timeoutSeconds: 30, backoffLimit: 2 },
        completionPolicy: { type: 'Always', activeDeadlineSeconds: 100, ttlSecondsAfterFinished: 60 },
      },
      { desired: 1, startTime: iso(-40_000) },
    );
    expect(tagFor(j, undefined, T0).pullPolicy).toEqual({
      timeoutSeconds: 30,
      backoffLimit: 2,
      activeDeadlineSeconds: 61,
      ttlSecondsAfterFinished: 360,
    });
    expect(tagFor(job({ completionPolicy: { type: 'Never' } }), undefined, T0).pullPolicy).toEqual({
      timeoutSeconds: 600,
      backoffLimit: 3,
      ttlSecondsAfterFinished: 86_400,
    });
  });
  it('adds secret copies and the sandboxConfig to the image entry', () => {
    const d = decideJob({
      job: job({ sandboxConfig: { labels: { a: 'b' } } }),
      targets: [node('a')],
      secretCopies: [{ namespace: 'cfg', name: 'ns.s' }],
      nowMs: T0,
    });
    expect(d.writes[0]).toMatchObject({ pullSecrets: [{ namespace: 'cfg', name: 'ns.s' }], sandboxConfig: { labels: { a: 'b' } } });
  });
  it('Always: completes when every node finished, naming failed nodes and the first error', () => {
    const d = decideJob({
      job: job(),
      targets: [node('a', { version: 1, phase: 'Succeeded' }), node('b', { version: 1, phase: 'Failed', message: '401 Unauthorized' })],
      secretCopies: [],
      nowMs: T0,
    });
    expect(d.writes).toEqual([]);
    expect(d.status).toEqual({
      startTime: iso(0),
      completionTime: iso(0),
      desired: 2,
      active: 0,
      succeeded: 1,
      failed: 1,
      failedNodes: ['b'],
      message: 'image pull failed on 1 node(s) [b]: b: 401 Unauthorized',
    });
    const ok = decideJob({ job: job(), targets: [node('a', { version: 1, phase: 'Succeeded' })], secretCopies: [], nowMs: T0 });
    expect(ok.status.message).toBe('job has completed');
  });
  it('Never: does not complete', () => {
    const d = decideJob({
      job: job({ completionPolicy: { type: 'Never' } }),
      targets: [node('a', { version: 1, phase: 'Succeeded' })],
      secretCopies: [],
      nowMs: T0,
    });
    expect(d.status.completionTime).toBeUndefined();
  });
  it('activeDeadlineSeconds: completes with every unfinished node failed; requeues for the deadline before', () => {
    const j = job({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 10 } }, { desired: 2, startTime: iso(0) });
    const before = decideJob({ job: j, targets: [node('a', { version: 1 })], secretCopies: [], nowMs: T0 + 4000 });
    expect(before.requeueAfterMs).toBe(6050);
    const after = decideJob({
      job: j,
      targets: [node('a', { version: 1, phase: 'Succeeded' }), node('b', { version: 1 })],
      secretCopies: [],
      nowMs: T0 + 10_000,
    });
    expect(after.status).toMatchObject({
      completionTime: iso(10_000),
      active: 0,
      succeeded: 1,
      failed: 1,
      failedNodes: ['b'],
      message: 'job exceeds activeDeadlineSeconds (10s); 1/2 node(s) pulled',
    });
  });
  it('ttlSecondsAfterFinished: requeues until due, then deletes', () => {
    const done = job(
      { completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 5 } },
      { desired: 1, startTime: iso(0), completionTime: iso(0) },
    );
    expect(decideJob({ job: done, targets: [], secretCopies: [], nowMs: T0 + 2000 })).toMatchObject({
      deleteJob: false,
      requeueAfterMs: 3000,
    });
    expect(decideJob({ job: done, targets: [], secretCopies: [], nowMs: T0 + 5000 }).deleteJob).toBe(true);
  });
  it('no matching node: says so and waits', () => {
    expect(decideJob({ job: job(), targets: [], secretCopies: [], nowMs: T0 }).status).toMatchObject({
      desired: 0,
      message: 'no nodes match the job',
    });
  });
  it('secret copy names are namespace-qualified', () => expect(secretCopyName('team-a', 'regcred')).toBe('team-a.regcred'));

  it.each<[string | undefined, string, boolean, string]>([
    [undefined, 'a/j1', true, 'a/j1'],
    ['a/j2', 'a/j1', true, 'a/j1,a/j2'],
    ['a/j1,a/j2', 'a/j1', true, 'a/j1,a/j2'],
    ['a/j1,a/j2', 'a/j1', false, 'a/j2'],
    ['a/j1', 'a/j1', false, ''],
    ['a/j2', 'a/j1', false, 'a/j2'],
    [',a/j2,,', 'a/j3', true, 'a/j2,a/j3'],
  ])('pull secret copy references %j, %s present=%s → %j', (refs, job, present, out) =>
    expect(pullSecretReferences(refs, job, present)).toBe(out),
  );
});

describe('secretCopiesReleaseAtMs (when a finished job lets go of its pull-secret copies)', () => {
  const start = Date.parse('2026-01-01T00:00:00Z');
  const at = (offsetMs: number) => new Date(start + offsetMs).toISOString();
  it.each([
    ['completed within the second: held until the minimum lifetime after the start', 800, SECRET_COPY_MIN_LIFETIME_MS],
    ['completed exactly at the minimum lifetime', SECRET_COPY_MIN_LIFETIME_MS, SECRET_COPY_MIN_LIFETIME_MS],
    ['ran for a minute: let go of at completion, as upstream', 60_000, 60_000],
  ])('%s', (_, completedAfterMs, releasedAfterMs) => {
    expect(secretCopiesReleaseAtMs({ startTime: at(0), completionTime: at(completedAfterMs) })).toBe(start + releasedAfterMs);
  });
});

describe('decideNodeImage', () => {
  const ready = { name: 'n', labels: { zone: 'a' }, ready: true, deleting: false };
  const ni = (extra: Partial<NodeImageView> = {}): NodeImageView =>
    ({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'NodeImage',
      metadata: { name: 'n', labels: { zone: 'a' }, resourceVersion: '3' },
      spec: {},
      ...extra,
    }) as NodeImageView;
  const exists = () => true;
  it('creates one for a Ready node (labels copied), none for a NotReady one', () => {
    expect(decideNodeImage({ node: ready, nodeImage: null, ownerExists: exists, nowMs: T0 }).actions).toEqual([
      { type: 'create', name: 'n', labels: { zone: 'a' } },
    ]);
    expect(decideNodeImage({ node: { ...ready, ready: false }, nodeImage: null, ownerExists: exists, nowMs: T0 }).actions).toEqual([]);
  });
  it('deletes it with the node, unless labelled fake', () => {
    expect(decideNodeImage({ node: null, nodeImage: ni(), ownerExists: exists, nowMs: T0 }).actions).toEqual([
      { type: 'delete', name: 'n' },
    ]);
    expect(
      decideNodeImage({
        node: null,
        nodeImage: ni({ metadata: { name: 'n', labels: { 'apps.kruise.io/fake-nodeimage': 'true' } } }),
        ownerExists: exists,
        nowMs: T0,
      }).actions,
    ).toEqual([]);
  });
  it('syncs changed labels', () => {
    expect(
      decideNodeImage({ node: { ...ready, labels: { zone: 'b', new: 'x' } }, nodeImage: ni(), ownerExists: exists, nowMs: T0 }).actions,
    ).toEqual([{ type: 'patch', name: 'n', resourceVersion: '3', labels: { zone: 'b', new: 'x' } }]);
  });
  it('prunes tags whose owners are gone, and finished tags past their TTL; drops emptied images', () => {
    const spec = {
      images: {
        img: {
          tags: [
            { tag: 'orphan', version: 1, ownerReferences: [{ uid: 'gone', name: 'g', namespace: 'ns' }] },
            {
              tag: 'expired',
              version: 1,
              ownerReferences: [{ uid: 'live', name: 'l', namespace: 'ns' }],
              pullPolicy: { ttlSecondsAfterFinished: 10 },
            },
            {
              tag: 'fresh',
              version: 1,
              ownerReferences: [{ uid: 'live', name: 'l', namespace: 'ns' }],
              pullPolicy: { ttlSecondsAfterFinished: 10 },
            },
          ],
        },
        only: { tags: [{ tag: 'x', ownerReferences: [{ uid: 'gone', name: 'g', namespace: 'ns' }] }] },
      },
    };
    const status = {
      desired: 3,
      imageStatuses: {
        img: {
          tags: [
            { tag: 'expired', phase: 'Succeeded' as const, version: 1, completionTime: iso(-20_000) },
            { tag: 'fresh', phase: 'Succeeded' as const, version: 1, completionTime: iso(-4000) },
          ],
        },
      },
    };
    const d = decideNodeImage({ node: ready, nodeImage: ni({ spec, status }), ownerExists: (_ns, _n, uid) => uid === 'live', nowMs: T0 });
    expect(d.actions).toEqual([{ type: 'patch', name: 'n', resourceVersion: '3', images: { img: [spec.images.img.tags[2]], only: null } }]);
    expect(d.requeueAfterMs).toBe(6000);
  });
});

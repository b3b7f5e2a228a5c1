import { describe, expect, it } from 'vitest';
import { revisionData, type Revision } from '../../../../../src/runtime/control/controller-revision.js';
import { planPreDownload, type PreDownloadPlan } from '../../../../../src/runtime/control/image-predownload.js';
import type { DaemonSetObject } from '../../../../../src/runtime/controllers/daemonset/placement-decision.js';
import { daemonSetPreDownloadStrategy } from '../../../../../src/runtime/controllers/daemonset/predownload-decision.js';
import { ds } from './fixtures.js';

type Container = { name: string; image: string };

const revision = (hash: string, containers: Container[], labels: Record<string, string> = {}): Revision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: {
    name: `agent-${hash}`,
    namespace: 'ns',
    uid: `uid-${hash}`,
    labels: { app: 'agent', 'controller.kubernetes.io/hash': hash, ...labels },
  },
  data: revisionData({ metadata: { labels: { app: 'agent' } }, spec: { containers } }),
  revision: 1,
});

const V1 = revision('h1', [{ name: 'a', image: 'agent:1' }]);
const V2 = revision('h2', [{ name: 'a', image: 'agent:2' }]);

/** A DaemonSet whose last status counted `desired` nodes, `updated` of them at the update revision. */
const set = (
  rollingUpdate: Record<string, unknown> | undefined,
  desired: number,
  updated = 0,
  type = 'RollingUpdate',
): DaemonSetObject => ({
  ...ds({ updateStrategy: { type, ...(rollingUpdate ? { rollingUpdate } : {}) } as DaemonSetObject['spec']['updateStrategy'] }),
  status: { desiredNumberScheduled: desired, updatedNumberScheduled: updated } as DaemonSetObject['status'],
});

function plan(d: DaemonSetObject, o: { update?: Revision; all?: Revision[]; statusHash?: string } = {}): PreDownloadPlan {
  const update = o.update ?? V2;
  const all = o.all ?? [V1, update];
  return planPreDownload({
    workload: d,
    ownerReference: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'DaemonSet', name: 'agent', uid: 'ds-uid' },
    // The DaemonSet names no current revision: the revision writes give the update revision.
    current: update,
    update,
    strategy: daemonSetPreDownloadStrategy({ ds: d, update, all, statusHash: 'statusHash' in o ? o.statusHash : 'h1' }),
  });
}

describe('daemonSetPreDownloadStrategy', () => {
  it.each([
    ['no rollingUpdate: partition 0, maxUnavailable 1', undefined, 5, { partition: 0, maxUnavailable: 1 }],
    ['partition count', { partition: 2 }, 5, { partition: 2 }],
    ['partition percentage of the desired pods, rounded down', { partition: '50%' }, 5, { partition: 2 }],
    ['maxUnavailable percentage, rounded up', { maxUnavailable: '30%' }, 5, { maxUnavailable: 2 }],
    ['maxUnavailable 0 (with maxSurge) stays 0', { maxUnavailable: 0, maxSurge: 1 }, 5, { maxUnavailable: 0 }],
    ['the count is the desired pods of the status', {}, 7, { replicas: 7 }],
  ] as const)('%s', (_name, ru, desired, expected) => {
    expect(daemonSetPreDownloadStrategy({ ds: set(ru, desired), update: V2, all: [V1, V2], statusHash: 'h1' })).toMatchObject(expected);
  });

  it('never recreate-only, always "in place", no replica conditions; older revisions are the baseline', () => {
    const s = daemonSetPreDownloadStrategy({ ds: set({}, 5), update: V2, all: [V1, V2], statusHash: 'h1' });
    expect([s.recreate, s.canUpdateInPlace(), s.replicaConditions]).toEqual([false, true, false]);
    expect(s.baseline!.map((r) => r.metadata.name)).toEqual(['agent-h1']);
  });

  it.each([
    ['every desired pod updated at the hash the status names', 3, 3, 'h2', true],
    ['every pod updated but the status names the older hash (the round of a new revision)', 3, 3, 'h1', false],
    ['pods left to update', 3, 1, 'h2', false],
    ['hash unknown (a restarted manager): the counts decide', 3, 3, undefined, true],
    ['hash unknown, pods left', 3, 2, undefined, false],
  ] as const)('rollout done: %s → %s', (_name, desired, updated, statusHash, expected) => {
    expect(daemonSetPreDownloadStrategy({ ds: set({}, desired, updated), update: V2, all: [V1, V2], statusHash }).rolloutDone).toBe(
      expected,
    );
  });
});

describe('DaemonSet pre-download plans (upstream semantics)', () => {
  it.each([
    ['Standard, maxUnavailable 1, 3 nodes → one job', { maxUnavailable: 1 }, 3, 'create'],
    ['InPlaceIfPossible → one job', { rollingUpdateType: 'InPlaceIfPossible' }, 3, 'create'],
    ['2 nodes: no replica threshold → one job', {}, 2, 'create'],
    ['paused: images pulled during the pause → one job', { paused: true }, 3, 'create'],
    ['maxUnavailable 100%, no partition: every pod in one batch → ignored', { maxUnavailable: '100%' }, 3, 'ignore'],
    ['maxUnavailable 100% with a partition → one job', { maxUnavailable: '100%', partition: 1 }, 3, 'create'],
    ['1 node: one batch → ignored', {}, 1, 'ignore'],
    ['a new DaemonSet (status not counted yet: 0 nodes) → ignored', {}, 0, 'ignore'],
  ] as const)('%s', (_name, ru, desired, action) => {
    expect(plan(set(ru, desired)).action).toBe(action);
  });

  it('a first revision (no older one) is ignored, even under a partition: its pods start at it', () => {
    expect(plan(set({ partition: 2 }, 4), { all: [V2] })).toMatchObject({ action: 'ignore', reason: 'first-revision' });
    // A new DaemonSet, its status not written yet: nothing to do until the status counts its pods.
    const fresh: DaemonSetObject = { ...set({ partition: 2 }, 0), status: undefined };
    expect(plan(fresh, { all: [V2], statusHash: undefined })).toEqual({ action: 'delete-jobs' });
  });

  it('a restarted manager (hash unknown): a finished rollout deletes, one under way plans', () => {
    expect(plan(set({}, 3, 3), { statusHash: undefined })).toEqual({ action: 'delete-jobs' });
    expect(plan(set({}, 3, 1), { statusHash: undefined }).action).toBe('create');
  });

  it('OnDelete reads the defaults (partition 0, maxUnavailable 1): the images are there when pods are deleted', () => {
    expect(plan(set(undefined, 3, 0, 'OnDelete')).action).toBe('create');
  });

  it('min-updated-ready-pods is not read (upstream leaves it unused)', () => {
    const d = set({}, 3);
    const annotated = {
      ...d,
      metadata: { ...d.metadata, annotations: { 'apps.kruise.io/image-predownload-min-updated-ready-pods': '3' } },
    };
    expect(plan(annotated).action).toBe('create');
  });

  it('the job: one per new image, owned by the DaemonSet, aimed at pods not at the update revision, upstream fields', () => {
    const d = set({}, 3);
    const annotated: DaemonSetObject = {
      ...d,
      metadata: {
        ...d.metadata,
        annotations: { 'apps.kruise.io/image-predownload-parallelism': '4', 'apps.kruise.io/image-predownload-timeout-seconds': '60' },
      },
      spec: {
        ...d.spec,
        template: {
          metadata: { labels: { app: 'agent' }, annotations: { team: 'infra' } },
          spec: {
            imagePullSecrets: [{ name: 'reg' }],
            containers: [
              { name: 'a', image: 'agent:2' },
              { name: 'log', image: 'log:1' },
            ],
          },
        },
      },
    };
    const update = revision('h2', [
      { name: 'a', image: 'agent:2' },
      { name: 'log', image: 'log:1' },
    ]);
    const old = revision('h1', [
      { name: 'a', image: 'agent:1' },
      { name: 'log', image: 'log:1' },
    ]);
    const p = plan(annotated, { update, all: [old, update] });
    if (p.action !== 'create') throw new Error(p.action);
    expect(p.jobs).toHaveLength(1);
    const labels = { app: 'agent', 'controller.kubernetes.io/hash': 'h2' };
    expect(p.jobs[0]).toEqual({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: {
        name: 'agent-h2-a',
        namespace: 'ns',
        labels,
        ownerReferences: [
          {
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'DaemonSet',
            name: 'agent',
            uid: 'ds-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        image: 'agent:2',
        pullSecrets: ['reg'],
        podSelector: {
          matchLabels: { app: 'agent' },
          matchExpressions: [{ key: 'controller-revision-hash', operator: 'NotIn', values: ['agent-h2', 'h2'] }],
        },
        parallelism: 4,
        pullPolicy: { backoffLimit: 1, timeoutSeconds: 60 },
        completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 600 },
        sandboxConfig: { labels, annotations: { team: 'infra' } },
      },
    });
  });

  it('a revision already labelled created or ignored is not planned again; a finished rollout deletes the jobs', () => {
    expect(
      plan(set({}, 3), { update: revision('h2', [{ name: 'a', image: 'agent:2' }], { 'apps.kruise.io/pre-predownload-created': 'true' }) }),
    ).toEqual({
      action: 'none',
    });
    expect(plan(set({}, 3, 3), { statusHash: 'h2' })).toEqual({ action: 'delete-jobs' });
  });

  it('images compared with every older revision: one that some older revision runs otherwise counts', () => {
    const v0 = revision('h0', [{ name: 'a', image: 'agent:0' }]);
    const back = revision('h3', [{ name: 'a', image: 'agent:1' }]);
    const p = plan(set({}, 3), { update: back, all: [v0, V1, back] });
    expect(p.action === 'create' && p.jobs.map((j) => j.spec.image)).toEqual(['agent:1']);
  });
});

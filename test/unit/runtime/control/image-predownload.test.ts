import { describe, expect, it } from 'vitest';
import { revisionData, type Revision } from '../../../../src/runtime/control/controller-revision.js';
import {
  changedImages,
  changedImagesSince,
  minUpdatedReadyPods,
  planPreDownload,
  preDownloadLabel,
  preDownloadParallelism,
  preDownloadTimeoutSeconds,
  rolloutDone,
  type PreDownloadInput,
  type PreDownloadStrategy,
  type PreDownloadWorkload,
} from '../../../../src/runtime/control/image-predownload.js';

type Container = { name: string; image: string };

const template = (containers: Container[], extra: Record<string, unknown> = {}) => ({
  metadata: { labels: { app: 'web', tier: 'front' }, annotations: { team: 'a' } },
  spec: { containers, ...extra },
});

const revision = (name: string, hash: string, containers: Container[], labels: Record<string, string> = {}): Revision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'web', 'controller.kubernetes.io/hash': hash, ...labels } },
  data: revisionData(template(containers)),
  revision: 1,
});

const OLD = [{ name: 'main', image: 'app:1' }];
const NEW = [{ name: 'main', image: 'app:2' }];

function input(
  o: {
    replicas?: number;
    annotations?: Record<string, string>;
    status?: PreDownloadWorkload['status'];
    current?: Revision;
    update?: Revision;
    strategy?: Partial<PreDownloadStrategy>;
    templateExtra?: Record<string, unknown>;
  } = {},
): PreDownloadInput {
  const update = o.update ?? revision('web-v2', 'v2', NEW);
  return {
    workload: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'web', namespace: 'ns', uid: 'cs-uid', ...(o.annotations ? { annotations: o.annotations } : {}) },
      spec: {
        replicas: o.replicas ?? 5,
        selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }] },
        template: template(NEW, o.templateExtra),
      },
      status: o.status ?? { updateRevision: update.metadata.name, updatedReadyReplicas: 0 },
    },
    ownerReference: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs-uid' },
    current: o.current ?? revision('web-v1', 'v1', OLD),
    update,
    strategy: { recreate: false, partition: 1, maxUnavailable: 1, canUpdateInPlace: () => true, ...o.strategy },
  };
}

describe('minUpdatedReadyPods (apps.kruise.io/image-predownload-min-updated-ready-pods)', () => {
  it.each([
    ['absent', undefined, 10, 0],
    ['an integer', '3', 10, 3],
    ['a percentage of replicas, rounded up', '25%', 10, 3],
    ['0%', '0%', 10, 0],
    ['over 100% (waits for more pods than there are: never met, never an error)', '200%', 4, 8],
    ['negative (met at once, as upstream)', '-2', 10, -2],
    ['not a number: 0, as upstream after its parse error', 'lots', 10, 0],
    ['a fraction: 0', '1.5', 10, 0],
    ['a percentage that is not an integer: 0', '12.5%', 10, 0],
    ['beyond int32: 0', '99999999999999999999', 10, 0],
    ['empty: 0', '', 10, 0],
  ] as const)('%s', (_name, raw, replicas, expected) => {
    expect(minUpdatedReadyPods(raw, replicas)).toBe(expected);
  });
});

describe('tuning annotations', () => {
  const p = (v: string) => ({ 'apps.kruise.io/image-predownload-parallelism': v });
  const t = (v: string) => ({ 'apps.kruise.io/image-predownload-timeout-seconds': v });
  it.each([
    ['absent', undefined, 1],
    ['an integer', p('4'), 4],
    ['0 (a paused job, as upstream takes it)', p('0'), 0],
    ['negative: the default', p('-3'), 1],
    ['not a number: the default', p('many'), 1],
    ['a percentage: the default (ImagePullJob parallelism is a count)', p('50%'), 1],
    ['beyond int32: the default', p('4294967296'), 1],
  ] as const)('parallelism %s', (_name, annotations, expected) => {
    expect(preDownloadParallelism(annotations)).toBe(expected);
  });
  it.each([
    ['absent', undefined, 300],
    ['an integer', t('60'), 60],
    ['0: the default', t('0'), 300],
    ['negative: the default', t('-1'), 300],
    ['not a number: the default', t('1m'), 300],
    ['beyond int32: the default', t('2147483648'), 300],
  ] as const)('timeout %s', (_name, annotations, expected) => {
    expect(preDownloadTimeoutSeconds(annotations)).toBe(expected);
  });
});

describe('changedImages', () => {
  const tpl = (cs: Container[]) => template(cs);
  it.each([
    ['same images: nothing', [{ name: 'a', image: 'x:1' }], [{ name: 'a', image: 'x:1' }], []],
    ['a changed image', [{ name: 'a', image: 'x:1' }], [{ name: 'a', image: 'x:2' }], [{ container: 'a', image: 'x:2' }]],
    [
      'an added container',
      [{ name: 'a', image: 'x:1' }],
      [
        { name: 'a', image: 'x:1' },
        { name: 'b', image: 'y:1' },
      ],
      [{ container: 'b', image: 'y:1' }],
    ],
    ['a renamed container counts as new', [{ name: 'a', image: 'x:1' }], [{ name: 'c', image: 'x:1' }], [{ container: 'c', image: 'x:1' }]],
    [
      'a removed container: nothing',
      [
        { name: 'a', image: 'x:1' },
        { name: 'b', image: 'y:1' },
      ],
      [{ name: 'a', image: 'x:1' }],
      [],
    ],
    [
      'in the new template order',
      [
        { name: 'a', image: 'x:1' },
        { name: 'b', image: 'y:1' },
      ],
      [
        { name: 'b', image: 'y:2' },
        { name: 'a', image: 'x:2' },
      ],
      [
        { container: 'b', image: 'y:2' },
        { container: 'a', image: 'x:2' },
      ],
    ],
  ] as const)('%s', (_name, from, to, expected) => {
    expect(changedImages(tpl([...from]), tpl([...to]))).toEqual(expected);
  });
  it('no template on either side', () => {
    expect(changedImages(undefined, undefined)).toEqual([]);
    expect(changedImages(undefined, tpl([{ name: 'a', image: 'x:1' }]))).toEqual([{ container: 'a', image: 'x:1' }]);
  });
});

describe('planPreDownload', () => {
  it('same current and update revision: delete the jobs', () => {
    const r = revision('web-v1', 'v1', OLD);
    expect(planPreDownload(input({ current: r, update: r }))).toEqual({ action: 'delete-jobs' });
  });

  it.each([
    [
      'min not met: wait',
      { 'apps.kruise.io/image-predownload-min-updated-ready-pods': '2' },
      { updateRevision: 'web-v2', updatedReadyReplicas: 1 },
      'wait',
    ],
    [
      'min met: go on',
      { 'apps.kruise.io/image-predownload-min-updated-ready-pods': '2' },
      { updateRevision: 'web-v2', updatedReadyReplicas: 2 },
      'create',
    ],
    [
      'the status still names the old revision: its updated ready pods count as 0',
      { 'apps.kruise.io/image-predownload-min-updated-ready-pods': '1' },
      { updateRevision: 'web-v1', updatedReadyReplicas: 5 },
      'wait',
    ],
    [
      '40% of 5 = 2 ready needed, 1 ready: wait',
      { 'apps.kruise.io/image-predownload-min-updated-ready-pods': '40%' },
      { updateRevision: 'web-v2', updatedReadyReplicas: 1 },
      'wait',
    ],
    [
      'a bad value reads as 0: go on',
      { 'apps.kruise.io/image-predownload-min-updated-ready-pods': 'soon' },
      { updateRevision: 'web-v1', updatedReadyReplicas: 0 },
      'create',
    ],
  ] as const)('%s', (_name, annotations, status, action) => {
    expect(planPreDownload(input({ annotations, status })).action).toBe(action);
  });

  it.each([
    ['labelled created', 'apps.kruise.io/pre-predownload-created'],
    ['labelled ignored', 'apps.kruise.io/image-predownload-ignored'],
  ])('an update revision already %s: nothing', (_name, label) => {
    expect(planPreDownload(input({ update: revision('web-v2', 'v2', NEW, { [label]: 'true' }) }))).toEqual({ action: 'none' });
  });

  it.each([
    ['ReCreate', { strategy: { recreate: true } }, 'recreate'],
    ['3 replicas', { replicas: 3 }, 'few-replicas'],
    ['1 replica', { replicas: 1 }, 'few-replicas'],
    ['partition 0 and maxUnavailable = replicas: one batch', { strategy: { partition: 0, maxUnavailable: 5 } }, 'one-batch'],
    ['partition 0 and maxUnavailable > replicas: one batch', { strategy: { partition: 0, maxUnavailable: 9 } }, 'one-batch'],
    ['not in place', { strategy: { canUpdateInPlace: () => false } }, 'not-in-place'],
  ] as const)('ignored: %s', (_name, o, reason) => {
    const plan = planPreDownload(input(o as never));
    expect(plan).toMatchObject({ action: 'ignore', reason });
    expect(preDownloadLabel(plan)).toBe('apps.kruise.io/image-predownload-ignored');
  });

  it.each([
    ['4 replicas', { replicas: 4 }],
    ['partition 0, maxUnavailable below replicas', { strategy: { partition: 0, maxUnavailable: 4 } }],
    ['maxUnavailable = replicas but a partition keeps pods back', { strategy: { partition: 1, maxUnavailable: 5 } }],
  ] as const)('not ignored: %s', (_name, o) => {
    expect(planPreDownload(input(o as never)).action).toBe('create');
  });

  it('asks whether the change is in place only once the cheaper checks passed', () => {
    let asked = 0;
    planPreDownload(input({ replicas: 2, strategy: { canUpdateInPlace: () => (asked++, true) } }));
    expect(asked).toBe(0);
    planPreDownload(input({ strategy: { canUpdateInPlace: () => (asked++, true) } }));
    expect(asked).toBe(1);
  });

  it('one job per changed container, with every field of upstream', () => {
    const plan = planPreDownload(
      input({
        annotations: { 'apps.kruise.io/image-predownload-parallelism': '2', 'apps.kruise.io/image-predownload-timeout-seconds': '90' },
        update: revision('web-v2', 'v2', [
          { name: 'main', image: 'app:2' },
          { name: 'log', image: 'log:1' },
        ]),
        templateExtra: { imagePullSecrets: [{ name: 'reg' }, {}] },
      }),
    );
    expect(plan.action).toBe('create');
    if (plan.action !== 'create') return;
    expect(plan.jobs.map((j) => j.metadata.name)).toEqual(['web-v2-main', 'web-v2-log']);
    expect(preDownloadLabel(plan)).toBe('apps.kruise.io/pre-predownload-created');
    const labels = { app: 'web', tier: 'front', 'controller.kubernetes.io/hash': 'v2' };
    expect(plan.jobs[0]).toEqual({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: {
        name: 'web-v2-main',
        namespace: 'ns',
        labels,
        ownerReferences: [
          {
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'CloneSet',
            name: 'web',
            uid: 'cs-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        image: 'app:2',
        pullSecrets: ['reg'],
        podSelector: {
          matchLabels: { app: 'web' },
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['front'] },
            { key: 'controller-revision-hash', operator: 'NotIn', values: ['web-v2', 'v2'] },
          ],
        },
        parallelism: 2,
        pullPolicy: { backoffLimit: 1, timeoutSeconds: 90 },
        completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 600 },
        sandboxConfig: { labels, annotations: { team: 'a' } },
      },
    });
    expect(plan.jobs[1]!.spec.image).toBe('log:1');
  });

  it('defaults: parallelism 1, timeout 300, no pull secrets', () => {
    const plan = planPreDownload(input());
    if (plan.action !== 'create') throw new Error(plan.action);
    expect(plan.jobs).toHaveLength(1);
    expect(plan.jobs[0]!.spec).toMatchObject({ parallelism: 1, pullPolicy: { backoffLimit: 1, timeoutSeconds: 300 } });
    expect(plan.jobs[0]!.spec.pullSecrets).toBeUndefined();
  });

  it('a change of metadata only: labelled created with no job', () => {
    const plan = planPreDownload(input({ update: revision('web-v2', 'v2', OLD) }));
    expect(plan).toEqual({ action: 'create', jobs: [] });
  });
});

describe('changedImagesSince (against several revisions, as upstream DaemonSet compares)', () => {
  const tpl = (cs: Container[]) => template(cs);
  it.each([
    ['no older revision: every image', [], [{ container: 'a', image: 'x:2' }]],
    ['one older revision with another image', [[{ name: 'a', image: 'x:1' }]], [{ container: 'a', image: 'x:2' }]],
    ['every older revision runs it already: nothing', [[{ name: 'a', image: 'x:2' }]], []],
    [
      'one of several runs another image: counted (pods may still be at it)',
      [[{ name: 'a', image: 'x:2' }], [{ name: 'a', image: 'x:1' }]],
      [{ container: 'a', image: 'x:2' }],
    ],
    [
      'a container some older revision lacks but another has at the same image: nothing',
      [[{ name: 'b', image: 'y:1' }], [{ name: 'a', image: 'x:2' }]],
      [],
    ],
    ['a container none of them has', [[{ name: 'b', image: 'y:1' }]], [{ container: 'a', image: 'x:2' }]],
  ] as const)('%s', (_name, from, expected) => {
    expect(
      changedImagesSince(
        from.map((cs) => tpl([...cs])),
        tpl([{ name: 'a', image: 'x:2' }]),
      ),
    ).toEqual(expected);
  });
});

describe('planPreDownload with a kind that reads it its own way (Advanced DaemonSet)', () => {
  const daemon = (s: Partial<PreDownloadStrategy>, o: Parameters<typeof input>[0] = {}) =>
    input({ ...o, strategy: { replicaConditions: false, rolloutDone: false, ...s } });

  it('rolloutDone decides, not whether the current and update revisions agree', () => {
    const r = revision('web-v2', 'v2', NEW);
    expect(planPreDownload(daemon({}, { current: r, update: r })).action).toBe('create');
    expect(rolloutDone(daemon({}, { current: r, update: r }))).toBe(false);
    expect(planPreDownload(daemon({ rolloutDone: true }))).toEqual({ action: 'delete-jobs' });
  });

  it('replicas from the strategy, with no threshold: 2 pods, maxUnavailable 1 → jobs', () => {
    expect(planPreDownload(daemon({ replicas: 2, partition: 0, maxUnavailable: 1 })).action).toBe('create');
    // The same counts under the in-place kinds' rules: at or below the threshold.
    expect(planPreDownload(input({ strategy: { replicas: 2, partition: 0, maxUnavailable: 1 } }))).toMatchObject({
      action: 'ignore',
      reason: 'few-replicas',
    });
  });

  it('replicas from the strategy decide one batch: 0 desired pods → ignored', () => {
    expect(planPreDownload(daemon({ replicas: 0, partition: 0, maxUnavailable: 1 }))).toMatchObject({
      action: 'ignore',
      reason: 'one-batch',
    });
  });

  it('min-updated-ready-pods is not waited for', () => {
    const annotations = { 'apps.kruise.io/image-predownload-min-updated-ready-pods': '3' };
    expect(planPreDownload(daemon({}, { annotations })).action).toBe('create');
    expect(planPreDownload(input({ annotations })).action).toBe('wait');
  });

  it('an empty baseline (a first revision): ignored', () => {
    expect(planPreDownload(daemon({ baseline: [] }))).toMatchObject({ action: 'ignore', reason: 'first-revision' });
  });

  it('images compared with the baseline revisions, not the current one', () => {
    const other = revision('web-v0', 'v0', [{ name: 'main', image: 'app:0' }]);
    const same = revision('web-v1', 'v1', NEW);
    const plan = planPreDownload(daemon({ baseline: [same] }));
    expect(plan).toEqual({ action: 'create', jobs: [] });
    const plan2 = planPreDownload(daemon({ baseline: [same, other] }));
    expect(plan2.action === 'create' && plan2.jobs.map((j) => j.spec.image)).toEqual(['app:2']);
  });
});

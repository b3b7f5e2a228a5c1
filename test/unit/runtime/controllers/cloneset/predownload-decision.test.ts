import { describe, expect, it } from 'vitest';
import { ANNOTATION_CLONESET_VCT_HASH } from '../../../../../src/contracts/index.js';
import { revisionData, type Revision } from '../../../../../src/runtime/control/controller-revision.js';
import { planPreDownload } from '../../../../../src/runtime/control/image-predownload.js';
import type { CloneSetObject } from '../../../../../src/runtime/controllers/cloneset/pods.js';
import { cloneSetPreDownloadStrategy } from '../../../../../src/runtime/controllers/cloneset/predownload-decision.js';

const revision = (name: string, image: string, o: { vct?: string; extra?: Record<string, unknown> } = {}): Revision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: {
    name,
    namespace: 'ns',
    labels: { 'controller.kubernetes.io/hash': name },
    ...(o.vct !== undefined ? { annotations: { [ANNOTATION_CLONESET_VCT_HASH]: o.vct } } : {}),
  },
  data: revisionData({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image }], ...o.extra } }),
  revision: 1,
});

const cloneSet = (replicas: number, updateStrategy: Record<string, unknown>): CloneSetObject =>
  ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'u' },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: {}, updateStrategy },
  }) as unknown as CloneSetObject;

const V1 = revision('v1', 'app:1');
const V2 = revision('v2', 'app:2');

describe('cloneSetPreDownloadStrategy', () => {
  it.each([
    ['ReCreate recreates', 5, { type: 'ReCreate' }, { recreate: true }],
    ['no type: ReCreate (upstream default)', 5, {}, { recreate: true }],
    ['InPlaceIfPossible', 5, { type: 'InPlaceIfPossible' }, { recreate: false, partition: 0, maxUnavailable: 1 }],
    ['InPlaceOnly', 5, { type: 'InPlaceOnly' }, { recreate: false }],
    ['maxUnavailable default 20%, rounded down', 10, { type: 'InPlaceIfPossible' }, { maxUnavailable: 2 }],
    ['maxUnavailable percentage rounded down', 5, { type: 'InPlaceIfPossible', maxUnavailable: '50%' }, { maxUnavailable: 2 }],
    ['maxUnavailable count', 5, { type: 'InPlaceIfPossible', maxUnavailable: 5 }, { maxUnavailable: 5 }],
    ['partition count', 5, { type: 'InPlaceIfPossible', partition: 1 }, { partition: 1 }],
    ['partition percentage rounded up', 5, { type: 'InPlaceIfPossible', partition: '30%' }, { partition: 2 }],
    ['partition 99% keeps one pod updating', 5, { type: 'InPlaceIfPossible', partition: '99%' }, { partition: 4 }],
    [
      'unreadable values read as 0',
      5,
      { type: 'InPlaceIfPossible', partition: 'x', maxUnavailable: 'y' },
      { partition: 0, maxUnavailable: 0 },
    ],
  ] as const)('%s', (_name, replicas, us, expected) => {
    expect(cloneSetPreDownloadStrategy(cloneSet(replicas, us), V1, V2, { recreateOnVctChange: false })).toMatchObject(expected);
  });

  it.each([
    ['an image change is in place', V2, false, true],
    ['a change beyond images is not', revision('v2', 'app:2', { extra: { hostNetwork: true } }), false, false],
    [
      'a volumeClaimTemplates change with RecreatePodWhenChangeVCTInCloneSetGate is not',
      revision('v2', 'app:2', { vct: 'b' }),
      true,
      false,
    ],
    ['the same change without the gate is', revision('v2', 'app:2', { vct: 'b' }), false, true],
  ] as const)('in place: %s', (_name, to, gate, expected) => {
    const from = revision('v1', 'app:1', { vct: 'a' });
    const s = cloneSetPreDownloadStrategy(cloneSet(5, { type: 'InPlaceIfPossible' }), from, to, { recreateOnVctChange: gate });
    expect(s.canUpdateInPlace()).toBe(expected);
  });

  const plan = (cs: CloneSetObject) =>
    planPreDownload({
      workload: cs,
      ownerReference: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'u' },
      current: V1,
      update: V2,
      strategy: cloneSetPreDownloadStrategy(cs, V1, V2, { recreateOnVctChange: false }),
    });

  it('upstream e2e shape: 5 replicas, partition 1, InPlaceIfPossible, image change → one job', () => {
    const p = plan(cloneSet(5, { type: 'InPlaceIfPossible', partition: 1 }));
    expect(p.action === 'create' && p.jobs.map((j) => j.spec.image)).toEqual(['app:2']);
  });

  it('all pods in one batch (partition 0, maxUnavailable 100%) → ignored', () => {
    expect(plan(cloneSet(5, { type: 'InPlaceIfPossible', maxUnavailable: '100%' }))).toMatchObject({
      action: 'ignore',
      reason: 'one-batch',
    });
  });
});

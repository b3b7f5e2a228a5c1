// In-place update batches by launch priority (control/inplace-update.ts): which containers a patch updates, what waits
// for the next batch, the state recorded after each batch, and when the next batch is due.
import { describe, expect, it } from 'vitest';
import {
  inPlaceCompleted,
  launchPriority,
  nextBatchDue,
  planInPlaceBatch,
  refMetadataOf,
  stateAfterBatch,
} from '../../../../src/runtime/control/inplace-update.js';
import type { Container, Pod } from '../../../../src/runtime/core/types.js';

const barrier = (p: number) => ({
  name: 'KRUISE_CONTAINER_BARRIER',
  valueFrom: { configMapKeyRef: { name: 'pod-barrier', key: `p_${p}` } },
});
const reads = (key: string) => ({ name: `E_${key}`, valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${key}']` } } });
const c = (name: string, ...env: object[]): Container => ({ name, image: `${name}:1`, env: env as never });

describe('launch priority of a container', () => {
  it.each([
    ['no barrier env', c('a'), undefined],
    ['p_10', c('a', barrier(10)), 10],
    ['p_-5', c('a', barrier(-5)), -5],
  ] as const)('%s → %s', (_n, ctr, want) => expect(launchPriority(ctr)).toBe(want));
});

describe('planInPlaceBatch', () => {
  it.each([
    [
      'no priorities: every changed container at once',
      [c('nginx'), c('redis')],
      { nginx: 'n:2', redis: 'r:2' },
      {},
      { containers: ['nginx', 'redis'], images: { nginx: 'n:2', redis: 'r:2' }, nextImages: {} },
    ],
    [
      'the highest priority first, the lower one waits',
      [c('nginx', barrier(0)), c('redis', barrier(10))],
      { nginx: 'n:2', redis: 'r:2' },
      {},
      { containers: ['redis'], images: { redis: 'r:2' }, nextImages: { nginx: 'n:2' } },
    ],
    [
      'a container without priority goes with the first batch',
      [c('side'), c('redis', barrier(10)), c('nginx', barrier(0))],
      { side: 's:2', redis: 'r:2', nginx: 'n:2' },
      {},
      { containers: ['redis', 'side'], images: { side: 's:2', redis: 'r:2' }, nextImages: { nginx: 'n:2' } },
    ],
    [
      'equal priorities share the batch',
      [c('a', barrier(5)), c('b', barrier(5)), c('z', barrier(1))],
      { a: 'a:2', b: 'b:2', z: 'z:2' },
      {},
      { containers: ['a', 'b'], images: { a: 'a:2', b: 'b:2' }, nextImages: { z: 'z:2' } },
    ],
    [
      'env from metadata of the lower one waits with it',
      [c('redis', barrier(10)), c('nginx', barrier(0), reads('cfg'))],
      { redis: 'r:2' },
      { nginx: { annotations: { cfg: 'b' } } },
      { containers: ['redis'], images: { redis: 'r:2' }, nextImages: {}, nextRefMetadata: { nginx: { annotations: { cfg: 'b' } } } },
    ],
    [
      'a key shared with the batch pulls the lower container in',
      [c('redis', barrier(10), reads('cfg')), c('nginx', barrier(0), reads('cfg'))],
      {},
      { redis: { annotations: { cfg: 'b' } }, nginx: { annotations: { cfg: 'b' } } },
      { containers: ['nginx', 'redis'], images: {}, nextImages: {}, annotations: { cfg: 'b' } },
    ],
  ] as const)('%s', (_n, containers, images, ref, want) => {
    const b = planInPlaceBatch(containers as readonly Container[], images, ref as never);
    expect(b).toMatchObject(want);
  });

  it('refMetadataOf: only added/changed keys a container reads', () => {
    const cs = [c('a', reads('x')), c('b')];
    expect(refMetadataOf(cs, {}, { x: '2', y: '3' })).toEqual({ a: { annotations: { x: '2' } } });
    expect(refMetadataOf(cs, {}, { x: null })).toEqual({});
  });
});

describe('batches over the life of an update', () => {
  const containers = [c('nginx', barrier(0)), c('redis', barrier(10))];
  const pod = (state: object, statuses: Array<{ name: string; imageID: string; containerID: string; ready: boolean }>): Pod => ({
    metadata: { name: 'p', namespace: 'ns', annotations: { 'apps.kruise.io/inplace-update-state': JSON.stringify(state) } },
    spec: { containers },
    status: { containerStatuses: statuses.map((s) => ({ ...s, image: `${s.name}:x`, restartCount: 0 })) as never },
  });
  const before = [
    { name: 'nginx', imageID: 'n1', containerID: 'cn1', ready: true },
    { name: 'redis', imageID: 'r1', containerID: 'cr1', ready: true },
  ];
  const first = planInPlaceBatch(containers, { nginx: 'n:2', redis: 'r:2' }, {});
  const s1 = stateAfterBatch(pod({}, before), undefined, 'rev2', first, 'T1', false);

  it('after the first batch the state records it and what is left, with the pre-check', () => {
    expect(s1).toMatchObject({
      revision: 'rev2',
      lastContainerStatuses: { redis: { imageID: 'r1', containerID: 'cr1' } },
      containerBatchesRecord: [{ timestamp: 'T1', containers: ['redis'] }],
      nextContainerImages: { nginx: 'n:2' },
      preCheckBeforeNext: { containersRequiredReady: ['redis'] },
    });
  });
  it.each([
    ['redis not recreated yet', before, false],
    ['redis runs the new image but is not ready', [before[0]!, { name: 'redis', imageID: 'r2', containerID: 'cr2', ready: false }], false],
    ['redis runs the new image and is ready', [before[0]!, { name: 'redis', imageID: 'r2', containerID: 'cr2', ready: true }], true],
  ] as const)('next batch due: %s → %s', (_n, statuses, due) => {
    const p = pod(s1, [...statuses]);
    expect(!!nextBatchDue(p)).toBe(due);
    // Never complete while a batch is pending.
    expect(inPlaceCompleted(p)).toBe(false);
  });
  it('the second batch appends to the record and leaves nothing pending; then completion needs nginx', () => {
    const mid = [before[0]!, { name: 'redis', imageID: 'r2', containerID: 'cr2', ready: true }];
    const second = planInPlaceBatch(containers, s1.nextContainerImages!, s1.nextContainerRefMetadata!);
    const s2 = stateAfterBatch(pod(s1, mid), s1, 'rev2', second, 'T2', false);
    expect(s2.containerBatchesRecord).toEqual([
      { timestamp: 'T1', containers: ['redis'] },
      { timestamp: 'T2', containers: ['nginx'] },
    ]);
    expect(s2.nextContainerImages).toBeUndefined();
    expect(s2.lastContainerStatuses).toEqual({
      redis: { imageID: 'r1', containerID: 'cr1' },
      nginx: { imageID: 'n1', containerID: 'cn1' },
    });
    expect(inPlaceCompleted(pod(s2, mid))).toBe(false);
    expect(inPlaceCompleted(pod(s2, [{ name: 'nginx', imageID: 'n2', containerID: 'cn2', ready: true }, mid[1]!]))).toBe(true);
  });
});

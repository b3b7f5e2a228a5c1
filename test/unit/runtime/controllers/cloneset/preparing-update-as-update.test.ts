// Gate PreparingUpdateAsUpdate (scale-decision.ts calculateDiffs): upstream's spec "regard preparing-update pod as
// update when scaling" — replicas 2, partition 99% (1 old pod kept), one pod held in PreparingUpdate by an
// inPlaceUpdate hook, the other deleted. Which revision does the replacement get?
import { describe, expect, it } from 'vitest';
import { calculateDiffs } from '../../../../../src/runtime/controllers/cloneset/scale-decision.js';
import { diffInput, OLD, pod } from './fixtures.js';

describe('PreparingUpdateAsUpdate', () => {
  const held = pod('held', { rev: OLD, state: 'PreparingUpdate' });
  const normal = pod('other', { rev: OLD, state: 'Normal' });
  it.each([
    // Gate off (upstream's default): the held pod counts as old, so the partition's old share is full and the
    // replacement gets the update revision.
    ['gate off, one pod deleted', [held], false, { scaleUpNum: 1, scaleUpNumOldRevision: 0 }],
    // Gate on: the held pod counts as updated; the replacement keeps the old revision.
    ['gate on, one pod deleted', [held], true, { scaleUpNum: 1, scaleUpNumOldRevision: 1 }],
    // Then scaling to 3: the new pod is of the old revision only while the old share (partition 99% of 3 = 2) lacks one.
    ['gate on, scale 2 → 3', [held, normal], true, { scaleUpNum: 1, scaleUpNumOldRevision: 1 }],
    ['gate off, scale 2 → 3', [held, normal], false, { scaleUpNum: 1, scaleUpNumOldRevision: 0 }],
  ] as const)('%s', (name, pods, gate, want) => {
    const replicas = name.includes('→ 3') ? 3 : 2;
    const d = calculateDiffs(diffInput([...pods], { replicas, partition: '99%', maxUnavailable: '50%', preparingUpdateAsUpdate: gate }));
    expect(d).toMatchObject(want);
  });
  it('the update never counts the held pod as updated: it is still the one the update moves', () => {
    const d = calculateDiffs(
      diffInput([held, normal], { replicas: 2, partition: '99%', maxUnavailable: '50%', preparingUpdateAsUpdate: false }),
    );
    expect(d.updateNum).toBe(1);
  });
});

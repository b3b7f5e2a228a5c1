// How a claim compares with its template for claim resizing (OnPodRollingUpdate): compatibility apart from size,
// whether it must grow, whether it has grown, and when the controller's part of a resize is done.
import { describe, expect, it } from 'vitest';
import {
  claimStanding,
  compatibleApartFromSize,
  matchesTemplate,
  needsExpansion,
  resizeCompleted,
  type ClaimLike,
} from '../../../../src/runtime/control/volume-claim-resize.js';

const claim = (asks: string, capacity?: string, o: { sc?: string; modes?: string[]; pending?: boolean } = {}): ClaimLike => ({
  spec: {
    accessModes: o.modes ?? ['ReadWriteOnce'],
    resources: { requests: { storage: asks } },
    ...(o.sc ? { storageClassName: o.sc } : {}),
  },
  status: {
    ...(capacity ? { capacity: { storage: capacity } } : {}),
    ...(o.pending ? { conditions: [{ type: 'FileSystemResizePending', status: 'True' }] } : {}),
  },
});

describe('claim against template', () => {
  it.each([
    ['same class and modes', claim('1Gi', undefined, { sc: 'a' }), claim('2Gi', undefined, { sc: 'a' }), true],
    ['either class unset (the default)', claim('1Gi', undefined, { sc: 'a' }), claim('2Gi'), true],
    ['other class', claim('1Gi', undefined, { sc: 'a' }), claim('1Gi', undefined, { sc: 'b' }), false],
    ['other access modes', claim('1Gi', undefined, { modes: ['ReadWriteMany'] }), claim('1Gi'), false],
    [
      'modes in another order',
      claim('1Gi', undefined, { modes: ['ReadOnlyMany', 'ReadWriteOnce'] }),
      claim('1Gi', undefined, { modes: ['ReadWriteOnce', 'ReadOnlyMany'] }),
      false,
    ],
  ])('compatible apart from size: %s', (_, c, t, want) => expect(compatibleApartFromSize(c, t)).toBe(want));

  it.each([
    ['asks less than the template', '1Gi', '2Gi', true],
    ['asks the same, written otherwise', '1024Mi', '1Gi', false],
    ['asks more (a shrunk template is never applied)', '2Gi', '1Gi', false],
    ['a plain byte count', '20', '2Gi', true],
  ])('needs expansion: %s', (_, asks, want, expected) => expect(needsExpansion(claim(asks), claim(want))).toBe(expected));

  it('matches its template: compatible and asks at least its size', () => {
    expect(matchesTemplate(claim('2Gi'), claim('2Gi'))).toBe(true);
    expect(matchesTemplate(claim('3Gi'), claim('2Gi'))).toBe(true);
    expect(matchesTemplate(claim('1Gi'), claim('2Gi'))).toBe(false);
    expect(matchesTemplate(claim('2Gi', undefined, { sc: 'a' }), claim('2Gi', undefined, { sc: 'b' }))).toBe(false);
  });

  it.each([
    ['not grown yet', claim('1Gi', '1Gi'), claim('2Gi'), { compatible: false, ready: true }, false],
    ['asked, not yet grown', claim('2Gi', '1Gi'), claim('2Gi'), { compatible: true, ready: false }, false],
    [
      'asked, file system resize left to the node',
      claim('2Gi', '1Gi', { pending: true }),
      claim('2Gi'),
      { compatible: true, ready: false },
      true,
    ],
    ['grown', claim('2Gi', '2Gi'), claim('2Gi'), { compatible: true, ready: true }, true],
    ['no capacity reported yet (pending claim)', claim('2Gi'), claim('2Gi'), { compatible: true, ready: false }, false],
    ['other class', claim('2Gi', '2Gi', { sc: 'a' }), claim('2Gi', undefined, { sc: 'b' }), { compatible: false, ready: false }, false],
  ])('standing and completion: %s', (_, c, t, standing, completed) => {
    expect(claimStanding(c, t)).toEqual(standing);
    expect(resizeCompleted(c, t)).toBe(completed);
  });
});

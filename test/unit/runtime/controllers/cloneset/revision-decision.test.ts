import { describe, expect, it } from 'vitest';
import { ANNOTATION_CLONESET_VCT_HASH } from '../../../../../src/contracts/index.js';
import type { Revision } from '../../../../../src/runtime/control/controller-revision.js';
import { vctHash, vctsAllowInPlace } from '../../../../../src/runtime/controllers/cloneset/revision-decision.js';

const claim = (name: string, size: string) => ({
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
});
const revision = (hash?: string): Revision =>
  ({
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: { name: 'r', ...(hash === undefined ? {} : { annotations: { [ANNOTATION_CLONESET_VCT_HASH]: hash } }) },
    revision: 1,
    data: {},
  }) as Revision;

describe('vctHash', () => {
  it('is empty without templates and does not depend on their order', () => {
    expect(vctHash(undefined)).toBe('');
    expect(vctHash([])).toBe('');
    expect(vctHash([claim('a', '1Gi'), claim('b', '1Gi')])).toBe(vctHash([claim('b', '1Gi'), claim('a', '1Gi')]));
    expect(vctHash([claim('a', '1Gi')])).not.toBe(vctHash([claim('a', '2Gi')]));
  });
});

describe('vctsAllowInPlace', () => {
  const small = vctHash([claim('data', '1Gi')]);
  const large = vctHash([claim('data', '2Gi')]);
  it.each([
    ['gate off: a changed hash does not matter', small, large, { recreateOnChange: false, inPlaceOnly: false }, true],
    ['gate on: a changed hash asks for a recreate', small, large, { recreateOnChange: true, inPlaceOnly: false }, false],
    ['gate on: the same hash allows it', small, small, { recreateOnChange: true, inPlaceOnly: false }, true],
    ['gate on, InPlaceOnly: never a recreate', small, large, { recreateOnChange: true, inPlaceOnly: true }, true],
    ['gate on: an old revision without the hash does not block', undefined, large, { recreateOnChange: true, inPlaceOnly: false }, true],
    ['gate on: a new revision without the hash does not block', small, undefined, { recreateOnChange: true, inPlaceOnly: false }, true],
  ] as const)('%s', (_name, from, to, options, expected) => {
    expect(vctsAllowInPlace(revision(from), revision(to), options)).toBe(expected);
  });
});

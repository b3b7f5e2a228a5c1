// ControllerRevisions (control/controller-revision.ts): hashes and names, the update revision, truncation; and
// what may change in place between two templates (control/inplace-update.ts).
import { describe, expect, it } from 'vitest';
import {
  fnv1,
  planUpdateRevision,
  revisionHash,
  revisionsToTruncate,
  safeEncode,
  type Revision,
} from '../../../../src/runtime/control/controller-revision.js';
import { inPlaceSpec } from '../../../../src/runtime/control/inplace-update.js';

describe('revisions', () => {
  it('FNV-1 32 matches the reference vector and SafeEncode uses the k8s alphabet', () => {
    // FNV-1 32 of "a" is 0x050c5d7e.
    expect(fnv1(Buffer.from('a'))).toBe(0x050c5d7e);
    expect(safeEncode('0123')).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{4}$/);
  });
  it('hash depends on the template and the collision count, not on key order', () => {
    const t1 = { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } };
    const t2 = { spec: { containers: [{ image: 'i:1', name: 'c' }] }, metadata: { labels: { a: 'b' } } };
    expect(revisionHash({ t: t1 }, 0)).toBe(revisionHash({ t: t2 }, 0));
    expect(revisionHash({ t: t1 }, 0)).not.toBe(revisionHash({ t: t1 }, 1));
  });
  const rev = (name: string, n: number, img: string): Revision => ({
    metadata: { name },
    revision: n,
    data: { spec: { template: { img } } },
  });
  it('update revision: reuse the newest equal, bump an older equal, else create', () => {
    const r1 = rev('r1', 1, 'a');
    const r2 = rev('r2', 2, 'b');
    expect(planUpdateRevision([r1, r2], rev('x', 0, 'b'))).toMatchObject({ action: 'reuse', revision: r2 });
    expect(planUpdateRevision([r1, r2], rev('x', 0, 'a'))).toMatchObject({ action: 'bump', revision: r1, to: 3 });
    expect(planUpdateRevision([r1, r2], rev('x', 0, 'c'))).toMatchObject({ action: 'create', revision: { revision: 3 } });
  });
  it('history keeps current, update and pod revisions and at most `limit` others', () => {
    const all = [1, 2, 3, 4, 5].map((n) => rev(`r${n}`, n, String(n)));
    expect(revisionsToTruncate(all, new Set(['r5', 'r4']), new Set(['r1']), 1).map((r) => r.metadata.name)).toEqual(['r2']);
  });
  it('in place: only images and metadata may change', () => {
    const a = {
      metadata: { labels: { x: '1' } },
      spec: {
        containers: [
          { name: 'c', image: 'i:1' },
          { name: 'd', image: 'j:1' },
        ],
      },
    };
    const b = {
      metadata: { labels: { x: '2' } },
      spec: {
        containers: [
          { name: 'c', image: 'i:2' },
          { name: 'd', image: 'j:1' },
        ],
      },
    };
    expect(inPlaceSpec(a, b)).toEqual({ containerImages: { c: 'i:2' }, labels: { x: '2' }, annotations: {}, updateEnvFromMetadata: false });
    const env = {
      ...b,
      spec: {
        containers: [
          { name: 'c', image: 'i:2', env: [{ name: 'E', value: '1' }] },
          { name: 'd', image: 'j:1' },
        ],
      },
    };
    expect(inPlaceSpec(a, env)).toBeUndefined();
    expect(inPlaceSpec(a, { ...b, spec: { containers: [{ name: 'c', image: 'i:2' }] } })).toBeUndefined();
  });
});

// The informer indexes the CloneSet reconcile reads instead of walking every cached object (reconcile.ts).
import { describe, expect, it } from 'vitest';
import { byControllerUid, namespaceOf, orphanNamespace } from '../../../../../src/runtime/controllers/cloneset/reconcile.js';
import type { KubeObject } from '../../../../../src/runtime/core/types.js';

const obj = (refs?: Array<{ uid: string; controller?: boolean }>): KubeObject => ({
  metadata: {
    name: 'x',
    namespace: 'ns',
    ...(refs ? { ownerReferences: refs.map((r) => ({ apiVersion: 'v1', kind: 'K', name: 'o', ...r })) } : {}),
  },
});

describe('CloneSet informer indexes', () => {
  it.each([
    ['no owner', undefined, [], ['ns']],
    ['a controller', [{ uid: 'u1', controller: true }], ['u1'], []],
    ['an owner that is not its controller (still adoptable)', [{ uid: 'u1' }], [], ['ns']],
    ['a plain owner beside the controller', [{ uid: 'u0' }, { uid: 'u1', controller: true }], ['u1'], []],
  ] as const)('%s', (_name, refs, byUid, orphan) => {
    const o = obj(refs as never);
    expect(byControllerUid(o)).toEqual(byUid);
    expect(orphanNamespace(o)).toEqual(orphan);
    expect(namespaceOf(o)).toEqual(['ns']);
  });
});

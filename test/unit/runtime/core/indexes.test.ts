import { describe, expect, it } from 'vitest';
import { imagePullJobPullSecrets } from '../../../../src/runtime/core/indexes.js';
import type { ImagePullJobObject } from '../../../../src/runtime/core/types.js';

const job = (namespace: string, pullSecrets?: string[]) =>
  ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name: 'j', namespace },
    spec: { image: 'nginx:1', ...(pullSecrets ? { pullSecrets } : {}) },
  }) as unknown as ImagePullJobObject;

describe('imagePullJobPullSecrets', () => {
  it.each([
    ['no pull secrets', job('team-a'), []],
    ['an empty list', job('team-a', []), []],
    ["each name in the job's own namespace", job('team-a', ['reg', 'mirror']), ['team-a/reg', 'team-a/mirror']],
  ])('%s', (_, j, keys) => {
    expect(imagePullJobPullSecrets(j)).toEqual(keys);
  });

  it('keeps a same-named Secret of another namespace apart', () => {
    expect(imagePullJobPullSecrets(job('team-b', ['reg']))).not.toEqual(imagePullJobPullSecrets(job('team-a', ['reg'])));
  });
});

import { describe, expect, it } from 'vitest';
import type { NodeImage } from '../../../../../src/api/kinds/nodeimage.js';
import {
  credentialsFor,
  imageRef,
  inFlightKey,
  nextStatus,
  pendingPulls,
  pullBackoffMs,
  registryHost,
  splitImageRef,
} from '../../../../../src/runtime/daemon/imagepull/decision.js';

function ni(spec: NodeImage['spec'], status?: NodeImage['status']): NodeImage {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodeImage',
    metadata: { name: 'n1' },
    spec,
    ...(status ? { status } : {}),
  } as NodeImage;
}

describe('image references', () => {
  it.each([
    ['nginx', 'nginx', 'latest'],
    ['nginx:1.9', 'nginx', '1.9'],
    ['127.0.0.1:5000/test/busybox:1', '127.0.0.1:5000/test/busybox', '1'],
    ['127.0.0.1:5000/test/busybox', '127.0.0.1:5000/test/busybox', 'latest'],
    ['reg.io/a/b@sha256:abc', 'reg.io/a/b', 'sha256:abc'],
  ])('%s -> image %s tag %s (and back)', (ref, image, tag) => {
    expect(splitImageRef(ref)).toEqual({ image, tag });
    expect(imageRef(image, tag)).toBe(tag === 'latest' ? `${ref}:latest` : ref);
  });
  it.each([
    ['nginx:1', 'docker.io'],
    ['library/nginx', 'docker.io'],
    ['quay.io/x/y:1', 'quay.io'],
    ['127.0.0.1:5000/x:1', '127.0.0.1:5000'],
    ['localhost/x', 'localhost'],
  ])('registry of %s is %s', (ref, host) => expect(registryHost(ref)).toBe(host));
});

describe('pendingPulls', () => {
  const spec: NodeImage['spec'] = {
    images: {
      'reg/a': {
        pullSecrets: [{ namespace: 'cfg', name: 's1' }],
        sandboxConfig: { labels: { l: '1' } },
        tags: [
          {
            tag: '1',
            version: 2,
            createdAt: '2026-11-22T10:00:00Z',
            pullPolicy: { timeoutSeconds: 60, backoffLimit: 1, activeDeadlineSeconds: 30 },
            imagePullPolicy: 'Always',
          },
          { tag: '2', version: 1 },
        ],
      },
    },
  };
  it('pulls tags without a finished status for the current version, with their policy', () => {
    const tasks = pendingPulls(
      ni(spec, {
        desired: 2,
        imageStatuses: {
          'reg/a': {
            tags: [
              { tag: '1', phase: 'Succeeded', version: 1 },
              { tag: '2', phase: 'Succeeded', version: 1 },
            ],
          },
        },
      }),
      new Set(),
    );
    expect(tasks).toEqual([
      {
        ref: 'reg/a:1',
        image: 'reg/a',
        tag: '1',
        version: 2,
        imagePullPolicy: 'Always',
        timeoutSeconds: 60,
        backoffLimit: 1,
        deadlineMs: Date.parse('2026-11-22T10:00:30Z'),
        pullSecrets: [{ namespace: 'cfg', name: 's1' }],
        sandboxConfig: { labels: { l: '1' } },
      },
    ]);
  });
  it('defaults: IfNotPresent, 600 s, 3 retries; skips what is in flight', () => {
    const tasks = pendingPulls(ni(spec), new Set([inFlightKey({ image: 'reg/a', tag: '1', version: 2 })]));
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ tag: '2', imagePullPolicy: 'IfNotPresent', timeoutSeconds: 600, backoffLimit: 3 });
    expect(tasks[0]!.deadlineMs).toBeUndefined();
  });
  it('a Failed status of the current version is final (the manager bumps the version to retry)', () => {
    expect(
      pendingPulls(
        ni(
          { images: { x: { tags: [{ tag: '1', version: 1 }] } } },
          { desired: 1, imageStatuses: { x: { tags: [{ tag: '1', phase: 'Failed', version: 1 }] } } },
        ),
        new Set(),
      ),
    ).toEqual([]);
  });
});

describe('nextStatus', () => {
  it('counts phases over the spec, prefers fresh results, treats older versions as Waiting, drops removed images', () => {
    const cur = ni(
      {
        images: {
          a: {
            tags: [
              { tag: '1', version: 1 },
              { tag: '2', version: 3 },
            ],
          },
          b: { tags: [{ tag: '1', version: 1 }] },
        },
      },
      {
        desired: 9,
        imageStatuses: { a: { tags: [{ tag: '2', phase: 'Succeeded', version: 2 }] }, gone: { tags: [{ tag: 'x', phase: 'Succeeded' }] } },
      },
    );
    const next = nextStatus(cur, [
      { image: 'a', tag: '1', status: { tag: '1', phase: 'Pulling', version: 1 } },
      { image: 'b', tag: '1', status: { tag: '1', phase: 'Failed', version: 1, message: 'boom' } },
    ]);
    expect(next).toEqual({
      desired: 3,
      pulling: 1,
      waiting: 1,
      succeeded: 0,
      failed: 1,
      imageStatuses: {
        a: {
          tags: [
            { tag: '1', phase: 'Pulling', version: 1 },
            { tag: '2', phase: 'Succeeded', version: 2 },
          ],
        },
        b: { tags: [{ tag: '1', phase: 'Failed', version: 1, message: 'boom' }] },
        gone: null,
      },
    });
  });
});

describe('credentials from pull secrets', () => {
  const cfg = (auths: Record<string, unknown>) => ({
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })).toString('base64') },
  });
  it('takes matching registries only, decoding `auth` when user/password are absent', () => {
    const creds = credentialsFor('127.0.0.1:5000/x:1', [
      cfg({ 'quay.io': { username: 'q', password: 'q' } }),
      cfg({ 'http://127.0.0.1:5000/v2/': { auth: Buffer.from('u:p:with:colons').toString('base64') } }),
    ]);
    expect(creds).toEqual([{ username: 'u', password: 'p:with:colons' }]);
  });
  it('maps docker.io spellings together and reads legacy .dockercfg', () => {
    const legacy = {
      type: 'kubernetes.io/dockercfg',
      data: {
        '.dockercfg': Buffer.from(JSON.stringify({ 'https://index.docker.io/v1/': { username: 'd', password: 'p' } })).toString('base64'),
      },
    };
    expect(credentialsFor('nginx:1', [legacy])).toEqual([{ username: 'd', password: 'p' }]);
  });
  it('ignores unparsable secrets', () => expect(credentialsFor('nginx', [{ data: { '.dockerconfigjson': 'bm90IGpzb24=' } }])).toEqual([]));
});

it('backoff doubles from 1 s up to 30 s', () => expect([1, 2, 3, 6, 10].map(pullBackoffMs)).toEqual([1000, 2000, 4000, 30_000, 30_000]));

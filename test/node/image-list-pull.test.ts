// An ImageListPullJob on the real node, with the runtime installed from its image and dist/: three images of their
// own (pushed to the node's loopback registry under a name no other test uses, so none is on the node before) are
// pulled by the daemon through the one ImagePullJob the list makes for each; the list completes with every image
// succeeded, containerd holds each image whole and the kubelet lists it. Deleting the list takes its ImagePullJobs
// with it (the garbage collector, by the controller references the list's controller wrote).
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKubeConfig, kubectl } from '../harness/index.js';
import { buildLayout, push } from '../cri-harness/images.js';
import { core, ctr, installRuntime, namespace, node, waitFor } from './support.js';

const GROUP = 'apps.kruise.io';
const LISTS = { group: GROUP, version: 'v1alpha1', plural: 'imagelistpulljobs' } as const;
const JOBS = { group: GROUP, version: 'v1alpha1', plural: 'imagepulljobs' } as const;

describe('ImageListPullJob on the real node', () => {
  const images: string[] = [];
  let ns: string;

  beforeAll(async () => {
    await installRuntime();
    const run = randomBytes(3).toString('hex');
    const dir = mkdtempSync(path.join(node().dir, 'image-list-'));
    for (const name of ['web', 'sidecar', 'tools']) {
      const ref = await buildLayout(path.join(dir, 'work'), path.join(dir, 'oci'), {
        repo: `test/ilpj-${name}`,
        tag: run,
        paddingBytes: 256 * 1024,
        cmd: ['/bin/sh', '-c', 'sleep 3600'],
      });
      const image = `${node().registry}/test/ilpj-${name}:${run}`;
      await push(ref, image);
      images.push(image);
    }
    ns = await namespace('image-list-pull');
  }, 900_000);

  afterAll(async () => {
    // Leave the node as it was: a later run must find none of these images present.
    for (const image of images) {
      try {
        ctr('images', 'rm', image);
      } catch {
        // not pulled (the test failed before)
      }
    }
  });

  it('pulls every image of the list on the node, then the list and its ImagePullJobs go together', async () => {
    for (const image of images) expect(ctr('images', 'ls', '-q').split('\n')).not.toContain(image);
    const objects = adminKubeConfig().makeApiClient(CustomObjectsApi);
    const started = Date.now();
    await kubectl(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: `${GROUP}/v1beta1`,
        kind: 'ImageListPullJob',
        metadata: { name: 'warm' },
        spec: {
          images,
          selector: { names: [node().nodeName] },
          parallelism: 2,
          pullPolicy: { timeoutSeconds: 60, backoffLimit: 2 },
          completionPolicy: { type: 'Always', activeDeadlineSeconds: 120 },
        },
      }),
    });
    let list: any;
    await waitFor(
      'ImageListPullJob completed',
      async () => {
        list = await objects.getNamespacedCustomObject({ ...LISTS, namespace: ns, name: 'warm' });
        return list.status?.completionTime !== undefined;
      },
      180_000,
      250,
    );
    const completedMs = Date.now() - started;
    expect(list.status).toMatchObject({ desired: 3, completed: 3, succeeded: 3, active: 0 });
    expect(list.status.failedImageStatuses).toBeUndefined();

    const children = ((await objects.listNamespacedCustomObject({ ...JOBS, namespace: ns })) as { items: any[] }).items;
    expect(children.map((c) => c.spec.image).sort()).toEqual([...images].sort());
    for (const c of children) expect(c.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0 });

    // Each image whole in containerd, and in the kubelet's image list (node status).
    for (const image of images) {
      expect(ctr('images', 'ls', '-q').split('\n')).toContain(image);
      expect(ctr('images', 'check', `name==${image}`)).toMatch(/complete \((\d+)\/\1\)/);
    }
    await waitFor(
      'every image in the kubelet image list',
      async () => {
        const known = ((await core().readNode({ name: node().nodeName })).status?.images ?? []).flatMap((i) => i.names ?? []);
        return images.every((i) => known.includes(i));
      },
      60_000,
      500,
    );

    // Deleting the list: the garbage collector follows the controller references to its ImagePullJobs.
    const deleted = Date.now();
    await kubectl(['delete', '-n', ns, 'imagelistpulljobs.apps.kruise.io', 'warm', '--wait=true']);
    await waitFor(
      'the ImagePullJobs of the deleted list gone',
      async () => ((await objects.listNamespacedCustomObject({ ...JOBS, namespace: ns })) as { items: unknown[] }).items.length === 0,
      60_000,
      250,
    );
    console.log(
      `[image-list-pull] 3 images (${images.length} ImagePullJobs) pulled and the list completed ${completedMs} ms after apply; ImagePullJobs gone ${Date.now() - deleted} ms after the list's delete`,
    );
  }, 300_000);
});

// A hard kill of the node daemon (`kill -9` of its process, as the OOM killer or a crash would) in the
// middle of an ImagePullJob pull, on the real node: the pull comes from the loopback registry through a
// bandwidth-limited proxy so it is still running when the daemon dies. The kubelet restarts the daemon in
// place; the new process must carry the tag to Succeeded once, the job completes, and containerd holds the
// whole image with no ingest left behind.
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { adminKubeConfig, kubectl } from '../harness/index.js';
import { buildLayout, push } from '../cri-harness/images.js';
import { ThrottleProxy } from '../cri-harness/throttle-proxy.js';
import { core, ctr, installRuntime, namespace, node, sigkillContainerTask, waitFor } from './support.js';

const PADDING_BYTES = 16 * 1024 * 1024;
const RATE_BYTES_PER_SECOND = 1024 * 1024;
/** The daemon dies once this much of the layer went through the proxy: well inside the pull. */
const KILL_AFTER_BYTES = 4 * 1024 * 1024;

interface TagStatus {
  tag: string;
  phase?: string;
  version?: number;
  completionTime?: string;
  imageID?: string;
}

describe('the daemon killed (SIGKILL) during an ImagePullJob pull', () => {
  let proxy: ThrottleProxy;
  let image: string;

  beforeAll(async () => {
    await installRuntime();
    // An image of its own (16 MiB of incompressible padding), pushed straight to the registry and pulled
    // through the proxy under another host:port, so no other test has it and the pull is slow.
    const dir = mkdtempSync(path.join(node().dir, 'pull-kill-'));
    const ref = await buildLayout(path.join(dir, 'work'), path.join(dir, 'oci'), {
      repo: 'test/pull-slow',
      tag: '1',
      paddingBytes: PADDING_BYTES,
      cmd: ['/bin/sh', '-c', 'sleep 3600'],
    });
    await push(ref, `${node().registry}/test/pull-slow:1`);
    proxy = await ThrottleProxy.start(node().registry, RATE_BYTES_PER_SECOND);
    image = `${proxy.host}/test/pull-slow:1`;
  }, 900_000);

  afterAll(async () => {
    await proxy?.close();
  });

  it('the restarted daemon finishes the pull: the tag ends Succeeded once, the job completes, nothing is left half-pulled', async () => {
    const name = image.replace(/:1$/, '');
    const phases: TagStatus[] = [];
    const watch = await new Watch(adminKubeConfig()).watch(
      '/apis/apps.kruise.io/v1alpha1/nodeimages',
      { fieldSelector: `metadata.name=${node().nodeName}` },
      (_type: string, obj: { status?: { imageStatuses?: Record<string, { tags?: TagStatus[] }> } }) => {
        const tag = obj.status?.imageStatuses?.[name]?.tags?.find((t) => t.tag === '1');
        const last = phases.at(-1);
        if (tag && (last?.phase !== tag.phase || last?.completionTime !== tag.completionTime)) phases.push({ ...tag });
      },
      () => undefined,
    );
    try {
      const daemons = await core().listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=daemon' });
      const daemonPod = daemons.items[0]!;
      const daemonRestarts = daemonPod.status?.containerStatuses?.[0]?.restartCount ?? 0;
      const id = daemonPod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');

      const ns = await namespace('pull-daemon-kill');
      const started = Date.now();
      await kubectl(['apply', '-n', ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'ImagePullJob',
          metadata: { name: 'pull-slow' },
          spec: {
            image,
            parallelism: 1,
            completionPolicy: { type: 'Always', activeDeadlineSeconds: 300 },
            pullPolicy: { backoffLimit: 3, timeoutSeconds: 120 },
          },
        }),
      });
      await waitFor('the pull under way through the proxy', () => proxy.stats.bytesToClient >= KILL_AFTER_BYTES, 120_000, 50);
      expect(phases.at(-1)?.phase).toBe('Pulling');
      sigkillContainerTask(id);
      const killedAt = Date.now();
      const bytesAtKill = proxy.stats.bytesToClient;
      await waitFor(
        'the daemon container restarted by the kubelet',
        async () =>
          ((await core().readNamespacedPod({ name: daemonPod.metadata!.name!, namespace: 'kruise-system' })).status?.containerStatuses?.[0]
            ?.restartCount ?? 0) > daemonRestarts,
        60_000,
        250,
      );
      const restartedAt = Date.now();

      const objects = adminKubeConfig().makeApiClient(CustomObjectsApi);
      let job: any;
      await waitFor(
        'ImagePullJob completed',
        async () => {
          job = await objects.getNamespacedCustomObject({
            group: 'apps.kruise.io',
            version: 'v1alpha1',
            namespace: ns,
            plural: 'imagepulljobs',
            name: 'pull-slow',
          });
          return job.status?.completionTime !== undefined;
        },
        240_000,
        250,
      );
      const completedAt = Date.now();
      expect(job.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0 });

      // A second Succeeded (a pull done twice, or a stale report landing late) would show within a few seconds.
      await new Promise((r) => setTimeout(r, 5000));
      const succeeded = phases.filter((p, i) => p.phase === 'Succeeded' && phases[i - 1]?.phase !== 'Succeeded');
      expect(succeeded, JSON.stringify(phases)).toHaveLength(1);
      expect(phases.at(-1)).toMatchObject({ phase: 'Succeeded', imageID: expect.stringContaining('sha256:') });
      expect(phases.some((p) => p.phase === 'Failed')).toBe(false);

      // Whole image in containerd: every blob of it present, no pull left in the content store's ingests.
      expect(ctr('images', 'ls', '-q').split('\n')).toContain(image);
      expect(ctr('images', 'check', `name==${image}`)).toMatch(/complete \((\d+)\/\1\)/);
      expect(ctr('content', 'active').trim().split('\n').slice(1)).toEqual([]);
      // The kubelet's image list (node status) has it too.
      await waitFor(
        `${image} in the kubelet's image list`,
        async () => ((await core().readNode({ name: node().nodeName })).status?.images ?? []).some((i) => i.names?.includes(image)),
        60_000,
        500,
      );
      console.log(
        `[pull-kill] killed after ${bytesAtKill} of ~${PADDING_BYTES} layer bytes (${killedAt - started} ms in), ` +
          `daemon back in ${restartedAt - killedAt} ms, job complete ${completedAt - killedAt} ms after the kill; ` +
          `${proxy.stats.bytesToClient} bytes through the proxy in ${proxy.stats.connections} connections; ` +
          `tag phases ${phases.map((p) => p.phase).join(' > ')}`,
      );
    } finally {
      watch.abort();
    }
  });
});

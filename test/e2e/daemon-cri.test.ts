// The hand-written CRI subset against a real containerd: field numbers right (labels, env, exit
// codes, image refs survive the round trip), endpoint probing, and the client across a runtime restart.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriClient, CriError } from '../../src/runtime/cri/client.js';
import { resolveCriEndpoint } from '../../src/runtime/cri/endpoint.js';
import { KubeletLabels } from '../../src/runtime/cri/types.js';
import { KubeletPod, startCriEnvironment, waitFor, type CriEnvironment } from '../cri-harness/index.js';

let env: CriEnvironment;
beforeAll(async () => {
  env = await startCriEnvironment();
});
afterAll(async () => {
  await env?.stop();
});

describe('CRI runtime.v1 subset on containerd', () => {
  it('Version answers with the runtime name the daemon uses for container IDs', async () => {
    expect(await env.cri.version()).toMatchObject({ runtimeName: 'containerd', runtimeApiVersion: 'v1' });
  });

  it('round-trips env values as text (KeyValue.value pinned to string), labels, and exit codes', async () => {
    const pod = await KubeletPod.run(
      env.cri,
      {
        uid: 'uid-cri-1',
        name: 'cri-pod',
        namespace: 'default',
        containers: [
          { name: 'env', image: env.images.busybox, env: { GREETING: 'héllo wörld=1', B64ISH: 'aGVsbG8=' } },
          { name: 'exit3', image: env.images.busybox, command: ['/bin/sh', '-c', 'exit 3'] },
        ],
      },
      join(env.dir, 'logs'),
    );
    try {
      const out = await env.cri.execSync(pod.containerIds.get('env')!, ['/bin/sh', '-c', 'printf "%s|%s" "$GREETING" "$B64ISH"'], 5);
      expect(out.exitCode).toBe(0);
      expect(out.stdout.toString('utf8')).toBe('héllo wörld=1|aGVsbG8=');

      const listed = await env.cri.listContainers({
        labelSelector: { [KubeletLabels.podUid]: 'uid-cri-1', [KubeletLabels.containerName]: 'env' },
      });
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({
        id: pod.containerIds.get('env'),
        state: 'CONTAINER_RUNNING',
        metadata: { name: 'env', attempt: 0 },
      });
      expect(listed[0]!.labels[KubeletLabels.podName]).toBe('cri-pod');

      await waitFor('exit3 exited', async () => (await pod.status('exit3')).state === 'CONTAINER_EXITED', 10_000, 50);
      expect(await pod.status('exit3')).toMatchObject({ exitCode: 3, reason: 'Error' });
      const exited = await env.cri.listContainers({
        state: { state: 'CONTAINER_EXITED' },
        labelSelector: { [KubeletLabels.podUid]: 'uid-cri-1' },
      });
      expect(exited.map((c) => c.metadata?.name)).toEqual(['exit3']);
    } finally {
      await pod.destroy();
    }
  });

  it('ImageStatus is null for an absent image; ListImages sees pulled ones', async () => {
    expect(await env.cri.imageStatus(`${env.registry.host}/test/absent:1`)).toBeNull();
    const images = await env.cri.listImages();
    expect(images.some((i) => i.repoTags.includes(env.images.pause))).toBe(true);
  });

  it('probes default socket paths in order, skipping missing and dead ones, with a clear error when none answers', async () => {
    expect(await resolveCriEndpoint(undefined, [join(env.dir, 'missing.sock'), env.containerd.socket])).toBe(env.containerd.socket);
    expect(await resolveCriEndpoint('/explicit/path.sock', [env.containerd.socket])).toBe('/explicit/path.sock');
    await expect(resolveCriEndpoint(undefined, [join(env.dir, 'missing.sock')])).rejects.toThrow(
      /no CRI runtime found; tried .*missing\.sock \(no socket\).*--cri-socket/,
    );
  });

  it('one client keeps working across a runtime restart; calls meanwhile fail as UNAVAILABLE', async () => {
    const client = new CriClient(env.containerd.socket, { callTimeoutMs: 3000 });
    try {
      await client.version();
      await env.containerd.stop();
      const err = await client.version().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CriError);
      expect((err as CriError).unavailable).toBe(true);
      await env.containerd.start();
      await waitFor('client reconnects', async () => !!(await client.version()), 15_000, 100);
    } finally {
      client.close();
    }
  });
});

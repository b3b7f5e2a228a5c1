// The daemon's container-exit watcher (src/runtime/daemon/cri-events.ts) against a real containerd: it picks the CRI
// event stream when the runtime offers it, else polls, and reports a container's exit with the kubelet labels that
// name its pod; while no pod waits for an exit it makes no CRI calls.
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriError } from '../../src/runtime/cri/client.js';
import { ContainerExitWatcher, type ContainerExit } from '../../src/runtime/daemon/cri-events.js';
import { KubeletPod, startCriEnvironment, waitFor, type CriEnvironment } from '../cri-harness/index.js';

let env: CriEnvironment;
beforeAll(async () => {
  env = await startCriEnvironment();
});
afterAll(async () => {
  await env?.stop();
});

describe('container exits over CRI', () => {
  it('GetContainerEvents either streams or answers UNIMPLEMENTED (containerd before 1.7), never hangs silently broken', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const cancel = env.cri.containerEvents(
        () => undefined,
        (err) => resolve(err instanceof CriError && err.unimplemented ? 'unimplemented' : `ended: ${err?.message}`),
      );
      // An open stream with nothing to say yet is the other valid answer.
      setTimeout(() => {
        cancel();
        resolve('streaming');
      }, 1_500);
    });
    expect(['unimplemented', 'streaming']).toContain(outcome);
  });

  it('reports the exit of a pod container with its pod identity, and only polls while wanted', async () => {
    let wanted = true;
    const watcher = new ContainerExitWatcher(env.cri, { pollIntervalMs: 20, wanted: () => wanted, logger: pino({ level: 'silent' }) });
    const exits: ContainerExit[] = [];
    watcher.onExit((e) => exits.push(e));
    watcher.start();
    const pod = await KubeletPod.run(
      env.cri,
      {
        uid: 'uid-exits-1',
        name: 'job-pod',
        namespace: 'ns1',
        containers: [
          { name: 'main', image: env.images.busybox, command: ['/bin/sh', '-c', 'sleep 2; exit 3'] },
          { name: 'sidecar', image: env.images.busybox },
        ],
      },
      join(env.dir, 'logs'),
    );
    try {
      await waitFor('the exit of main reported', async () => exits.some((e) => e.container === 'main'), 20_000, 20);
      expect(['events', 'poll']).toContain(watcher.mode);
      expect(exits.filter((e) => e.podUid === 'uid-exits-1')).toEqual([
        { containerId: pod.containerIds.get('main'), podUid: 'uid-exits-1', podName: 'job-pod', podNamespace: 'ns1', container: 'main' },
      ]);
      if (watcher.mode === 'poll') {
        // Not wanted: the sidecar's stop goes unseen (no CRI calls), and nothing is reported late once wanted again.
        wanted = false;
        await new Promise((r) => setTimeout(r, 100));
        await env.cri.stopContainer(pod.containerIds.get('sidecar')!, 2);
        await new Promise((r) => setTimeout(r, 200));
        wanted = true;
        await new Promise((r) => setTimeout(r, 200));
        expect(exits.filter((e) => e.container === 'sidecar')).toEqual([]);
      }
    } finally {
      watcher.stop();
      await pod.destroy();
    }
  });
});

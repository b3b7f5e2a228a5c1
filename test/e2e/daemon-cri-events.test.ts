// The node's container changes (src/runtime/daemon/cri-events.ts) from a real containerd: whichever source the
// runtime offers (its GetContainerEvents stream, else the poll), a container's exit reaches a listener with the
// pod UID and container name, and the source stops when the last listener leaves.
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriContainerEvents, type ContainerChange } from '../../src/runtime/daemon/cri-events.js';
import { KubeletPod, startCriEnvironment, waitFor, type CriEnvironment } from '../cri-harness/index.js';

let env: CriEnvironment;
beforeAll(async () => {
  env = await startCriEnvironment();
});
afterAll(async () => {
  await env?.stop();
});

describe('CRI container changes on containerd', () => {
  it('reports a container stop with its pod and name within one poll, and goes idle without listeners', async () => {
    const events = new CriContainerEvents(env.cri, pino({ level: 'silent' }));
    const changes: ContainerChange[] = [];
    const unsubscribe = events.subscribe((c) => changes.push(c));
    const pod = await KubeletPod.run(
      env.cri,
      {
        uid: 'uid-cri-events-1',
        name: 'cri-events',
        namespace: 'default',
        containers: [
          { name: 'keeps-running', image: env.images.busybox },
          { name: 'exits', image: env.images.busybox, command: ['/bin/sh', '-c', 'sleep 1; exit 0'] },
        ],
      },
      join(env.dir, 'logs'),
    );
    try {
      const mode = events.mode;
      expect(['stream', 'poll']).toContain(mode);
      await waitFor(
        'stop of "exits" reported',
        async () => changes.some((c) => c.type === 'stopped' && c.containerName === 'exits'),
        10_000,
        10,
      );
      const stop = changes.find((c) => c.type === 'stopped' && c.containerName === 'exits')!;
      expect(stop).toMatchObject({ podUid: 'uid-cri-events-1', containerId: pod.containerIds.get('exits') });
      // containerd (1.6 included) publishes the task exit on its own event service: the first stop carries it, and
      // its code and time are the ones CRI reports once it has caught up.
      expect(events.exitSource).toBe('containerd');
      expect(stop.exit).toBeDefined();
      // (CRI may still show it running here: it reports the exit once containerd has deleted the task.)
      await waitFor(
        'CRI reports the exit',
        async () => (await env.cri.containerStatus(stop.containerId)).state === 'CONTAINER_EXITED',
        10_000,
        10,
      );
      const status = await env.cri.containerStatus(stop.containerId);
      expect(stop.exit).toEqual({
        containerId: stop.containerId,
        exitCode: status.exitCode,
        exitedAtMs: Number(BigInt(status.finishedAt) / 1_000_000n),
      });
      expect(events.exitOf(stop.containerId)).toEqual(stop.exit);
      expect(changes.some((c) => c.containerName === 'keeps-running' && c.type === 'stopped')).toBe(false);
    } finally {
      unsubscribe();
      expect(events.mode).toBe('idle');
      await pod.destroy();
    }
  });
});

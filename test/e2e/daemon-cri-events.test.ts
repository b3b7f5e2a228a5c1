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
      expect(changes.some((c) => c.containerName === 'keeps-running' && c.type === 'stopped')).toBe(false);
    } finally {
      unsubscribe();
      expect(events.mode).toBe('idle');
      await pod.destroy();
    }
  });
});

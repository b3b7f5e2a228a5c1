import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CriClient } from '../../src/runtime/cri/client.js';
import { TestContainerd } from './containerd.js';
import { buildLayout, push } from './images.js';
import { TestRegistry } from './registry.js';

export { TestContainerd } from './containerd.js';
export { TestRegistry } from './registry.js';
export { KubeletPod } from './kubelet.js';
export { RecordingCriProxy } from './proxy.js';
export { waitFor, freePort } from './util.js';

/** Credentials of the basic-auth registry. */
export const REGISTRY_USER = { username: 'puller', password: 'correct-horse-battery' } as const;

export interface CriEnvironment {
  readonly dir: string;
  readonly containerd: TestContainerd;
  /** Plain registry (no auth) holding every test image. */
  readonly registry: TestRegistry;
  /** Registry with htpasswd basic auth (REGISTRY_USER) holding `images.private`. */
  readonly authRegistry: TestRegistry;
  readonly images: {
    /** busybox image whose entrypoint sleeps, trapping SIGTERM to exit 0 (a well-behaved sidecar). */
    readonly busybox: string;
    /** The sandbox (pause) image containerd is configured with. */
    readonly pause: string;
    /** ~5 MB image (busybox + 4 MiB of random bytes), for pull timings. */
    readonly big: string;
    /** A small image only on the auth registry. */
    readonly private: string;
  };
  /** A CRI client on the private containerd socket. */
  readonly cri: CriClient;
  /** Stops everything and removes the temp dir. */
  stop(): Promise<void>;
}

const SLEEPER = ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];

/**
 * Starts the real CRI parts for a test file (call in `beforeAll`, `stop()` in `afterAll`):
 * two loopback registries, offline-built busybox images pushed to them, and a private containerd
 * whose sandbox image is pre-pulled so pods start even while a test has the registry down.
 * Needs root and the packages of test/prepare.d/30-cri.sh.
 */
export async function startCriEnvironment(): Promise<CriEnvironment> {
  if (process.getuid?.() !== 0) {
    throw new Error(
      'the CRI e2e tests run a private containerd + runc and need root; run them as root (CI does), after bash test/prepare.sh',
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'kruise-cri-'));
  const registry = await TestRegistry.create(join(dir, 'registry'));
  const authRegistry = await TestRegistry.create(join(dir, 'registry-auth'), { auth: REGISTRY_USER });
  const layout = join(dir, 'oci');
  const work = join(dir, 'build');
  const busyboxRef = await buildLayout(work, layout, { repo: 'test/busybox', tag: '1', cmd: SLEEPER });
  const pauseRef = await buildLayout(work, layout, { repo: 'test/pause', tag: '1', cmd: ['/bin/sleep', '2147483647'] });
  const bigRef = await buildLayout(work, layout, { repo: 'test/big', tag: '1', cmd: SLEEPER, paddingBytes: 4 * 1024 * 1024 });
  const images = {
    busybox: `${registry.host}/test/busybox:1`,
    pause: `${registry.host}/test/pause:1`,
    big: `${registry.host}/test/big:1`,
    private: `${authRegistry.host}/test/private:1`,
  };
  await push(busyboxRef, images.busybox);
  await push(pauseRef, images.pause);
  await push(bigRef, images.big);
  await push(busyboxRef, images.private, REGISTRY_USER);

  const containerd = await TestContainerd.create(join(dir, 'containerd'), { sandboxImage: images.pause });
  const cri = new CriClient(containerd.socket);
  await cri.pullImage(images.pause);
  return {
    dir,
    containerd,
    registry,
    authRegistry,
    images,
    cri,
    async stop() {
      cri.close();
      await containerd.destroy();
      await registry.stop();
      await authRegistry.stop();
      if (!process.env.KEEP_CRI_ENV) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

import { defineConfig } from 'vitest/config';

// Three projects: fast unit tests of pure code, end-to-end tests against real parts (kube-apiserver +
// etcd, containerd, a registry) started once per run by the e2e globalSetup, and the stories on a
// real one-node cluster started once per run by the node globalSetup.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/harness/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
      {
        // A real one-node cluster (kubelet, controllers, kube-proxy on containerd), started only when
        // this project runs; see test/harness/real-node.ts.
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          globalSetup: ['test/harness/node-global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});

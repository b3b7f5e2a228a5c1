import { defineConfig } from 'vitest/config';

// Four projects: fast unit tests of pure code, end-to-end tests against real parts (kube-apiserver +
// etcd, containerd, a registry) started once per run by the e2e globalSetup, the stories on a
// real one-node cluster started once per run by the node globalSetup, and the multi-node stories on
// a real three-node cluster started by the nodes globalSetup.
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
      {
        // Several real nodes (node A plus extra nodes in network namespaces of their own) on one control plane,
        // for the stories that need more than one node. Never in the same vitest process as "node": both take
        // the machine's real-node lock in their globalSetup (scripts/test.sh runs them one after the other).
        test: {
          name: 'nodes',
          include: ['test/nodes/**/*.test.ts'],
          globalSetup: ['test/harness/nodes-global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});

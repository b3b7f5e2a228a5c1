// vitest globalSetup of the "node" project: one real node (kubelet, controllers, kube-proxy on a
// private containerd, next to its own etcd + kube-apiserver) per run, shared by the node suites.
import type { TestProject } from 'vitest/node';
import { RealNode, type RealNodeInfo } from './real-node.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The real node's addresses, images and directories. */
    realNode: RealNodeInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const node = await RealNode.start();
  console.log(`[node] one-node cluster ready in ${Date.now() - started} ms (${node.dir})`);
  project.provide('kubeconfig', node.plane!.kubeconfigPath);
  project.provide('realNode', node.info());
  // No KUBECONFIG in the environment: the e2e project's globalSetup runs in the same process and sets its own.
  return async () => {
    await node.stop();
  };
}

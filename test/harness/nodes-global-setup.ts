// vitest globalSetup of the "nodes" project: a real cluster of several nodes (node A as in the "node" project, plus
// extra nodes in network namespaces of their own; see test/harness/real-node.ts), for the multi-node stories. Its own
// project, so the single-node stories keep their one node; it takes the same machine-wide lock as the "node" project.
import type { TestProject } from 'vitest/node';
import { RealNode } from './real-node.js';

/** Three nodes: enough for "one pod per node" and "node B, not A or C" to mean something; ~220 MiB per extra node. */
const NODES = 3;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const node = await RealNode.start({ nodes: NODES });
  console.log(`[nodes] ${NODES}-node cluster ready in ${Date.now() - started} ms (${node.dir})`);
  project.provide('kubeconfig', node.plane!.kubeconfigPath);
  project.provide('realNode', node.info());
  return async () => {
    const rss = node.extraNodeRssMiB();
    console.log(`[nodes] extra nodes' RSS (kubelet + containerd + kube-proxy + registry copy), MiB: ${JSON.stringify(rss)}`);
    await node.stop();
  };
}

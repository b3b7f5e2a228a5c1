// Finds the real node's binaries (kubelet, kube-controller-manager, kube-scheduler, kube-proxy):
// TEST_ASSET_<NAME> for one binary, then CDK8S_KRUISE_NODE_ASSETS, then the cache directory that
// test/prepare.d/15-node.sh builds into (same rule as that script).
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { pinnedKubernetesVersion } from './assets.js';
import { projectCacheDir } from './cache.js';

export interface NodeAssets {
  readonly kubelet: string;
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  readonly kubeProxy: string;
}

export function nodeBuildCacheDir(): string {
  if (process.env.CDK8S_KRUISE_NODE_DIR) return process.env.CDK8S_KRUISE_NODE_DIR;
  return projectCacheDir('node', pinnedKubernetesVersion());
}

function resolve(name: string, envName: string): string {
  const override = process.env[envName];
  const candidate = override || path.join(process.env.CDK8S_KRUISE_NODE_ASSETS || nodeBuildCacheDir(), name);
  try {
    accessSync(candidate, constants.X_OK);
    return candidate;
  } catch {
    throw new Error(
      `${name} not found at ${candidate}. Run \`bash test/prepare.sh\` (or \`npm test\`, which runs it) to build the node ` +
        `binaries, or set CDK8S_KRUISE_NODE_ASSETS to a directory with kubelet, kube-controller-manager, kube-scheduler and kube-proxy.`,
    );
  }
}

export function findNodeAssets(): NodeAssets {
  return {
    kubelet: resolve('kubelet', 'TEST_ASSET_KUBELET'),
    kubeControllerManager: resolve('kube-controller-manager', 'TEST_ASSET_KUBE_CONTROLLER_MANAGER'),
    kubeScheduler: resolve('kube-scheduler', 'TEST_ASSET_KUBE_SCHEDULER'),
    kubeProxy: resolve('kube-proxy', 'TEST_ASSET_KUBE_PROXY'),
  };
}

// Finds the control-plane binaries with envtest's precedence: TEST_ASSET_<NAME> for one binary, then
// KUBEBUILDER_ASSETS, then the cache directory that test/prepare.d/10-controlplane.sh builds into.
import { accessSync, constants, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectCacheDir } from './cache.js';

const controlplaneModule = fileURLToPath(new URL('../controlplane/', import.meta.url));

export interface ControlPlaneAssets {
  readonly kubeApiserver: string;
  readonly etcd: string;
  readonly kubectl: string;
}

/** The Kubernetes version pinned in test/controlplane/versions.env, e.g. "v1.35.4". */
export function pinnedKubernetesVersion(): string {
  const env = readFileSync(path.join(controlplaneModule, 'versions.env'), 'utf8');
  const match = /^KUBERNETES_VERSION=(\S+)$/m.exec(env);
  if (!match) throw new Error('test/controlplane/versions.env does not set KUBERNETES_VERSION');
  return match[1]!;
}

/** Where the prepare step puts the binaries it builds (same rule as the shell script). */
export function buildCacheDir(): string {
  if (process.env.CDK8S_KRUISE_CONTROLPLANE_DIR) return process.env.CDK8S_KRUISE_CONTROLPLANE_DIR;
  return projectCacheDir('controlplane', pinnedKubernetesVersion());
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function resolve(name: string, envName: string): string {
  const override = process.env[envName];
  const dir = process.env.KUBEBUILDER_ASSETS || buildCacheDir();
  const candidate = override || path.join(dir, name);
  if (executable(candidate)) return candidate;
  const source = override ? envName : process.env.KUBEBUILDER_ASSETS ? 'KUBEBUILDER_ASSETS' : 'the build cache';
  throw new Error(
    `${name} not found at ${candidate} (from ${source}). Run \`bash test/prepare.sh\` to build the control plane ` +
      `(or \`npm test\`, which runs it), or set KUBEBUILDER_ASSETS to a directory with kube-apiserver, etcd and kubectl.`,
  );
}

export function findAssets(): ControlPlaneAssets {
  return {
    kubeApiserver: resolve('kube-apiserver', 'TEST_ASSET_KUBE_APISERVER'),
    etcd: resolve('etcd', 'TEST_ASSET_ETCD'),
    kubectl: resolve('kubectl', 'TEST_ASSET_KUBECTL'),
  };
}

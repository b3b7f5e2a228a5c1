// Installs the runtime on a real node the way users do: builds the image with `npm run image` (once per node),
// imports its archive into the node's containerd (under the manifests' own reference, pulled
// IfNotPresent: nothing is fetched), applies the CRDs and KruiseRuntime manifests `synth` wrote to
// dist/ (or other manifests a KruiseRuntime rendered, such as the conformance tier's), and waits for both
// rollouts. The one change to the manifests is the daemon's host-run hostPath, pointed at the node's private
// run directory: the harness's containerd socket is not at the host's /var/run. Used by the node stories and
// by bench/real-node-terminator.bench.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { findAssets } from './assets.js';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../..');

export interface RuntimeInstallTarget {
  readonly kubeconfig: string;
  readonly containerdSocket: string;
  /** The node directory mounted as the daemon's /hostvarrun. */
  readonly hostRunDir: string;
  /** Every node's containerd, where the cluster has more than one node: the image goes into each. */
  readonly nodes?: readonly { readonly containerdSocket: string }[];
}

/** An install as `synth` writes it: the CRDs, then the runtime (whose Deployment names the image). */
export interface RuntimeManifests {
  readonly crds: string;
  readonly runtime: string;
}

/** The install of the examples app, as `synth` wrote it to dist/. */
export function distManifests(): RuntimeManifests {
  return {
    crds: readFileSync(path.join(repoRoot, 'dist/00-crds.yaml'), 'utf8'),
    runtime: readFileSync(path.join(repoRoot, 'dist/10-runtime.yaml'), 'utf8'),
  };
}

export interface RuntimeInstallTimings {
  readonly imageMs: number;
  readonly rolloutMs: number;
}

function kubectl(target: RuntimeInstallTarget, args: string[], input?: string): Promise<string> {
  const child = run(findAssets().kubectl, ['--kubeconfig', target.kubeconfig, ...args], { maxBuffer: 64 * 1024 * 1024 });
  if (input !== undefined) child.child.stdin!.end(input);
  return child.then(
    (r) => r.stdout,
    (error: { stderr?: string; message: string }) => {
      throw new Error(`kubectl ${args.join(' ')} failed: ${error.stderr || error.message}`);
    },
  );
}

/**
 * Installs the runtime unless its controller-manager Deployment exists (with `reapply`, applies the manifests over
 * it, so a runtime another suite installed takes these manifests' flags); waits for both rollouts either way.
 */
export async function installRuntime(
  target: RuntimeInstallTarget,
  manifests: RuntimeManifests = distManifests(),
  options: { readonly reapply?: boolean } = {},
): Promise<RuntimeInstallTimings> {
  let imageMs = 0;
  const existing = await kubectl(target, [
    'get',
    'deployment',
    '-n',
    'kruise-system',
    'kruise-controller-manager',
    '--ignore-not-found',
    '-o',
    'name',
  ]);
  if (!existing.trim() || options.reapply) {
    imageMs = await importRuntimeImage(target, manifestImage(manifests.runtime));
    await kubectl(target, ['apply', '--server-side', '-f', '-'], manifests.crds);
    await kubectl(target, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    await kubectl(target, ['apply', '--server-side', '-f', '-'], runtimeManifests(target.hostRunDir, manifests.runtime));
  }
  const rolloutStarted = Date.now();
  await kubectl(target, ['rollout', 'status', '-n', 'kruise-system', 'deployment/kruise-controller-manager', '--timeout=300s']);
  await kubectl(target, ['rollout', 'status', '-n', 'kruise-system', 'daemonset/kruise-daemon', '--timeout=300s']);
  return { imageMs, rolloutMs: Date.now() - rolloutStarted };
}

/**
 * Builds the runtime image and imports it into the node's containerd (every node's, on a multi-node cluster) under
 * the reference dist/ uses, unless it is there already (a node lives for one run, so an image on it was built from
 * this checkout). Returns the ms spent.
 */
export async function importRuntimeImage(target: RuntimeInstallTarget, reference = manifestImage()): Promise<number> {
  const ctr = (socket: string, ...args: string[]) => run('ctr', ['--address', socket, '--namespace', 'k8s.io', ...args]);
  const sockets = [...new Set([target.containerdSocket, ...(target.nodes ?? []).map((n) => n.containerdSocket)])];
  const missing: string[] = [];
  for (const socket of sockets) {
    if ((await ctr(socket, 'images', 'ls', '-q', `name==${reference}`)).stdout.trim() !== reference) missing.push(socket);
  }
  if (missing.length === 0) return 0;
  const started = Date.now();
  const out = mkdtempSync(path.join(tmpdir(), 'kruise-node-image-'));
  try {
    await run('npm', ['run', '--silent', 'image', '--', '--out', out], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
    const build = JSON.parse(readFileSync(path.join(out, 'build.json'), 'utf8')) as { archivePath: string };
    for (const socket of missing) {
      // Like `docker load` + `docker tag`: the archive names the image `cdk8s-kruise:<version>`; the
      // manifests reference it under the registry they were rendered for.
      const imported = (await ctr(socket, 'images', 'import', '--snapshotter', 'native', build.archivePath)).stdout;
      const name = /unpacking (\S+) \(sha256:/.exec(imported)?.[1];
      if (!name) throw new Error(`ctr images import printed no image name:\n${imported}`);
      await ctr(socket, 'images', 'tag', '--force', name, reference);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return Date.now() - started;
}

/** The image reference the controller-manager Deployment of a runtime install runs (default: dist/10-runtime.yaml). */
export function manifestImage(runtimeYaml = distManifests().runtime): string {
  const docs = YAML.parseAllDocuments(runtimeYaml).map((d) => d.toJS() as Record<string, any> | null);
  const deployment = docs.find((d) => d?.kind === 'Deployment');
  const image = deployment?.spec?.template?.spec?.containers?.[0]?.image as string | undefined;
  if (!image) throw new Error('no Deployment image in the runtime manifests');
  return image;
}

/** A runtime install (default: dist/10-runtime.yaml) with the daemon's host-run volume on `hostRunDir`. */
export function runtimeManifests(hostRunDir: string, runtimeYaml = distManifests().runtime): string {
  const docs = YAML.parseAllDocuments(runtimeYaml).map((d) => d.toJS() as Record<string, any> | null);
  let patched = 0;
  for (const doc of docs) {
    if (doc?.kind !== 'DaemonSet') continue;
    for (const volume of doc.spec.template.spec.volumes ?? []) {
      if (volume.hostPath?.path === '/var/run') {
        volume.hostPath.path = hostRunDir;
        patched++;
      }
    }
  }
  if (patched !== 1) throw new Error(`expected one /var/run hostPath in the daemon DaemonSet of the runtime manifests, found ${patched}`);
  return docs
    .filter(Boolean)
    .map((d) => YAML.stringify(d))
    .join('---\n');
}

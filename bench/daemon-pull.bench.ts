// Image pull through the node daemon vs `ctr images pull`, measured in the same run on the same
// ~5 MB image from a loopback registry into the same private containerd. Three ways, interleaved
// (rotating order), each a cold pull (image removed with a synchronous content GC before each):
//   ctr      `ctr -n k8s.io images pull --plain-http --snapshotter native` (baseline)
//   cri      the daemon's Puller alone: CRI PullImage over grpc-js (what the daemon spends on CRI)
//   daemon   the whole daemon path: NodeImage tag version bumped on a real kube-apiserver ->
//            watch -> Puller -> CRI PullImage -> NodeImage status Succeeded observed by the client
// Needs root and the test/prepare.d packages + control-plane binaries.
// Usage: npm run bench:daemon-pull [-- --reps N --json]
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import pino from 'pino';
import { customResourceDefinitions } from '../src/install/crds.js';
import { KubeClient, NODE_IMAGES, PatchStrategy, loadKubeConfig, type KubeObject } from '../src/runtime/core/index.js';
import { Puller } from '../src/runtime/daemon/imagepull/puller.js';
import { splitImageRef } from '../src/runtime/daemon/imagepull/decision.js';
import { Daemon, DEFAULT_DAEMON_OPTIONS } from '../src/runtime/daemon/daemon.js';
import { startCriEnvironment } from '../test/cri-harness/index.js';
import { findAssets } from '../test/harness/assets.js';
import { ControlPlane, bypassProxyForLoopback } from '../test/harness/controlplane.js';
import { benchArgs, median, percentile, ratio } from './lib.js';
import { recordBench } from './record.js';

const args = benchArgs({ reps: 9 }, { 'daemon-log': { type: 'string', default: 'error' } });
const REPS = args.reps;
const run = promisify(execFile);
bypassProxyForLoopback();

const env = await startCriEnvironment();
const plane = await ControlPlane.start();
let daemon: Daemon | undefined;
try {
  const kubectl = findAssets().kubectl;
  const crds = { apiVersion: 'v1', kind: 'List', items: customResourceDefinitions() };
  const apply = run(kubectl, ['--kubeconfig', plane.kubeconfigPath, 'apply', '--server-side', '-f', '-']);
  apply.child.stdin!.end(JSON.stringify(crds));
  await apply;
  await run(kubectl, [
    '--kubeconfig',
    plane.kubeconfigPath,
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/nodeimages.apps.kruise.io',
  ]);

  const image = env.images.big;
  const { image: name, tag } = splitImageRef(image);
  const client = new KubeClient(loadKubeConfig(plane.kubeconfigPath));
  await client.create(NODE_IMAGES, {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodeImage',
    metadata: { name: 'bench-node' },
    spec: {},
  });
  daemon = new Daemon({
    ...DEFAULT_DAEMON_OPTIONS,
    nodeName: 'bench-node',
    kubeconfig: plane.kubeconfigPath,
    criSocket: env.containerd.socket,
    healthProbeAddr: '127.0.0.1:0',
    featureGates: 'ImagePullJobGate=true',
    logLevel: args.extra['daemon-log'],
  });
  await daemon.start();

  const size = Number((await env.cri.pullImage(image).then(() => env.cri.imageStatus(image)))?.size ?? 0);
  // Cold means no blob left: drop every name of the image (tag, digest ref, ID) with a synchronous
  // GC, then check the manifest blob is gone from the content store.
  const first = await env.cri.imageStatus(image);
  const manifestDigest = first?.repoDigests[0]?.split('@')[1];
  if (!manifestDigest) throw new Error('could not read the image digest');
  const clean = async () => {
    const refs = (await env.containerd.ctr(['images', 'ls', '-q'])).stdout
      .split('\n')
      .filter((r) => r.includes('/test/big') || (first && r === first.id));
    if (refs.length) await env.containerd.ctr(['images', 'rm', '--sync', ...refs]);
    if (await env.cri.imageStatus(image)) throw new Error('image still present after removal');
    const content = (await env.containerd.ctr(['content', 'ls', '-q'])).stdout;
    if (content.includes(manifestDigest)) throw new Error('image content still in the store after removal: the pull would not be cold');
  };

  const puller = (onDone: () => void) =>
    new Puller(
      env.cri,
      async () => null,
      1,
      pino({ level: 'silent' }),
      (r) => {
        if (r.status.phase === 'Succeeded' || r.status.phase === 'Failed') onDone();
      },
    );

  let version = 0;
  const ways: Record<string, () => Promise<void>> = {
    ctr: async () => {
      await env.containerd.ctr(['images', 'pull', '--plain-http', '--snapshotter', 'native', image]);
    },
    cri: () =>
      new Promise<void>((resolve) => {
        version++;
        puller(resolve).submit({
          ref: image,
          image: name,
          tag,
          version,
          imagePullPolicy: 'Always',
          timeoutSeconds: 60,
          backoffLimit: 0,
          pullSecrets: [],
        });
      }),
    daemon: async () => {
      version++;
      const v = version;
      if (args.extra['daemon-log'] !== 'error') console.error(JSON.stringify({ time: Date.now(), msg: 'bench: tag version bumped', v }));
      await client.patch(
        NODE_IMAGES,
        'bench-node',
        undefined,
        { spec: { images: { [name]: { tags: [{ tag, version: v, imagePullPolicy: 'Always' }] } } } },
        PatchStrategy.MergePatch,
      );
      for (;;) {
        const ni = await client.get<
          KubeObject & {
            status?: { imageStatuses?: Record<string, { tags: Array<{ version?: number; phase: string; message?: string }> }> };
          }
        >(NODE_IMAGES, 'bench-node');
        const st = ni.status?.imageStatuses?.[name]?.tags[0];
        if (st?.version === v && st.phase === 'Succeeded') return;
        if (st?.version === v && st.phase === 'Failed') throw new Error(`daemon pull failed: ${st.message}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  };
  const names = Object.keys(ways);
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  // One warm-up round (not recorded): first gRPC connection, first watch, page cache.
  for (let rep = -1; rep < REPS; rep++) {
    const order = names.map((_, i) => names[(i + Math.max(0, rep)) % names.length]!);
    for (const way of order) {
      await clean();
      const t0 = performance.now();
      await ways[way]!();
      const ms = performance.now() - t0;
      if (!(await env.cri.imageStatus(image))) throw new Error(`${way}: image not in the store after the pull`);
      if (rep >= 0) times[way]!.push(ms);
    }
  }
  const base = median(times.ctr!);
  const rows = names.map((n) => ({
    way: n,
    medianMs: +median(times[n]!).toFixed(1),
    p90Ms: +percentile(times[n]!, 0.9).toFixed(1),
    ratioToCtr: ratio(median(times[n]!), base),
  }));
  await recordBench(
    'bench:daemon-pull',
    rows
      .filter((r) => r.way !== 'ctr')
      .map((r) => ({
        measure: `cold pull of ${image} (${(size / 1e6).toFixed(2)} MB), ${r.way}`,
        figure: `median ${r.medianMs} ms, p90 ${r.p90Ms} ms`,
        peer: `${r.ratioToCtr}x ctr pull`,
      })),
  );
  if (args.json) console.log(JSON.stringify({ image, bytes: size, reps: REPS, rows }, null, 2));
  else {
    console.log(`cold pull of ${image} (${(size / 1e6).toFixed(2)} MB in containerd's store), ${REPS} reps each, interleaved`);
    for (const r of rows)
      console.log(
        `${r.way.padEnd(7)} median ${String(r.medianMs).padStart(7)} ms  p90 ${String(r.p90Ms).padStart(7)} ms  x${r.ratioToCtr} of ctr`,
      );
  }
} finally {
  await daemon?.stop();
  await plane.stop();
  await env.stop();
}

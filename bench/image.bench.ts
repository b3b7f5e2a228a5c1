// Layer writing of the offline image builder (src/image/layer.ts: pinned tar + Node zlib gzip -9) vs
// the classic reproducible-tar recipe on the same files, measured in the same run:
//   baseline  GNU `tar --sort=name --mtime=@E --owner=0 --group=0 --numeric-owner | gzip -9 -n`
//   ours      buildLayer(): tar-stream with pinned headers, gzip via node:zlib level 9
// Both layers of the image (base: Node + libraries + certs; app: the bundle) are written each
// repetition; repetitions are interleaved (rotating order) after one warm-up; medians reported.
// Usage: npm run bench:image [-- --reps N --json]
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { appEntries, stageEntries } from '../src/image/app.js';
import { findRepoRoot, npmNodeBinary } from '../src/image/build.js';
import { buildLayer, type LayerEntry } from '../src/image/layer.js';
import { baseEntries, nodeLicense } from '../src/image/rootfs.js';
import { CA_BUNDLE_PATH } from '../src/image/spec.js';
import { benchArgs, median, ratio, repeatAsync } from './lib.js';
import { recordBench } from './record.js';

const args = benchArgs({ reps: 3 });
const REPS = args.reps;
const EPOCH = 1_700_000_000;

const repoRoot = findRepoRoot();
const node = npmNodeBinary(repoRoot);
const layers: LayerEntry[][] = [
  baseEntries({ nodeBinary: node.path, nodeLicense: nodeLicense(repoRoot, node.version), caBundle: CA_BUNDLE_PATH }),
  await appEntries(repoRoot),
];
const work = mkdtempSync(join(tmpdir(), 'cdk8s-kruise-image-bench-'));
const dirs = layers.map((entries, i) => {
  const dir = join(work, `layer${i}`);
  stageEntries(entries, dir);
  for (const e of entries) if (e.kind !== 'symlink' && e.owner) chownSync(join(dir, e.path), e.owner.uid, e.owner.gid);
  return dir;
});

async function ours(): Promise<number> {
  let bytes = 0;
  for (const entries of layers) bytes += (await buildLayer(entries, new Date(EPOCH * 1000))).blob.length;
  return bytes;
}

function baseline(): number {
  let bytes = 0;
  for (const dir of dirs) {
    const out = execFileSync(
      'sh',
      ['-c', `tar --sort=name --mtime=@${EPOCH} --owner=0 --group=0 --numeric-owner -C "$1" -cf - . | gzip -9 -n`, 'sh', dir],
      {
        maxBuffer: 1 << 30,
      },
    );
    bytes += out.length;
  }
  return bytes;
}

const ways = { baseline, ours };
const sizes: Record<string, number> = {};
let times: Record<keyof typeof ways, number[]>;
try {
  // One warm-up round, then rounds in alternating order (baseline first on even rounds).
  times = await repeatAsync(['baseline', 'ours'] as const, { warmup: 1, reps: REPS, order: 'rotate' }, async (name) => {
    const t0 = performance.now();
    sizes[name] = await ways[name]();
    return performance.now() - t0;
  });
} finally {
  rmSync(work, { recursive: true, force: true });
}

const result = {
  reps: REPS,
  baselineMs: Math.round(median(times.baseline)),
  oursMs: Math.round(median(times.ours)),
  timeRatio: ratio(median(times.ours), median(times.baseline)),
  baselineCompressedBytes: sizes.baseline,
  oursCompressedBytes: sizes.ours,
  sizeRatio: ratio(sizes.ours!, sizes.baseline!, 3),
};
await recordBench('bench:image', [
  {
    measure: 'image layers (base + app) written and compressed: time, compressed size',
    figure: `${result.oursMs} ms, ${(result.oursCompressedBytes! / 1e6).toFixed(2)} MB`,
    peer: `${result.timeRatio}x time, ${result.sizeRatio}x size of GNU tar | gzip -9 -n`,
  },
]);
if (args.json) console.log(JSON.stringify(result));
else {
  console.log(`image layers (base + app), median of ${REPS}:`);
  console.log(`  baseline GNU tar | gzip -9 -n: ${result.baselineMs} ms, ${(result.baselineCompressedBytes! / 1e6).toFixed(2)} MB`);
  console.log(`  ours     tar-stream + zlib -9: ${result.oursMs} ms, ${(result.oursCompressedBytes! / 1e6).toFixed(2)} MB`);
  console.log(`  ratio ours/baseline: time ${result.timeRatio}x, size ${result.sizeRatio}x`);
}

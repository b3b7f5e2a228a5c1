// The runtime image built from the npm package's kit (`cdk8s-kruise image build --output`, what a user runs) vs
// the repository's own build of the same sources (`npm run image`), measured in the same run: wall time of each
// command, the image's compressed and uncompressed size, and whether both give the same digest. The kit is
// `lib/image/` (written by `npm run build`); the Node binary the command fetches is cached after its first
// run, so every repetition after the warm-up measures a build, not a download.
// Usage: npm run build && npx tsx bench/image-package.bench.ts [-- --reps N --json]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { BuildResult } from '../src/image/build.js';
import { findRepoRoot } from '../src/image/build.js';
import { KIT_DIR_IN_PACKAGE, KIT_FILE, parseImageKit } from '../src/image/kit.js';
import { benchArgs, median, ratio, repeatAsync } from './lib.js';

const args = benchArgs({ reps: 2 });
const repoRoot = findRepoRoot();
const kit = parseImageKit(JSON.parse(readFileSync(join(repoRoot, KIT_DIR_IN_PACKAGE, KIT_FILE), 'utf8')));
const work = mkdtempSync(join(tmpdir(), 'cdk8s-kruise-image-package-bench-'));
const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');
// Both builds use the kit's timestamps and commit, so their digests are comparable.
const env = { ...process.env, SOURCE_DATE_EPOCH: String(kit.metadata.sourceDateEpoch) };

interface Run {
  readonly ms: number;
  readonly digest: string;
  readonly compressed: number;
  readonly uncompressed: number;
}

let round = 0;
const ways = {
  repository: (): Run => {
    const out = join(work, `repo-${round++}`);
    const t0 = performance.now();
    execFileSync(tsx, ['src/image/build.ts', '--out', out], { cwd: repoRoot, env, stdio: 'ignore' });
    const ms = performance.now() - t0;
    const r = JSON.parse(readFileSync(join(out, 'build.json'), 'utf8')) as BuildResult;
    rmSync(out, { recursive: true, force: true });
    return { ms, digest: r.manifestDigest, compressed: r.compressedBytes, uncompressed: r.uncompressedBytes };
  },
  package: (): Run => {
    const out = join(work, `pkg-${round++}`);
    const t0 = performance.now();
    const stdout = execFileSync(tsx, ['src/cli/main.ts', 'image', 'build', '--output', out, '--json', '--quiet'], {
      cwd: repoRoot,
      env,
      encoding: 'utf8',
    });
    const ms = performance.now() - t0;
    const r = JSON.parse(stdout) as { digest: string; compressedBytes: number; uncompressedBytes: number };
    rmSync(out, { recursive: true, force: true });
    return { ms, digest: r.digest, compressed: r.compressedBytes, uncompressed: r.uncompressedBytes };
  },
};

let runs: Record<keyof typeof ways, Run[]>;
try {
  runs = await repeatAsync(['repository', 'package'] as const, { warmup: 1, reps: args.reps, order: 'rotate' }, async (name) =>
    ways[name](),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
const ms = (name: keyof typeof ways) => median(runs[name].map((r) => r.ms));
const last = (name: keyof typeof ways) => runs[name][runs[name].length - 1]!;
// The repository build labels the HEAD commit; the kit, the commit it was built at: equal when lib/ is fresh.
const sameDigest = last('repository').digest === last('package').digest;
const result = {
  reps: args.reps,
  repositoryMs: Math.round(ms('repository')),
  packageMs: Math.round(ms('package')),
  timeRatio: ratio(ms('package'), ms('repository')),
  compressedBytes: last('package').compressed,
  uncompressedBytes: last('package').uncompressed,
  sameDigest,
};
if (args.json) console.log(JSON.stringify(result));
else {
  console.log(`runtime image, median of ${args.reps} after a warm-up:`);
  console.log(`  repository build (npm run image):           ${(result.repositoryMs / 1000).toFixed(1)} s`);
  console.log(`  from the package (cdk8s-kruise image build): ${(result.packageMs / 1000).toFixed(1)} s (${result.timeRatio}x)`);
  console.log(
    `  image: ${(result.compressedBytes / 1e6).toFixed(1)} MB compressed, ${(result.uncompressedBytes / 1e6).toFixed(1)} MB uncompressed; ` +
      `same digest: ${sameDigest ? 'yes' : `no (${last('repository').digest} vs ${last('package').digest}; rebuild lib/ at HEAD)`}`,
  );
}

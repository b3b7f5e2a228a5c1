// The published package, as users get it: `npm pack` (which runs the `prepare` build) and installs of the
// tarball into fresh apps — the CommonJS layout `cdk8s init typescript-app` generates (ts-node, jest,
// node10 resolution), an ES module app (NodeNext, `skipLibCheck: false`, vitest) and a cdk8s-plus-33 app.
// Each runs `cdk8s synth` with the validation plugin, its tests with `validateManifests`, and
// `npx cdk8s-kruise validate`; each is told, by `require` and by `import`, which entry point to use when it
// imports the one built against the cdk8s-plus it lacks. README.md's tour, as written, is the `main.ts` of the
// app `cdk8s init typescript-app` creates (its template, from cdk8s-cli). Needs the npm registry; packages come
// through a shared npm cache outside the repository, so reruns are fast.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestRegistry } from '../cri-harness/registry.js';
import { readmeTour } from '../harness/readme-tour.js';
import { SCHEMA_SET_VERSION, schemaFiles } from '../../src/api/schema-files.js';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const npmCache = path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'cdk8s-kruise', 'npm-cache');
// cdk8s-cli is a devDependency here; apps use it as their global `cdk8s` command (it loads the plugin by path).
const cdk8sCli = path.join(repoRoot, 'node_modules', '.bin', 'cdk8s');
const SLOW = 900_000;
const ON_27 =
  "Error: cdk8s-kruise/constructs is built against cdk8s-plus-27, which is not installed; this app has cdk8s-plus-33: import from 'cdk8s-kruise/constructs/plus-33'\n";
const ON_33 =
  "Error: cdk8s-kruise/constructs/plus-33 is built against cdk8s-plus-33, which is not installed; this app has cdk8s-plus-27: import from 'cdk8s-kruise/constructs'\n";

let work: string;
let tarball: string;

/**
 * The environment of a fresh shell: without the npm_* variables of the `npm`/`npx` that started the tests
 * (they point npm and npx at this repository instead of the app), and without this repository's
 * node_modules/.bin on PATH, so the apps run on the machine's Node (which may be older than the Node 24 this
 * repository brings) as a user's would.
 */
function appEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD'));
  const PATH = (env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => !dir.startsWith(repoRoot))
    .join(path.delimiter);
  return { ...env, PATH };
}

async function sh(cwd: string, file: string, args: string[], env: Record<string, string> = {}) {
  try {
    return await run(file, args, {
      cwd,
      env: { ...appEnv(), npm_config_cache: npmCache, npm_config_update_notifier: 'false', NO_COLOR: '1', FORCE_COLOR: '0', ...env },
      maxBuffer: 64 << 20,
    });
  } catch (e) {
    const err = e as Error & { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed in ${cwd}:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`, { cause: e });
  }
}

const npmInstall = (cwd: string, args: string[]) => sh(cwd, 'npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...args]);

function writeFiles(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
}

/** Bytes of every file below `dir` (apparent size, as npm reports unpacked sizes). */
function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += treeBytes(p);
    else if (entry.isFile()) total += statSync(p).size;
  }
  return total;
}

async function installedPackages(cwd: string): Promise<number> {
  const { stdout } = await sh(cwd, 'npm', ['ls', '--all', '--parseable']);
  return new Set(stdout.split('\n').filter(Boolean)).size;
}

const PLUGIN_CONFIG = `validations:
  - package: ./node_modules/cdk8s-kruise/lib/cdk8s-plugin.cjs
    version: 0.1.0
    class: KruiseValidation
`;

/** The chart every app builds: a cdk8s-plus Job with a terminated sidecar, a CloneSet and the runtime. */
const chartSource = (plus: string) => `
const app = new App();
const chart = new Chart(app, 'app');
new KruiseRuntime(app, 'kruise');
const job = new kplus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
JobSidecarTermination.of(job).addSidecar({ name: 'log-shipper', image: 'fluent/fluent-bit:3.0' }, { ignoreExitCode: true });
new CloneSet(chart, 'web', { replicas: 2, containers: [{ name: 'web', image: 'nginx:1.27' }] });
app.synth();
// ${plus}
`;

const testSource = (
  framework: 'jest' | 'vitest',
  plus: string,
) => `${framework === 'vitest' ? "import { expect, test } from 'vitest';\n" : ''}import { ApiObject, Chart, Testing } from 'cdk8s';
import * as kplus from '${plus}';
import { errorsOf, validateChart, validateManifests } from 'cdk8s-kruise';
import { JobSidecarTermination } from 'cdk8s-kruise/constructs';

test('validateManifests passes the synthesized chart and reports a broken object', () => {
  const chart = new Chart(Testing.app(), 'test');
  const job = new kplus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
  JobSidecarTermination.of(job).addSidecar({ name: 'side', image: 'busybox:1.36' });
  const manifests = Testing.synth(chart);
  expect(manifests[0].spec.template.spec.containers[1].env).toContainEqual({ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' });
  expect(validateManifests(manifests).filter((f) => f.severity === 'error')).toEqual([]);
  const broken = validateManifests([{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'x' }, spec: { replicas: 'two' } }]);
  expect(broken.some((f) => f.severity === 'error' && f.ruleId === 'KRUISE-SCHEMA-001')).toBe(true);
});

test('validateChart names construct paths; errorsOf leaves notes out', () => {
  const chart = new Chart(Testing.app(), 'test');
  new kplus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
  expect(errorsOf(validateChart(chart))).toEqual([]);
  new ApiObject(chart, 'broken', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', spec: { replicas: 'two' } });
  expect(errorsOf(validateChart(chart)).map((f) => f.constructPath)).toContain('test/broken');
});
`;

/** Synth with the plugin, then validate the output with the installed CLI. */
async function synthAndValidate(app: string): Promise<void> {
  const synth = await sh(app, cdk8sCli, ['synth']);
  expect(synth.stdout + synth.stderr).toMatch(/Validations ended succesfully|Validations finished/i);
  const yamls = readdirSync(path.join(app, 'dist'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => path.join('dist', f));
  expect(yamls.length).toBeGreaterThanOrEqual(3);
  const validate = await sh(app, 'npx', ['--no-install', 'cdk8s-kruise', 'validate', ...yamls]);
  expect(validate.stdout).toMatch(/^0 error\(s\), 0 warning\(s\)/m);
}

/** `entry` fails to load in `app`, by `require` and by `import`, with `message` on stderr. */
async function expectLoadFailure(app: string, entry: string, message: string): Promise<void> {
  for (const args of [
    ['-e', `require(${JSON.stringify(entry)})`],
    ['--input-type=module', '-e', `await import(${JSON.stringify(entry)})`],
  ]) {
    const failure = await sh(app, 'node', args).then(
      () => new Error(`node ${args.join(' ')} loaded ${entry}`),
      (e: Error) => e,
    );
    expect(failure.message).toContain(message);
  }
}

/**
 * The files `cdk8s init typescript-app` writes, from cdk8s-cli's template with the versions it fills in (those of
 * the cdk8s, cdk8s-plus-33 and constructs it depends on). The app's own chart and test are left to the caller; its
 * `cdk8s` is this repository's cdk8s-cli, as for the other apps.
 */
function cdk8sInitTypescriptApp(name: string): Record<string, string> {
  const cli = path.join(repoRoot, 'node_modules', 'cdk8s-cli');
  const template = path.join(cli, 'templates', 'typescript-app');
  const versionOf = (pkg: string) =>
    (JSON.parse(readFileSync(path.join(repoRoot, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  const cliPkg = JSON.parse(readFileSync(path.join(cli, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const fill = (text: string) =>
    text
      .replaceAll('{{ $base }}', name)
      .replaceAll('{{ cdk8s_core_version }}', versionOf('cdk8s'))
      .replaceAll('{{ cdk8s_plus_version }}', versionOf('cdk8s-plus-33'))
      .replaceAll('{{ constructs_version }}', cliPkg.dependencies.constructs!.replace('^', ''));
  const pkg = JSON.parse(fill(readFileSync(path.join(template, 'package.json'), 'utf8'))) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  delete pkg.devDependencies['cdk8s-cli'];
  expect(Object.keys(pkg.dependencies).sort()).toEqual(['cdk8s', 'cdk8s-plus-33', 'constructs']);
  return {
    'package.json': JSON.stringify(pkg, null, 2),
    'tsconfig.json': readFileSync(path.join(template, 'tsconfig.json'), 'utf8'),
    'cdk8s.yaml': readFileSync(path.join(template, 'cdk8s.yaml'), 'utf8'),
    'jest.config.js': readFileSync(path.join(template, 'jest.config.js'), 'utf8'),
  };
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-consumers-'));
  mkdirSync(npmCache, { recursive: true });
  // `npm pack` runs `prepare`, the full package build, as `npm publish` and git installs do.
  const { stdout } = await sh(repoRoot, 'npm', ['pack', '--json', '--pack-destination', work]);
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  tarball = path.join(work, info!.filename);
  const { stdout: nodeVersion } = await sh(work, 'node', ['--version']);
  process.stderr.write(`apps run on Node ${nodeVersion.trim()}\n`);
  process.stderr.write(`tarball: ${info!.size} bytes packed, ${info!.unpackedSize} unpacked, ${info!.files.length} files\n`);
  const paths = info!.files.map((f) => f.path);
  for (const required of [
    'lib/esm/index.js',
    'lib/esm/constructs.js',
    'lib/esm/constructs-plus-33.js',
    'lib/esm/peers/cdk8s-plus-27.cjs',
    'lib/esm/peers/cdk8s-plus-33.cjs',
    'lib/cjs/index.cjs',
    'lib/cjs/constructs.cjs',
    'lib/cjs/constructs-plus-33.cjs',
    'lib/cjs/peers/cdk8s-plus-27.cjs',
    'lib/cjs/peers/cdk8s-plus-33.cjs',
    'lib/types/src/index.d.ts',
    'lib/types/constructs/index.d.ts',
    'lib/cli/cdk8s-kruise.mjs',
    'lib/cdk8s-plugin.cjs',
    'lib/image/kit.json',
    'lib/image/app-layer.tar.gz',
    // The JSON Schemas, one per kind the compiler models, Kruise and core kinds (README: editor and kubeconform).
    ...schemaFiles().map((f) => `lib/schemas/${SCHEMA_SET_VERSION}/${f.file}`),
  ]) {
    expect(paths, required).toContain(required);
  }
  // Nothing test- or build-only; of the image, only the kit `cdk8s-kruise image build` reads.
  expect(
    paths.filter(
      (p) =>
        !/^(lib\/(esm|cjs|cli|types)\/|lib\/image\/(kit\.json|app-layer\.tar\.gz)$|lib\/schemas\/v[0-9.]+\/[a-z0-9-]+\.json$|lib\/cdk8s-plugin\.cjs$|package\.json$|README\.md$|LICENSE$)/.test(
          p,
        ),
    ),
  ).toEqual([]);
  expect(
    paths.filter((p) => /\.map$|\.test\.|\/image\/(?!(kit\.json|app-layer\.tar\.gz)$)|\/generate(-types)?\.|build-package/.test(p)),
  ).toEqual([]);
}, SLOW);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed package in fresh apps', () => {
  it(
    'the release scripts: the image command from the packed tarball pushes the image `npm run image` builds, with its SBOM, to a loopback registry',
    async () => {
      const dir = path.join(work, 'image');
      mkdirSync(dir, { recursive: true });
      // A release is made from a commit: both the package and the repository's build come from one snapshot of
      // HEAD (the checkout's node_modules shared), immune to edits in the working tree while the test runs.
      const checkout = path.join(dir, 'checkout');
      mkdirSync(checkout);
      await sh(repoRoot, 'git', ['archive', '--output', path.join(dir, 'head.tar'), 'HEAD']);
      await sh(checkout, 'tar', ['-xf', path.join(dir, 'head.tar')]);
      symlinkSync(path.join(repoRoot, 'node_modules'), path.join(checkout, 'node_modules'));
      const epoch = (await sh(repoRoot, 'git', ['log', '-1', '--format=%ct', 'HEAD'])).stdout.trim();
      // The release workflow's first step, without publishing: npm pack (the prepare build) + npm publish --dry-run.
      const released = await sh(checkout, 'bash', ['scripts/release-package.sh', path.join(dir, 'release')], {
        RELEASE_DRY_RUN: '1',
        SOURCE_DATE_EPOCH: epoch,
      });
      const releaseTarball = released.stdout.trim().split('\n').pop()!;
      expect(releaseTarball).toBe(path.join(dir, 'release', path.basename(tarball)));
      expect(released.stderr).toMatch(/^\+ cdk8s-kruise@0\.1\.0$/m);
      await sh(dir, 'tar', ['-xzf', releaseTarball, 'package/lib/image/kit.json']);
      const kit = JSON.parse(readFileSync(path.join(dir, 'package', 'lib', 'image', 'kit.json'), 'utf8')) as {
        metadata: { sourceDateEpoch: number; revision?: string; nodeVersion: string };
      };
      expect(kit.metadata.sourceDateEpoch).toBe(Number(epoch));
      // The repository's build of the same sources, timestamps and revision, on the Node `npm run image` uses.
      const script = path.join(dir, 'repository-build.mts');
      writeFileSync(
        script,
        `import { buildRuntimeImage } from ${JSON.stringify(path.join(checkout, 'src', 'image', 'build.ts'))};\n` +
          `const { result } = await buildRuntimeImage({ repoRoot: ${JSON.stringify(checkout)}, outDir: ${JSON.stringify(path.join(dir, 'repo'))}, ` +
          `sourceDateEpoch: ${kit.metadata.sourceDateEpoch}${kit.metadata.revision ? `, revision: ${JSON.stringify(kit.metadata.revision)}` : ''} });\n` +
          'console.log(result.manifestDigest);\n',
      );
      const repoBuild = await sh(repoRoot, path.join(repoRoot, 'node_modules', '.bin', 'tsx'), [script], {
        PATH: `${path.join(repoRoot, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
      });
      const expected = repoBuild.stdout.trim();
      expect(expected).toMatch(/^sha256:[a-f0-9]{64}$/);

      const registry = await TestRegistry.create(path.join(dir, 'registry'));
      try {
        const started = Date.now();
        const release = await sh(checkout, 'bash', ['scripts/release-image.sh', releaseTarball, `${registry.host}/platform/cdk8s-kruise`], {
          EXPECT_DIGEST: expected,
          DOCKER_CONFIG: path.join(dir, 'no-docker-config'),
        });
        const seconds = (Date.now() - started) / 1000;
        const [reference, sbomLine] = release.stdout.trim().split('\n');
        expect(reference).toBe(`${registry.host}/platform/cdk8s-kruise:0.1.0@${expected}`);
        const built = /built (sha256:\S+): ([\d.]+) MB compressed, ([\d.]+) MB uncompressed, in ([\d.]+) s/.exec(release.stderr);
        expect(built?.[1]).toBe(expected);
        process.stderr.write(
          `image from the package: ${built?.[2]} MB compressed, ${built?.[3]} MB uncompressed, built in ${built?.[4]} s; release-image.sh (install + build + push) ${seconds.toFixed(1)} s\n`,
        );
        // What the registry holds, read back by an independent client.
        const inspected = JSON.parse(
          (await sh(dir, 'skopeo', ['inspect', '--tls-verify=false', `docker://${registry.host}/platform/cdk8s-kruise:0.1.0`])).stdout,
        ) as { Digest: string };
        expect(inspected.Digest).toBe(expected);
        // The SBOM: an OCI artifact whose subject is the image, under the referrers fallback tag.
        expect(sbomLine).toMatch(new RegExp(`^sbom ${registry.host}/platform/cdk8s-kruise:sha256-${expected.slice(7)}\\.sbom@sha256:`));
        const accept = { accept: 'application/vnd.oci.image.manifest.v1+json' };
        const artifact = (await (
          await fetch(`http://${registry.host}/v2/platform/cdk8s-kruise/manifests/sha256-${expected.slice(7)}.sbom`, { headers: accept })
        ).json()) as { artifactType: string; subject: { digest: string }; layers: Array<{ digest: string; mediaType: string }> };
        expect(artifact.artifactType).toBe('application/spdx+json');
        expect(artifact.subject.digest).toBe(expected);
        const spdx = (await (
          await fetch(`http://${registry.host}/v2/platform/cdk8s-kruise/blobs/${artifact.layers[0]!.digest}`)
        ).json()) as {
          spdxVersion: string;
          packages: Array<{ name: string; versionInfo: string }>;
        };
        expect(spdx.spdxVersion).toBe('SPDX-2.3');
        const names = spdx.packages.map((p) => `${p.name}@${p.versionInfo}`);
        expect(names).toContain(`node@${kit.metadata.nodeVersion.slice(1)}`);
        expect(names.some((n) => n.startsWith('libc6@'))).toBe(true);
        expect(names.some((n) => n.startsWith('yaml@'))).toBe(true);
      } finally {
        await registry.stop();
      }
    },
    SLOW,
  );

  it(
    'the `cdk8s init typescript-app` CommonJS layout: tsc (node10), cdk8s synth via ts-node with the plugin, jest + ts-jest, npx validate',
    async () => {
      const app = path.join(work, 'cjs-app');
      writeFiles(app, {
        'package.json': JSON.stringify(
          {
            name: 'cjs-app',
            version: '1.0.0',
            main: 'main.js',
            types: 'main.ts',
            license: 'Apache-2.0',
            private: true,
            scripts: { synth: 'cdk8s synth', test: 'jest' },
          },
          null,
          2,
        ),
        'tsconfig.json': JSON.stringify(
          {
            compilerOptions: {
              alwaysStrict: true,
              declaration: true,
              experimentalDecorators: true,
              inlineSourceMap: true,
              inlineSources: true,
              lib: ['es2016'],
              module: 'CommonJS',
              noEmitOnError: true,
              noFallthroughCasesInSwitch: true,
              noImplicitAny: true,
              noImplicitReturns: true,
              noImplicitThis: true,
              noUnusedLocals: true,
              noUnusedParameters: true,
              resolveJsonModule: true,
              strict: true,
              strictNullChecks: true,
              strictPropertyInitialization: true,
              stripInternal: true,
              target: 'ES2017',
              moduleResolution: 'node',
            },
            include: ['**/*.ts'],
            exclude: ['node_modules', 'cdk8s.out'],
          },
          null,
          2,
        ),
        'jest.config.js':
          "module.exports = { testEnvironment: 'node', roots: ['<rootDir>'], testMatch: ['**/*.test.ts'], transform: { '^.+\\\\.tsx?$': 'ts-jest' } };\n",
        'cdk8s.yaml': `language: typescript\napp: npx ts-node main.ts\n${PLUGIN_CONFIG}`,
        'main.ts':
          "import { App, Chart } from 'cdk8s';\nimport * as kplus from 'cdk8s-plus-27';\nimport { CloneSet, JobSidecarTermination, KruiseRuntime } from 'cdk8s-kruise/constructs';\n" +
          chartSource('cdk8s-plus-27'),
        'main.test.ts': testSource('jest', 'cdk8s-plus-27'),
      });
      await npmInstall(app, ['cdk8s@2', 'cdk8s-plus-27@2', 'constructs@10', tarball]);
      await npmInstall(app, ['-D', 'jest@29', 'ts-jest@29', '@types/jest@29', 'ts-node@10', 'typescript@5', '@types/node@20']);
      await sh(app, 'npx', ['--no-install', 'tsc', '--noEmit', '-p', '.']);
      await synthAndValidate(app);
      const jest = await sh(app, 'npx', ['--no-install', 'jest']);
      expect(jest.stderr).toMatch(/Tests:\s+2 passed, 2 total/);
      await expectLoadFailure(app, 'cdk8s-kruise/constructs/plus-33', ON_33);
    },
    SLOW,
  );

  it(
    'an ES module app (NodeNext, skipLibCheck false): tsc, cdk8s synth with the plugin, vitest, npx validate; adds few packages',
    async () => {
      const app = path.join(work, 'esm-app');
      writeFiles(app, {
        'package.json': JSON.stringify({ name: 'esm-app', version: '1.0.0', private: true, type: 'module' }, null, 2),
        'tsconfig.json': JSON.stringify(
          {
            compilerOptions: {
              target: 'ES2022',
              module: 'NodeNext',
              moduleResolution: 'NodeNext',
              strict: true,
              skipLibCheck: false,
              noEmit: true,
              types: ['node'],
            },
            include: ['*.ts'],
          },
          null,
          2,
        ),
        'cdk8s.yaml': `language: typescript\napp: npx tsx main.ts\n${PLUGIN_CONFIG}`,
        'main.ts':
          "import { App, Chart } from 'cdk8s';\nimport * as kplus from 'cdk8s-plus-27';\nimport { CloneSet, JobSidecarTermination, KruiseRuntime } from 'cdk8s-kruise/constructs';\n" +
          chartSource('cdk8s-plus-27'),
        'main.test.ts': testSource('vitest', 'cdk8s-plus-27'),
      });
      // A synth-only app: what adding cdk8s-kruise costs on top of cdk8s, cdk8s-plus and constructs.
      await npmInstall(app, ['cdk8s@2', 'cdk8s-plus-27@2', 'constructs@10']);
      const before = { packages: await installedPackages(app), bytes: treeBytes(path.join(app, 'node_modules')) };
      await npmInstall(app, [tarball]);
      const after = { packages: await installedPackages(app), bytes: treeBytes(path.join(app, 'node_modules')) };
      const added = { packages: after.packages - before.packages, megabytes: (after.bytes - before.bytes) / 1e6 };
      process.stderr.write(`synth-only app: +${added.packages} packages, +${added.megabytes.toFixed(1)} MB\n`);
      expect(added.packages).toBeLessThanOrEqual(15);
      // 13.6 MB before ImageListPullJob, PodProbeMarker, NodePodProbe, PodUnavailableBudget and deletion protection
      // joined the package (15.3 MB with them), 16.1 MB with the Advanced StatefulSet and DaemonSet and the v1beta1
      // schemas; the CLI's chunks (4.8 MB) are where to win it back.
      expect(added.megabytes).toBeLessThanOrEqual(17);

      await npmInstall(app, ['-D', 'vitest@4', 'tsx@4', 'typescript@5', '@types/node@20']);
      await sh(app, 'npx', ['--no-install', 'tsc', '-p', '.']);
      await synthAndValidate(app);
      const vitest = await sh(app, 'npx', ['--no-install', 'vitest', 'run']);
      expect(vitest.stdout).toMatch(/Tests\s+.*2 passed/);
      await expectLoadFailure(app, 'cdk8s-kruise/constructs/plus-33', ON_33);
    },
    SLOW,
  );

  it(
    'a cdk8s-plus-33 app (what cdk8s init installs today) with `cdk8s-kruise/constructs/plus-33`: tsc, synth, vitest, validate',
    async () => {
      const app = path.join(work, 'plus33-app');
      const imports =
        "import { App, Chart } from 'cdk8s';\nimport * as kplus from 'cdk8s-plus-33';\nimport { CloneSet, JobSidecarTermination, KruiseRuntime } from 'cdk8s-kruise/constructs/plus-33';\n";
      writeFiles(app, {
        'package.json': JSON.stringify({ name: 'plus33-app', version: '1.0.0', private: true, type: 'module' }, null, 2),
        'tsconfig.json': JSON.stringify(
          {
            compilerOptions: {
              target: 'ES2022',
              module: 'NodeNext',
              moduleResolution: 'NodeNext',
              strict: true,
              skipLibCheck: false,
              noEmit: true,
              types: ['node'],
            },
            include: ['*.ts'],
          },
          null,
          2,
        ),
        'cdk8s.yaml': `language: typescript\napp: npx tsx main.ts\n${PLUGIN_CONFIG}`,
        // The CloneSet is a cdk8s-plus-33 Workload: it takes that version's props and can be selected by its Services.
        'main.ts':
          imports +
          chartSource('cdk8s-plus-33') +
          "new kplus.Service(chart, 'svc', { ports: [{ port: 80 }] }).select(new CloneSet(chart, 'api', { containers: [{ name: 'api', image: 'nginx:1.27' }] }));\n",
        'main.test.ts': testSource('vitest', 'cdk8s-plus-33').replace(
          "from 'cdk8s-kruise/constructs'",
          "from 'cdk8s-kruise/constructs/plus-33'",
        ),
      });
      await npmInstall(app, ['cdk8s@2', 'cdk8s-plus-33@2', 'constructs@10', tarball]);
      await npmInstall(app, ['-D', 'vitest@4', 'tsx@4', 'typescript@5', '@types/node@20']);
      // The optional cdk8s-plus-27 peer is not pulled in.
      expect(readdirSync(path.join(app, 'node_modules'))).not.toContain('cdk8s-plus-27');
      await sh(app, 'npx', ['--no-install', 'tsc', '-p', '.']);
      await synthAndValidate(app);
      const vitest = await sh(app, 'npx', ['--no-install', 'vitest', 'run']);
      expect(vitest.stdout).toMatch(/Tests\s+.*2 passed/);
      await expectLoadFailure(app, 'cdk8s-kruise/constructs', ON_27);
    },
    SLOW,
  );

  it(
    'the README tour, as written, in the app `cdk8s init typescript-app` creates: npm run compile, npm run synth, cdk8s-kruise synth -W',
    async () => {
      const app = path.join(work, 'tour-app');
      const tour = readmeTour();
      writeFiles(app, { ...cdk8sInitTypescriptApp('tour-app'), 'main.ts': tour.program });
      process.stderr.write(`README tour: ${tour.blocks} blocks${tour.skipped.length ? `, skipped: ${tour.skipped.join('; ')}` : ''}\n`);
      // `npm install cdk8s-kruise` in the new app, which installs the template's dependencies too.
      await npmInstall(app, [tarball]);
      expect(readdirSync(path.join(app, 'node_modules'))).not.toContain('cdk8s-plus-27');
      // The template's own scripts: tsc --build (strict, noUnusedLocals, node10 resolution, lib checked), then
      // `cdk8s synth`, which runs `npx ts-node main.ts` (type-checked again).
      await sh(app, 'npm', ['run', 'compile']);
      const synth = await sh(app, cdk8sCli, ['synth']);
      expect(synth.stdout + synth.stderr).toMatch(/Synthesizing application/);
      const dist = readdirSync(path.join(app, 'dist')).sort();
      expect(dist).toEqual(['0000-kruise-crds.k8s.yaml', '0001-kruise.k8s.yaml', '0002-my-app.k8s.yaml', '0003-batch.k8s.yaml']);
      const myApp = readFileSync(path.join(app, 'dist', '0002-my-app.k8s.yaml'), 'utf8');
      for (const kind of ['CloneSet', 'SidecarSet', 'ImagePullJob', 'ContainerRecreateRequest', 'Job', 'Deployment']) {
        expect(myApp).toMatch(new RegExp(`^kind: ${kind}$`, 'm'));
      }
      expect(readFileSync(path.join(app, 'dist', '0003-batch.k8s.yaml'), 'utf8')).toMatch(/initContainers:[\s\S]*restartPolicy: Always/);
      // The compiler on the same app: every rule, warnings failing, one-shot operations in ops/.
      const kruise = await sh(app, 'npx', ['--no-install', 'cdk8s-kruise', 'synth', '-W', '--quiet', '--output', 'kruise-dist']);
      expect(kruise.stdout + kruise.stderr).toMatch(/0 error\(s\), 0 warning\(s\)/);
      expect(existsSync(path.join(app, 'kruise-dist', 'ops', 'my-app.yaml'))).toBe(true);
      // The other entry point, pasted from an older README or a cdk8s-plus-27 app, names this one.
      await expectLoadFailure(app, 'cdk8s-kruise/constructs', ON_27);
      writeFileSync(path.join(app, 'wrong.ts'), "import { CloneSet } from 'cdk8s-kruise/constructs';\nconsole.log(CloneSet.name);\n");
      const wrong = await sh(app, 'npx', ['--no-install', 'ts-node', 'wrong.ts']).then(
        () => new Error('ts-node wrong.ts ran'),
        (e: Error) => e,
      );
      expect(wrong.message).toContain(ON_27);
    },
    SLOW,
  );
});

// The offline runtime image, checked with independent OCI tools: built by `npm run image`, rebuilt for
// the reproducibility check, inspected and copied by skopeo, unpacked by umoci and run in a chroot as
// the nonroot user (the container runtime's view of it, without a container engine).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildRuntimeImage, type BuildResult } from '../../src/image/build.js';
import { parseDockerfile } from '../../src/image/dockerfile.js';
import { KINDS } from '../../src/api/registry.js';
import { freePort } from '../harness/controlplane.js';
import { installCrds } from './runtime/support.js';
import { TestContainerd } from '../cri-harness/containerd.js';
import { TestRegistry } from '../cri-harness/registry.js';
import { RuntimeImage } from '../../src/install/image.js';
import { IMAGE_ENTRYPOINT, IMAGE_ENV, IMAGE_USER, IMAGE_WORKDIR, NONROOT } from '../../src/image/spec.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const MB = 1_000_000;

let work: string;
let source: string;
let epoch: number;
let first: BuildResult;
let rootfs: string;

function run(cmd: string, args: string[], cwd = repoRoot, env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', env, maxBuffer: 64 * MB });
}

/** Unpacks the HEAD snapshot into work/<name>, sharing the checkout's node_modules. */
function snapshot(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  run('tar', ['-xf', join(work, 'head.tar'), '-C', dir]);
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function imageEnv(): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(IMAGE_ENV.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)])), HOME: IMAGE_WORKDIR };
}

/** Runs the image's entrypoint the way a runtime would: chroot into the unpacked rootfs as 65532:65532, image env only. */
function entrypoint(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('chroot', [`--userspec=${IMAGE_USER}`, rootfs, ...IMAGE_ENTRYPOINT, ...args], { encoding: 'utf8', env: imageEnv() });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The shared control plane's admin kubeconfig, copied into the rootfs for the nonroot user. */
function kubeconfigInImage(): string {
  const file = join(rootfs, 'tmp', 'kubeconfig');
  writeFileSync(file, readFileSync(inject('kubeconfig')), { mode: 0o600 });
  chownSync(file, NONROOT.uid, NONROOT.gid);
  return '/tmp/kubeconfig';
}

/**
 * Starts the entrypoint with `args` in the chroot as the nonroot user, waits until `ready()` holds,
 * then stops it with SIGTERM as the kubelet would; returns its logs and exit code.
 */
async function serveInImage(args: string[], ready: () => Promise<boolean>): Promise<{ logs: string; code: number | null }> {
  const child = spawn('chroot', [`--userspec=${IMAGE_USER}`, rootfs, ...IMAGE_ENTRYPOINT, ...args], {
    env: imageEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  child.stdout.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr.on('data', (d: Buffer) => (logs += d.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve((exitCode = code))));
  try {
    const deadline = Date.now() + 60_000;
    while (!(await ready())) {
      if (exitCode !== undefined) throw new Error(`cdk8s-kruise ${args[0]} exited (${exitCode}) before it was ready; logs:\n${logs}`);
      if (Date.now() > deadline) throw new Error(`cdk8s-kruise ${args[0]} in the image was not ready within 60 s; logs:\n${logs}`);
      await sleep(250);
    }
  } finally {
    child.kill('SIGTERM');
  }
  return { logs, code: await exited };
}

async function layerHeaders(blob: Buffer): Promise<tar.Header[]> {
  const out: tar.Header[] = [];
  const extract = tar.extract();
  const done = (async () => {
    for await (const entry of extract) {
      out.push(entry.header);
      entry.resume();
    }
  })();
  extract.end(gunzipSync(blob));
  await done;
  return out;
}

beforeAll(() => {
  if (process.getuid?.() !== 0) {
    throw new Error(
      'the image smoke test unpacks with owners and runs the entrypoint via chroot --userspec, which needs root (CI runs as root)',
    );
  }
  work = mkdtempSync(join(tmpdir(), 'cdk8s-kruise-image-'));
  // Both builds read one snapshot of HEAD: "two builds from the same commit", immune to edits in the
  // working tree while the test runs. Dependencies come from the checkout's node_modules.
  run('git', ['archive', '--output', join(work, 'head.tar'), 'HEAD']);
  source = snapshot('src');
  epoch = Number(run('git', ['log', '-1', '--format=%ct', 'HEAD']).trim());
  // The documented command, exactly as a user runs it.
  const out = run('npm', ['run', '--silent', 'image', '--', '--out', join(work, 'a')], source, {
    ...process.env,
    SOURCE_DATE_EPOCH: String(epoch),
  });
  first = JSON.parse(readFileSync(join(work, 'a', 'build.json'), 'utf8')) as BuildResult;
  console.log(`[image] ${out.trim()}`);
  run('umoci', ['unpack', '--image', `${first.layoutDir}:${pkg.version}`, join(work, 'bundle')]);
  rootfs = join(work, 'bundle', 'rootfs');
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('offline runtime image', () => {
  it('is reproducible: a second build from the same commit, checked out elsewhere, has the same manifest digest and archive bytes', async () => {
    const { result: second } = await buildRuntimeImage({
      repoRoot: snapshot('elsewhere/checkout'),
      outDir: join(work, 'b'),
      sourceDateEpoch: epoch,
    });
    console.log(`[image] rebuild ${second.manifestDigest} in ${second.seconds.toFixed(1)} s (first: ${first.seconds.toFixed(1)} s)`);
    expect(second.manifestDigest).toBe(first.manifestDigest);
    expect(second.layers).toEqual(first.layers);
    const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
    expect(sha(second.archivePath)).toBe(sha(first.archivePath));
    expect(readFileSync(join(second.layoutDir, 'index.json'))).toEqual(readFileSync(join(first.layoutDir, 'index.json')));
  });

  it('is a valid OCI layout whose config skopeo reads back as built, and matches the Dockerfile', () => {
    const inspected = JSON.parse(run('skopeo', ['inspect', `oci:${first.layoutDir}:${pkg.version}`])) as {
      Digest: string;
      Architecture: string;
    };
    expect(inspected.Digest).toBe(first.manifestDigest);
    expect(inspected.Architecture).toBe('amd64');
    const config = JSON.parse(run('skopeo', ['inspect', '--config', `oci:${first.layoutDir}:${pkg.version}`])) as {
      config: { User: string; Entrypoint: string[]; WorkingDir: string; Env: string[]; Cmd?: string[] };
      created: string;
    };
    expect(first.sourceDateEpoch).toBe(epoch);
    expect(config.created).toBe(new Date(epoch * 1000).toISOString().replace('.000Z', 'Z'));
    const dockerfile = parseDockerfile(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8'));
    expect(config.config.Entrypoint).toEqual(dockerfile.entrypoint);
    expect(config.config.User).toBe(dockerfile.user);
    expect(config.config.WorkingDir).toBe(dockerfile.workdir);
    expect(Object.fromEntries(config.config.Env.map((e) => e.split(/=(.*)/s).slice(0, 2)))).toEqual(dockerfile.env);
    expect(config.config.Cmd).toBeUndefined();
  });

  it('is a docker-archive skopeo can read and copy (what docker load and pushes consume)', () => {
    const inspected = JSON.parse(run('skopeo', ['inspect', `docker-archive:${first.archivePath}`])) as { Layers: string[] };
    const config = JSON.parse(run('skopeo', ['inspect', '--config', `oci:${first.layoutDir}:${pkg.version}`])) as {
      rootfs: { diff_ids: string[] };
    };
    expect(inspected.Layers).toEqual(config.rootfs.diff_ids);
    // dir: keeps blobs as the source hands them out (no recompression), so the copy is cheap; skopeo
    // verifies every blob against the digests, and the config must come through byte for byte.
    run('skopeo', ['copy', '--quiet', `docker-archive:${first.archivePath}`, `dir:${join(work, 'copied')}`]);
    const copied = JSON.parse(readFileSync(join(work, 'copied', 'manifest.json'), 'utf8')) as {
      config: { digest: string };
      layers: Array<{ digest: string }>;
    };
    const ours = JSON.parse(readFileSync(join(first.layoutDir, 'blobs', ...first.manifestDigest.split(':')), 'utf8')) as {
      config: { digest: string };
    };
    expect(copied.config.digest).toBe(ours.config.digest);
    expect(copied.layers.map((l) => l.digest)).toEqual(config.rootfs.diff_ids);
  });

  it('holds the same application files the Dockerfile build stage copies onto distroless', () => {
    const stage = join(work, 'stage');
    run(join(source, 'node_modules', '.bin', 'tsx'), ['src/image/build.ts', '--stage-app', stage], source);
    const staged = execFileSync('find', ['.', '-mindepth', '1'], { cwd: stage, encoding: 'utf8' }).split('\n').filter(Boolean).sort();
    // The bundle is split: the main file imports its chunks (content-hashed names) from app/bin/chunks/.
    const chunks = staged.filter((f) => f.startsWith('./app/bin/chunks/'));
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c).toMatch(/^\.\/app\/bin\/chunks\/[\w-]+-[A-Z0-9]{8}\.mjs$/);
    const files = ['app/package.json', 'app/bin/cdk8s-kruise.mjs', 'app/THIRD-PARTY-LICENSES.txt', ...chunks.map((c) => c.slice(2))];
    for (const file of files) {
      expect(readFileSync(join(stage, file)), file).toEqual(readFileSync(join(rootfs, file)));
      expect(statSync(join(stage, file)).mode & 0o777, file).toBe(statSync(join(rootfs, file)).mode & 0o777);
    }
    expect(statSync(join(stage, 'app/bin/cdk8s-kruise.mjs')).mode & 0o777).toBe(0o755);
    for (const c of chunks) expect(statSync(join(stage, c)).mode & 0o777, c).toBe(0o644);
    expect(execFileSync('find', ['app', '-type', 'f'], { cwd: rootfs, encoding: 'utf8' }).split('\n').filter(Boolean).sort()).toEqual(
      files.sort(),
    );
    expect(readlinkSync(join(stage, 'usr/local/bin/cdk8s-kruise'))).toBe(readlinkSync(join(rootfs, 'usr/local/bin/cdk8s-kruise')));
    expect(staged.filter((f) => !f.startsWith('./app/bin/chunks/'))).toEqual([
      './app',
      './app/THIRD-PARTY-LICENSES.txt',
      './app/bin',
      './app/bin/cdk8s-kruise.mjs',
      './app/bin/chunks',
      './app/package.json',
      './usr',
      './usr/local',
      './usr/local/bin',
      './usr/local/bin/cdk8s-kruise',
    ]);
  });

  it('pushes to a registry with its digest intact, so the KruiseRuntime construct can pin it', async () => {
    const registry = await TestRegistry.create(join(work, 'registry'));
    try {
      // The documented push: OCI layout -> registry, blobs and manifest copied as they are.
      run('skopeo', [
        'copy',
        '--quiet',
        '--dest-tls-verify=false',
        `oci:${first.layoutDir}:${pkg.version}`,
        `docker://${registry.host}/cdk8s-kruise:${pkg.version}`,
      ]);
      const image = RuntimeImage.bundled({ registry: registry.host, digest: first.manifestDigest });
      expect(image.reference).toBe(`${registry.host}/cdk8s-kruise:${pkg.version}@${first.manifestDigest}`);
      const byDigest = JSON.parse(
        run('skopeo', ['inspect', '--tls-verify=false', `docker://${registry.host}/cdk8s-kruise@${first.manifestDigest}`]),
      ) as { Digest: string };
      expect(byDigest.Digest).toBe(first.manifestDigest);
      const byTag = JSON.parse(
        run('skopeo', ['inspect', '--tls-verify=false', `docker://${RuntimeImage.bundled({ registry: registry.host }).reference}`]),
      ) as { Digest: string };
      expect(byTag.Digest).toBe(first.manifestDigest);
    } finally {
      await registry.stop();
    }
  });

  it(`stays within the size budget (compressed layers <= 50 MB)`, () => {
    console.log(
      `[image] ${(first.compressedBytes / MB).toFixed(1)} MB compressed, ${(first.uncompressedBytes / MB).toFixed(1)} MB uncompressed; layers ${first.layers.map((l) => `${(l.compressedBytes / MB).toFixed(2)}/${(l.uncompressedBytes / MB).toFixed(2)} MB (${l.files} entries)`).join(', ')}`,
    );
    expect(first.compressedBytes).toBeLessThanOrEqual(50 * MB);
  });

  it('holds only the runtime: root-owned files with pinned mtimes, no node_modules, nonroot home, sticky /tmp', async () => {
    const blobs = first.layers.map((l) => readFileSync(join(first.layoutDir, 'blobs', ...l.digest.split(':'))));
    const headers = (await Promise.all(blobs.map(layerHeaders))).flat();
    for (const h of headers) {
      expect(h.mtime.getTime(), h.name).toBe(first.sourceDateEpoch * 1000);
      if (h.name === 'home/nonroot/') expect([h.uid, h.gid]).toEqual([NONROOT.uid, NONROOT.gid]);
      else expect([h.uid, h.gid], h.name).toEqual([0, 0]);
    }
    const names = headers.map((h) => h.name);
    expect(names.filter((n) => n.includes('node_modules'))).toEqual([]);
    expect(new Set(names.map((n) => n.split('/')[0]))).toEqual(
      new Set(['app', 'etc', 'home', 'lib', 'lib64', 'nodejs', 'root', 'tmp', 'usr', 'var']),
    );
    expect(names).toEqual(
      expect.arrayContaining([
        'nodejs/bin/node',
        'etc/ssl/certs/ca-certificates.crt',
        'etc/passwd',
        'etc/group',
        'app/bin/cdk8s-kruise.mjs',
        'app/package.json',
        'usr/local/bin/cdk8s-kruise',
        'nodejs/LICENSE',
        'app/THIRD-PARTY-LICENSES.txt',
        'usr/share/doc/libc6/copyright',
        'var/lib/dpkg/status.d/libc6',
      ]),
    );
    // Every npm package inside the bundle has its licence text in the image.
    const notices = readFileSync(join(rootfs, 'app/THIRD-PARTY-LICENSES.txt'), 'utf8');
    for (const dep of ['@kubernetes/client-node@', '@grpc/grpc-js@', 'pino@', 'prom-client@', 'commander@', 'yaml@', 'ajv@'])
      expect(notices).toContain(`\n${dep}`);
    expect(statSync(join(rootfs, 'tmp')).mode & 0o7777).toBe(0o1777);
    expect(readFileSync(join(rootfs, 'etc/passwd'), 'utf8')).toContain('nonroot:x:65532:65532:');
    expect(readFileSync(join(rootfs, 'etc/group'), 'utf8')).toContain('nonroot:x:65532:');
  });

  it('runs as uid/gid 65532 with Node 24, the CA bundle and nothing writable outside /tmp and home', () => {
    const r = spawnSync(
      'chroot',
      [
        `--userspec=${IMAGE_USER}`,
        rootfs,
        '/nodejs/bin/node',
        '-e',
        `const fs = require('node:fs');
         const writable = (p) => { try { fs.accessSync(p, fs.constants.W_OK); return true; } catch { return false; } };
         console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), user: require('node:os').userInfo().username,
           node: process.version, ca: fs.readFileSync(process.env.SSL_CERT_FILE, 'utf8').includes('BEGIN CERTIFICATE'),
           writable: ['/', '/app', '/app/bin', '/etc', '/nodejs/bin', '/tmp', '/home/nonroot'].filter(writable) }));`,
      ],
      { encoding: 'utf8', env: imageEnv() },
    );
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({
      uid: 65532,
      gid: 65532,
      user: 'nonroot',
      node: expect.stringMatching(/^v24\./),
      ca: true,
      writable: ['/tmp', '/home/nonroot'],
    });
  });

  it('entrypoint prints the package version', () => {
    const r = entrypoint(['--version']);
    expect(r.stderr).toBe('');
    expect([r.status, r.stdout.trim()]).toEqual([0, pkg.version]);
  });

  it('entrypoint is found by name through the image PATH, as the install manifests call it (command: [cdk8s-kruise])', () => {
    const r = spawnSync('chroot', [`--userspec=${IMAGE_USER}`, rootfs, 'cdk8s-kruise', '--version'], { encoding: 'utf8', env: imageEnv() });
    expect([r.status, r.stdout.trim(), r.stderr]).toEqual([0, pkg.version, '']);
  });

  it('its controller talks to the real kube-apiserver: /readyz and /metrics answer, SIGTERM stops it cleanly', async () => {
    // SidecarTerminator lists ContainerRecreateRequests, so the run reaches the API through the bundled
    // client (TLS client certificate, list + watch) instead of idling with no informer.
    // Every CRD of ours, as the install applies them: the manager is ready once all its caches synced.
    await installCrds(KINDS);
    const [probe, metrics] = [await freePort(), await freePort()];
    const { logs, code } = await serveInImage(
      [
        'controller',
        '--kubeconfig',
        kubeconfigInImage(),
        '--namespace',
        'default',
        '--feature-gates',
        'SidecarTerminator=true',
        '--webhook-port',
        '0',
        '--health-probe-addr',
        `127.0.0.1:${probe}`,
        '--metrics-addr',
        `127.0.0.1:${metrics}`,
      ],
      async () =>
        (await fetch(`http://127.0.0.1:${probe}/readyz`).then(
          (r) => r.status,
          () => 0,
        )) === 200 &&
        (
          await fetch(`http://127.0.0.1:${metrics}/metrics`).then(
            (r) => r.text(),
            () => '',
          )
        ).includes('process_cpu_seconds_total'),
    );
    expect(logs).toContain('caches synced');
    expect(code, logs).toBe(0);
  });

  it('its daemon reaches a real containerd over CRI (grpc-js inside the bundle) as the nonroot user', async () => {
    // containerd lives inside the rootfs, so its socket is visible in the chroot; the socket's group is
    // the runtime gid, as the install grants socket access by supplementary group instead of uid 0.
    const containerd = await TestContainerd.create(join(rootfs, 'run', 'cri'), { sandboxImage: 'registry.invalid/pause:1' });
    try {
      chownSync(containerd.socket, 0, NONROOT.gid);
      const health = await freePort();
      const { logs, code } = await serveInImage(
        [
          'daemon',
          '--node-name',
          'image-test-node',
          '--kubeconfig',
          kubeconfigInImage(),
          '--cri-socket',
          '/run/cri/containerd.sock',
          '--health-probe-addr',
          `127.0.0.1:${health}`,
        ],
        async () =>
          /^kruise_daemon_cri_up 1$/m.test(
            await fetch(`http://127.0.0.1:${health}/metrics`).then(
              (r) => r.text(),
              () => '',
            ),
          ),
      );
      expect(logs).toMatch(/"runtime":"containerd".*"msg":"CRI runtime reachable"/);
      expect(code, logs).toBe(0);
    } finally {
      await containerd.destroy();
    }
  });

  // The runtime binaries: `controller` (controller-manager) and `daemon` (node daemon) must be sub-commands.
  for (const command of ['controller', 'daemon']) {
    it(`entrypoint has a working \`${command} --help\``, () => {
      const r = entrypoint([command, '--help']);
      expect(r.stderr, `cdk8s-kruise ${command} --help failed in the image (is src/cli/commands/${command}.ts registered?)`).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout, `\`${command}\` is not a sub-command of the bundled CLI at HEAD (root help printed instead)`).toMatch(
        new RegExp(`^Usage: cdk8s-kruise ${command}\\b`, 'm'),
      );
    });
  }
});

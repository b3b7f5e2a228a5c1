// Offline stand-ins for the images upstream OpenKruise's e2e suite names (test/conformance runs it on the real
// node), and the containerd registry mirrors that make those names resolve to the harness's loopback registry.
// Several specs use `:latest` without a pull policy (pull Always), so the names must resolve on every pull:
// pre-loading images into containerd would not do. Nothing leaves the machine: a name under a mirrored host
// that is not pushed here (the suite's deliberately unpullable image) fails with the registry's 404.
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { push } from './images.js';

const run = promisify(execFile);

/** Registry hosts whose names the suite uses; each gets a containerd `hosts.toml` pointing at the loopback registry. */
export const MIRRORED_HOSTS = ['docker.io', 'registry.k8s.io', 'invalid.registry.k8s.io'] as const;

/**
 * Image names the runnable upstream specs pull (through k8s.io/kubernetes/test/utils/image, or hard-coded),
 * as `<host>/<repository>:<tag>`. Each group shares one image (one digest); different groups differ, because
 * specs compare image IDs across tags (an update to another tag must change the ID), while one CloneSet spec
 * requires nginx:alpine and nginx:mainline-alpine to be the same image.
 */
export const UPSTREAM_IMAGE_GROUPS: readonly (readonly string[])[] = [
  ['registry.k8s.io/e2e-test-images/httpd:2.4.38-4'],
  ['registry.k8s.io/e2e-test-images/httpd:2.4.39-4'],
  ['registry.k8s.io/e2e-test-images/agnhost:2.53'],
  ['registry.k8s.io/e2e-test-images/nginx:1.14-4'],
  ['registry.k8s.io/e2e-test-images/nginx:1.15-4'],
  ['registry.k8s.io/e2e-test-images/busybox:1.36.1-1'],
  ['registry.k8s.io/e2e-test-images/redis:5.0.5-3'],
  ['docker.io/library/busybox:latest'],
  ['docker.io/library/nginx:latest'],
  ['docker.io/library/nginx:alpine', 'docker.io/library/nginx:mainline-alpine'],
  // The SidecarSet resourcesPolicy specs' app container.
  ['docker.io/library/nginx:1.14.2'],
  ['docker.io/library/nginx:1.21.1'],
  ['docker.io/library/nginx:1.21'],
  ['docker.io/library/nginx:1.20.1'],
  ['docker.io/library/nginx:1.20'],
  ['docker.io/library/nginx:1.19.10'],
  // The PodProbeMarker specs' Advanced StatefulSet: nginx answers their tcp and http probes on port 80.
  ['docker.io/library/nginx:1.15.1'],
  ['docker.io/library/centos:7'],
  ['docker.io/openkruise/hotupgrade-sample:sidecarv1'],
  ['docker.io/openkruise/hotupgrade-sample:empty'],
  // The PodProbeMarker spec "test2": its probe runs the image's `./probe.sh` (PROBE_SCRIPT).
  ['docker.io/openkruise/minecraft-demo:probe-v0'],
];

/**
 * The game-server demo's probe as the spec observes it: it fails while the server starts, then succeeds saying
 * "data" (loading its world), then "gate" (open to players). Timed from the first probe, not from the container's
 * start (the PodProbeMarker is created only once the pod runs), with phases of 5 and 10 s so that a 10 s probe period
 * sees each state once and an extra probe never skips one.
 */
const PROBE_SCRIPT = [
  '#!/bin/sh',
  'now=$(date +%s)',
  '[ -f /tmp/first-probe ] || echo "$now" > /tmp/first-probe',
  'elapsed=$((now - $(cat /tmp/first-probe)))',
  'if [ "$elapsed" -lt 5 ]; then echo "starting"; exit 1; fi',
  'if [ "$elapsed" -lt 15 ]; then echo "data"; exit 0; fi',
  'echo "gate"',
  '',
].join('\n');

/**
 * Runs until TERM, INT or QUIT and exits 0, as nginx, httpd and redis do. The image's Cmd (not Entrypoint), like
 * busybox's `sh`: specs that set `args` only replace it. The text matches the cleanup pattern of the node stories'
 * stand-in containers.
 */
const SERVE = ['/bin/sh', '-c', 'trap "exit 0" INT QUIT; trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];

/**
 * The busybox images keep busybox's own Cmd, `sh`, which exits at once without a terminal: every spec that runs one
 * for long gives it a command, and one CloneSet spec updates a container to busybox without one precisely so that
 * it fails to start (cloneset.go, "should not update the next when the previous one failed").
 */
const BUSYBOX_CMD = ['sh'];
const isBusybox = (name: string): boolean => /\/busybox:[^/]+$/.test(name);

/**
 * Stand-ins whose specs probe them over the network (tcp and http on port 80): busybox httpd serves nginx's document
 * root, `/usr/share/nginx/html` (upstream's StatefulSet specs fail a pod's readiness by moving its `index.html` away),
 * and TERM, INT or QUIT still end the container with 0. Where port 80 is taken (a second such container in one pod,
 * as SidecarSet specs inject, or a hostNetwork pod beside another) httpd gives up and the container idles instead.
 */
const WEB_CMD = [
  '/bin/sh',
  '-c',
  'trap "exit 0" INT QUIT TERM; httpd -p 80 -h /usr/share/nginx/html; while true; do sleep 1 & wait $!; done',
];
const SERVES_WEB: ReadonlySet<string> = new Set([
  'docker.io/library/nginx:1.15.1',
  // NginxImage and NewNginxImage of upstream's StatefulSet specs, whose readiness is an HTTP GET of /index.html.
  'registry.k8s.io/e2e-test-images/nginx:1.14-4',
  'registry.k8s.io/e2e-test-images/nginx:1.15-4',
]);

/**
 * Builds the stand-ins with umoci from Debian's busybox-static (every applet linked, `/bin/bash` running busybox
 * sh, since one spec runs `bash -c`; `/migrate.sh` for the hot-upgrade sample's postStart) and pushes each name
 * under its upstream repository path (`<registry>/<repository>:<tag>`, the path a mirror asks for).
 */
export async function pushUpstreamStandIns(workDir: string, layout: string, registryHost: string): Promise<void> {
  const base = `${layout}:upstream-stand-in-base`;
  await mkdir(workDir, { recursive: true });
  await run('umoci', ['init', '--layout', layout]).catch(() => undefined);
  await run('umoci', ['new', '--image', base]);
  const bundle = join(workDir, 'bundle-upstream-stand-in');
  await run('umoci', ['unpack', '--image', base, bundle]);
  const rootfs = join(bundle, 'rootfs');
  for (const dir of ['bin', 'tmp', 'etc', 'var/run', 'usr/bin', 'usr/sbin', 'sbin']) await mkdir(join(rootfs, dir), { recursive: true });
  await chmod(join(rootfs, 'tmp'), 0o1777);
  await writeFile(join(rootfs, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n');
  await writeFile(join(rootfs, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
  await copyFile('/bin/busybox', join(rootfs, 'bin', 'busybox'));
  await chmod(join(rootfs, 'bin', 'busybox'), 0o755);
  const { stdout } = await run('/bin/busybox', ['--list']);
  for (const applet of stdout.split('\n').filter((a) => a && a !== 'busybox' && a !== 'bash'))
    await symlink('busybox', join(rootfs, 'bin', applet)).catch(() => undefined);
  await writeFile(join(rootfs, 'bin', 'bash'), '#!/bin/busybox sh\nexec /bin/busybox sh "$@"\n', { mode: 0o755 });
  await writeFile(join(rootfs, 'migrate.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  // Runs as `bash ./probe.sh` from the image's working directory, `/`.
  await writeFile(join(rootfs, 'probe.sh'), PROBE_SCRIPT, { mode: 0o755 });
  await mkdir(join(rootfs, 'usr', 'share', 'nginx', 'html'), { recursive: true });
  await writeFile(join(rootfs, 'usr', 'share', 'nginx', 'html', 'index.html'), 'stand-in\n');
  await run('umoci', ['repack', '--image', base, bundle]);
  await run('umoci', [
    'config',
    '--image',
    base,
    '--config.entrypoint=',
    ...SERVE.map((c) => `--config.cmd=${c}`),
    '--config.env=PATH=/usr/sbin:/usr/bin:/sbin:/bin',
  ]);
  for (const [index, names] of UPSTREAM_IMAGE_GROUPS.entries()) {
    // A label of its own gives each group its own config, hence its own image ID, over the one shared layer.
    const tag = `upstream-stand-in-${index}`;
    const own = isBusybox(names[0]!) ? BUSYBOX_CMD : SERVES_WEB.has(names[0]!) ? WEB_CMD : undefined;
    const cmd = (own ?? []).map((c) => `--config.cmd=${c}`);
    await run('umoci', ['config', '--image', base, '--tag', tag, `--config.label=cdk8s-kruise.stand-in-for=${names[0]}`, ...cmd]);
    for (const name of names) await push(`${layout}:${tag}`, `${registryHost}/${repositoryPath(name)}`);
  }
  await run('umoci', ['gc', '--layout', layout]);
}

/** `docker.io/library/nginx:latest` → `library/nginx:latest`: the path under the mirrored host. */
function repositoryPath(name: string): string {
  const host = MIRRORED_HOSTS.find((h) => name.startsWith(`${h}/`));
  if (!host) throw new Error(`${name} is not under a mirrored registry host (${MIRRORED_HOSTS.join(', ')})`);
  return name.slice(host.length + 1);
}

/**
 * Writes containerd's registry `config_path` directory: `<dir>/<host>/hosts.toml` for each mirrored host, pulling
 * and resolving from the plain-HTTP loopback registry only (no fallback to the real host).
 */
export async function writeMirrorHosts(dir: string, registryHost: string): Promise<void> {
  for (const host of MIRRORED_HOSTS) {
    await mkdir(join(dir, host), { recursive: true });
    await writeFile(
      join(dir, host, 'hosts.toml'),
      `server = "http://${registryHost}"\n\n[host."http://${registryHost}"]\n  capabilities = ["pull", "resolve"]\n`,
    );
  }
}

// A real one-node cluster for the "node" vitest project: etcd + kube-apiserver (Node authorizer,
// NodeRestriction and ServiceAccount admission on), kube-controller-manager, kube-scheduler,
// kube-proxy (iptables mode), and a kubelet with a client-certificate node identity on a private
// containerd with CNI bridge networking. Everything the node creates on the host is recorded in a
// generated cleanup script that runs on stop(), on a failed start, on process exit and from a
// detached watchdog when the test runner is killed.
//
// With `nodes` > 1, extra nodes (real-node-b, -c, ...) join the same control plane, each in a network
// namespace of its own (its kubelet, containerd, kube-proxy and a copy of the loopback registry run
// there; the daemon's host ports and the node IPs need that), with its own pod CIDR and cgroup root.
// Node A is the same as in a one-node run.
//
// Addresses: the node IP is the host end of a veth pair whose other end lives in a network
// namespace the harness creates (kubelet refuses a loopback node IP and this kernel has no dummy
// links); pods get addresses on a harness-created bridge; Service ClusterIPs are DNATed by
// kube-proxy to those addresses. All three ranges are only ever routed on this host, so no test
// traffic leaves the machine.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig, StorageV1Api, type V1StorageClass } from '@kubernetes/client-node';
import { CriClient } from '../../src/runtime/cri/client.js';
import { TestContainerd } from '../cri-harness/containerd.js';
import { buildLayout, push } from '../cri-harness/images.js';
import { TestRegistry } from '../cri-harness/registry.js';
import { MIRRORED_HOSTS, pushUpstreamStandIns, writeMirrorHosts } from '../cri-harness/upstream-images.js';
import { freePort, waitFor } from '../cri-harness/util.js';
import { bypassProxyForLoopback, ControlPlane } from './controlplane.js';
import { findNodeAssets, type NodeAssets } from './node-assets.js';
import { HostPathVolumeResizer } from './volume-resizer.js';

const run = promisify(execFile);

/** Host end of the node's veth: the node IP, and the address kube-apiserver binds to. */
export const NODE_IP = '10.250.0.1';
const NODE_PEER_IP = '10.250.0.2';
/** Pod addresses, on the harness's bridge (gateway .1 on the host). */
export const POD_CIDR = '10.251.0.0/24';
const POD_GATEWAY = '10.251.0.1';
/** Must match the control plane's --service-cluster-ip-range. */
const SERVICE_CIDR = '10.0.0.0/24';
export const NODE_NAME = 'real-node';
/**
 * Extra nodes are named by letter (real-node-b, ...) and cost ~220 MiB each; the addresses (a veth /30 and a pod /24
 * per node) would allow 63.
 */
const MAX_NODES = 8;

/**
 * Host sysctls the node's parts may change: kubelet (overcommit, panic, keys), the CNI bridge plugin
 * (ip_forward), kube-proxy (route_localnet, conntrack). Saved before start, restored by cleanup.
 */
const SAVED_SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
  'net.ipv4.ip_forward',
  'net.ipv4.conf.all.route_localnet',
  'net.bridge.bridge-nf-call-iptables',
  'net.netfilter.nf_conntrack_max',
];

/**
 * Host paths kubelet, libcni and kube-controller-manager's host-path provisioner use whatever their
 * settings; removed on cleanup if the node created them.
 */
const FIXED_HOST_DIRS = ['/var/lib/kubelet', '/var/lib/cni', '/tmp/hostpath-provisioner'];

/**
 * The StorageClasses a one-node cluster offers, all served by kube-controller-manager's in-tree
 * host-path provisioner (directories on this host, deleted with their claims): `standard` is the
 * default class and the name upstream's deletion-protection spec asks for; the two volume-expansion
 * classes are the names upstream's Advanced StatefulSet specs look up before every spec. The
 * in-tree host-path plugin cannot expand a volume: the harness's HostPathVolumeResizer plays the
 * external resizer a storage driver would run.
 */
const STORAGE_CLASSES: readonly { name: string; isDefault?: boolean; allowVolumeExpansion?: boolean }[] = [
  { name: 'standard', isDefault: true },
  { name: 'allow-volume-expansion', allowVolumeExpansion: true },
  { name: 'disallow-volume-expansion', allowVolumeExpansion: false },
];
export const STORAGE_PROVISIONER = 'kubernetes.io/host-path';

/** busybox applets the node's test images carry (the cri-harness image plus what the stories need). */
const SLEEPER = ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];

export interface RealNodeImages {
  /** The sandbox image containerd is configured with (busybox sleeping, exits 0 on TERM). */
  readonly pause: string;
  /** busybox whose entrypoint sleeps and exits 0 on SIGTERM; commands can be overridden. */
  readonly busybox: string;
  /** A second busybox tag, only pulled on demand (ImagePullJob, image change). */
  readonly busybox2: string;
  /** Pulled by nothing but the ImagePullJob story, so it is on the node only once that job pulled it. */
  readonly pullOnly: string;
}

/** What a test worker needs to reach the node (the globalSetup provides it as JSON). */
export interface RealNodeInfo {
  readonly kubeconfig: string;
  readonly nodeName: string;
  readonly dir: string;
  readonly containerdSocket: string;
  /** Directory mounted as the daemon's /hostvarrun (holds containerd/containerd.sock). */
  readonly hostRunDir: string;
  readonly registry: string;
  readonly images: RealNodeImages;
  readonly podLogsDir: string;
  /**
   * Registry hosts the node's containerd resolves through the loopback registry, which holds offline stand-ins
   * for the images upstream OpenKruise's e2e suite names (test/cri-harness/upstream-images.ts).
   */
  readonly mirroredHosts: readonly string[];
  /** Every node of the cluster, node A (the fields above) first. */
  readonly nodes: readonly RealClusterNode[];
}

/** One node of the cluster, as a test reaches it. */
export interface RealClusterNode {
  readonly name: string;
  /** The node's InternalIP (kubelet's address). */
  readonly ip: string;
  readonly containerdSocket: string;
  readonly podLogsDir: string;
}

export interface RealNodeOptions {
  /** Nodes in the cluster (default 1: node A alone, as the single-node stories assume). */
  readonly nodes?: number;
}

/**
 * A node beyond node A, every setting derived from its index k (1, 2, ...): veth 10.250.0.(4k+1) on the
 * host to the node IP 10.250.0.(4k+2) in the node's namespace, pods on 10.251.k.0/24 behind a bridge
 * inside that namespace, and a cgroup root of its own (kubelets sharing one fight over its pods).
 */
interface ExtraNode {
  readonly name: string;
  readonly netns: string;
  readonly hostVeth: string;
  readonly hostIp: string;
  readonly ip: string;
  readonly podCidr: string;
  readonly podGateway: string;
  readonly cgroupRoot: string;
  readonly dir: string;
  containerd?: TestContainerd;
}

interface Component {
  readonly name: string;
  readonly child: ChildProcess;
}

export class RealNode {
  /** Starts the whole node; on any failure, everything started so far is cleaned up. */
  static async start(options: RealNodeOptions = {}): Promise<RealNode> {
    const count = options.nodes ?? 1;
    if (!Number.isInteger(count) || count < 1 || count > MAX_NODES) throw new Error(`nodes must be 1..${MAX_NODES}, not ${count}`);
    if (process.getuid?.() !== 0) {
      throw new Error(
        'the real-node tests run kubelet, containerd, CNI and kube-proxy and need root (CI runs as root), after bash test/prepare.sh',
      );
    }
    const node = new RealNode(findNodeAssets(), await mkdtemp(path.join(tmpdir(), 'kruise-node-')), count);
    try {
      await node.init();
      return node;
    } catch (error) {
      await node.stop();
      throw error;
    }
  }

  plane?: ControlPlane;
  registry?: TestRegistry;
  containerd?: TestContainerd;
  images?: RealNodeImages;
  private readonly suffix = randomBytes(2).toString('hex');
  private readonly netns = `kruise-node-${this.suffix}`;
  private readonly veth = `krn${this.suffix}h`;
  private readonly bridge = `krn${this.suffix}br`;
  private readonly components: Component[] = [];
  private lock?: ChildProcess;
  /** Grows claims of the expandable classes (see HostPathVolumeResizer), from the StorageClasses on. */
  private resizer?: HostPathVolumeResizer;
  private watchdog?: ChildProcess;
  private cleanedUp = false;
  private readonly exitHandler = () => this.cleanupNow();
  private readonly extras: ExtraNode[];

  private constructor(
    readonly assets: NodeAssets,
    readonly dir: string,
    count: number,
  ) {
    this.extras = Array.from({ length: count - 1 }, (_, i) => {
      const k = i + 1;
      const letter = String.fromCharCode(0x61 + k);
      return {
        name: `${NODE_NAME}-${letter}`,
        netns: `${this.netns}-${letter}`,
        hostVeth: `krn${this.suffix}h${letter}`,
        hostIp: `10.250.0.${4 * k + 1}`,
        ip: `10.250.0.${4 * k + 2}`,
        podCidr: `10.251.${k}.0/24`,
        podGateway: `10.251.${k}.1`,
        cgroupRoot: `krn-${this.suffix}-${letter}`,
        dir: path.join(dir, 'nodes', letter),
      };
    });
  }

  private get cleanupScript(): string {
    return path.join(this.dir, 'cleanup.sh');
  }

  get hostRunDir(): string {
    return path.join(this.dir, 'run');
  }

  get podLogsDir(): string {
    return path.join(this.dir, 'pod-logs');
  }

  info(): RealNodeInfo {
    return {
      kubeconfig: this.plane!.kubeconfigPath,
      nodeName: NODE_NAME,
      dir: this.dir,
      containerdSocket: this.containerd!.socket,
      hostRunDir: this.hostRunDir,
      registry: this.registry!.host,
      images: this.images!,
      podLogsDir: this.podLogsDir,
      mirroredHosts: MIRRORED_HOSTS,
      nodes: [
        { name: NODE_NAME, ip: NODE_IP, containerdSocket: this.containerd!.socket, podLogsDir: this.podLogsDir },
        ...this.extras.map((n) => ({
          name: n.name,
          ip: n.ip,
          containerdSocket: n.containerd!.socket,
          podLogsDir: path.join(n.dir, 'pod-logs'),
        })),
      ],
    };
  }

  /** Resident memory (MiB) of each extra node's own processes: kubelet, containerd, kube-proxy, registry copy. */
  extraNodeRssMiB(): Record<string, number> {
    const rss = (pid: number | undefined) => {
      const kb = pid === undefined ? undefined : /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      return kb ? Number(kb) / 1024 : 0;
    };
    const out: Record<string, number> = {};
    for (const n of this.extras) {
      const pids = this.components.filter((c) => c.name.endsWith(`-${n.name}`)).map((c) => c.child.pid);
      pids.push(n.containerd?.pid);
      out[n.name] = Math.round(pids.reduce((sum: number, pid) => sum + rss(pid), 0));
    }
    return out;
  }

  private async init(): Promise<void> {
    const started = Date.now();
    const step = (what: string) => console.log(`[node] ${what} (+${Date.now() - started} ms)`);
    bypassProxyForLoopback();
    for (const name of ['NO_PROXY', 'no_proxy']) process.env[name] = `${process.env[name]},${NODE_IP},10.0.0.1`;
    await this.acquireLock();
    await this.writeCleanupScript();
    process.once('exit', this.exitHandler);
    this.startWatchdog();

    await this.saveSysctls();
    await this.createNetwork();
    step('network namespace, veth and bridge up');

    this.registry = await TestRegistry.create(path.join(this.dir, 'registry'));
    const layout = path.join(this.dir, 'oci');
    const work = path.join(this.dir, 'build');
    const busybox = await buildLayout(work, layout, { repo: 'test/busybox', tag: '1', cmd: SLEEPER });
    const busybox2 = await buildLayout(work, layout, { repo: 'test/busybox', tag: '2', cmd: SLEEPER });
    this.images = {
      pause: `${this.registry.host}/test/pause:1`,
      busybox: `${this.registry.host}/test/busybox:1`,
      busybox2: `${this.registry.host}/test/busybox:2`,
      pullOnly: `${this.registry.host}/test/pull-only:1`,
    };
    await push(busybox, this.images.pause);
    await push(busybox, this.images.busybox);
    await push(busybox2, this.images.busybox2);
    await push(busybox2, this.images.pullOnly);
    await pushUpstreamStandIns(work, layout, this.registry.host);
    const registryConfig = path.join(this.dir, 'registry-hosts');
    await writeMirrorHosts(registryConfig, this.registry.host);
    step('loopback registry with offline-built images, mirroring ' + MIRRORED_HOSTS.join(', '));

    const cniConf = path.join(this.dir, 'cni-conf');
    await mkdir(cniConf, { recursive: true });
    await writeFile(path.join(cniConf, '10-real-node.conflist'), JSON.stringify(this.cniConfig(), null, 2));
    this.containerd = await TestContainerd.create(path.join(this.hostRunDir, 'containerd'), {
      sandboxImage: this.images.pause,
      cni: { binDir: '/usr/lib/cni', confDir: cniConf },
      registryConfigPath: registryConfig,
    });
    const cri = new CriClient(this.containerd.socket);
    try {
      await cri.pullImage(this.images.pause);
    } finally {
      cri.close();
    }
    step('containerd with CNI bridge networking');

    this.plane = await ControlPlane.start({
      address: NODE_IP,
      serviceAccountAdmission: true,
      nodeAuthorization: true,
    });
    step(`etcd + kube-apiserver on ${this.plane.url}`);

    await this.startControllers();
    step('kube-controller-manager, kube-scheduler, kube-proxy');
    await this.startKubelet();
    await this.waitForNodeReady();
    step(`kubelet: node ${NODE_NAME} Ready`);
    await this.createStorageClasses();
    this.resizer = HostPathVolumeResizer.start(this.plane.kubeconfigPath);
    step(`StorageClasses ${STORAGE_CLASSES.map((c) => c.name).join(', ')} (${STORAGE_PROVISIONER}, claims grown by the harness's resizer)`);
    if (this.extras.length > 0) {
      await Promise.all(this.extras.map((n) => this.startExtraNode(n)));
      step(`extra nodes ${this.extras.map((n) => n.name).join(', ')} Ready`);
    }
  }

  /** Stops every component and removes everything the node created. Safe to call more than once. */
  async stop(): Promise<void> {
    await this.resizer?.stop();
    // Graceful first: kubelet gone, then CRI removes the sandboxes (runc stops containers, CNI DEL
    // frees addresses), then the generated cleanup catches whatever is left.
    for (const component of [...this.components].reverse()) await stopChild(component.child, 10_000);
    this.components.length = 0;
    for (const n of this.extras) if (n.containerd) await n.containerd.destroy().catch(() => undefined);
    if (this.containerd) await this.containerd.destroy().catch(() => undefined);
    await this.registry?.stop();
    await this.plane?.stop();
    this.cleanupNow();
    process.removeListener('exit', this.exitHandler);
    this.lock?.kill('SIGKILL');
  }

  private cleanupNow(): void {
    if (this.cleanedUp || !existsSync(this.cleanupScript)) return;
    this.cleanedUp = true;
    // The watchdog's command line names the cleanup script: stop it first, or it counts as left over.
    this.watchdog?.kill('SIGKILL');
    const result = spawnSync('bash', [this.cleanupScript], { encoding: 'utf8' });
    if (result.status !== 0) console.error(`[node] cleanup reported problems:\n${result.stdout}${result.stderr}`);
  }

  // One node per machine at a time: the kubelet's device-plugin socket, the iptables KUBE-* chains
  // and the node addresses are host-wide. A second test run waits here.
  private async acquireLock(): Promise<void> {
    const lockFile = path.join(tmpdir(), 'cdk8s-kruise-real-node.lock');
    const lock = spawn('flock', [lockFile, 'sh', '-c', 'echo locked; exec cat'], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.lock = lock;
    await new Promise<void>((resolve, reject) => {
      lock.stdout!.once('data', () => resolve());
      lock.once('exit', (code) => reject(new Error(`flock ${lockFile} exited (${code})`)));
    });
  }

  private startWatchdog(): void {
    const script = 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec bash "$0"';
    this.watchdog = spawn('bash', ['-c', script, this.cleanupScript, String(process.pid)], { detached: true, stdio: 'ignore' });
    this.watchdog.unref();
  }

  private async writeCleanupScript(): Promise<void> {
    const created = FIXED_HOST_DIRS.filter((d) => !existsSync(d));
    const cgroupsBefore = existsSync('/sys/fs/cgroup/memory/kubepods');
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const script = `#!/usr/bin/env bash
# Generated by the real-node harness: removes everything one node run created. Idempotent.
dir=${q(this.dir)}
self=$$
mentioning() { # pids (not us, not our parent) whose command line mentions the node directory
  # The last character bracketed, so that grep's own command line does not match.
  grep -la -- "\${dir%?}[\${dir: -1}]" /proc/[0-9]*/cmdline 2>/dev/null | sed -n 's|^/proc/\\([0-9]*\\)/cmdline$|\\1|p' | grep -vxF -e "$self" -e "$PPID" | while read -r pid; do
    # This script's own subshells (and the watchdog that runs it) name it: not leftovers.
    grep -qaF cleanup.sh "/proc/$pid/cmdline" 2>/dev/null || echo "$pid"
  done
}
# Pod processes first (they do not mention the directory): everything in the kubepods cgroups.
${
  cgroupsBefore
    ? ''
    : `for procs in $(find /sys/fs/cgroup/*/kubepods -name cgroup.procs 2>/dev/null); do
  for pid in $(cat "$procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
done`
}
${this.extras
  .map(
    (n) => `# Pods of node ${n.name}: in its own cgroup root.
for procs in $(find /sys/fs/cgroup/*/${n.cgroupRoot} -name cgroup.procs 2>/dev/null); do
  for pid in $(cat "$procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
done`,
  )
  .join('\n')}
for pid in $(mentioning); do kill -9 "$pid" 2>/dev/null; done
for _ in $(seq 50); do [ -z "$(mentioning)" ] && break; sleep 0.1; done
# iptables: kube-proxy's own cleanup, then any KUBE-* chain left (kubelet's canaries included).
${q(this.assets.kubeProxy)} --cleanup >/dev/null 2>&1
for ipt in iptables ip6tables; do
  for table in filter nat mangle; do
    $ipt -t $table -S 2>/dev/null | grep -E '^-A [A-Z]+ .*-j KUBE-' | sed 's/^-A/-D/' | while read -r rule; do eval "$ipt -t $table $rule" 2>/dev/null; done
    for chain in $($ipt -t $table -S 2>/dev/null | sed -n 's/^-N \\(KUBE-[^ ]*\\)$/\\1/p'); do $ipt -t $table -F "$chain" 2>/dev/null; done
    for chain in $($ipt -t $table -S 2>/dev/null | sed -n 's/^-N \\(KUBE-[^ ]*\\)$/\\1/p'); do $ipt -t $table -X "$chain" 2>/dev/null; done
  done
done
# Mounts under the node directory (kubelet's root-dir bind mount, pod volumes, netns, rootfs), deepest first.
awk '{print $2}' /proc/self/mounts | grep -F -- "$dir/" | sort -r | while read -r m; do umount -l "$(printf '%b' "$m")" 2>/dev/null; done
ip netns del ${q(this.netns)} 2>/dev/null
ip link del ${q(this.veth)} 2>/dev/null
ip link del ${q(this.bridge)} 2>/dev/null
# Extra nodes: their namespaces hold their bridges and iptables; the host veth ends carry the routes to them.
${this.extras.map((n) => `ip netns del ${q(n.netns)} 2>/dev/null\nip link del ${q(n.hostVeth)} 2>/dev/null`).join('\n')}
${this.extras.map((n) => `for root in /sys/fs/cgroup/*/${n.cgroupRoot}; do [ -d "$root" ] && find "$root" -depth -type d -exec rmdir {} \\; 2>/dev/null; done`).join('\n')}
${cgroupsBefore ? '' : `for root in /sys/fs/cgroup/*/kubepods; do [ -d "$root" ] && find "$root" -depth -type d -exec rmdir {} \\; 2>/dev/null; done`}
[ -f "$dir/sysctl.saved" ] && sysctl -q -p "$dir/sysctl.saved" >/dev/null 2>&1
${created.map((d) => `rm -rf ${q(d)}`).join('\n')}
rm -rf "$dir"
# Report what could not be removed.
status=0
ip link show ${q(this.bridge)} >/dev/null 2>&1 && { echo "bridge ${this.bridge} still present"; status=1; }
ip netns list | grep -q ${q(this.netns)} && { echo "netns ${this.netns}* still present"; status=1; }
${this.extras.map((n) => `ls -d /sys/fs/cgroup/*/${n.cgroupRoot} 2>/dev/null | grep -q . && { echo "cgroup ${n.cgroupRoot} still present"; status=1; }`).join('\n')}
# A process that exits between the listing and the read is gone, not left.
for pid in $(mentioning); do cmd=$({ tr '\\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null) || continue; echo "process left: $pid $cmd"; status=1; done
exit $status
`;
    await writeFile(this.cleanupScript, script, { mode: 0o700 });
  }

  private async saveSysctls(): Promise<void> {
    const lines: string[] = [];
    for (const key of SAVED_SYSCTLS) {
      const file = `/proc/sys/${key.replace(/\./g, '/')}`;
      if (existsSync(file)) lines.push(`${key} = ${readFileSync(file, 'utf8').trim()}`);
    }
    await writeFile(path.join(this.dir, 'sysctl.saved'), lines.join('\n') + '\n');
  }

  private async createNetwork(): Promise<void> {
    const ip = (...args: string[]) => run('ip', args);
    await ip('netns', 'add', this.netns);
    await ip('link', 'add', this.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', this.netns);
    await ip('addr', 'add', `${NODE_IP}/30`, 'dev', this.veth);
    await ip('link', 'set', this.veth, 'up');
    await ip('-n', this.netns, 'addr', 'add', `${NODE_PEER_IP}/30`, 'dev', 'eth0');
    await ip('-n', this.netns, 'link', 'set', 'eth0', 'up');
    await ip('-n', this.netns, 'link', 'set', 'lo', 'up');
    // ClusterIPs are routed into the node's namespace, not by the host's default route: a connection that
    // kube-proxy did not DNAT then dies inside the harness (no route there) instead of leaving the machine.
    // A DNATed one is routed again after nat OUTPUT, to the pod's bridge. Removed with the veth.
    await ip('route', 'add', SERVICE_CIDR, 'via', NODE_PEER_IP, 'dev', this.veth);
  }

  private cniConfig(): object {
    return {
      cniVersion: '1.0.0',
      name: 'real-node',
      plugins: [
        {
          type: 'bridge',
          bridge: this.bridge,
          isGateway: true,
          // No masquerade: pods only talk to the host and to each other.
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: POD_CIDR, gateway: POD_GATEWAY }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: path.join(this.dir, 'cni-ipam'),
          },
        },
      ],
    };
  }

  private async writeKubeconfig(name: string, user: { cert: string; key: string }, dir = this.dir): Promise<string> {
    const b64 = (pem: string) => Buffer.from(pem).toString('base64');
    const file = path.join(dir, `${name}.kubeconfig`);
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'node', cluster: { server: this.plane!.url, 'certificate-authority-data': b64(this.plane!.caCert) } }],
      users: [{ name, user: { 'client-certificate-data': b64(user.cert), 'client-key-data': b64(user.key) } }],
      contexts: [{ name: 'node', context: { cluster: 'node', user: name } }],
      'current-context': 'node',
    };
    await writeFile(file, JSON.stringify(config, null, 2), { mode: 0o600 });
    return file;
  }

  private spawnComponent(name: string, binary: string, args: string[]): void {
    const log = openSync(path.join(this.dir, `${name}.log`), 'a');
    const child = spawn(binary, args, { stdio: ['ignore', log, log] });
    closeSync(log);
    child.once('error', () => undefined);
    this.components.push({ name, child });
  }

  /** Last lines of a component's log, for error messages. */
  logTail(name: string, lines = 40): string {
    try {
      return readFileSync(path.join(this.dir, `${name}.log`), 'utf8')
        .trimEnd()
        .split('\n')
        .slice(-lines)
        .join('\n');
    } catch {
      return '';
    }
  }

  private async startControllers(): Promise<void> {
    const plane = this.plane!;
    const admin = plane.kubeconfigPath;
    const caFile = path.join(this.dir, 'ca.crt');
    await writeFile(caFile, plane.caCert);
    this.spawnComponent('kube-controller-manager', this.assets.kubeControllerManager, [
      `--kubeconfig=${admin}`,
      `--authentication-kubeconfig=${admin}`,
      `--authorization-kubeconfig=${admin}`,
      '--controllers=*',
      '--leader-elect=false',
      `--service-account-private-key-file=${plane.serviceAccountKeyPath}`,
      `--root-ca-file=${caFile}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${await freePort()}`,
      `--cert-dir=${path.join(this.dir, 'kcm-certs')}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      // Finished pods are garbage-collected only past this many; the stories read them afterwards.
      '--terminated-pod-gc-threshold=1000',
      // PersistentVolumeClaims get host directories: see STORAGE_CLASSES.
      '--enable-hostpath-provisioner',
    ]);
    this.spawnComponent('kube-scheduler', this.assets.kubeScheduler, [
      `--kubeconfig=${admin}`,
      `--authentication-kubeconfig=${admin}`,
      `--authorization-kubeconfig=${admin}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${await freePort()}`,
      `--cert-dir=${path.join(this.dir, 'scheduler-certs')}`,
    ]);
    const proxyConfig = await writeKubeProxyConfig(this.dir, {
      kubeconfig: admin,
      nodeName: NODE_NAME,
      nodeIp: NODE_IP,
      clusterCidr: POD_CIDR,
    });
    this.spawnComponent('kube-proxy', this.assets.kubeProxy, [`--config=${proxyConfig}`]);
  }

  /**
   * Starts a kubelet: node A's (the defaults) or an extra node's, which runs in its node's network namespace
   * under a cgroup root of its own.
   */
  private async startKubelet(
    node: { name: string; ip: string; dir: string; socket: string; cgroupRoot?: string; netns?: string } = {
      name: NODE_NAME,
      ip: NODE_IP,
      dir: this.dir,
      socket: this.containerd!.socket,
    },
  ): Promise<void> {
    const plane = this.plane!;
    const ca = plane.certificateAuthority;
    const identity = await ca.issue({ commonName: `system:node:${node.name}`, organizations: ['system:nodes'], usage: 'client' });
    const serving = await ca.issue({ commonName: node.name, ips: [node.ip], dnsNames: [node.name], usage: 'server' });
    const kubeconfig = await this.writeKubeconfig('kubelet', identity, node.dir);
    const pki = path.join(node.dir, 'kubelet-pki');
    await mkdir(pki, { recursive: true });
    await writeFile(path.join(pki, 'serving.crt'), serving.cert);
    await writeFile(path.join(pki, 'serving.key'), serving.key, { mode: 0o600 });
    await writeFile(path.join(pki, 'ca.crt'), plane.caCert);
    // Pods get no nameservers: nothing in the tests resolves names, and no lookup may leave the host.
    await writeFile(path.join(node.dir, 'resolv.conf'), '');
    const podLogsDir = path.join(node.dir, 'pod-logs');
    await mkdir(podLogsDir, { recursive: true });
    const socket = `unix://${node.socket}`;
    const config = {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      // This machine runs cgroup v1, which kubelet 1.35 refuses by default.
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      ...(node.cgroupRoot ? { cgroupRoot: `/${node.cgroupRoot}` } : {}),
      containerRuntimeEndpoint: socket,
      imageServiceEndpoint: socket,
      podLogsDir,
      volumePluginDir: path.join(node.dir, 'volume-plugins'),
      resolvConf: path.join(node.dir, 'resolv.conf'),
      // Leave the host's iptables to kube-proxy (and the cleanup).
      makeIPTablesUtilChains: false,
      address: node.ip,
      port: await freePort(),
      healthzPort: await freePort(),
      healthzBindAddress: '127.0.0.1',
      readOnlyPort: 0,
      tlsCertFile: path.join(pki, 'serving.crt'),
      tlsPrivateKeyFile: path.join(pki, 'serving.key'),
      authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: path.join(pki, 'ca.crt') } },
      authorization: { mode: 'AlwaysAllow' },
      nodeStatusUpdateFrequency: '2s',
      syncFrequency: '10s',
      serializeImagePulls: false,
      // The test machine's disk and memory usage are not the node's business: never evict or GC images.
      evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
    };
    const configFile = path.join(node.dir, 'kubelet.yaml');
    await writeFile(configFile, JSON.stringify(config, null, 2));
    const args = [
      `--config=${configFile}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${path.join(node.dir, 'kubelet')}`,
      `--hostname-override=${node.name}`,
      `--node-ip=${node.ip}`,
      '--v=2',
    ];
    if (node.netns)
      this.spawnComponent(`kubelet-${node.name}`, 'nsenter', [`--net=${netnsPath(node.netns)}`, this.assets.kubelet, ...args]);
    else this.spawnComponent('kubelet', this.assets.kubelet, args);
  }

  /**
   * Starts an extra node: its namespace and routes, its cgroup root, a copy of the loopback registry (the
   * images name 127.0.0.1:<port>, which inside the namespace is the namespace's own loopback), containerd,
   * kubelet and kube-proxy; returns when the node is Ready.
   */
  private async startExtraNode(n: ExtraNode): Promise<void> {
    const ip = (...args: string[]) => run('ip', args);
    await ip('netns', 'add', n.netns);
    await ip('link', 'add', n.hostVeth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', n.netns);
    await ip('addr', 'add', `${n.hostIp}/30`, 'dev', n.hostVeth);
    await ip('link', 'set', n.hostVeth, 'up');
    await ip('-n', n.netns, 'addr', 'add', `${n.ip}/30`, 'dev', 'eth0');
    await ip('-n', n.netns, 'link', 'set', 'eth0', 'up');
    await ip('-n', n.netns, 'link', 'set', 'lo', 'up');
    // Everything else (the API server, node A and its pods, the other nodes) is reached through the host,
    // which routes each node's pod CIDR to that node's IP. Both routes go with the veth.
    await ip('-n', n.netns, 'route', 'add', 'default', 'via', n.hostIp);
    await ip('route', 'add', n.podCidr, 'via', n.ip, 'dev', n.hostVeth);
    await createCgroupRoot(n.cgroupRoot);

    const kubeletRoot = path.join(n.dir, 'kubelet');
    await mkdir(kubeletRoot, { recursive: true });
    // The mounts kubelet makes for pod volumes must reach containerd's private mount namespace, which exists
    // before kubelet does: the root-dir is a shared mount from the start (the host's / is private here).
    await run('mount', ['--bind', kubeletRoot, kubeletRoot]);
    await run('mount', ['--make-rshared', kubeletRoot]);

    const net = `--net=${netnsPath(n.netns)}`;
    this.spawnComponent(`registry-${n.name}`, 'nsenter', [net, 'docker-registry', 'serve', path.join(this.registry!.dir, 'config.yml')]);

    const cniConf = path.join(n.dir, 'cni-conf');
    await mkdir(cniConf, { recursive: true });
    const conf = this.cniConfig() as { plugins: [{ ipam: Record<string, unknown> }] };
    conf.plugins[0].ipam = {
      ...conf.plugins[0].ipam,
      ranges: [[{ subnet: n.podCidr, gateway: n.podGateway }]],
      dataDir: path.join(n.dir, 'cni-ipam'),
    };
    await writeFile(path.join(cniConf, '10-real-node.conflist'), JSON.stringify(conf, null, 2));
    const ownRun = path.join(n.dir, 'run');
    n.containerd = await TestContainerd.create(path.join(ownRun, 'containerd'), {
      sandboxImage: this.images!.pause,
      cni: { binDir: '/usr/lib/cni', confDir: cniConf },
      registryConfigPath: path.join(this.dir, 'registry-hosts'),
      // In the node's network namespace, and in a mount namespace of its own where node A's run directory is
      // this node's: the daemon DaemonSet has one hostPath for every node, and on each it must find that
      // node's containerd socket. A slave of the host's mounts, so kubelet's volume mounts still arrive.
      wrap: (command) => [
        'nsenter',
        net,
        'unshare',
        '--mount',
        '--propagation',
        'slave',
        'sh',
        '-c',
        'mount --bind "$1" "$2" && shift 2 && exec "$@"',
        'sh',
        ownRun,
        this.hostRunDir,
        ...command,
      ],
    });
    // containerd pulls from the registry copy, which may still be starting.
    const cri = new CriClient(n.containerd.socket);
    try {
      await waitFor(`${n.name}: pull ${this.images!.pause}`, () => cri.pullImage(this.images!.pause).then(() => true), 30_000, 200);
    } finally {
      cri.close();
    }

    await this.startKubelet({ name: n.name, ip: n.ip, dir: n.dir, socket: n.containerd.socket, cgroupRoot: n.cgroupRoot, netns: n.netns });
    // As node A's, in the node's own namespace: its rules go with it. Every node's pod range is in the cluster CIDR.
    const proxyConfig = await writeKubeProxyConfig(n.dir, {
      kubeconfig: this.plane!.kubeconfigPath,
      nodeName: n.name,
      nodeIp: n.ip,
      clusterCidr: '10.251.0.0/16',
    });
    this.spawnComponent(`kube-proxy-${n.name}`, 'nsenter', [net, this.assets.kubeProxy, `--config=${proxyConfig}`]);
    await this.waitForNodeReady(n.name, `kubelet-${n.name}`);
  }

  private async createStorageClasses(): Promise<void> {
    const kc = new KubeConfig();
    kc.loadFromFile(this.plane!.kubeconfigPath);
    const storage = kc.makeApiClient(StorageV1Api);
    for (const { name, isDefault, allowVolumeExpansion } of STORAGE_CLASSES) {
      const body: V1StorageClass = {
        metadata: { name, ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}) },
        provisioner: STORAGE_PROVISIONER,
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
        ...(allowVolumeExpansion === undefined ? {} : { allowVolumeExpansion }),
      };
      await storage.createStorageClass({ body });
    }
  }

  private async waitForNodeReady(name = NODE_NAME, kubeletLog = 'kubelet'): Promise<void> {
    const kc = new KubeConfig();
    kc.loadFromFile(this.plane!.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    await waitFor(
      `node ${name} Ready`,
      async () => {
        for (const component of this.components) {
          if (component.child.exitCode !== null)
            throw new Error(`${component.name} exited (${component.child.exitCode}):\n${this.logTail(component.name)}`);
        }
        const node = await core.readNode({ name });
        return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      },
      90_000,
      200,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n--- ${kubeletLog} log ---\n${this.logTail(kubeletLog)}`);
    });
  }
}

/** Where `ip netns add` keeps a namespace, for nsenter (which, unlike `ip netns exec`, keeps the host's mounts). */
function netnsPath(name: string): string {
  return path.join('/run/netns', name);
}

/**
 * A cgroup root for an extra node's kubelet in every cgroup v1 hierarchy (kubelet checks they exist), with the
 * cpuset hierarchy's cpus and mems copied from its root: a cpuset cgroup without them takes no tasks.
 */
async function createCgroupRoot(name: string): Promise<void> {
  const base = '/sys/fs/cgroup';
  for (const hierarchy of await readdir(base)) {
    const dir = path.join(base, hierarchy, name);
    await mkdir(dir, { recursive: true });
    if (hierarchy === 'cpuset') {
      for (const file of ['cpuset.cpus', 'cpuset.mems'])
        await writeFile(path.join(dir, file), await readFile(path.join(base, hierarchy, file)));
    }
  }
}

async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Writes a kube-proxy configuration (iptables mode) for one node into `dir`; returns its path. */
async function writeKubeProxyConfig(
  dir: string,
  node: { readonly kubeconfig: string; readonly nodeName: string; readonly nodeIp: string; readonly clusterCidr: string },
): Promise<string> {
  const file = path.join(dir, 'kube-proxy.yaml');
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      mode: 'iptables',
      clientConnection: { kubeconfig: node.kubeconfig },
      hostnameOverride: node.nodeName,
      bindAddress: node.nodeIp,
      healthzBindAddress: `127.0.0.1:${await freePort()}`,
      metricsBindAddress: `127.0.0.1:${await freePort()}`,
      clusterCIDR: node.clusterCidr,
      nodePortAddresses: [`${node.nodeIp}/32`],
      // Replies from a pod reached through a ClusterIP must come back through the node (pods share one bridge per node).
      iptables: { masqueradeAll: true, localhostNodePorts: false, syncPeriod: '5s', minSyncPeriod: '0s' },
      // 0 = leave the host's conntrack sysctls alone.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    }),
  );
  return file;
}

import { execFile, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CriClient } from '../../src/runtime/cri/client.js';
import { spawnLogged, stopProcess, waitFor } from './util.js';

const run = promisify(execFile);

export interface ContainerdOptions {
  /** Image the CRI plugin uses for pod sandboxes; must be pullable from a loopback registry. */
  readonly sandboxImage: string;
  /**
   * Pod networking through these CNI plugins and configs (a real node); default: an empty private
   * plugin/config directory, i.e. host-network pods only. Pod network namespaces are then mounted
   * under containerd's own state directory, and runc keeps its state in a private root.
   */
  readonly cni?: { readonly binDir: string; readonly confDir: string };
  /** The CRI plugin's registry `config_path`: `<dir>/<host>/hosts.toml` files redirecting pulls (mirrors). */
  readonly registryConfigPath?: string;
  /**
   * Wraps containerd's command line (e.g. to start it inside another node's network and mount namespaces);
   * the wrapper must exec containerd in the same process, so that stop() signals containerd itself.
   */
  readonly wrap?: (command: readonly string[]) => readonly string[];
}

/**
 * A private containerd (Debian package, CRI plugin) under `dir`: its own root, state, socket and
 * config, the native snapshotter (no overlay/devmapper on these machines), and the two settings a
 * sandbox needs here: `restrict_oom_score_adj` (no CAP_SYS_RESOURCE) and a locally pullable pause
 * image. Pods use host networking, so no CNI is configured.
 */
export class TestContainerd {
  private proc?: ChildProcess;
  readonly socket: string;

  private constructor(
    readonly dir: string,
    private readonly configPath: string,
    private readonly wrap?: ContainerdOptions['wrap'],
  ) {
    this.socket = join(dir, 'containerd.sock');
  }

  static async create(dir: string, options: ContainerdOptions): Promise<TestContainerd> {
    for (const sub of ['root', 'state', 'cni-conf', 'cni-bin', 'opt']) await mkdir(join(dir, sub), { recursive: true });
    const configPath = join(dir, 'config.toml');
    await writeFile(
      configPath,
      [
        'version = 2',
        `root = "${join(dir, 'root')}"`,
        `state = "${join(dir, 'state')}"`,
        '[grpc]',
        `  address = "${join(dir, 'containerd.sock')}"`,
        '[ttrpc]',
        `  address = "${join(dir, 'containerd.sock.ttrpc')}"`,
        '[debug]',
        '  level = "info"',
        '[plugins."io.containerd.internal.v1.opt"]',
        `  path = "${join(dir, 'opt')}"`,
        '[plugins."io.containerd.grpc.v1.cri"]',
        `  sandbox_image = "${options.sandboxImage}"`,
        '  restrict_oom_score_adj = true',
        '  stream_server_address = "127.0.0.1"',
        ...(options.cni ? ['  netns_mounts_under_state_dir = true'] : []),
        '  [plugins."io.containerd.grpc.v1.cri".containerd]',
        '    snapshotter = "native"',
        ...(options.cni
          ? [
              '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
              '      runtime_type = "io.containerd.runc.v2"',
              '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
              `      Root = "${join(dir, 'runc')}"`,
            ]
          : []),
        '  [plugins."io.containerd.grpc.v1.cri".cni]',
        `    bin_dir = "${options.cni?.binDir ?? join(dir, 'cni-bin')}"`,
        `    conf_dir = "${options.cni?.confDir ?? join(dir, 'cni-conf')}"`,
        ...(options.registryConfigPath
          ? ['  [plugins."io.containerd.grpc.v1.cri".registry]', `    config_path = "${options.registryConfigPath}"`]
          : []),
        '',
      ].join('\n'),
    );
    const containerd = new TestContainerd(dir, configPath, options.wrap);
    await containerd.start();
    return containerd;
  }

  /** containerd's process id while it runs (for memory figures). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running(): boolean {
    return this.proc !== undefined;
  }

  async start(): Promise<void> {
    if (this.proc) return;
    const [command, ...args] = (this.wrap ?? ((c) => c))(['containerd', '--config', this.configPath]);
    const proc = spawnLogged(command!, args, join(this.dir, 'containerd.log'));
    this.proc = proc;
    proc.once('exit', () => {
      if (this.proc === proc) this.proc = undefined;
    });
    const client = new CriClient(this.socket, { callTimeoutMs: 2000 });
    try {
      await waitFor(
        'containerd CRI to answer Version',
        async () => {
          if (!this.proc) throw new Error(`containerd exited; see ${join(this.dir, 'containerd.log')}`);
          await client.version();
          return true;
        },
        60_000,
        200,
      );
    } finally {
      client.close();
    }
  }

  /** Stops the containerd process only: like a runtime restart, shims and containers live on. */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.proc = undefined;
    await stopProcess(proc, 10_000);
  }

  /** Runs `ctr` against this containerd, in the CRI's `k8s.io` namespace. */
  ctr(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
    return run('ctr', ['--address', this.socket, '--namespace', 'k8s.io', ...args], { maxBuffer: 16 * 1024 * 1024 });
  }

  /**
   * Full teardown: removes every sandbox through CRI (so runc stops the containers), stops
   * containerd, ends any shim this containerd started (matched by our private socket path in its
   * command line, killed by pid) and unmounts what is left under `dir`.
   */
  async destroy(): Promise<void> {
    if (this.proc) {
      const client = new CriClient(this.socket, { callTimeoutMs: 20_000 });
      try {
        for (const sandbox of await client.listPodSandbox()) {
          await client.stopPodSandbox(sandbox.id).catch(() => undefined);
          await client.removePodSandbox(sandbox.id).catch(() => undefined);
        }
      } catch {
        // containerd unhealthy: fall through to killing its shims.
      } finally {
        client.close();
      }
    }
    await this.stop();
    for (const pid of await processesMentioning(this.socket)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    const mounts = (await readFile('/proc/self/mounts', 'utf8'))
      .split('\n')
      .map((line) => line.split(' ')[1] ?? '')
      .filter((mnt) => mnt.startsWith(this.dir + '/'))
      .sort((a, b) => b.length - a.length);
    for (const mnt of mounts) await run('umount', ['-l', mnt]).catch(() => undefined);
  }
}

async function processesMentioning(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(needle)) pids.push(Number(entry));
  }
  return pids;
}

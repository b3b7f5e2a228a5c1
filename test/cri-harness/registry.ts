import { execFile, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, spawnLogged, stopProcess, waitFor } from './util.js';

const run = promisify(execFile);

export interface RegistryOptions {
  /** Require HTTP basic auth with this user (htpasswd, bcrypt). */
  readonly auth?: { username: string; password: string };
}

/**
 * A real Docker distribution registry (Debian `docker-registry`) on a random loopback port.
 * Loopback registries are plain HTTP for containerd and skopeo (with --tls-verify=false).
 * `stop()`/`start()` take it down and bring it back on the same port with the same data, for the
 * "registry is down" cases.
 */
export class TestRegistry {
  private proc?: ChildProcess;
  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly auth: RegistryOptions['auth'],
    private readonly configPath: string,
  ) {}

  /** host:port, the image-name prefix, e.g. `${registry.host}/test/busybox:1`. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  static async create(dir: string, options: RegistryOptions = {}): Promise<TestRegistry> {
    await mkdir(join(dir, 'data'), { recursive: true });
    const port = await freePort();
    let authBlock = '';
    if (options.auth) {
      const { stdout } = await run('htpasswd', ['-Bbn', options.auth.username, options.auth.password]);
      await writeFile(join(dir, 'htpasswd'), stdout);
      authBlock = `auth:\n  htpasswd:\n    realm: cdk8s-kruise-test\n    path: ${join(dir, 'htpasswd')}\n`;
    }
    const configPath = join(dir, 'config.yml');
    await writeFile(
      configPath,
      `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'data')}\n  delete:\n    enabled: true\n` +
        `http:\n  addr: 127.0.0.1:${port}\n${authBlock}`,
    );
    const registry = new TestRegistry(dir, port, options.auth, configPath);
    await registry.start();
    return registry;
  }

  async start(): Promise<void> {
    if (this.proc) return;
    const proc = spawnLogged('docker-registry', ['serve', this.configPath], join(this.dir, 'registry.log'));
    this.proc = proc;
    proc.once('exit', () => {
      if (this.proc === proc) this.proc = undefined;
    });
    await waitFor(`registry on ${this.host}`, async () => {
      if (!this.proc) throw new Error(`docker-registry exited; see ${join(this.dir, 'registry.log')}`);
      const res = await fetch(`http://${this.host}/v2/`);
      return res.status === 200 || res.status === 401;
    });
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.proc = undefined;
    await stopProcess(proc, 5000);
  }
}

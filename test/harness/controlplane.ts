// Starts a real etcd + kube-apiserver on loopback, configured like controller-runtime's envtest:
// own CA, admin client certificate in system:masters, RBAC authorization, ServiceAccount admission
// off (no controller-manager creates default ServiceAccounts). Nothing else runs: no scheduler, no
// garbage collector, no namespace controller.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, openSync, closeSync, readFileSync, unlinkSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findAssets, type ControlPlaneAssets } from './assets.js';
import { createCertificateAuthority, generateKeyPairPem, type CertificateAuthority, type KeyPairPem } from './pki.js';

const LOOPBACK = '127.0.0.1';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;

/** Loopback requests (the apiserver calling test webhooks, clients calling it) must never go via a proxy. */
export function bypassProxyForLoopback(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of ['NO_PROXY', 'no_proxy']) {
    const entries = new Set((env[name] ?? '').split(',').filter(Boolean));
    entries.add(LOOPBACK).add('localhost');
    env[name] = [...entries].join(',');
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

type ComponentName = 'etcd' | 'kube-apiserver';

interface Managed {
  readonly name: ComponentName;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

export interface ControlPlaneOptions {
  /** Binaries to run; defaults to findAssets(). */
  readonly assets?: ControlPlaneAssets;
  /** Extra kube-apiserver flags (`--name=value`), appended after the defaults. */
  readonly apiServerFlags?: readonly string[];
  /**
   * Address kube-apiserver binds to and advertises (default 127.0.0.1). A real node's pods reach the
   * apiserver through the `kubernetes` Service, so it must be an address they can route to (a pod's
   * own loopback is not the host's).
   */
  readonly address?: string;
  /** Keep the ServiceAccount admission plugin on (a controller-manager then creates the accounts). */
  readonly serviceAccountAdmission?: boolean;
  /**
   * Authorize kubelets with the Node authorizer (before RBAC) and limit their writes with the
   * NodeRestriction admission plugin, as a real cluster does.
   */
  readonly nodeAuthorization?: boolean;
  /** Extra environment of the kube-apiserver process (on top of this process's). */
  readonly apiServerEnv?: Readonly<Record<string, string>>;
}

export class ControlPlane {
  /** Starts etcd and kube-apiserver and waits until /readyz passes. Retries on port clashes. */
  static async start(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const plane = new ControlPlane(
        options.assets ?? findAssets(),
        options.apiServerFlags ?? [],
        options.address ?? LOOPBACK,
        options.serviceAccountAdmission ?? false,
        options.nodeAuthorization ?? false,
        options.apiServerEnv ?? {},
      );
      try {
        await plane.init();
        return plane;
      } catch (error) {
        lastError = error;
        await plane.stop();
      }
    }
    throw lastError;
  }

  /** Temporary directory holding certificates, etcd data, logs and the kubeconfig. */
  readonly dir: string;
  /** Path of a kubeconfig for the admin user (client certificate, group system:masters). */
  readonly kubeconfigPath: string;
  private server = '';
  private etcdUrl = '';
  private ca?: CertificateAuthority;
  private admin?: KeyPairPem;
  private etcd?: Managed;
  private apiserver?: Managed;
  private apiServerArgs: string[] = [];
  private reaper?: ChildProcess;
  private readonly exitHandler = () => this.killNow();

  private constructor(
    readonly assets: ControlPlaneAssets,
    private readonly extraFlags: readonly string[],
    /** The address kube-apiserver binds to and advertises. */
    readonly address: string,
    private readonly serviceAccountAdmission: boolean,
    private readonly nodeAuthorization: boolean,
    private readonly apiServerEnv: Readonly<Record<string, string>>,
  ) {
    this.dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-controlplane-'));
    this.kubeconfigPath = path.join(this.dir, 'kubeconfig');
  }

  /** https://127.0.0.1:<port> */
  get url(): string {
    return this.server;
  }

  /** PEM of the CA that signed the serving and admin certificates. */
  get caCert(): string {
    return this.ca!.cert;
  }

  /** The CA that signed the serving and admin certificates, to issue more (e.g. a kubelet's identity). */
  get certificateAuthority(): CertificateAuthority {
    return this.ca!;
  }

  /** Private key that signs service-account tokens (kube-controller-manager needs it too). */
  get serviceAccountKeyPath(): string {
    return path.join(this.dir, 'sa.key');
  }

  private file(name: string, content: string): string {
    const file = path.join(this.dir, name);
    writeFileSync(file, content, { mode: 0o600 });
    return file;
  }

  private async init(): Promise<void> {
    bypassProxyForLoopback();
    process.once('exit', this.exitHandler);
    this.startReaper();

    const ca = await createCertificateAuthority();
    const serving = await ca.issue({
      commonName: 'kube-apiserver',
      // 10.0.0.1: the `kubernetes` Service's ClusterIP (first address of the service range below),
      // which in-cluster clients dial.
      ips: [...new Set([LOOPBACK, this.address, '10.0.0.1'])],
      dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
      usage: 'server',
    });
    const admin = await ca.issue({ commonName: 'admin', organizations: ['system:masters'], usage: 'client' });
    const sa = await generateKeyPairPem();
    const kubeletClient = this.nodeAuthorization
      ? await ca.issue({ commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'], usage: 'client' })
      : undefined;
    this.ca = ca;
    this.admin = admin;

    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    this.etcdUrl = `http://${LOOPBACK}:${etcdPort}`;
    const peerUrl = `http://${LOOPBACK}:${peerPort}`;
    this.server = `https://${this.address}:${apiPort}`;

    this.etcd = this.spawn('etcd', this.assets.etcd, [
      `--name=default`,
      `--data-dir=${path.join(this.dir, 'etcd')}`,
      `--listen-client-urls=${this.etcdUrl}`,
      `--advertise-client-urls=${this.etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=default=${peerUrl}`,
      `--unsafe-no-fsync=true`,
      `--log-level=warn`,
    ]);
    await this.waitFor('etcd', this.etcd, () => this.etcdHealthy());

    this.apiServerArgs = [
      `--etcd-servers=${this.etcdUrl}`,
      `--cert-dir=${path.join(this.dir, 'apiserver-certs')}`,
      `--tls-cert-file=${this.file('apiserver.crt', serving.cert)}`,
      `--tls-private-key-file=${this.file('apiserver.key', serving.key)}`,
      `--client-ca-file=${this.file('ca.crt', ca.cert)}`,
      `--secure-port=${apiPort}`,
      `--bind-address=${this.address}`,
      `--advertise-address=${this.address}`,
      ...(this.nodeAuthorization
        ? [
            `--authorization-mode=Node,RBAC`,
            `--enable-admission-plugins=NodeRestriction`,
            // exec, logs and port-forward go from here to the kubelet: by the node's IP (its name is in no DNS),
            // with a client certificate of this CA, the only client identity the kubelet accepts.
            `--kubelet-preferred-address-types=InternalIP,Hostname`,
            `--kubelet-client-certificate=${this.file('kubelet-client.crt', kubeletClient!.cert)}`,
            `--kubelet-client-key=${this.file('kubelet-client.key', kubeletClient!.key)}`,
          ]
        : [`--authorization-mode=RBAC`]),
      `--service-cluster-ip-range=10.0.0.0/24`,
      `--allow-privileged=true`,
      ...(this.serviceAccountAdmission ? [] : [`--disable-admission-plugins=ServiceAccount`]),
      `--service-account-issuer=${this.server}/`,
      `--service-account-key-file=${this.file('sa.pub', sa.publicKey)}`,
      `--service-account-signing-key-file=${this.file('sa.key', sa.privateKey)}`,
      `--profiling=false`,
      ...this.extraFlags,
    ];
    this.writeKubeconfig();
    await this.startApiServer();
  }

  /** Starts kube-apiserver (again) with the same flags and port; resolves once /readyz passes. */
  async startApiServer(): Promise<void> {
    if (this.apiserver) throw new Error('kube-apiserver is already running');
    const started = Date.now();
    this.apiserver = this.spawn('kube-apiserver', this.assets.kubeApiserver, this.apiServerArgs);
    await this.waitFor('kube-apiserver', this.apiserver, () => this.apiServerReady());
    this.lastStartMs = Date.now() - started;
  }

  /** How long the last kube-apiserver start took until /readyz passed. */
  lastStartMs = 0;

  /** Stops kube-apiserver (SIGTERM, then SIGKILL); etcd and its data stay. */
  async stopApiServer(): Promise<void> {
    const managed = this.apiserver;
    this.apiserver = undefined;
    if (managed) await this.terminate(managed);
  }

  async restartApiServer(): Promise<void> {
    await this.stopApiServer();
    await this.startApiServer();
  }

  /** Stops everything and removes the temporary directory. Safe to call more than once. */
  async stop(): Promise<void> {
    await this.stopApiServer();
    const etcd = this.etcd;
    this.etcd = undefined;
    if (etcd) await this.terminate(etcd);
    this.reaper?.kill('SIGKILL');
    this.reaper = undefined;
    process.removeListener('exit', this.exitHandler);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Last lines of a component's log, for error messages. */
  /** Process ids of the running etcd and kube-apiserver (for benches that charge them CPU). */
  pids(): { readonly etcd?: number; readonly apiserver?: number } {
    return { etcd: this.etcd?.child.pid, apiserver: this.apiserver?.child.pid };
  }

  logTail(name: ComponentName, lines = 30): string {
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

  private spawn(name: ComponentName, binary: string, args: string[]): Managed {
    const log = openSync(path.join(this.dir, `${name}.log`), 'a');
    const env = name === 'kube-apiserver' ? { ...process.env, ...this.apiServerEnv } : process.env;
    const child = spawn(binary, args, { stdio: ['ignore', log, log], env });
    closeSync(log);
    const pidFile = path.join(this.dir, `${name}.pid`);
    if (child.pid) writeFileSync(pidFile, String(child.pid));
    const exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        try {
          unlinkSync(pidFile);
        } catch {
          /* already removed with the directory */
        }
        resolve();
      }),
    );
    child.once('error', () => undefined);
    return { name, child, exited };
  }

  private async terminate(managed: Managed): Promise<void> {
    if (managed.child.exitCode !== null || managed.child.signalCode !== null) return;
    managed.child.kill('SIGTERM');
    const timer = new AbortController();
    const timedOut = await Promise.race([
      managed.exited.then(() => false),
      sleep(STOP_TIMEOUT_MS, true, { signal: timer.signal }).catch(() => false),
    ]);
    timer.abort();
    if (timedOut) {
      managed.child.kill('SIGKILL');
      await managed.exited;
    }
  }

  private async waitFor(name: ComponentName, managed: Managed, ready: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (managed.child.exitCode !== null || managed.child.signalCode !== null) {
        throw new Error(`${name} exited (${managed.child.exitCode ?? managed.child.signalCode}) while starting:\n${this.logTail(name)}`);
      }
      if (await ready().catch(() => false)) return;
      await sleep(200);
    }
    throw new Error(`${name} not ready after ${START_TIMEOUT_MS / 1000}s:\n${this.logTail(name)}`);
  }

  private etcdHealthy(): Promise<boolean> {
    return new Promise((resolve) => {
      const req = http.get(`${this.etcdUrl}/health`, { timeout: 2000 }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(res.statusCode === 200 && body.includes('"health":"true"')));
      });
      req.on('error', () => resolve(false));
      req.on('timeout', () => req.destroy());
    });
  }

  private apiServerReady(): Promise<boolean> {
    return new Promise((resolve) => {
      const req = https.get(
        `${this.server}/readyz`,
        { ca: this.ca!.cert, cert: this.admin!.cert, key: this.admin!.key, timeout: 2000, agent: false },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200));
        },
      );
      req.on('error', () => resolve(false));
      req.on('timeout', () => req.destroy());
    });
  }

  private writeKubeconfig(): void {
    const b64 = (pem: string) => Buffer.from(pem).toString('base64');
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: this.server, 'certificate-authority-data': b64(this.ca!.cert) } }],
      users: [{ name: 'admin', user: { 'client-certificate-data': b64(this.admin!.cert), 'client-key-data': b64(this.admin!.key) } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'admin', namespace: 'default' } }],
      'current-context': 'test',
    };
    this.file('kubeconfig', JSON.stringify(config, null, 2));
  }

  // If this process dies without running stop() (SIGKILL, crash, vitest killed), a detached watchdog
  // kills the recorded child pids and removes the directory, so no apiserver outlives the test run.
  private startReaper(): void {
    const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done
for f in "$0"/*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
rm -rf "$0"`;
    this.reaper = spawn('bash', ['-c', script, this.dir], { detached: true, stdio: 'ignore' });
    this.reaper.unref();
  }

  // Synchronous last resort on process exit (no awaiting possible there).
  private killNow(): void {
    for (const managed of [this.apiserver, this.etcd]) {
      if (managed && managed.child.exitCode === null) managed.child.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// A bandwidth-limited TCP proxy for a loopback registry: put it in front of `TestRegistry` so an image
// pull lasts long enough to take the puller away mid-way. Server → client bytes are paced to a fixed rate
// (a token bucket per connection: after each chunk the upstream is paused for as long as the chunk takes at
// that rate); client → server bytes pass at once. Loopback only, like the fault proxy.
import net, { type Socket } from 'node:net';

export interface ThrottleProxyStats {
  /** Connections accepted. */
  connections: number;
  /** Server → client bytes delivered, all connections. */
  bytesToClient: number;
}

export class ThrottleProxy {
  readonly stats: ThrottleProxyStats = { connections: 0, bytesToClient: 0 };
  private readonly sockets = new Set<Socket>();
  private server?: net.Server;
  port = 0;

  private constructor(
    readonly target: { host: string; port: number },
    readonly bytesPerSecond: number,
  ) {}

  /** Starts a proxy on 127.0.0.1 in front of `target` (`host:port` on loopback), at most `bytesPerSecond` per connection. */
  static async start(target: string, bytesPerSecond: number): Promise<ThrottleProxy> {
    const match = /^(127\.0\.0\.1|localhost):(\d+)$/.exec(target);
    if (!match) throw new Error(`throttle proxy: ${target} is not a loopback host:port`);
    if (!Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) throw new Error(`throttle proxy: rate ${bytesPerSecond} is not positive`);
    const p = new ThrottleProxy({ host: match[1]!, port: Number(match[2]) }, bytesPerSecond);
    p.server = net.createServer((client) => p.accept(client));
    await new Promise<void>((resolve, reject) => {
      p.server!.once('error', reject);
      p.server!.listen(0, '127.0.0.1', () => resolve());
    });
    p.port = (p.server.address() as net.AddressInfo).port;
    return p;
  }

  /** host:port of the proxy, the image-name prefix of a throttled pull. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  private accept(client: Socket): void {
    this.stats.connections++;
    const upstream = net.connect(this.target);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    }
    let timer: NodeJS.Timeout | undefined;
    const close = () => {
      clearTimeout(timer);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
    client.pipe(upstream);
    // Pacing: each chunk is written at once, then nothing more is read from the server until the chunk's
    // share of the rate has elapsed, so the average never exceeds the rate by more than one chunk.
    upstream.on('data', (chunk: Buffer) => {
      this.stats.bytesToClient += chunk.length;
      client.write(chunk);
      upstream.pause();
      timer = setTimeout(() => upstream.resume(), (chunk.length / this.bytesPerSecond) * 1000);
    });
    upstream.on('end', () => client.end());
  }

  async close(): Promise<void> {
    for (const s of [...this.sockets]) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

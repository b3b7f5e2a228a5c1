// A TCP fault proxy for e2e tests: put it between one client (a manager) and the real API server, then cut
// the client off in the ways networks fail. Bytes pass through untouched (TLS end to end). Loopback only:
// it listens on 127.0.0.1 and forwards only to a loopback address.
//
//   const proxy = await FaultProxy.start(apiServerUrl);    // proxy.url: the same scheme on the proxy's port
//   proxy.stall();      // partition: nothing passes either way, on open or new connections; connects hang
//   proxy.heal();       // what was held is delivered, for connections still alive
//   proxy.reset();      // every open connection is reset (RST both ways)
//   proxy.silenceExisting(); // open connections go silent for good (half-open); new ones pass
//   proxy.silenceNextConnections(1); // the next connection is accepted and never answered
//
// While stalled, the proxy holds what each side sent, as the network would: a client that then closes
// with FIN still has its bytes delivered after the heal (its kernel retransmits them), one that resets
// (RST) loses them (its kernel drops them) and the server side is reset at the heal. `stats` counts both.
import net, { type Socket } from 'node:net';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '[::1]']);

export interface FaultProxyStats {
  /** Connections accepted. */
  connections: number;
  /** Client bytes held by a stall and then dropped because the client reset the connection. */
  droppedClientBytes: number;
  /** Connections the client reset while their bytes were held. */
  resetWhileHeld: number;
  /** Client bytes held by a stall and delivered at the heal. */
  deliveredAfterHeal: number;
  /** Bytes dropped on silenced connections (both ways). */
  silencedBytes: number;
}

class Link {
  upstream?: Socket;
  /** Client → server bytes held (stall, or upstream not yet connected). */
  toServer: Buffer[] = [];
  /** Server → client bytes held. */
  toClient: Buffer[] = [];
  clientEnded = false;
  serverEnded = false;
  /** The client reset the connection while its bytes were held: they are dropped, the server is reset at the heal. */
  clientReset = false;
  /** The server reset the connection while the stall held it: the client is reset at the heal. */
  serverReset = false;
  silenced = false;
  closed = false;

  constructor(
    readonly client: Socket,
    private readonly proxy: FaultProxy,
  ) {}

  private connectUpstream(): void {
    const up = net.connect({ host: this.proxy.target.host, port: this.proxy.target.port, allowHalfOpen: true });
    this.upstream = up;
    up.on('connect', () => this.flush());
    up.on('data', (b: Buffer) => this.fromServer(b));
    up.on('end', () => {
      this.serverEnded = true;
      this.flush();
    });
    up.on('error', () => {
      if (this.proxy.stalled) this.serverReset = true;
      else this.reset();
    });
    up.on('close', () => this.flush());
  }

  fromClient(b: Buffer): void {
    if (this.silenced) this.proxy.stats.silencedBytes += b.length;
    else {
      this.toServer.push(b);
      this.flush();
    }
  }

  fromServer(b: Buffer): void {
    if (this.silenced) this.proxy.stats.silencedBytes += b.length;
    else {
      this.toClient.push(b);
      this.flush();
    }
  }

  onClientError(e: NodeJS.ErrnoException): void {
    if (this.proxy.stalled && !this.silenced && e.code === 'ECONNRESET') {
      // Behind a partition the reset never reaches the server, and the bytes the client's kernel still held go with it.
      this.clientReset = true;
      this.proxy.stats.resetWhileHeld++;
      return;
    }
    this.reset();
  }

  onClientClose(): void {
    if (this.silenced) this.finish();
    else this.flush();
  }

  /** Moves what is held and passes ends on, unless stalled or silenced. */
  flush(): void {
    if (this.closed || this.proxy.stalled || this.silenced) return;
    if (this.clientReset || this.serverReset) {
      if (this.clientReset) this.proxy.stats.droppedClientBytes += this.toServer.reduce((n, b) => n + b.length, 0);
      this.reset();
      return;
    }
    const up = this.upstream;
    if (!up) {
      this.connectUpstream();
      return;
    }
    if (up.connecting) return;
    const client = this.client;
    for (const b of this.toServer.splice(0)) {
      if (up.destroyed || up.writableEnded) continue;
      if (this.proxy.healed) this.proxy.stats.deliveredAfterHeal += b.length;
      up.write(b);
    }
    for (const b of this.toClient.splice(0)) if (!client.destroyed && !client.writableEnded) client.write(b);
    // A client that closed (FIN) still has what it sent delivered, then the server sees the FIN.
    if ((this.clientEnded || client.destroyed) && !up.writableEnded && !up.destroyed) up.end();
    if ((this.serverEnded || up.destroyed) && !client.writableEnded && !client.destroyed) client.end();
    if ((client.destroyed || (this.clientEnded && client.writableEnded)) && (up.destroyed || (this.serverEnded && up.writableEnded))) {
      this.finish();
    }
  }

  /** Resets both sides now. */
  reset(): void {
    if (this.closed) return;
    if (!this.client.destroyed) this.client.resetAndDestroy();
    if (this.upstream && !this.upstream.destroyed) this.upstream.resetAndDestroy();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.destroy();
    this.upstream?.destroy();
    this.proxy.links.delete(this);
  }
}

export class FaultProxy {
  readonly links = new Set<Link>();
  readonly stats: FaultProxyStats = { connections: 0, droppedClientBytes: 0, resetWhileHeld: 0, deliveredAfterHeal: 0, silencedBytes: 0 };
  stalled = false;
  /** How many of the next connections go silent from their first byte (`silenceNextConnections`). */
  private silenceNew = 0;
  /** True once a stall was healed (bytes delivered from then on were held by it, or came after). */
  healed = false;
  readonly target: { host: string; port: number };
  private server?: net.Server;
  private scheme = 'https:';
  port = 0;

  private constructor(target: URL) {
    const host = target.hostname;
    if (!LOOPBACK.has(host)) throw new Error(`fault proxy: ${host} is not a loopback address`);
    this.scheme = target.protocol;
    this.target = { host: host.replace(/^\[|\]$/g, ''), port: Number(target.port || (target.protocol === 'https:' ? 443 : 80)) };
  }

  /** Starts a proxy on 127.0.0.1 in front of `target` (an http(s) URL on loopback). */
  static async start(target: string): Promise<FaultProxy> {
    const p = new FaultProxy(new URL(target));
    p.server = net.createServer({ allowHalfOpen: true }, (client) => p.accept(client));
    await new Promise<void>((resolve, reject) => {
      p.server!.once('error', reject);
      p.server!.listen(0, '127.0.0.1', () => resolve());
    });
    p.port = (p.server.address() as net.AddressInfo).port;
    return p;
  }

  /** The proxy's address, with the target's scheme. */
  get url(): string {
    return `${this.scheme}//127.0.0.1:${this.port}`;
  }

  private accept(client: Socket): void {
    this.stats.connections++;
    const link = new Link(client, this);
    if (this.silenceNew > 0) {
      this.silenceNew--;
      link.silenced = true;
    }
    this.links.add(link);
    client.on('data', (b: Buffer) => link.fromClient(b));
    client.on('end', () => {
      link.clientEnded = true;
      link.flush();
    });
    client.on('error', (e: NodeJS.ErrnoException) => link.onClientError(e));
    client.on('close', () => link.onClientClose());
    link.flush();
  }

  /** Nothing passes either way on open connections; new connections are accepted but never reach the server. */
  stall(): void {
    this.stalled = true;
  }

  /** Ends a stall: held bytes are delivered on connections still alive; connections the client reset are reset. */
  heal(): void {
    this.stalled = false;
    this.healed = true;
    for (const l of [...this.links]) l.flush();
  }

  /** Resets every open connection, both ways. */
  reset(): void {
    for (const l of [...this.links]) l.reset();
  }

  /** Open connections go silent (bytes dropped both ways, nothing closed); new connections pass. */
  silenceExisting(): void {
    for (const l of this.links) l.silenced = true;
  }

  /** The next `n` connections are accepted and then silent from their first byte: a call made on one hangs. */
  silenceNextConnections(n: number): void {
    this.silenceNew += n;
  }

  async close(): Promise<void> {
    for (const l of [...this.links]) l.reset();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

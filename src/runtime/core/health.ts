import { createServer, type Server } from 'node:http';
import type { RuntimeMetrics } from './metrics.js';

/** A named readiness/liveness check: returns undefined when fine, else the reason. */
export type Check = () => string | undefined;

/**
 * Plain-HTTP server for probes and metrics: /healthz (process alive and event loop turning), /readyz
 * (every registered check passes: caches synced, leader-or-standby, webhook serving), /metrics.
 */
export class HealthServer {
  private readonly servers: Server[] = [];
  private readonly readyChecks = new Map<string, Check>();
  private readonly liveChecks = new Map<string, Check>();

  constructor(private readonly metrics: RuntimeMetrics) {}

  addReadyCheck(name: string, c: Check): void {
    this.readyChecks.set(name, c);
  }

  addLiveCheck(name: string, c: Check): void {
    this.liveChecks.set(name, c);
  }

  private run(checks: Map<string, Check>): { ok: boolean; text: string } {
    const lines: string[] = [];
    let ok = true;
    for (const [name, c] of checks) {
      let why: string | undefined;
      try {
        why = c();
      } catch (err) {
        why = (err as Error).message;
      }
      if (why) ok = false;
      lines.push(why ? `[-]${name} failed: ${why}` : `[+]${name} ok`);
    }
    lines.push(ok ? 'ok' : 'check failed');
    return { ok, text: lines.join('\n') + '\n' };
  }

  async listen(addr: string): Promise<number> {
    const { host, port } = parseAddr(addr);
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/healthz' || path === '/livez' || path === '/readyz') {
        const r = this.run(path === '/readyz' ? this.readyChecks : this.liveChecks);
        res.writeHead(r.ok ? 200 : 503, { 'content-type': 'text/plain' }).end(r.text);
        return;
      }
      if (path === '/metrics') {
        this.metrics.registry.metrics().then(
          (body) => res.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(body),
          (err: Error) => res.writeHead(500).end(err.message),
        );
        return;
      }
      res.writeHead(404).end('not found\n');
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.servers.push(server);
    const a = server.address();
    return typeof a === 'object' && a ? a.port : port;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.servers.splice(0).map(
        (s) =>
          new Promise<void>((r) => {
            s.close(() => r());
            s.closeAllConnections();
          }),
      ),
    );
  }
}

/** Parses `:8080`, `127.0.0.1:0`, `[::1]:9876` into host and port (empty host = all interfaces). */
export function parseAddr(addr: string): { host?: string; port: number } {
  const m = /^(?:\[?([^\]]*)\]?)?:(\d+)$/.exec(addr);
  if (!m) throw new Error(`invalid listen address "${addr}": expected [host]:port, e.g. ":8080" or "127.0.0.1:0"`);
  return { host: m[1] || undefined, port: Number(m[2]) };
}

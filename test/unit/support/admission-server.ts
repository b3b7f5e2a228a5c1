// A real AdmissionServer on loopback with a freshly issued certificate, and a small HTTPS client that can
// send any bytes (hostile-input tests and the webhook stress benchmark share it).
import { request, type Agent } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';
import { pino } from 'pino';
import { createCA, issueServingCert } from '../../../src/runtime/core/webhook/cert-issuer.js';
import { DEFAULT_ADMISSION_SERVER_LIMITS, type AdmissionServerLimits } from '../../../src/runtime/core/webhook/limits.js';
import { AdmissionServer, type AdmissionHandler } from '../../../src/runtime/core/webhook/server.js';
import { RuntimeMetrics } from '../../../src/runtime/core/metrics.js';

export interface RunningServer {
  readonly server: AdmissionServer;
  readonly port: number;
  readonly ca: string;
  readonly logs: string[];
  close(): Promise<void>;
}

let caCache: Promise<{ ca: { caCert: string; caKey: string }; serving: { cert: string; key: string } }> | undefined;

/** One CA and serving certificate per process (ECDSA key generation is cheap, but not free). */
export function testCertificates() {
  caCache ??= (async () => {
    const ca = await createCA(3600_000);
    return { ca, serving: await issueServingCert(ca, ['127.0.0.1', 'localhost'], 3600_000) };
  })();
  return caCache;
}

export async function startAdmissionServer(
  handlers: AdmissionHandler[],
  limits: Partial<AdmissionServerLimits> = {},
): Promise<RunningServer> {
  const { ca, serving } = await testCertificates();
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });
  const server = new AdmissionServer(logger, new RuntimeMetrics(), { ...DEFAULT_ADMISSION_SERVER_LIMITS, ...limits });
  for (const h of handlers) server.register(h);
  server.setCertificate(serving.cert, serving.key);
  const port = await server.listen(0, '127.0.0.1');
  return { server, port, ca: ca.caCert, logs, close: () => server.close() };
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly json?: any;
}

/** POSTs `body` (string or bytes, sent as-is) and returns the answer; rejects only on connection errors. */
export function post(
  s: Pick<RunningServer, 'port' | 'ca'>,
  path: string,
  body: string | Buffer,
  opts: { headers?: Record<string, string>; agent?: Agent | false; method?: string; chunked?: boolean } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(opts.headers ?? {}) };
    if (!opts.chunked && headers['content-length'] === undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const req = request(
      {
        host: '127.0.0.1',
        port: s.port,
        path,
        method: opts.method ?? 'POST',
        ca: s.ca,
        servername: 'localhost',
        headers,
        agent: opts.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A raw TLS connection to the server (for slow or partial requests). */
export function rawConnect(s: Pick<RunningServer, 'port' | 'ca'>): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port: s.port, ca: s.ca, servername: 'localhost' }, () => resolve(sock));
    sock.once('error', reject);
  });
}

/** Resolves when the peer closes `sock`, with everything it sent. */
export function untilClosed(sock: TLSSocket): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', () => undefined);
    sock.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** A well-formed AdmissionReview v1 for `object`. */
export function review(object: Record<string, unknown>, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'e911857d-c318-11e8-bbad-025000000001',
      kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: typeof object.kind === 'string' ? object.kind : 'SidecarSet' },
      resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'sidecarsets' },
      operation: 'CREATE',
      object,
      ...over,
    },
  };
}

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { RuntimeMetrics } from '../metrics.js';
import type { KubeObject } from '../types.js';

/** admission.k8s.io/v1 AdmissionRequest (the fields handlers read). */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo?: { username?: string; groups?: string[] };
  object?: KubeObject;
  oldObject?: KubeObject;
  dryRun?: boolean;
}

/** One RFC 6902 operation. */
export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'test';
  path: string;
  value?: unknown;
}

export type AdmissionResult =
  | { allowed: true; patch?: JsonPatchOp[]; warnings?: string[] }
  | { allowed: false; code?: number; reason?: string; message: string };

/** A webhook endpoint, as registered in src/runtime/manager/registry.ts. */
export interface AdmissionHandler {
  /** Metric/log label, e.g. `mcontainerrecreaterequest`. */
  readonly name: string;
  /** URL path, e.g. `/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest`. */
  readonly path: string;
  readonly type: 'mutating' | 'validating';
  handle(req: AdmissionRequest): Promise<AdmissionResult>;
}

const MAX_BODY = 3 * 1024 * 1024;

/**
 * HTTPS server answering AdmissionReview v1. The serving certificate can be swapped at any time
 * (`setCertificate`): new TLS handshakes get the new one, established connections finish undisturbed.
 */
export class AdmissionServer {
  private readonly handlers = new Map<string, AdmissionHandler>();
  private server?: Server;
  private current?: { cert: string; key: string };

  constructor(
    private readonly logger: Logger,
    private readonly metrics: RuntimeMetrics,
  ) {}

  register(h: AdmissionHandler): void {
    if (this.handlers.has(h.path)) throw new Error(`webhook path ${h.path} registered twice`);
    this.handlers.set(h.path, h);
  }

  paths(): string[] {
    return [...this.handlers.keys()];
  }

  hasCertificate(): boolean {
    return this.current !== undefined;
  }

  isListening(): boolean {
    return this.server?.listening ?? false;
  }

  servingCertificate(): string | undefined {
    return this.current?.cert;
  }

  setCertificate(cert: string, key: string): void {
    if (this.current?.cert === cert) return;
    this.current = { cert, key };
    this.server?.setSecureContext({ cert, key });
  }

  /** Starts listening once a certificate is set. Returns the bound port. */
  async listen(port: number, host?: string): Promise<number> {
    if (!this.current) throw new Error('webhook server: no serving certificate yet');
    this.server = createServer({ cert: this.current.cert, key: this.current.key, minVersion: 'TLSv1.2' }, (req, res) =>
      void this.serve(req, res),
    );
    // The API server reuses connections; keep them longer than its idle timeout to avoid reset races.
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => resolve());
    });
    const a = this.server.address();
    return typeof a === 'object' && a ? a.port : port;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    const s = this.server;
    await new Promise<void>((r) => {
      s.close(() => r());
      s.closeIdleConnections();
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const h = this.handlers.get(path);
    if (!h) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`no webhook at ${path}\n`);
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    let review: { apiVersion?: string; kind?: string; request?: AdmissionRequest };
    try {
      review = JSON.parse(await readBody(req)) as typeof review;
    } catch (err) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`bad AdmissionReview: ${(err as Error).message}\n`);
      return;
    }
    const request = review.request;
    if (!request?.uid) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('AdmissionReview has no request.uid\n');
      return;
    }
    const end = this.metrics.webhookDuration.startTimer({ webhook: h.name });
    let result: AdmissionResult;
    try {
      result = await h.handle(request);
    } catch (err) {
      this.logger.error({ webhook: h.name, uid: request.uid, err: (err as Error).message }, 'webhook handler failed');
      result = { allowed: false, code: 500, message: `internal error in webhook ${h.name}: ${(err as Error).message}` };
    }
    end();
    this.metrics.webhookRequests.inc({ webhook: h.name, allowed: String(result.allowed) });
    const response: Record<string, unknown> = { uid: request.uid, allowed: result.allowed };
    if (result.allowed) {
      if (result.patch && result.patch.length > 0) {
        response.patchType = 'JSONPatch';
        response.patch = Buffer.from(JSON.stringify(result.patch)).toString('base64');
      }
      if (result.warnings?.length) response.warnings = result.warnings;
    } else {
      response.status = {
        code: result.code ?? 403,
        reason: result.reason ?? (result.code === 400 || result.code === undefined ? 'Invalid' : 'Forbidden'),
        message: result.message,
      };
    }
    const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** JSON-pointer escaping of one path segment (RFC 6901). */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

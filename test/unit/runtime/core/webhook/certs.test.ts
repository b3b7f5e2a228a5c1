import { request } from 'node:https';
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bundleFromSecretData, bundleToSecretData, caBundleOf, renewalReason } from '../../../../../src/runtime/core/webhook/certs.js';
import { createCA, issueServingCert, renewBundle } from '../../../../../src/runtime/core/webhook/cert-issuer.js';
import { AdmissionServer } from '../../../../../src/runtime/core/webhook/server.js';
import { RuntimeMetrics } from '../../../../../src/runtime/core/metrics.js';
import { createLogger } from '../../../../../src/runtime/core/log.js';

const HOSTS = ['kruise-webhook-service.kruise-system.svc', '127.0.0.1'];
const DAY = 24 * 3600_000;

function post(port: number, ca: string, path: string, body: unknown): Promise<{ status: number; json: any; serial: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const serial =
            (res.socket as unknown as { getPeerX509Certificate(): X509Certificate }).getPeerX509Certificate?.()?.serialNumber ?? '';
          const text = Buffer.concat(chunks).toString();
          let json: unknown = text;
          try {
            json = JSON.parse(text);
          } catch {
            // non-JSON answers (404 text) are returned as text
          }
          resolve({ status: res.statusCode!, json, serial });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('webhook certificates', () => {
  it('issues a CA and a serving cert covering DNS names and IPs, and round-trips through Secret data', async () => {
    const b = await renewBundle(undefined, { hosts: HOSTS, caValidityMs: 3650 * DAY, certValidityMs: 365 * DAY, renewBeforeMs: 30 * DAY });
    expect(renewalReason(b, HOSTS, 30 * DAY)).toBeUndefined();
    const cert = new X509Certificate(b.cert);
    expect(cert.checkHost('kruise-webhook-service.kruise-system.svc')).toBeDefined();
    expect(cert.checkIP('127.0.0.1')).toBeDefined();
    expect(cert.checkIssued(new X509Certificate(b.caCert))).toBe(true);
    const data = bundleToSecretData(b);
    expect(Object.keys(data).sort()).toEqual(['ca-cert.pem', 'ca-key.pem', 'cert.pem', 'key.pem', 'tls.crt', 'tls.key']);
    expect(bundleFromSecretData(data)).toEqual(b);
  });

  it('names why a bundle needs renewal', async () => {
    const b = await renewBundle(undefined, { hosts: HOSTS, caValidityMs: 3650 * DAY, certValidityMs: 10 * DAY, renewBeforeMs: DAY });
    expect(renewalReason(undefined, HOSTS, DAY)).toBe('no certificate yet');
    expect(renewalReason(b, [...HOSTS, 'other.svc'], DAY)).toBe('serving certificate does not cover other.svc');
    expect(renewalReason(b, HOSTS, 11 * DAY)).toBe('serving certificate expires soon');
    const otherCa = await createCA(DAY * 100);
    expect(renewalReason({ ...b, caCert: otherCa.caCert }, HOSTS, DAY)).toBe('serving certificate not signed by the CA');
  });

  it('renewing the serving cert keeps the CA (caBundle unchanged); renewing an expiring CA keeps the old one in the bundle', async () => {
    const o = { hosts: HOSTS, caValidityMs: 3650 * DAY, certValidityMs: 10 * DAY, renewBeforeMs: DAY };
    const b1 = await renewBundle(undefined, o);
    const b2 = await renewBundle(b1, o);
    expect(b2.caCert).toBe(b1.caCert);
    expect(b2.cert).not.toBe(b1.cert);
    expect(caBundleOf(b2)).toBe(caBundleOf(b1));
    const shortCa = await renewBundle(undefined, { ...o, caValidityMs: DAY / 2 });
    const b3 = await renewBundle(shortCa, o);
    expect(b3.caCert).not.toBe(shortCa.caCert);
    expect(b3.previousCaCert).toBe(shortCa.caCert);
    expect(caBundleOf(b3)).toContain(shortCa.caCert.trim());
    expect(caBundleOf(b3)).toContain(b3.caCert.trim());
  });

  it('the admission server answers AdmissionReview v1 and swaps certificates without dropping requests', async () => {
    const server = new AdmissionServer(createLogger({ level: 'silent' }), new RuntimeMetrics());
    server.register({
      name: 'test',
      path: '/mutate-test',
      type: 'mutating',
      handle: async (req) =>
        req.name === 'bad'
          ? { allowed: false, code: 422, message: 'bad name' }
          : { allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }] },
    });
    const ca = await createCA(DAY);
    const c1 = await issueServingCert(ca, HOSTS, DAY);
    server.setCertificate(c1.cert, c1.key);
    const port = await server.listen(0, '127.0.0.1');
    try {
      // A CREATE review as the API server sends it: with the request's kind and the object.
      const review = (name: string) => ({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: `u-${name}`,
          name,
          operation: 'CREATE',
          kind: { group: '', version: 'v1', kind: 'ConfigMap' },
          object: { metadata: { name } },
        },
      });
      const ok = await post(port, ca.caCert, '/mutate-test', review('good'));
      expect(ok.status).toBe(200);
      expect(ok.json.response.uid).toBe('u-good');
      expect(ok.json.response.allowed).toBe(true);
      expect(ok.json.response.patchType).toBe('JSONPatch');
      expect(JSON.parse(Buffer.from(ok.json.response.patch, 'base64').toString())).toEqual([
        { op: 'add', path: '/metadata/labels', value: { a: 'b' } },
      ]);
      const bad = await post(port, ca.caCert, '/mutate-test', review('bad'));
      expect(bad.json.response).toMatchObject({ uid: 'u-bad', allowed: false, status: { code: 422, message: 'bad name' } });
      expect((await post(port, ca.caCert, '/nope', review('x'))).status).toBe(404);

      // Continuous traffic while the certificate rotates five times: every request succeeds.
      let stop = false;
      let sent = 0;
      const serials = new Set<string>();
      const failures: string[] = [];
      const load = (async () => {
        while (!stop) {
          try {
            const r = await post(port, ca.caCert, '/mutate-test', review(`r${sent}`));
            if (r.status !== 200 || !r.json.response.allowed) failures.push(String(r.status));
            serials.add(r.serial);
          } catch (err) {
            failures.push((err as Error).message);
          }
          sent++;
        }
      })();
      // Each certificate serves a few requests before the next rotation (counted, not timed: a loaded
      // machine may answer only a handful of TLS handshakes in 60 ms).
      const servedFive = async () => {
        const from = sent;
        for (const until = Date.now() + 20_000; sent < from + 5 && Date.now() < until;) await new Promise((r) => setTimeout(r, 10));
      };
      for (let i = 0; i < 5; i++) {
        await servedFive();
        const c = await issueServingCert(ca, HOSTS, DAY);
        server.setCertificate(c.cert, c.key);
      }
      await servedFive();
      stop = true;
      await load;
      expect(failures).toEqual([]);
      expect(sent).toBeGreaterThan(20);
      expect(serials.size).toBeGreaterThanOrEqual(4);
    } finally {
      await server.close();
    }
  });
});

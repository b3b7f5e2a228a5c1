// Hostile input against the real admission server on loopback: every request a client can send is
// answered (400/413/503/500) and the server keeps serving well-formed reviews afterwards.
import { Agent } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloneSetDefinition, SidecarSetDefinition } from '../../../../../src/api/registry.js';
import { kindWebhookPath } from '../../../../../src/install/webhooks.js';
import { WEBHOOK_KEEP_ALIVE_MS, type AdmissionHandler } from '../../../../../src/runtime/core/webhook/server.js';
import { kruiseValidationWebhook } from '../../../../../src/runtime/webhooks/kruisevalidation/index.js';
import { post, rawConnect, review, startAdmissionServer, untilClosed, type RunningServer } from '../../../support/admission-server.js';

const VALIDATE = kindWebhookPath('validate', SidecarSetDefinition);
const sidecarSet = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'ok' },
  spec: { selector: { matchLabels: { app: 'x' } }, containers: [{ name: 'sidecar', image: 'busybox' }] },
};

const throwing: AdmissionHandler = {
  name: 'throwing',
  path: '/throws',
  type: 'validating',
  handle() {
    throw new TypeError("Cannot read properties of undefined (reading 'namespace')");
  },
};
const rejectingWithString: AdmissionHandler = {
  name: 'rejecting',
  path: '/rejects',
  type: 'validating',
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a handler that rejects with a non-Error is the case under test
  handle: () => Promise.reject('not an Error'),
};

let s: RunningServer;

beforeAll(async () => {
  const handlers = kruiseValidationWebhook.setup({} as never);
  s = await startAdmissionServer([...handlers, throwing, rejectingWithString], {
    headersTimeoutMs: 400,
    requestTimeoutMs: 800,
    handshakeTimeoutMs: 400,
    timeoutCheckIntervalMs: 100,
    largePoolBytes: 4 * 1024 * 1024,
  });
});
afterAll(() => s?.close());

async function expectStillServing(): Promise<void> {
  const r = await post(s, VALIDATE, JSON.stringify(review(sidecarSet)));
  expect(r.status).toBe(200);
  expect(r.json.response).toEqual({ uid: 'e911857d-c318-11e8-bbad-025000000001', allowed: true });
  // An answer carries its length: no chunked framing for the API server to take apart.
  expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.body)));
  expect(r.headers['transfer-encoding']).toBeUndefined();
}

describe('idle connections', () => {
  it('stay open longer than the API server keeps them (90 s): the close is left to the API server', async () => {
    const agent = new Agent({ keepAlive: true });
    const r = await post(s, VALIDATE, JSON.stringify(review(sidecarSet)), { agent }).finally(() => agent.destroy());
    expect(r.status).toBe(200);
    // Node announces its idle timeout on a kept-alive answer; at or below 90 s the API server could send a review
    // on a connection we are closing, and a reset POST is not retried (it failed an upstream spec at 65 s).
    const timeout = Number(/timeout=(\d+)/.exec(String(r.headers['keep-alive']))?.[1]);
    expect(timeout * 1000).toBe(WEBHOOK_KEEP_ALIVE_MS);
    expect(WEBHOOK_KEEP_ALIVE_MS).toBeGreaterThan(90_000);
  });
});

describe('malformed AdmissionReviews get 400 and the server keeps serving', () => {
  const uid = 'e911857d-c318-11e8-bbad-025000000001';
  const cases: Array<[string, string, RegExp]> = [
    ['JSON null', 'null', /body is null, not an AdmissionReview object/],
    ['a JSON array', '[]', /not an AdmissionReview object/],
    ['a JSON string', '"x"', /not an AdmissionReview object/],
    ['a number', '42', /not an AdmissionReview object/],
    ['not JSON', '{"apiVersion":', /body is not JSON/],
    ['empty body', '', /body is not JSON/],
    ['an empty object', '{}', /apiVersion: Unsupported value: undefined/],
    [
      'AdmissionReview v1beta1',
      JSON.stringify({ ...review(sidecarSet), apiVersion: 'admission.k8s.io/v1beta1' }),
      /apiVersion: Unsupported value: "admission.k8s.io\/v1beta1"/,
    ],
    ['another kind', JSON.stringify({ ...review(sidecarSet), kind: 'TokenReview' }), /kind: Unsupported value: "TokenReview"/],
    [
      'request null',
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: null }),
      /request: Invalid value: null/,
    ],
    ['no request', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), /request: Required value/],
    ['a numeric uid', JSON.stringify(review(sidecarSet, { uid: 7 })), /request\.uid: Invalid value: 7: must be a non-empty string/],
    ['an object uid', JSON.stringify(review(sidecarSet, { uid: { toString: 1 } })), /request\.uid: Invalid value/],
    ['an empty uid', JSON.stringify(review(sidecarSet, { uid: '' })), /request\.uid/],
    ['a CREATE without object', JSON.stringify(review(sidecarSet, { object: undefined })), /request\.object: Required value/],
    ['a CREATE with object null', JSON.stringify(review(sidecarSet, { object: null })), /request\.object: Required value/],
    [
      'an array object',
      JSON.stringify(review(sidecarSet, { object: [1] })),
      /request\.object: Invalid value: \[1\]: must be a JSON object/,
    ],
    ['metadata a string', JSON.stringify(review({ ...sidecarSet, metadata: 'x' })), /request\.object\.metadata: Invalid value: "x"/],
    [
      'a numeric name',
      JSON.stringify(review({ ...sidecarSet, metadata: { name: 5 } })),
      /request\.object\.metadata\.name: Invalid value: 5/,
    ],
    [
      'a label that is not a string',
      JSON.stringify(review({ ...sidecarSet, metadata: { name: 'a', labels: { a: 1 } } })),
      /metadata\.labels\["a"\]: Invalid value: 1/,
    ],
    ['an unknown operation', JSON.stringify(review(sidecarSet, { operation: 'PATCH' })), /request\.operation: Unsupported value: "PATCH"/],
    ['an UPDATE without oldObject', JSON.stringify(review(sidecarSet, { operation: 'UPDATE' })), /request\.oldObject: Required value/],
    ['request.kind missing', JSON.stringify(review(sidecarSet, { kind: undefined })), /request\.kind: Invalid value/],
  ];
  it.each(cases)('%s', async (_name, body, message) => {
    const r = await post(s, VALIDATE, body);
    expect(r.status, r.body).toBe(400);
    expect(r.body).toMatch(message);
    expect(r.body).toMatch(/^bad AdmissionReview: /);
    await expectStillServing();
  });

  it('quotes hostile values truncated, never whole', async () => {
    const r = await post(s, VALIDATE, JSON.stringify(review(sidecarSet, { uid: 'u'.repeat(100_000) })));
    expect(r.status).toBe(400);
    expect(r.body.length).toBeLessThan(400);
    void uid;
  });
});

describe('handler failures answer 500 InternalError, not Forbidden', () => {
  it.each([
    ['/throws', /internal error in webhook throwing: Cannot read properties of undefined/],
    ['/rejects', /internal error in webhook rejecting: not an Error/],
  ])('%s', async (path, message) => {
    const r = await post(s, path, JSON.stringify(review(sidecarSet)));
    expect(r.status).toBe(200);
    expect(r.json.response.allowed).toBe(false);
    expect(r.json.response.status).toMatchObject({ code: 500, reason: 'InternalError' });
    expect(r.json.response.status.message).toMatch(message);
    await expectStillServing();
  });
});

describe('size, depth and field-count bounds', () => {
  it('refuses a declared body over 3 MiB with 413 before reading it', async () => {
    const r = await post(s, VALIDATE, 'x', { headers: { 'content-length': String(3 * 1024 * 1024 + 1) } }).catch((e: Error) => e);
    // The server answers 413 and closes; the client may see the answer or a reset while still sending.
    if (r instanceof Error) expect(r.message).toMatch(/ECONNRESET|socket hang up|EPIPE/);
    else expect(r.status).toBe(413);
    await expectStillServing();
  });

  it('refuses a chunked body that grows over 3 MiB with 413', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 10, 0x20);
    const r = await post(s, VALIDATE, big, { chunked: true }).catch((e: Error) => e);
    if (r instanceof Error) expect(r.message).toMatch(/ECONNRESET|socket hang up|EPIPE/);
    else expect(r.status).toBe(413);
    await expectStillServing();
  });

  it('refuses a Content-Length that is not a number with 411', async () => {
    const sock = await rawConnect(s);
    const closed = untilClosed(sock);
    sock.write(`POST ${VALIDATE} HTTP/1.1\r\nhost: x\r\ncontent-length: 12abc\r\n\r\n`);
    expect(await closed).toMatch(/^HTTP\/1\.1 (400|411)/);
  });

  it('denies a CloneSet with 100k unknown fields without validating it', async () => {
    const spec: Record<string, unknown> = { replicas: 1 };
    for (let i = 0; i < 100_000; i++) spec[`f${i}`] = i;
    const body = JSON.stringify(review({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'big' }, spec }));
    const r = await post(s, kindWebhookPath('validate', CloneSetDefinition), body);
    // Refused from a scan of the raw text, before JSON.parse builds 100k properties; the uid, where the API server
    // writes it, makes the refusal an AdmissionReview denial (a 413 the tenant sees, not a failed webhook call).
    expect(r.status).toBe(200);
    expect(r.json.response).toMatchObject({ allowed: false, status: { code: 413, reason: 'RequestEntityTooLarge' } });
    expect(r.json.response.status.message).toMatch(/body has more than 10000 fields/);
    await expectStillServing();
  });

  it('a body too large to parse that does not start like an API server review: 400 without a review', async () => {
    const spec: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i++) spec[`f${i}`] = i;
    const r = await post(s, VALIDATE, JSON.stringify({ padding: 'x', ...review({ ...sidecarSet, spec }) }));
    expect(r.status).toBe(400);
    expect(r.body).toMatch(/body has more than 10000 fields/);
    await expectStillServing();
  });

  it('denies a review over 3 MiB by its uid (AdmissionReview 413), reading and discarding the body', async () => {
    const body = JSON.stringify(review({ ...sidecarSet, spec: { big: 'x'.repeat(3 * 1024 * 1024) } }));
    const r = await post(s, VALIDATE, body);
    expect(r.status).toBe(200);
    expect(r.json.response).toMatchObject({ allowed: false, status: { code: 413, reason: 'RequestEntityTooLarge' } });
    expect(r.json.response.status.message).toMatch(/larger than the 3145728-byte limit of this webhook/);
    await expectStillServing();
  });

  it('denies an object with more fields than allowed once parsed (AdmissionReview 413 with the uid)', async () => {
    const { parseAdmissionReview } = await import('../../../../../src/runtime/core/webhook/review.js');
    const spec: Record<string, unknown> = {};
    for (let i = 0; i < 150; i++) spec[`f${i}`] = [1, 2];
    const r = parseAdmissionReview(JSON.stringify(review({ ...sidecarSet, spec })), { maxDepth: 64, maxFields: 300 });
    expect(r).toMatchObject({
      ok: false,
      httpStatus: 413,
      uid: 'e911857d-c318-11e8-bbad-025000000001',
      message: expect.stringMatching(/more than 300 fields/),
    });
  });

  it('denies an object nested 10,000 levels deep', async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const body = JSON.stringify(review({ ...sidecarSet, spec: 'DEEP' })).replace('"DEEP"', deep);
    const r = await post(s, VALIDATE, body);
    expect(r.status).toBe(200);
    expect(r.json.response).toMatchObject({ allowed: false, status: { code: 413 } });
    expect(r.json.response.status.message).toMatch(/nests deeper than 64 levels/);
    await expectStillServing();
  });

  it('answers 503 when large bodies in progress fill their budget, and serves small reviews meanwhile', async () => {
    // Two partial 2.9 MB bodies fill the 4 MiB large-body budget of this server; a third is refused at once.
    const partial = await Promise.all([rawConnect(s), rawConnect(s)]);
    for (const sock of partial) {
      sock.on('error', () => undefined);
      sock.write(`POST ${VALIDATE} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2900000\r\n\r\n{"a":"`);
    }
    // Wait until both requests have reserved their bytes.
    for (let i = 0; i < 100 && (s.server as any).large.inUse < 2 * 2_900_000; i++) await new Promise((r) => setTimeout(r, 10));
    const sock = await rawConnect(s);
    const closed = untilClosed(sock);
    sock.write(`POST ${VALIDATE} HTTP/1.1\r\nhost: x\r\ncontent-length: 2900000\r\n\r\n{`);
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 503/);
    expect(answer).toMatch(/retry-after: 1/i);
    await expectStillServing();
    for (const p of partial) p.destroy();
  });
});

describe('slow clients are cut off', () => {
  it('closes a connection that never finishes its headers', async () => {
    const sock = await rawConnect(s);
    const closed = untilClosed(sock);
    sock.write(`POST ${VALIDATE} HTTP/1.1\r\nhost: x\r\n`);
    const answer = await closed;
    expect(answer === '' || /^HTTP\/1\.1 408/.test(answer)).toBe(true);
  });

  it('closes a connection whose body never completes', async () => {
    const sock = await rawConnect(s);
    const closed = untilClosed(sock);
    sock.write(`POST ${VALIDATE} HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"a":`);
    const answer = await closed;
    expect(answer === '' || /^HTTP\/1\.1 408/.test(answer)).toBe(true);
    await expectStillServing();
  });

  it('closes a TCP connection that never starts its TLS handshake', async () => {
    const { connect } = await import('node:net');
    const sock = connect({ host: '127.0.0.1', port: s.port });
    await new Promise<void>((r) => sock.once('connect', () => r()));
    await new Promise<void>((r) => sock.once('close', () => r()));
  });

  it('does not crash on bytes that are not HTTP', async () => {
    const sock = await rawConnect(s);
    const closed = untilClosed(sock);
    sock.write('\u0000\u0001GARBAGE \r\n\r\n');
    expect(await closed).toMatch(/^(HTTP\/1\.1 400|)$|^HTTP\/1\.1 400/);
    await expectStillServing();
  });
});

describe('schema-error floods', () => {
  it('refuses an object with thousands of unknown fields on its first errors, listing a few and the count', async () => {
    const spec: Record<string, unknown> = { selector: { matchLabels: { app: 'x' } }, containers: [{ name: 's', image: 'busybox' }] };
    for (let i = 0; i < 5000; i++) spec[`unknown${i}`] = i;
    const r = await post(s, VALIDATE, JSON.stringify(review({ ...sidecarSet, spec })));
    expect(r.json.response.allowed).toBe(false);
    expect(r.json.response.status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(r.json.response.status.message).toMatch(
      /^SidecarSet ok is invalid: 5000 schema errors \(more than 50; not all listed\): \/spec\/unknown0: unknown field "unknown0"/,
    );
    expect(r.json.response.status.message).toMatch(/; and 4995 more$/);
    expect(r.json.response.status.message.length).toBeLessThan(1000);
  });
});

// Property-based fuzz (fast-check, fixed seed, bounded runs) of AdmissionReview request parsing: the pure
// parser is total (never throws, refuses with 400/413 or yields a request whose shape handlers rely on),
// and the real server answers every fuzzed body and keeps serving.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SidecarSetDefinition } from '../../../../../src/api/registry.js';
import { kindWebhookPath } from '../../../../../src/install/webhooks.js';
import { DEFAULT_REVIEW_LIMITS, parseAdmissionReview } from '../../../../../src/runtime/core/webhook/review.js';
import { kruiseValidationWebhook } from '../../../../../src/runtime/webhooks/kruisevalidation/index.js';
import { post, review, startAdmissionServer, type RunningServer } from '../../../support/admission-server.js';

const SEED = 20261124;
const VALIDATE = kindWebhookPath('validate', SidecarSetDefinition);
const valid = review({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'ok' },
  spec: { selector: { matchLabels: { app: 'x' } }, containers: [{ name: 's', image: 'busybox' }] },
});

/** A valid review with one field (at any depth of the envelope) replaced by an arbitrary JSON value, or removed. */
const mutatedReview = fc
  .tuple(
    fc.constantFrom(
      [],
      ['apiVersion'],
      ['kind'],
      ['request'],
      ['request', 'uid'],
      ['request', 'operation'],
      ['request', 'kind'],
      ['request', 'kind', 'kind'],
      ['request', 'object'],
      ['request', 'oldObject'],
      ['request', 'namespace'],
      ['request', 'dryRun'],
      ['request', 'object', 'metadata'],
      ['request', 'object', 'metadata', 'name'],
      ['request', 'object', 'metadata', 'labels'],
      ['request', 'object', 'spec'],
    ),
    fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constant(undefined)),
  )
  .map(([path, value]) => {
    if (path.length === 0) return value;
    const copy = structuredClone(valid) as Record<string, any>;
    let at = copy;
    for (const k of path.slice(0, -1)) {
      if (typeof at[k] !== 'object' || at[k] === null) at[k] = {};
      at = at[k];
    }
    at[path[path.length - 1]!] = value;
    return copy;
  });

const bodies = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.json({ maxDepth: 5 }),
  mutatedReview.map((v) => (v === undefined ? '' : JSON.stringify(v))),
  // Truncations of a valid body: every prefix is malformed JSON.
  fc.nat({ max: JSON.stringify(valid).length - 1 }).map((n) => JSON.stringify(valid).slice(0, n)),
);

describe('parseAdmissionReview is total', () => {
  it('never throws; a request it accepts has the shape handlers rely on', () => {
    fc.assert(
      fc.property(bodies, (body) => {
        const r = parseAdmissionReview(body);
        if (!r.ok) {
          expect([400, 413]).toContain(r.httpStatus);
          expect(r.message.length).toBeGreaterThan(0);
          expect(r.message.length).toBeLessThan(600);
          return;
        }
        const req = r.request;
        expect(typeof req.uid).toBe('string');
        expect(req.uid.length).toBeGreaterThan(0);
        expect(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']).toContain(req.operation);
        expect(typeof req.kind.kind).toBe('string');
        if (req.operation === 'CREATE' || req.operation === 'UPDATE') {
          expect(typeof req.object).toBe('object');
          expect(Array.isArray(req.object)).toBe(false);
          expect(req.object).not.toBeNull();
        }
        for (const o of [req.object, req.oldObject]) {
          if (o?.metadata !== undefined) expect(typeof o.metadata).toBe('object');
          if (o?.metadata?.name !== undefined) expect(typeof o.metadata.name).toBe('string');
        }
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });

  it('refuses objects past the depth limit, whatever their shape', () => {
    fc.assert(
      fc.property(fc.integer({ min: DEFAULT_REVIEW_LIMITS.maxDepth + 1, max: 5000 }), fc.boolean(), (depth, arrays) => {
        const open = arrays ? '['.repeat(depth) : '{"a":'.repeat(depth);
        const close = arrays ? ']'.repeat(depth) : '}'.repeat(depth);
        const body = JSON.stringify(valid).replace('"spec":{', `"deep":${open}1${close},"spec":{`);
        const r = parseAdmissionReview(body);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.message).toMatch(/nest(s|ed) deeper than 64 levels/);
      }),
      { seed: SEED, numRuns: 50 },
    );
  });
});

describe('the real server answers every fuzzed body', () => {
  let s: RunningServer;
  beforeAll(async () => {
    s = await startAdmissionServer(kruiseValidationWebhook.setup({} as never));
  });
  afterAll(() => s?.close());

  it('with 200, 400 or 413, and still serves a valid review afterwards', async () => {
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const r = await post(s, VALIDATE, body);
        expect([200, 400, 413]).toContain(r.status);
        if (r.status === 200) {
          expect(r.json.kind).toBe('AdmissionReview');
          expect(typeof r.json.response.allowed).toBe('boolean');
        }
      }),
      { seed: SEED, numRuns: 150 },
    );
    const ok = await post(s, VALIDATE, JSON.stringify(valid));
    expect(ok.json.response.allowed).toBe(true);
  });
});

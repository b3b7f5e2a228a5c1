// The pure decisions behind webhook certificate rotation (certs.ts): what the caBundle must hold, what a
// new Secret records as previous CAs, when a replica serves the Secret's certificate, and which states of
// the Secret are repaired. Every decision takes the clock as an argument.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  bundleFromSecretData,
  bundleToSecretData,
  caBundleMatches,
  desiredCaBundle,
  nextBundle,
  pemCertificates,
  renewalReason,
  reusableCa,
  secretDataMismatch,
  serveAction,
  trustedCas,
  SECRET_KEYS,
  type CertBundle,
} from '../../../../../src/runtime/core/webhook/certs.js';
import { createCA, issueServingCert } from '../../../../../src/runtime/core/webhook/cert-issuer.js';
import { nameFromFieldSelector } from '../../../../../src/runtime/core/client.js';

const HOSTS = ['kruise-webhook-service.kruise-system.svc', '127.0.0.1'];
const DAY = 24 * 3600_000;
const GRACE = 5 * 60_000;
const T0 = Date.now();

let ca1: { caCert: string; caKey: string };
let ca2: { caCert: string; caKey: string };
let ca3: { caCert: string; caKey: string };
let b1: CertBundle;
let b2: CertBundle;

async function bundleOf(ca: { caCert: string; caKey: string }): Promise<CertBundle> {
  return { ...ca, ...(await issueServingCert(ca, HOSTS, 100 * DAY)) };
}

const norm = (pem: string) => pemCertificates(pem)[0]!;

beforeAll(async () => {
  [ca1, ca2, ca3] = await Promise.all([createCA(1000 * DAY), createCA(1000 * DAY), createCA(1000 * DAY)]);
  [b1, b2] = await Promise.all([bundleOf(ca1), bundleOf(ca2)]);
});

describe('caBundle: merge and prune', () => {
  it('a stripped or garbage caBundle is restored to the Secret CA', () => {
    for (const observed of [[], [''], ['not a PEM'], ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n']]) {
      expect(desiredCaBundle({ observed, stored: b1, servingCa: ca1.caCert, now: T0 })).toEqual([norm(ca1.caCert)]);
    }
  });

  it('a new CA is appended beside the old one, which stays until its grace has passed', () => {
    const rotated = nextBundle(b2, b1, { observed: [ca1.caCert], servingCa: ca1.caCert, now: T0, graceMs: GRACE });
    expect(rotated.previousCaUntil).toBe(T0 + GRACE);
    expect(pemCertificates(rotated.previousCaCert)).toEqual([norm(ca1.caCert)]);
    // Every replica, whatever it serves, wants both while the grace lasts.
    for (const servingCa of [ca1.caCert, ca2.caCert, undefined]) {
      expect(desiredCaBundle({ observed: [ca1.caCert], stored: rotated, servingCa, now: T0 + GRACE - 1 })).toEqual([
        norm(ca2.caCert),
        norm(ca1.caCert),
      ]);
    }
    // After the grace the old CA is dropped by replicas that no longer serve it...
    expect(desiredCaBundle({ observed: [ca2.caCert + ca1.caCert], stored: rotated, servingCa: ca2.caCert, now: T0 + GRACE })).toEqual([
      norm(ca2.caCert),
    ]);
    // ...but a replica still serving it (it had not reloaded) keeps it: the CA a replica serves is never dropped.
    expect(desiredCaBundle({ observed: [ca2.caCert + ca1.caCert], stored: rotated, servingCa: ca1.caCert, now: T0 + GRACE })).toEqual([
      norm(ca2.caCert),
      norm(ca1.caCert),
    ]);
  });

  it('a replica whose Secret cache lags never removes the newer CA another replica wrote', () => {
    // The writer published CA2 beside CA1; this replica still caches the old Secret (CA1 only).
    expect(desiredCaBundle({ observed: [ca2.caCert + ca1.caCert], stored: b1, servingCa: ca1.caCert, now: T0 })).toEqual([
      norm(ca1.caCert),
      norm(ca2.caCert),
    ]);
  });

  it('expired CAs are dropped; the bundle compares as text in order', async () => {
    const expired = { caCert: (await createCA(1)).caCert };
    await new Promise((r) => setTimeout(r, 5));
    const d = desiredCaBundle({ observed: [expired.caCert + ca1.caCert], stored: b1, servingCa: undefined, now: Date.now() });
    expect(d).toEqual([norm(ca1.caCert)]);
    expect(caBundleMatches(d.join(''), d)).toBe(true);
    expect(caBundleMatches(undefined, d)).toBe(false);
    expect(caBundleMatches(norm(ca3.caCert) + d.join(''), d)).toBe(false);
  });
});

describe('the bundle written after issuing', () => {
  it('a lost Secret: the CAs in the caBundles and the one this replica serves become previous CAs', () => {
    const b3 = { ...ca3, cert: b2.cert, key: b2.key };
    const n = nextBundle(b3, undefined, {
      observed: [ca1.caCert, ca1.caCert + ca2.caCert],
      servingCa: ca2.caCert,
      now: T0,
      graceMs: GRACE,
    });
    expect(pemCertificates(n.previousCaCert)).toEqual([norm(ca1.caCert), norm(ca2.caCert)]);
    expect(n.previousCaUntil).toBe(T0 + GRACE);
  });

  it('a serving-certificate repair keeps the CA, the previous CAs and their time', () => {
    const withPrev: CertBundle = { ...b2, previousCaCert: ca1.caCert, previousCaUntil: T0 + GRACE };
    const n = nextBundle(b2, withPrev, { observed: [ca3.caCert], servingCa: ca2.caCert, now: T0 + 1000, graceMs: GRACE });
    expect(pemCertificates(n.previousCaCert)).toEqual([norm(ca1.caCert)]);
    expect(n.previousCaUntil).toBe(T0 + GRACE);
    // A repair after the grace drops them.
    const late = nextBundle(b2, withPrev, { observed: [], servingCa: ca2.caCert, now: T0 + GRACE, graceMs: GRACE });
    expect(late.previousCaCert).toBeUndefined();
  });

  it('round-trips previous CAs and their time through the Secret data', () => {
    const n: CertBundle = { ...b2, previousCaCert: norm(ca1.caCert) + norm(ca3.caCert), previousCaUntil: T0 + GRACE };
    const back = bundleFromSecretData(bundleToSecretData(n))!;
    expect(pemCertificates(back.previousCaCert)).toHaveLength(2);
    expect(back.previousCaUntil).toBe(new Date(T0 + GRACE).getTime());
  });
});

describe('what is done for each state of the Secret', () => {
  const data = () => bundleToSecretData(b1);
  const enc = (s: string) => Buffer.from(s).toString('base64');

  it('a good Secret needs nothing', () => {
    expect(renewalReason(bundleFromSecretData(data()), HOSTS, DAY, T0)).toBeUndefined();
    expect(secretDataMismatch(data())).toBeUndefined();
  });

  it('no Secret: issue', () => {
    expect(renewalReason(bundleFromSecretData(undefined), HOSTS, DAY, T0)).toBe('no certificate yet');
  });

  it('a corrupted tls.crt is noticed, and the CA is kept for the repair', () => {
    const d = { ...data(), [SECRET_KEYS.tlsCert]: enc('garbage') };
    const stored = bundleFromSecretData(d);
    expect(renewalReason(stored, HOSTS, DAY, T0)).toMatch(/^unreadable certificate/);
    expect(reusableCa(stored, DAY, T0)).toEqual(ca1);
  });

  it('tls.crt valid but another certificate than cert.pem: rewritten', () => {
    const d = { ...data(), [SECRET_KEYS.tlsCert]: enc(b2.cert), [SECRET_KEYS.tlsKey]: enc(b2.key) };
    expect(renewalReason(bundleFromSecretData(d), HOSTS, DAY, T0)).toBe('serving certificate not signed by the CA');
    const same = { ...data(), [SECRET_KEYS.cert]: enc(b1.cert + '\n') };
    expect(secretDataMismatch(same)).toBe('cert.pem and tls.crt differ');
  });

  it('a key that does not match its certificate is noticed; a CA with a foreign key is not reused', () => {
    expect(renewalReason({ ...b1, key: b2.key }, HOSTS, DAY, T0)).toBe('serving key does not match the certificate');
    expect(renewalReason({ ...b1, caKey: ca2.caKey }, HOSTS, DAY, T0)).toBe('CA key does not match the CA certificate');
    expect(reusableCa({ ...b1, caKey: ca2.caKey }, DAY, T0)).toBeUndefined();
    expect(reusableCa({ ...b1, caCert: 'garbage' }, DAY, T0)).toBeUndefined();
    // A CA close to its end is not reused either: a new one is made.
    expect(reusableCa(b1, 1000 * DAY, T0)).toBeUndefined();
  });
});

describe('when a replica serves the certificate the Secret holds', () => {
  const base = { candidateCert: 'new', servingCert: 'old', gate: true, propagationMs: 2_000, now: T0 };

  it('keeps its certificate until the new CA is in every webhook, then waits out the propagation', () => {
    expect(serveAction({ ...base, trustedSince: undefined })).toEqual({ kind: 'keep' });
    expect(serveAction({ ...base, trustedSince: T0 - 500 })).toEqual({ kind: 'wait', ms: 1_500 });
    expect(serveAction({ ...base, trustedSince: T0 - 2_000 })).toEqual({ kind: 'install' });
    // The CA was already trusted when this replica started watching (a serving-certificate repair).
    expect(serveAction({ ...base, trustedSince: -Infinity })).toEqual({ kind: 'install' });
  });

  it('installs at once when it serves nothing or has nothing to gate on; nothing when it serves it already', () => {
    expect(serveAction({ ...base, servingCert: undefined, trustedSince: undefined })).toEqual({ kind: 'install' });
    expect(serveAction({ ...base, gate: false, trustedSince: undefined })).toEqual({ kind: 'install' });
    expect(serveAction({ ...base, servingCert: 'new', trustedSince: undefined })).toEqual({ kind: 'keep' });
    expect(serveAction({ ...base, candidateCert: undefined, trustedSince: undefined })).toEqual({ kind: 'keep' });
  });

  it('a CA is trusted from when it is in every webhook bundle; already there on the first look: from -Infinity', () => {
    const first = trustedCas(new Map(), [ca1.caCert, ca1.caCert + ca2.caCert], T0, true);
    expect([...first]).toEqual([[norm(ca1.caCert), -Infinity]]);
    const later = trustedCas(first, [ca2.caCert + ca1.caCert, ca1.caCert + ca2.caCert], T0 + 10, false);
    expect(later.get(norm(ca1.caCert))).toBe(-Infinity);
    expect(later.get(norm(ca2.caCert))).toBe(T0 + 10);
    // Stripped from one webhook: no longer trusted; back later: trusted from then.
    const stripped = trustedCas(later, [ca2.caCert, ''], T0 + 20, false);
    expect(stripped.size).toBe(0);
    expect(trustedCas(stripped, [ca2.caCert], T0 + 30, false).get(norm(ca2.caCert))).toBe(T0 + 30);
    expect(trustedCas(later, [], T0, false).size).toBe(0);
  });
});

describe('watching one object by name', () => {
  it('a metadata.name field selector names the object (RBAC resourceNames apply)', () => {
    expect(nameFromFieldSelector('metadata.name=kruise-webhook-certs')).toBe('kruise-webhook-certs');
    expect(nameFromFieldSelector('metadata.name==x')).toBe('x');
    expect(nameFromFieldSelector('metadata.name!=x')).toBeUndefined();
    expect(nameFromFieldSelector('metadata.name=x,spec.nodeName=n')).toBeUndefined();
    expect(nameFromFieldSelector(undefined)).toBeUndefined();
  });
});

import { createPrivateKey, createPublicKey, X509Certificate as NodeX509 } from 'node:crypto';
import { isIP } from 'node:net';

/** PEM material of the webhook's CA and serving certificate (same keys as upstream's Secret). */
export interface CertBundle {
  readonly caCert: string;
  readonly caKey: string;
  readonly cert: string;
  readonly key: string;
  /**
   * CAs replaced by a CA rotation (PEM blocks, concatenated): kept in the caBundle beside the current one
   * until `previousCaUntil`, so replicas that still serve a certificate signed by one are trusted until they
   * have reloaded the Secret.
   */
  readonly previousCaCert?: string;
  /** When the previous CAs leave the caBundle (ms since the epoch); absent: when they expire. */
  readonly previousCaUntil?: number;
}

/** Secret data keys: upstream's (`ca-cert.pem`, `ca-key.pem`, `cert.pem`, `key.pem`, `tls.crt`, `tls.key`) plus ours. */
export const SECRET_KEYS = {
  caCert: 'ca-cert.pem',
  caKey: 'ca-key.pem',
  cert: 'cert.pem',
  key: 'key.pem',
  tlsCert: 'tls.crt',
  tlsKey: 'tls.key',
  previousCaCert: 'ca-cert-previous.pem',
  previousCaUntil: 'ca-cert-previous-until',
} as const;

/**
 * Issues the bundle that serves `o.hosts` from what the Secret holds (keeping a CA that is still good):
 * `renewBundle` of cert-issuer.ts, in this process or another one.
 */
export type CertIssuer = (old: CertBundle | undefined, o: CertOptions & { readonly renewBeforeMs: number }) => Promise<CertBundle>;

export interface CertOptions {
  /** DNS names and IPs the serving certificate is valid for. */
  readonly hosts: readonly string[];
  readonly caValidityMs: number;
  readonly certValidityMs: number;
}

/** Validity window of a PEM certificate. */
export function validity(pem: string): { notBefore: number; notAfter: number } {
  const c = new NodeX509(pem);
  return { notBefore: Date.parse(c.validFrom), notAfter: Date.parse(c.validTo) };
}

/**
 * Why `bundle` must be renewed now, or undefined if it can serve until the next check. Checks: parseable,
 * the serving cert chains to the CA and covers every host, and neither expires within `renewBeforeMs`.
 */
export function renewalReason(
  bundle: CertBundle | undefined,
  hosts: readonly string[],
  renewBeforeMs: number,
  now = Date.now(),
): string | undefined {
  if (!bundle?.caCert || !bundle.caKey || !bundle.cert || !bundle.key) return 'no certificate yet';
  try {
    const ca = new NodeX509(bundle.caCert);
    const cert = new NodeX509(bundle.cert);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return 'serving certificate not signed by the CA';
    if (!keyMatches(bundle.key, cert)) return 'serving key does not match the certificate';
    if (!keyMatches(bundle.caKey, ca)) return 'CA key does not match the CA certificate';
    for (const h of hosts) {
      const ok = isIP(h) ? cert.checkIP(h) !== undefined : cert.checkHost(h) !== undefined;
      if (!ok) return `serving certificate does not cover ${h}`;
    }
    if (Date.parse(ca.validTo) - now <= renewBeforeMs) return 'CA expires soon';
    if (Date.parse(cert.validTo) - now <= renewBeforeMs) return 'serving certificate expires soon';
  } catch (err) {
    return `unreadable certificate: ${(err as Error).message}`;
  }
  return undefined;
}

/** The caBundle the API server must trust: current CA, then the previous one while it lives. */
export function caBundleOf(b: CertBundle, now = Date.now()): string {
  return desiredCaBundle({ observed: [], stored: b, servingCa: undefined, now }).join('');
}

export function bundleToSecretData(b: CertBundle): Record<string, string> {
  const enc = (s: string) => Buffer.from(s).toString('base64');
  const d: Record<string, string> = {
    [SECRET_KEYS.caCert]: enc(b.caCert),
    [SECRET_KEYS.caKey]: enc(b.caKey),
    [SECRET_KEYS.cert]: enc(b.cert),
    [SECRET_KEYS.key]: enc(b.key),
    [SECRET_KEYS.tlsCert]: enc(b.cert),
    [SECRET_KEYS.tlsKey]: enc(b.key),
  };
  if (b.previousCaCert) d[SECRET_KEYS.previousCaCert] = enc(b.previousCaCert);
  if (b.previousCaCert && b.previousCaUntil !== undefined) {
    d[SECRET_KEYS.previousCaUntil] = enc(new Date(b.previousCaUntil).toISOString());
  }
  return d;
}

export function bundleFromSecretData(data: Record<string, string> | undefined): CertBundle | undefined {
  if (!data) return undefined;
  const dec = (k: string) => (data[k] ? Buffer.from(data[k], 'base64').toString('utf8') : '');
  // tls.crt/tls.key first: they are what other readers of the Secret (and cert-manager, for
  // --webhook-cert-mode=cert-manager, with ca.crt) use, so a damaged tls.crt is noticed and repaired.
  const until = Date.parse(dec(SECRET_KEYS.previousCaUntil));
  const b = {
    caCert: dec(SECRET_KEYS.caCert) || dec('ca.crt'),
    caKey: dec(SECRET_KEYS.caKey),
    cert: dec(SECRET_KEYS.tlsCert) || dec(SECRET_KEYS.cert),
    key: dec(SECRET_KEYS.tlsKey) || dec(SECRET_KEYS.key),
    ...(data[SECRET_KEYS.previousCaCert] ? { previousCaCert: dec(SECRET_KEYS.previousCaCert) } : {}),
    ...(data[SECRET_KEYS.previousCaCert] && Number.isFinite(until) ? { previousCaUntil: until } : {}),
  };
  return b.caCert || b.cert ? b : undefined;
}

/** Why the Secret's data must be rewritten although it decodes: our two copies of the serving pair differ. */
export function secretDataMismatch(data: Record<string, string> | undefined): string | undefined {
  if (!data) return undefined;
  if (data[SECRET_KEYS.cert] !== data[SECRET_KEYS.tlsCert]) return `${SECRET_KEYS.cert} and ${SECRET_KEYS.tlsCert} differ`;
  if (data[SECRET_KEYS.key] !== data[SECRET_KEYS.tlsKey]) return `${SECRET_KEYS.key} and ${SECRET_KEYS.tlsKey} differ`;
  return undefined;
}

function keyMatches(keyPem: string, cert: NodeX509): boolean {
  const spki = (k: ReturnType<typeof createPublicKey>) => k.export({ type: 'spki', format: 'der' });
  return spki(createPublicKey(createPrivateKey(keyPem))).equals(spki(cert.publicKey));
}

/**
 * The CA of `bundle` when a new serving certificate may be issued from it: it parses, its key matches and
 * it lives longer than `renewBeforeMs`. Keeping the CA keeps the caBundle unchanged, so a serving
 * certificate renewal or repair needs no propagation and refuses nothing.
 */
export function reusableCa(
  bundle: CertBundle | undefined,
  renewBeforeMs: number,
  now: number,
): { caCert: string; caKey: string } | undefined {
  if (!bundle?.caCert || !bundle.caKey) return undefined;
  try {
    const ca = new NodeX509(bundle.caCert);
    if (!ca.ca || Date.parse(ca.validTo) - now <= renewBeforeMs || !keyMatches(bundle.caKey, ca)) return undefined;
    return { caCert: bundle.caCert, caKey: bundle.caKey };
  } catch {
    return undefined;
  }
}

// ---- caBundle decisions (pure; every replica runs them on each Secret or configuration event) ----

const PEM_CERT = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g;

/** The CERTIFICATE blocks of a PEM text, re-wrapped canonically (so equal certificates compare equal). */
export function pemCertificates(text: string | undefined): string[] {
  const out: string[] = [];
  for (const m of (text ?? '').matchAll(PEM_CERT)) {
    const b64 = m[1]!.replace(/\s+/g, '');
    const lines = b64.match(/.{1,64}/g) ?? [];
    const pem = `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
    if (!out.includes(pem)) out.push(pem);
  }
  return out;
}

/** A CA the API server can still verify with: parses, is a CA, not expired. */
function liveCa(pem: string, now: number): boolean {
  try {
    const c = new NodeX509(pem);
    return c.ca && Date.parse(c.validTo) > now;
  } catch {
    return false;
  }
}

function previousInGrace(stored: CertBundle | undefined, now: number): boolean {
  return stored?.previousCaUntil === undefined || now < stored.previousCaUntil;
}

export interface CaBundleInput {
  /** The decoded caBundle of every webhook of both configurations, as observed (absent ones left out). */
  readonly observed: readonly string[];
  /** What the Secret holds (after this replica's own write, if it just wrote). */
  readonly stored: CertBundle | undefined;
  /** The CA of the certificate this replica serves right now. */
  readonly servingCa: string | undefined;
  readonly now: number;
}

/**
 * The CAs the caBundle must hold. It only grows, except for CAs the Secret retires:
 * - always the Secret's CA, the CA this replica serves, and the Secret's previous CAs until their time;
 * - every other live CA already there (another replica may serve it and this replica's cache of the Secret
 *   may lag behind the writer's; it is carried into the previous CAs at the next rotation and so retired);
 * - never garbage, expired CAs, or previous CAs whose time has passed (unless served here or current).
 * The Secret's CA comes first.
 */
export function desiredCaBundle(i: CaBundleInput): string[] {
  const current = pemCertificates(i.stored?.caCert);
  const previous = pemCertificates(i.stored?.previousCaCert);
  const serving = pemCertificates(i.servingCa);
  const inGrace = previousInGrace(i.stored, i.now);
  const required = [...current, ...serving, ...(inGrace ? previous : [])];
  const retired = inGrace ? [] : previous.filter((p) => !required.includes(p));
  const kept = i.observed.flatMap((t) => pemCertificates(t)).filter((p) => !retired.includes(p));
  const out: string[] = [];
  for (const p of [...required, ...kept]) if (!out.includes(p) && liveCa(p, i.now)) out.push(p);
  return out;
}

/** Whether a webhook's caBundle (decoded) already equals the desired CAs, in order. */
export function caBundleMatches(observed: string | undefined, desired: readonly string[]): boolean {
  return (observed ?? '') === desired.join('');
}

/**
 * The bundle to write after `issued` was made from `stored`: a serving-certificate renewal (same CA) keeps
 * the previous CAs and their time; a new CA makes every CA a replica may still serve a previous one (the
 * old Secret's CA and its previous CAs in grace, the CAs in the caBundles, this replica's own) until
 * `now + graceMs`.
 */
export function nextBundle(
  issued: { readonly caCert: string; readonly caKey: string; readonly cert: string; readonly key: string },
  stored: CertBundle | undefined,
  o: { readonly observed: readonly string[]; readonly servingCa: string | undefined; readonly now: number; readonly graceMs: number },
): CertBundle {
  const base = { caCert: issued.caCert, caKey: issued.caKey, cert: issued.cert, key: issued.key };
  const newCa = pemCertificates(issued.caCert);
  const sameCa = stored !== undefined && pemCertificates(stored.caCert).join('') === newCa.join('');
  let previous: string[];
  let until: number | undefined;
  if (sameCa) {
    previous = previousInGrace(stored, o.now) ? pemCertificates(stored.previousCaCert) : [];
    until = stored.previousCaUntil;
  } else {
    previous = [
      ...pemCertificates(stored?.caCert),
      ...(previousInGrace(stored, o.now) ? pemCertificates(stored?.previousCaCert) : []),
      ...o.observed.flatMap((t) => pemCertificates(t)),
      ...pemCertificates(o.servingCa),
    ];
    until = o.now + o.graceMs;
  }
  const unique = previous.filter((p, n) => previous.indexOf(p) === n && !newCa.includes(p) && liveCa(p, o.now));
  if (unique.length === 0) return base;
  return { ...base, previousCaCert: unique.join(''), ...(until !== undefined ? { previousCaUntil: until } : {}) };
}

/** What this replica does with the serving certificate the Secret holds. */
export type ServeAction = { readonly kind: 'keep' } | { readonly kind: 'install' } | { readonly kind: 'wait'; readonly ms: number };

/**
 * Serve the Secret's certificate only once the API server trusts it: its CA has been in the caBundle of
 * every webhook for `propagationMs` (the API server's own watch of the configurations must see it too);
 * until then the current certificate, still trusted, stays. A replica serving nothing installs at once,
 * and so does one whose configurations are not ours to gate on (none exist, or cert-manager owns them).
 *
 * @param trustedSince when the candidate's CA was first seen in every webhook's caBundle (`-Infinity`:
 *   already there when this replica started watching), undefined while it is missing from one.
 */
export function serveAction(i: {
  readonly candidateCert: string | undefined;
  readonly servingCert: string | undefined;
  readonly gate: boolean;
  readonly trustedSince: number | undefined;
  readonly propagationMs: number;
  readonly now: number;
}): ServeAction {
  if (!i.candidateCert || i.candidateCert === i.servingCert) return { kind: 'keep' };
  if (!i.servingCert || !i.gate) return { kind: 'install' };
  if (i.trustedSince === undefined) return { kind: 'keep' };
  const left = i.trustedSince + i.propagationMs - i.now;
  return left <= 0 ? { kind: 'install' } : { kind: 'wait', ms: left };
}

/**
 * The CAs every webhook trusts now, with when each was first seen so (kept from `before`; new ones get
 * `now`, or `-Infinity` on the first observation, when they were there before this replica looked).
 */
export function trustedCas(
  before: ReadonlyMap<string, number>,
  webhookBundles: readonly string[],
  now: number,
  first: boolean,
): Map<string, number> {
  const out = new Map<string, number>();
  if (webhookBundles.length === 0) return out;
  const sets = webhookBundles.map((b) => pemCertificates(b));
  for (const ca of sets[0]!) {
    if (sets.every((s) => s.includes(ca))) out.set(ca, before.get(ca) ?? (first ? -Infinity : now));
  }
  return out;
}

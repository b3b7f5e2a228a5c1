import { X509Certificate as NodeX509 } from 'node:crypto';
import { isIP } from 'node:net';

/** PEM material of the webhook's CA and serving certificate (same keys as upstream's Secret). */
export interface CertBundle {
  readonly caCert: string;
  readonly caKey: string;
  readonly cert: string;
  readonly key: string;
  /** Previous CA kept in the caBundle after a CA rotation until it expires, so no request is refused. */
  readonly previousCaCert?: string;
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
export function caBundleOf(b: CertBundle): string {
  return b.previousCaCert ? `${b.caCert.trim()}\n${b.previousCaCert.trim()}\n` : b.caCert;
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
  return d;
}

export function bundleFromSecretData(data: Record<string, string> | undefined): CertBundle | undefined {
  if (!data) return undefined;
  const dec = (k: string) => (data[k] ? Buffer.from(data[k], 'base64').toString('utf8') : '');
  // Falls back to cert-manager's key names (tls.crt, tls.key, ca.crt) for --webhook-cert-mode=cert-manager.
  const b = {
    caCert: dec(SECRET_KEYS.caCert) || dec('ca.crt'),
    caKey: dec(SECRET_KEYS.caKey),
    cert: dec(SECRET_KEYS.cert) || dec(SECRET_KEYS.tlsCert),
    key: dec(SECRET_KEYS.key) || dec(SECRET_KEYS.tlsKey),
    ...(data[SECRET_KEYS.previousCaCert] ? { previousCaCert: dec(SECRET_KEYS.previousCaCert) } : {}),
  };
  return b.caCert || b.cert ? b : undefined;
}

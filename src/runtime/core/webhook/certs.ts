import 'reflect-metadata';
import { webcrypto, X509Certificate as NodeX509 } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

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

const ALG: webcrypto.EcKeyGenParams & webcrypto.EcdsaParams = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

async function keyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(k: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', k);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function importKey(pem: string): Promise<CryptoKey> {
  const der = x509.PemConverter.decode(pem)[0];
  return webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign']) as Promise<CryptoKey>;
}

export interface CertOptions {
  /** DNS names and IPs the serving certificate is valid for. */
  readonly hosts: readonly string[];
  readonly caValidityMs: number;
  readonly certValidityMs: number;
}

/** Creates a new self-signed CA (ECDSA P-256). */
export async function createCA(validityMs: number): Promise<{ caCert: string; caKey: string }> {
  const keys = await keyPair();
  const now = Date.now();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=cdk8s-kruise-webhook-ca',
    keys,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + validityMs),
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { caCert: ca.toString('pem'), caKey: await keyPem(keys.privateKey) };
}

/** Issues a serving certificate for `hosts` from the CA. */
export async function issueServingCert(
  ca: { caCert: string; caKey: string },
  hosts: readonly string[],
  validityMs: number,
): Promise<{ cert: string; key: string }> {
  const keys = await keyPair();
  const caCert = new x509.X509Certificate(ca.caCert);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    subject: `CN=${hosts[0] ?? 'cdk8s-kruise-webhook'}`,
    issuer: caCert.subject,
    publicKey: keys.publicKey,
    signingKey: await importKey(ca.caKey),
    notBefore: new Date(now - 60_000),
    notAfter: new Date(Math.min(now + validityMs, caCert.notAfter.getTime())),
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIP(h) ? 'ip' : 'dns', value: h }))),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { cert: cert.toString('pem'), key: await keyPem(keys.privateKey) };
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

/**
 * A bundle that serves `hosts`: keeps the CA when it is still good (so the caBundle does not change and
 * nothing is refused during a serving-cert renewal), else makes a new CA and keeps the old one as
 * `previousCaCert` while it is still valid.
 */
export async function renewBundle(
  old: CertBundle | undefined,
  o: CertOptions & { renewBeforeMs: number },
  now = Date.now(),
): Promise<CertBundle> {
  let ca: { caCert: string; caKey: string } | undefined;
  let previousCaCert: string | undefined;
  if (old?.caCert && old.caKey) {
    try {
      const left = validity(old.caCert).notAfter - now;
      if (left > o.renewBeforeMs) ca = { caCert: old.caCert, caKey: old.caKey };
      else if (left > 0) previousCaCert = old.caCert;
      if (ca && old.previousCaCert && validity(old.previousCaCert).notAfter > now) previousCaCert = old.previousCaCert;
    } catch {
      ca = undefined;
    }
  }
  ca ??= await createCA(o.caValidityMs);
  const serving = await issueServingCert(ca, o.hosts, o.certValidityMs);
  return { ...ca, ...serving, ...(previousCaCert ? { previousCaCert } : {}) };
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

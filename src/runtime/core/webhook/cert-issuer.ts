// Issuing certificates needs an X.509 builder (@peculiar/x509 and its ASN.1 schemas); reading and checking
// them needs only node:crypto (certs.ts). The manager loads this module only when a certificate must be
// issued (first start, renewal), so a manager that finds a good Secret never holds the builder in memory.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import { validity, type CertBundle, type CertOptions } from './certs.js';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

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

// Test PKI: a throw-away CA per control plane, issuing the apiserver serving certificate, the admin
// client certificate and webhook serving certificates. ECDSA P-256 keeps generation in milliseconds.
// @peculiar/x509 resolves its ASN.1 schemas through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1]);

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface KeyPairPem {
  /** PEM certificate. */
  readonly cert: string;
  /** PEM PKCS#8 private key. */
  readonly key: string;
}

export interface CertificateAuthority extends KeyPairPem {
  /** Issues a certificate signed by this CA. */
  issue(options: IssueOptions): Promise<KeyPairPem>;
}

export interface IssueOptions {
  /** Subject common name (for client certificates: the Kubernetes user name). */
  readonly commonName: string;
  /** Subject organizations (for client certificates: the Kubernetes groups). */
  readonly organizations?: readonly string[];
  /** IP subject alternative names, e.g. 127.0.0.1 for loopback servers. */
  readonly ips?: readonly string[];
  /** DNS subject alternative names. */
  readonly dnsNames?: readonly string[];
  /** Extended key usage: a TLS server, a TLS client, or both. */
  readonly usage: 'server' | 'client' | 'both';
}

const DAY = 24 * 60 * 60 * 1000;

function serial(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');
}

function validity(): { notBefore: Date; notAfter: Date } {
  // Back-dated a little so clock skew between steps never makes a fresh certificate "not yet valid".
  const now = Date.now();
  return { notBefore: new Date(now - 60_000), notAfter: new Date(now + 7 * DAY) };
}

function dn(commonName: string, organizations: readonly string[] = []): string {
  const esc = (v: string) => v.replace(/([,+"\\<>;=])/g, '\\$1');
  return [`CN=${esc(commonName)}`, ...organizations.map((o) => `O=${esc(o)}`)].join(', ');
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

/** A PEM key pair not bound to any certificate, e.g. for service-account token signing. */
export async function generateKeyPairPem(): Promise<{ publicKey: string; privateKey: string }> {
  const keys = await generateKeys();
  const spki = await webcrypto.subtle.exportKey('spki', keys.publicKey);
  return { publicKey: x509.PemConverter.encode(spki, 'PUBLIC KEY'), privateKey: await keyPem(keys.privateKey) };
}

/** Creates a self-signed CA that can issue server and client certificates. */
export async function createCertificateAuthority(commonName = 'cdk8s-kruise-test-ca'): Promise<CertificateAuthority> {
  const caKeys = await generateKeys();
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: dn(commonName),
    ...validity(),
    signingAlgorithm: algorithm,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  async function issue(options: IssueOptions): Promise<KeyPairPem> {
    const keys = await generateKeys();
    const usages: string[] = [];
    if (options.usage !== 'client') usages.push(x509.ExtendedKeyUsage.serverAuth);
    if (options.usage !== 'server') usages.push(x509.ExtendedKeyUsage.clientAuth);
    const sans = [
      ...(options.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
      ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ];
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: dn(options.commonName, options.organizations),
      issuer: caCert.subject,
      ...validity(),
      signingAlgorithm: algorithm,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension(usages, false),
        await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
        ...(sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans, false)] : []),
      ],
    });
    return { cert: cert.toString('pem'), key: await keyPem(keys.privateKey) };
  }

  return { cert: caCert.toString('pem'), key: await keyPem(caKeys.privateKey), issue };
}

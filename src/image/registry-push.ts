import { sha256 } from './layer.js';
import {
  apiHost,
  credentialsFor,
  isLoopbackHost,
  parseChallenge,
  type Credentials,
  type DockerConfig,
  type PushReference,
} from './registry-auth.js';

/** One manifest (image or artifact) and the blobs it references, all in memory. */
export interface PushContent {
  /** The manifest's bytes, exactly as digested. */
  readonly manifest: Buffer;
  readonly manifestMediaType: string;
  /** Every blob the manifest references (config and layers), by digest. */
  readonly blobs: ReadonlyMap<string, Buffer>;
}

export interface PushOptions {
  readonly config: DockerConfig;
  /** Plain HTTP for a registry that is not on loopback (loopback registries are always plain HTTP). */
  readonly insecure?: boolean;
  readonly log?: (line: string) => void;
}

export interface PushResult {
  readonly digest: string;
  /** Blobs uploaded; the rest were already in the repository. */
  readonly uploaded: number;
  readonly skipped: number;
  readonly uploadedBytes: number;
}

/** Longest piece of a registry's error body quoted in a message. */
const MAX_QUOTED_BODY = 300;
/** Token answers are small JSON; a larger one is not a token answer. */
const MAX_TOKEN_BODY = 1 << 20;
const SMALL_REQUEST_MS = 60_000;
/** A blob upload may take long on a slow link; the bound only catches a registry that stopped answering. */
const BLOB_REQUEST_MS = 30 * 60_000;

async function bodyExcerpt(res: Response): Promise<string> {
  const text = await readBounded(res, 64 << 10).then(
    (b) => b.toString('utf8'),
    () => '',
  );
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine ? `: ${JSON.stringify(oneLine.slice(0, MAX_QUOTED_BODY))}` : '';
}

/** Reads at most `limit` bytes of a body; more is an error (a hostile or broken endpoint). */
async function readBounded(res: Response, limit: number): Promise<Buffer> {
  if (!res.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > limit) throw new Error(`answer larger than ${limit} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/**
 * A client of the OCI distribution API for one repository: HEAD/POST/PUT with the auth flow registries
 * use (401 + `WWW-Authenticate`: Basic with docker config credentials, or Bearer with a token fetched from
 * the realm, anonymously or with those credentials).
 */
class RepositoryClient {
  private authorization?: string;
  private credentials?: Credentials | null;
  base: string;
  /**
   * A registry on loopback is tried over TLS first and, when that connection fails, over plain HTTP (as docker
   * treats localhost): a test registry is usually plain, a local mirror may have a certificate.
   */
  private plainFallback: boolean;
  /** Why TLS failed on a loopback registry before falling back to plain HTTP (named if plain HTTP fails too). */
  private tlsFailure?: string;

  constructor(
    private readonly ref: PushReference,
    private readonly options: PushOptions,
  ) {
    const plain = options.insecure === true;
    this.plainFallback = !plain && isLoopbackHost(ref.registry);
    this.base = `${plain ? 'http' : 'https'}://${apiHost(ref.registry)}`;
  }

  private get plain(): boolean {
    return this.base.startsWith('http:');
  }

  url(path: string): string {
    return `${this.base}/v2/${this.ref.repository}/${path}`;
  }

  private async creds(): Promise<Credentials | undefined> {
    if (this.credentials === undefined) this.credentials = (await credentialsFor(this.options.config, this.ref.registry)) ?? null;
    return this.credentials ?? undefined;
  }

  private async authenticate(res: Response): Promise<void> {
    const challenge = parseChallenge(res.headers.get('www-authenticate'));
    const creds = await this.creds();
    if (challenge.scheme === 'basic') {
      if (!creds)
        throw new Error(
          `${this.ref.registry} asks for a user name and password; none in docker config (docker login ${this.ref.registry})`,
        );
      if (creds.kind !== 'basic')
        throw new Error(`${this.ref.registry} asks for Basic auth, but docker config holds an identity token for it`);
      this.authorization = `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`;
      return;
    }
    const realm = new URL(challenge.params.realm!);
    if (realm.protocol === 'http:' && !this.plain) {
      throw new Error(`${this.ref.registry} sends its token requests to plain-HTTP ${realm.origin}; refusing to send credentials there`);
    }
    const scope = `repository:${this.ref.repository}:pull,push`;
    let tokenRes: Response;
    if (creds?.kind === 'identity-token') {
      const form = new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: creds.token,
        service: challenge.params.service ?? '',
        scope,
        client_id: 'cdk8s-kruise',
      });
      tokenRes = await fetch(realm, { method: 'POST', body: form, signal: AbortSignal.timeout(SMALL_REQUEST_MS), redirect: 'error' });
    } else {
      if (challenge.params.service) realm.searchParams.set('service', challenge.params.service);
      realm.searchParams.set('scope', scope);
      const headers: Record<string, string> = {};
      if (creds) headers.authorization = `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`;
      tokenRes = await fetch(realm, { headers, signal: AbortSignal.timeout(SMALL_REQUEST_MS), redirect: 'error' });
    }
    if (!tokenRes.ok) {
      throw new Error(
        `${realm.origin} refused a push token for ${this.ref.repository} (${tokenRes.status}${await bodyExcerpt(tokenRes)})` +
          (creds ? '; check the docker config credentials' : `; no credentials for ${this.ref.registry} in docker config (docker login)`),
      );
    }
    let answer: { token?: unknown; access_token?: unknown };
    try {
      answer = JSON.parse((await readBounded(tokenRes, MAX_TOKEN_BODY)).toString('utf8')) as typeof answer;
    } catch (e) {
      throw new Error(`${realm.origin} answered the token request with something other than token JSON (${(e as Error).message})`, {
        cause: e,
      });
    }
    const token = typeof answer?.token === 'string' ? answer.token : typeof answer?.access_token === 'string' ? answer.access_token : '';
    if (!token) throw new Error(`${realm.origin} answered the token request without a "token" or "access_token"`);
    this.authorization = `Bearer ${token}`;
  }

  /** One request, authenticated on the first 401 and sent again once; a second 401 is an error. */
  async request(method: string, url: string, init: { body?: Buffer; headers?: Record<string, string>; timeoutMs?: number } = {}) {
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { ...init.headers };
      if (this.authorization) headers.authorization = this.authorization;
      let res: Response;
      try {
        res = await fetch(url, {
          method,
          headers,
          ...(init.body ? { body: init.body } : {}),
          signal: AbortSignal.timeout(init.timeoutMs ?? SMALL_REQUEST_MS),
        });
        this.plainFallback = false;
      } catch (e) {
        if (this.plainFallback && url.startsWith(`${this.base}/`)) {
          this.plainFallback = false;
          const tlsCause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
          this.tlsFailure = tlsCause?.code ?? tlsCause?.message ?? (e as Error).message;
          const https = this.base;
          this.base = `http://${apiHost(this.ref.registry)}`;
          url = `${this.base}${url.slice(https.length)}`;
          attempt--;
          continue;
        }
        const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
        const hint = this.tlsFailure
          ? this.tlsNote()
          : this.plain
            ? ''
            : ' (a registry that speaks plain HTTP needs --insecure; a private CA needs NODE_EXTRA_CA_CERTS=<ca.pem>)';
        throw new Error(
          `cannot reach ${this.base} for ${method} ${new URL(url).pathname}: ${cause?.code ?? cause?.message ?? (e as Error).message}${hint}`,
          {
            cause: e,
          },
        );
      }
      if (res.status !== 401) return res;
      if (attempt > 0) {
        throw new Error(
          `${this.ref.registry} refused ${method} ${new URL(url).pathname} with the credentials from docker config (401${await bodyExcerpt(res)})`,
        );
      }
      await res.body?.cancel();
      await this.authenticate(res);
    }
  }

  /** Why a loopback registry is spoken to over plain HTTP, for errors that may come from that. */
  private tlsNote(): string {
    return this.tlsFailure ? ` (plain HTTP after TLS failed: ${this.tlsFailure}; a private CA needs NODE_EXTRA_CA_CERTS=<ca.pem>)` : '';
  }

  async expect(res: Response, ok: readonly number[], what: string): Promise<Response> {
    if (ok.includes(res.status)) return res;
    throw new Error(`${this.ref.registry}: ${what} failed (${res.status}${await bodyExcerpt(res)})${this.tlsNote()}`);
  }
}

/**
 * Checks that `ref` takes pushes with the configured credentials (starts a blob upload and cancels it), so a
 * wrong password or a missing `docker login` shows before the image is built rather than after.
 */
export async function checkPushAccess(ref: PushReference, options: PushOptions): Promise<void> {
  const client = new RepositoryClient(ref, options);
  const start = await client.expect(await client.request('POST', client.url('blobs/uploads/')), [202], 'starting a blob upload');
  await start.body?.cancel();
  const location = start.headers.get('location');
  if (!location) return;
  const target = new URL(location, client.base);
  if (target.origin !== new URL(client.base).origin) return;
  // Registries expire abandoned uploads anyway; cancelling is a courtesy, so its answer does not matter.
  const cancel = await client.request('DELETE', target.href).catch(() => undefined);
  await cancel?.body?.cancel();
}

/**
 * Pushes a manifest and its blobs to `ref` over the OCI distribution API: blobs the repository lacks are
 * uploaded (POST, then one PUT with the digest), then the manifest is PUT by tag (or by digest). The
 * registry must answer with the manifest's own digest.
 */
export async function pushContent(content: PushContent, ref: PushReference, options: PushOptions): Promise<PushResult> {
  const client = new RepositoryClient(ref, options);
  const log = options.log ?? (() => {});
  const digest = sha256(content.manifest);
  if (ref.digest !== undefined && ref.digest !== digest) {
    throw new Error(`the push target pins ${ref.digest}, but the image's manifest digest is ${digest}`);
  }
  let uploaded = 0;
  let skipped = 0;
  let uploadedBytes = 0;
  for (const [blobDigest, blob] of content.blobs) {
    if (sha256(blob) !== blobDigest) throw new Error(`blob ${blobDigest} does not hash to its digest; refusing to push it`);
    const head = await client.request('HEAD', client.url(`blobs/${blobDigest}`));
    await head.body?.cancel();
    if (head.status === 200) {
      skipped++;
      continue;
    }
    if (head.status !== 404) await client.expect(head, [404], `checking blob ${blobDigest}`);
    const start = await client.expect(await client.request('POST', client.url('blobs/uploads/')), [202], 'starting a blob upload');
    await start.body?.cancel();
    const location = start.headers.get('location');
    if (!location) throw new Error(`${ref.registry} started a blob upload without a Location header`);
    const target = new URL(location, client.base);
    if (target.origin !== new URL(client.base).origin) {
      throw new Error(`${ref.registry} sent the upload to another origin (${target.origin}); refusing to send credentials there`);
    }
    target.searchParams.set('digest', blobDigest);
    log(`uploading ${blobDigest} (${(blob.length / 1e6).toFixed(1)} MB)`);
    const put = await client.request('PUT', target.href, {
      body: blob,
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(blob.length) },
      timeoutMs: BLOB_REQUEST_MS,
    });
    await client.expect(put, [201, 204], `uploading blob ${blobDigest}`);
    await put.body?.cancel();
    uploaded++;
    uploadedBytes += blob.length;
  }
  const manifestRes = await client.request('PUT', client.url(`manifests/${ref.tag ?? digest}`), {
    body: content.manifest,
    headers: { 'content-type': content.manifestMediaType },
  });
  await client.expect(manifestRes, [201, 200], `putting the manifest ${ref.tag ?? digest}`);
  await manifestRes.body?.cancel();
  const answered = manifestRes.headers.get('docker-content-digest');
  if (answered && answered !== digest) {
    throw new Error(`${ref.registry} stored the manifest as ${answered}, not as ${digest} (it rewrote the manifest)`);
  }
  return { digest, uploaded, skipped, uploadedBytes };
}

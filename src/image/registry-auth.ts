import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { imageReferenceError } from '../contracts/validators.js';

const run = promisify(execFile);

/** Docker Hub's names: what users write, the config key `docker login` writes, and the API host. */
const DOCKER_HUB = { name: 'docker.io', configKey: 'https://index.docker.io/v1/', apiHost: 'registry-1.docker.io' } as const;

/** A push target, cut into the parts the distribution API needs. */
export interface PushReference {
  /** Registry host with port as written (`docker.io` for Docker Hub). */
  readonly registry: string;
  /** Repository path in the registry, e.g. `platform/cdk8s-kruise` (`library/x` for a bare Docker Hub name). */
  readonly repository: string;
  /** The tag to PUT the manifest under; absent when the reference names a digest only. */
  readonly tag?: string;
  /** A digest the reference pins; the push fails unless the image has it. */
  readonly digest?: string;
}

/** Hosts where plain HTTP is the norm and the only choice (a registry on this machine). */
export function isLoopbackHost(registry: string): boolean {
  const host = registry.startsWith('[') ? registry.slice(1, registry.indexOf(']')) : registry.replace(/:\d+$/, '');
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Parses where to push, the way Docker reads references: the first component is a registry when it looks
 * like a host (a `.`, a `:port`, `localhost` or brackets), otherwise the image goes to Docker Hub.
 */
export function parsePushReference(ref: string): PushReference {
  const problem = imageReferenceError(ref);
  if (problem !== undefined) {
    throw new Error(
      `push target ${JSON.stringify(ref.length > 200 ? `${ref.slice(0, 200)}…` : ref)} is not an image reference: ${problem}`,
    );
  }
  const at = ref.indexOf('@');
  const nameTag = at >= 0 ? ref.slice(0, at) : ref;
  const digest = at >= 0 ? ref.slice(at + 1) : undefined;
  if (digest !== undefined && !digest.startsWith('sha256:')) throw new Error(`push target ${ref}: only sha256 digests are supported`);
  const slash = nameTag.lastIndexOf('/');
  const colon = nameTag.lastIndexOf(':');
  const name = colon > slash ? nameTag.slice(0, colon) : nameTag;
  const tag = colon > slash ? nameTag.slice(colon + 1) : undefined;
  const first = name.indexOf('/');
  const head = first >= 0 ? name.slice(0, first) : '';
  const hasRegistry = first >= 0 && (/[.:[]/.test(head) || head === 'localhost');
  const registry = hasRegistry ? head.toLowerCase() : DOCKER_HUB.name;
  let repository = hasRegistry ? name.slice(first + 1) : name;
  if (registry === DOCKER_HUB.name && !repository.includes('/')) repository = `library/${repository}`;
  if (tag === undefined && digest === undefined) {
    throw new Error(`push target ${ref} has neither a tag nor a digest; name the tag to push, e.g. ${ref}:<version>`);
  }
  return { registry, repository, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** The host the distribution API answers on. */
export function apiHost(registry: string): string {
  return registry === DOCKER_HUB.name ? DOCKER_HUB.apiHost : registry;
}

/** Credentials for one registry, as docker config holds them. */
export type Credentials =
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  /** An OAuth2 refresh token (`identitytoken`), exchanged at the token endpoint. */
  | { readonly kind: 'identity-token'; readonly token: string };

/** Where docker config is read from: `--docker-config`, `$DOCKER_CONFIG/config.json`, `~/.docker/config.json`. */
export function dockerConfigPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return explicit;
  if (env.DOCKER_CONFIG) return join(env.DOCKER_CONFIG, 'config.json');
  return join(homedir(), '.docker', 'config.json');
}

/** `https://Registry.Example:5000/v1/` and `registry.example:5000` are the same key (as docker treats them). */
function configKeyHost(key: string): string {
  const host = key
    .replace(/^[a-z]+:\/\//i, '')
    .split('/')[0]!
    .toLowerCase();
  return host === 'index.docker.io' || host === DOCKER_HUB.apiHost ? DOCKER_HUB.name : host;
}

export interface DockerConfig {
  /** Stored credentials by registry host. */
  readonly auths: ReadonlyMap<string, Credentials>;
  /** Credential helper per registry host (`credHelpers`). */
  readonly helpers: ReadonlyMap<string, string>;
  /** The default credential store (`credsStore`). */
  readonly store?: string;
}

const HELPER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Parses docker config JSON text (`source` names it in errors). Unknown keys are ignored, as docker does. */
export function parseDockerConfig(text: string, source: string): DockerConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`docker config ${source} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error(`docker config ${source} must be a JSON object`);
  const cfg = raw as Record<string, unknown>;
  const auths = new Map<string, Credentials>();
  if (cfg.auths !== undefined) {
    if (typeof cfg.auths !== 'object' || cfg.auths === null || Array.isArray(cfg.auths)) {
      throw new Error(`docker config ${source}: "auths" must be an object of registry → credentials`);
    }
    for (const [key, value] of Object.entries(cfg.auths as Record<string, unknown>)) {
      const where = `docker config ${source}: auths[${JSON.stringify(key)}]`;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${where} must be an object`);
      const entry = value as Record<string, unknown>;
      const host = configKeyHost(key);
      if (typeof entry.identitytoken === 'string' && entry.identitytoken !== '') {
        auths.set(host, { kind: 'identity-token', token: entry.identitytoken });
      } else if (entry.auth !== undefined && entry.auth !== '') {
        if (typeof entry.auth !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(entry.auth))
          throw new Error(`${where}.auth must be base64 text`);
        const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
        const sep = decoded.indexOf(':');
        if (sep <= 0) throw new Error(`${where}.auth must encode "username:password"`);
        auths.set(host, { kind: 'basic', username: decoded.slice(0, sep), password: decoded.slice(sep + 1) });
      } else if (typeof entry.username === 'string' && typeof entry.password === 'string') {
        auths.set(host, { kind: 'basic', username: entry.username, password: entry.password });
      }
      // An empty entry is what `docker login` leaves when a helper holds the secret: the helper decides.
    }
  }
  const helpers = new Map<string, string>();
  if (cfg.credHelpers !== undefined) {
    if (typeof cfg.credHelpers !== 'object' || cfg.credHelpers === null || Array.isArray(cfg.credHelpers)) {
      throw new Error(`docker config ${source}: "credHelpers" must be an object of registry → helper name`);
    }
    for (const [key, value] of Object.entries(cfg.credHelpers as Record<string, unknown>)) {
      if (typeof value !== 'string' || !HELPER_NAME.test(value)) {
        throw new Error(`docker config ${source}: credHelpers[${JSON.stringify(key)}] must be a helper name (docker-credential-<name>)`);
      }
      helpers.set(configKeyHost(key), value);
    }
  }
  if (cfg.credsStore !== undefined && (typeof cfg.credsStore !== 'string' || !HELPER_NAME.test(cfg.credsStore))) {
    throw new Error(`docker config ${source}: "credsStore" must be a helper name (docker-credential-<name>)`);
  }
  return { auths, helpers, ...(typeof cfg.credsStore === 'string' && cfg.credsStore ? { store: cfg.credsStore } : {}) };
}

/** Reads docker config; a missing file is no credentials (anonymous pushes to open registries work). */
export function readDockerConfig(path: string): DockerConfig {
  if (!existsSync(path)) return { auths: new Map(), helpers: new Map() };
  return parseDockerConfig(readFileSync(path, 'utf8'), path);
}

/** Parses a credential helper's `get` answer (`{"Username": …, "Secret": …}`; user `<token>` means an identity token). */
export function parseHelperAnswer(text: string, helper: string): Credentials {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`docker-credential-${helper} answered with something other than JSON`);
  }
  const answer = raw as { Username?: unknown; Secret?: unknown };
  if (typeof answer !== 'object' || answer === null || typeof answer.Username !== 'string' || typeof answer.Secret !== 'string') {
    throw new Error(`docker-credential-${helper} answered without string "Username" and "Secret"`);
  }
  return answer.Username === '<token>'
    ? { kind: 'identity-token', token: answer.Secret }
    : { kind: 'basic', username: answer.Username, password: answer.Secret };
}

/** The credentials docker would use for `registry`: its helper, else stored auths, else the default store. */
export async function credentialsFor(config: DockerConfig, registry: string): Promise<Credentials | undefined> {
  const host = configKeyHost(registry);
  const helper = config.helpers.get(host) ?? (config.auths.has(host) ? undefined : config.store);
  if (helper === undefined) return config.auths.get(host);
  const server = host === DOCKER_HUB.name ? DOCKER_HUB.configKey : host;
  const child = run(`docker-credential-${helper}`, ['get'], { timeout: 30_000, maxBuffer: 1 << 20 });
  child.child.stdin?.end(server);
  try {
    const { stdout } = await child;
    return parseHelperAnswer(stdout, helper);
  } catch (e) {
    const err = e as Error & { code?: string | number; stdout?: string };
    if (err.code === 'ENOENT')
      throw new Error(`docker config names credential helper docker-credential-${helper}, which is not on PATH`, { cause: e });
    // Helpers answer "credentials not found" with exit 1: no credentials, as docker treats it.
    if (/credentials not found/i.test(err.stdout ?? '')) return config.auths.get(host);
    throw new Error(`docker-credential-${helper} get ${server} failed: ${err.message.split('\n')[0]}`, { cause: e });
  }
}

/** One authentication challenge from a `WWW-Authenticate` header. */
export interface Challenge {
  readonly scheme: 'basic' | 'bearer';
  readonly params: Readonly<Record<string, string>>;
}

/**
 * Parses `WWW-Authenticate` (RFC 7235: a scheme, then `key=value` or `key="quoted"` pairs). Only Basic and
 * Bearer are used by registries; anything else is an error naming the header.
 */
export function parseChallenge(header: string | null): Challenge {
  if (!header) throw new Error('the registry answered 401 without a WWW-Authenticate header');
  const m = /^\s*([A-Za-z]+)\s*(.*)$/s.exec(header);
  const scheme = m?.[1]?.toLowerCase();
  if (scheme !== 'basic' && scheme !== 'bearer') {
    throw new Error(`the registry asks for ${JSON.stringify(header.slice(0, 100))} authentication; only Basic and Bearer are supported`);
  }
  const params: Record<string, string> = {};
  const re = /([A-Za-z_][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))\s*(?:,|$)/g;
  for (const p of m![2]!.matchAll(re)) params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
  if (scheme === 'bearer') {
    const realm = params.realm;
    let url: URL | undefined;
    try {
      url = realm ? new URL(realm) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new Error(`the registry's Bearer challenge has no usable realm (token URL): ${JSON.stringify(header.slice(0, 200))}`);
    }
  }
  return { scheme, params };
}

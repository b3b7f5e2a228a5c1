/**
 * Redaction of secret material in what the runtime logs, pure so it can be table-tested. Two nets:
 * - by field name, case-insensitive and at any depth (`Authorization`, `stringData`, `clientSecret`,
 *   `registry_token` ...);
 * - by value, wherever it appears (also inside error messages and the log message itself): PEM blocks,
 *   docker config JSON (plain or base64), bearer/basic credentials and JWTs.
 */
export const CENSOR = '[redacted]';

/**
 * Field names (lower-cased, without `-`/`_`) that only ever carry secret material: a Secret's payload,
 * private keys, tokens, registry credentials (docker config `auths`, CRI AuthConfig), HTTP credentials.
 */
const SECRET_FIELD =
  /^(data|stringdata|auths?|authorization|proxyauthorization|cookie|setcookie|passw(or)?d|.*password|.*token|.*privatekey|.*secretkey|cakey|clientsecret|apikey|credentials?)$/;

/**
 * `key` is the work-queue key (namespace/name) in every controller log line, so it is kept when it is a
 * plain string; any other value under `key` (a key pair, a Buffer) is censored, and a PEM string is
 * caught by the value patterns.
 */
const KEY_FIELD = 'key';

const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]{1,64}-----[\s\S]*?(?:-----END [A-Z0-9 ]{1,64}-----\r?\n?|$)/g;
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]+=*/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
/** A docker config JSON, or its base64 (`{"auths":` / `{"auths" :` encode to these prefixes). */
const DOCKER_CONFIG = /"auths"\s*:|eyJhdXRocyI6|eyJhdXRocyIgO/;

/** Objects nested deeper, or more fields than this in one log line, are cut (a log line is not a dump). */
const MAX_DEPTH = 12;
const MAX_NODES = 5_000;

export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name.toLowerCase().replace(/[-_]/g, ''));
}

/** A string with secret-looking parts replaced; a docker config is replaced whole. */
export function redactString(s: string): string {
  if (DOCKER_CONFIG.test(s)) return CENSOR;
  if (!s.includes('-----BEGIN') && !/bearer|basic/i.test(s) && !s.includes('eyJ')) return s;
  return s.replace(PEM_BLOCK, CENSOR).replace(AUTH_SCHEME, `$1 ${CENSOR}`).replace(JWT, CENSOR);
}

/** A copy of `value` with secret fields and secret-looking strings censored. Never throws, never mutates. */
export function redactSecrets(value: unknown): unknown {
  let nodes = 0;
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return redactString(v);
    if (typeof v !== 'object' || v === null) return v;
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return CENSOR;
    if (seen.has(v)) return '[circular]';
    if (depth >= MAX_DEPTH || ++nodes > MAX_NODES) return '[truncated]';
    seen.add(v);
    if (v instanceof Error) {
      return { type: v.name, message: redactString(v.message), ...(v.stack ? { stack: redactString(v.stack) } : {}) };
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === KEY_FIELD) out[k] = typeof x === 'string' ? redactString(x) : x === undefined || x === null ? x : CENSOR;
      else if (isSecretField(k)) out[k] = x === undefined ? x : CENSOR;
      else out[k] = walk(x, depth + 1);
    }
    return out;
  };
  return walk(value, 0);
}

import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Field names that only ever carry secret material: a Secret's payload, private keys, tokens, registry
 * credentials (docker config `auths`, CRI AuthConfig) and HTTP credentials.
 */
const SECRET_FIELDS = [
  'data',
  'stringData',
  'privateKey',
  'caKey',
  'token',
  'bearerToken',
  'identityToken',
  'registryToken',
  'password',
  'auth',
  'auths',
  'authorization',
  'cookie',
] as const;

/**
 * `key` is the work-queue key (namespace/name) in every controller log line, so it is only censored when
 * it holds key material: a PEM private key or anything that is not a plain string (a key pair, a Buffer).
 */
const KEY_FIELD = 'key';

/** Secrets nest at most this deep in what the runtime logs (e.g. `review.object.data`). */
const DEPTH = 3;

const CENSOR = '[redacted]';

function atEveryDepth(field: string): string[] {
  return Array.from({ length: DEPTH + 1 }, (_, d) => [...Array<string>(d).fill('*'), field].join('.'));
}

/** Redaction paths of the runtime logger (exported for tests). */
export const REDACT_PATHS: readonly string[] = [...SECRET_FIELDS, KEY_FIELD].flatMap(atEveryDepth);

function censor(value: unknown, path: string[]): unknown {
  if (path[path.length - 1] !== KEY_FIELD) return CENSOR;
  if (typeof value === 'string' && !/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(value)) return value;
  return CENSOR;
}

/**
 * JSON logs on stdout (or `destination`). Secret material never reaches a log line: the fields that could
 * carry it are redacted by name at every depth the runtime logs, and the code logs object keys, not objects.
 */
export function createLogger(opts: { level?: string; name?: string; destination?: DestinationStream } = {}): Logger {
  return pino(
    {
      name: opts.name ?? 'cdk8s-kruise',
      level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { pid: process.pid },
      redact: { paths: [...REDACT_PATHS], censor },
    },
    opts.destination,
  );
}

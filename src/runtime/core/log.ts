import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs on stdout. Secret material never reaches a log line: the fields that could carry it are
 * redacted by path, and the code logs object keys, not objects.
 */
export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: opts.name ?? 'cdk8s-kruise',
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    base: { pid: process.pid },
    redact: {
      paths: ['data', '*.data', 'stringData', '*.stringData', 'key', '*.key', 'token', '*.token', 'caKey', '*.caKey', 'headers.authorization'],
      censor: '[redacted]',
    },
  });
}

import { pino, type DestinationStream, type Logger } from 'pino';
import { redactSecrets, redactString } from './redact.js';

export type { Logger };

/**
 * JSON logs on stdout (or `destination`). Secret material never reaches a log line: fields that could carry
 * it are redacted by name (any case, any depth) and secret-looking values wherever they appear
 * (src/runtime/core/redact.ts); the code also logs object keys, not objects.
 */
export function createLogger(opts: { level?: string; name?: string; destination?: DestinationStream } = {}): Logger {
  return redactChildBindings(
    pino(
      {
        name: opts.name ?? 'cdk8s-kruise',
        level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
        base: { pid: process.pid },
        formatters: {
          log: (obj) => redactSecrets(obj) as Record<string, unknown>,
        },
        hooks: {
          // The message and format arguments are user-influenced too (names, error texts).
          logMethod(args, method) {
            const [first, ...rest] = args as unknown[];
            // pino takes the message of a logged Error from the Error itself: give it the redacted one.
            const head = first instanceof Error ? [{ err: first }, ...(typeof rest[0] === 'string' ? [] : [first.message])] : [first];
            const clean = [...head, ...rest].map((a, i) =>
              i === 0 && typeof a === 'object' ? a : typeof a === 'string' ? redactString(a) : a,
            );
            return method.apply(this, clean as Parameters<typeof method>);
          },
        },
      },
      opts.destination,
    ),
  );
}

/** pino writes child bindings as they are given: they pass through the same redaction. */
function redactChildBindings(logger: Logger): Logger {
  const child = logger.child.bind(logger);
  logger.child = ((bindings: Record<string, unknown>, options?: Parameters<Logger['child']>[1]) =>
    redactChildBindings(
      child(redactSecrets(bindings) as Record<string, unknown>, options) as unknown as Logger,
    )) as unknown as Logger['child'];
  return logger;
}

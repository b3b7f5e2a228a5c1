import type { Logger } from 'pino';

/**
 * Runs `stop` once on SIGTERM/SIGINT, then exits 0 (1 if stopping failed or took longer than
 * `timeoutMs`). A second signal exits at once.
 */
export function installShutdown(stop: () => Promise<void>, logger: Logger, timeoutMs = 10_000): void {
  let stopping = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal: sig }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal: sig }, 'shutting down');
    const force = setTimeout(() => {
      logger.error({ timeoutMs }, 'graceful shutdown timed out');
      process.exit(1);
    }, timeoutMs);
    force.unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err: (err as Error).message }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

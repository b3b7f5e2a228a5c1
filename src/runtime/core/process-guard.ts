import type { Logger } from 'pino';

/**
 * Process-level last resort of the runtime processes (manager and daemon). Without it one stray rejected
 * promise ends the process, and with it both webhook replicas behind a `failurePolicy: Fail` webhook.
 *
 * - An unhandled rejection is a bug in a code path that forgot a `.catch`: the synchronous state of the
 *   process is intact, so it is logged and the process keeps serving.
 * - An uncaught exception unwound some synchronous code half-way. A lone one is logged and tolerated
 *   (restarting would drop warm caches and fail admission requests for longer than the fault did); a
 *   burst means the process is stuck in a broken state, and it exits so the kubelet restarts it.
 */
export interface GuardPolicy {
  /** Uncaught exceptions tolerated within `windowMs`; one more exits. */
  readonly maxUncaught: number;
  readonly windowMs: number;
}

export const DEFAULT_GUARD_POLICY: GuardPolicy = { maxUncaught: 5, windowMs: 60_000 };

/**
 * Whether the process survives an uncaught exception at `nowMs`, given the times of earlier ones. Returns
 * the history to keep (only the window).
 */
export function onUncaught(
  history: readonly number[],
  nowMs: number,
  policy: GuardPolicy = DEFAULT_GUARD_POLICY,
): { exit: boolean; history: number[] } {
  const recent = [...history.filter((t) => nowMs - t < policy.windowMs), nowMs];
  return { exit: recent.length > policy.maxUncaught, history: recent };
}

const describe = (e: unknown): { err: string; stack?: string } =>
  e instanceof Error
    ? { err: e.message, ...(e.stack ? { stack: e.stack.split('\n').slice(0, 8).join('\n') } : {}) }
    : { err: String(e).slice(0, 500) };

/** Installs the handlers once per process; returns a function removing them (tests). */
export function installProcessGuards(
  logger: Logger,
  policy: GuardPolicy = DEFAULT_GUARD_POLICY,
  exit: (code: number) => void = (c) => process.exit(c),
): () => void {
  let history: number[] = [];
  const rejection = (reason: unknown) => {
    logger.error(describe(reason), 'unhandled promise rejection (bug); process keeps running');
  };
  const exception = (err: unknown) => {
    const d = onUncaught(history, Date.now(), policy);
    history = d.history;
    if (d.exit) {
      logger.fatal(
        { ...describe(err), count: history.length, windowMs: policy.windowMs },
        'repeated uncaught exceptions; exiting for a restart',
      );
      exit(1);
      return;
    }
    logger.error({ ...describe(err), count: history.length }, 'uncaught exception (bug); process keeps running');
  };
  process.on('unhandledRejection', rejection);
  process.on('uncaughtException', exception);
  return () => {
    process.off('unhandledRejection', rejection);
    process.off('uncaughtException', exception);
  };
}

/** Defaults of our kinds' fields that the controllers, the daemon and the docs must agree on (upstream's). */

/** ImagePullJob `pullPolicy.timeoutSeconds` when unset. */
export const DEFAULT_PULL_TIMEOUT_SECONDS = 600;
/** ImagePullJob `pullPolicy.backoffLimit` when unset. */
export const DEFAULT_BACKOFF_LIMIT = 3;

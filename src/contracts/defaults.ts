/** Defaults of our kinds' fields that the controllers, the daemon and the docs must agree on (upstream's). */

/** ImagePullJob `pullPolicy.timeoutSeconds` when unset. */
export const DEFAULT_PULL_TIMEOUT_SECONDS = 600;
/** ImagePullJob `pullPolicy.backoffLimit` when unset. */
export const DEFAULT_BACKOFF_LIMIT = 3;
/** CloneSet `updateStrategy.maxUnavailable` when unset: the webhook writes it, the controller assumes it. */
export const CLONESET_DEFAULT_MAX_UNAVAILABLE = '20%';
/** CloneSet `revisionHistoryLimit` when unset: the webhook writes it, the controller assumes it. */
export const CLONESET_DEFAULT_REVISION_HISTORY_LIMIT = 10;

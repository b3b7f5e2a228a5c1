import { positiveIntOption } from '../../core/options.js';

/** Concurrent CRI pulls of one node (upstream's flag name). */
export const MAX_PULL_WORKERS = positiveIntOption('maxPullWorkers', '--max-workers-for-pull-image <n>', 'images pulled at once', 2);

import { positiveIntOption } from '../../core/options.js';

/** Probes of this node running at once (exec, http and tcp alike); a probe due while all run waits for a slot. */
export const MAX_CONCURRENT_PROBES = positiveIntOption(
  'maxConcurrentProbes',
  '--max-concurrent-probes <n>',
  'PodProbeMarker probes run at once on this node',
  16,
);

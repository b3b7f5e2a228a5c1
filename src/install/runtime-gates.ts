import { BUNDLED_RUNTIME_GATES } from '../contracts/features.js';
import type { ResolvedGates } from './feature-gates.js';

/**
 * The `--feature-gates` value for the bundled runtime: the resolved gates restricted to those the
 * runtime declares (it refuses unknown names, and gates of features it does not implement would only be
 * noise). Upstream installs get the full list (see the openkruise target report).
 */
export function bundledFeatureGatesFlag(gates: ResolvedGates): string {
  return gates.flag
    .split(',')
    .filter((part) => part && part.split('=')[0]! in BUNDLED_RUNTIME_GATES)
    .join(',');
}

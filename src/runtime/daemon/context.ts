import type { ControllerContext } from '../core/index.js';
import type { CriClient } from '../cri/client.js';

/** What a daemon controller gets: the manager's context plus its node and the node's CRI runtime. */
export interface DaemonContext extends ControllerContext {
  readonly nodeName: string;
  readonly cri: CriClient;
  /** Runtime name for pod-status container IDs (`containerd` in `containerd://…`); from CRI Version. */
  runtimeScheme(): Promise<string>;
  /**
   * Registers a callback for when the CRI runtime answers again after an outage, so work that
   * failed meanwhile is retried at once instead of after its (long) backoff.
   */
  onCriRecovered(cb: () => void): void;
  /** Registers work to run once the caches are synced, before the workers start (e.g. a listening socket); a failure fails the start. */
  onStart(cb: () => Promise<void>): void;
  /** Registers work to run when the daemon stops (e.g. closing that socket). */
  onStop(cb: () => Promise<void>): void;
}

import type { CriClient } from '../../cri/client.js';
import type { Container } from '../../core/types.js';
import { clampTimerSeconds } from '../../core/timers.js';
import { stopTimeoutSeconds } from './decision.js';
import { runPreStop } from '../prestop.js';

export { planPreStop, type PreStopPlan } from '../prestop.js';

export interface KillRequest {
  readonly containerId: string;
  /**
   * The container as the pod's own spec declares it, read from the API server when the kill runs. Its
   * `lifecycle.preStop` is the only hook executed: the CRR's copy is informational and never trusted.
   */
  readonly podContainer: Container | undefined;
  /** CRR strategy's terminationGracePeriodSeconds (the pod's, copied by the webhook). */
  readonly gracePeriodSeconds?: number;
  /** Pod IP, the host of an httpGet preStop that names none (as the kubelet does). */
  readonly podIP?: string;
}

export interface KillOutcome {
  readonly preStopMs: number;
  /** Non-fatal preStop problem (the kubelet also kills after a failed hook). */
  readonly preStopError?: string;
}

/**
 * Stops one container as the kubelet's KillContainer does: preStop within the grace period, then
 * CRI StopContainer with what is left of it (at least 2 s), which escalates to SIGKILL.
 * A failing preStop does not prevent the stop; a failing stop is the error.
 */
export async function killContainer(cri: CriClient, req: KillRequest): Promise<KillOutcome> {
  // A grace period past the timer range would otherwise become a 1 ms timeout.
  const grace = clampTimerSeconds(req.gracePeriodSeconds ?? 30);
  const started = Date.now();
  let preStopError: string | undefined;
  try {
    await runPreStop(cri, req, grace);
  } catch (err) {
    preStopError = (err as Error).message;
  }
  const preStopMs = Date.now() - started;
  await cri.stopContainer(req.containerId, stopTimeoutSeconds(grace, preStopMs));
  return { preStopMs, ...(preStopError ? { preStopError } : {}) };
}

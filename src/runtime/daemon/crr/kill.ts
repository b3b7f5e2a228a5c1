import type { SidecarShutdown } from '../../../api/container-patterns.js';
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
  /**
   * A clean shutdown the pod declares for this container (kruise.cdk8s.io/terminate-sidecars), tried first: when the
   * container exits within {@link SHUTDOWN_WAIT_SECONDS} of it, nothing else is done; otherwise the stop goes on as below.
   */
  readonly shutdown?: SidecarShutdown;
}

export interface KillOutcome {
  /** `shutdown`: the container exited after its declared clean shutdown; `stop`: preStop and CRI StopContainer. */
  readonly via: 'shutdown' | 'stop';
  /** Why the declared shutdown did not stop the container (then it was stopped as usual). */
  readonly shutdownError?: string;
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
  let shutdownError: string | undefined;
  if (req.shutdown) {
    const wait = Math.min(SHUTDOWN_WAIT_SECONDS, grace);
    const sent = await runShutdown(cri, req, wait);
    // A shutdown that reached the container may still answer badly: the process often exits (or resets the
    // connection) before its reply is complete. Its exit, not its reply, says whether it worked.
    if (sent.reached && (await exitsWithin(cri, req.containerId, wait * 1000))) return { via: 'shutdown', preStopMs: 0 };
    shutdownError = sent.reached
      ? `the container was still running ${wait} s after its shutdown${sent.error ? ` (${sent.error})` : ''}`
      : sent.error;
  }
  const started = Date.now();
  let preStopError: string | undefined;
  try {
    await runPreStop(cri, req, grace);
  } catch (err) {
    preStopError = (err as Error).message;
  }
  const preStopMs = Date.now() - started;
  await cri.stopContainer(req.containerId, stopTimeoutSeconds(grace, preStopMs));
  return { via: 'stop', preStopMs, ...(preStopError ? { preStopError } : {}), ...(shutdownError ? { shutdownError } : {}) };
}

/**
 * How long a declared shutdown may take, and then how long the container has to exit after it, before the usual stop
 * (preStop, then SIGTERM through CRI StopContainer) takes over; never more than the grace period.
 */
export const SHUTDOWN_WAIT_SECONDS = 10;
const EXIT_POLL_MS = 200;

/**
 * Runs the declared shutdown. `exec` runs through CRI in the container itself: the mesh proxies' shutdown endpoints
 * answer only on the pod's loopback, which a command inside the pod reaches and the daemon (in the host network) does
 * not. `httpPost` goes to the pod's IP, on this node (the daemon only acts on its own node's pods), for endpoints
 * that listen there.
 */
async function runShutdown(
  cri: CriClient,
  req: KillRequest,
  timeoutSeconds: number,
): Promise<{ readonly reached: boolean; readonly error?: string }> {
  const shutdown = req.shutdown!;
  if ('exec' in shutdown) {
    try {
      const res = await cri.execSync(req.containerId, [...shutdown.exec.command], timeoutSeconds);
      if (res.exitCode === 0) return { reached: true };
      return { reached: true, error: `shutdown command exited ${res.exitCode}: ${res.stderr.toString('utf8').slice(0, 200)}` };
    } catch (err) {
      // The runtime could not run it (no such binary, container gone): nothing was delivered.
      return { reached: false, error: `shutdown command not run: ${(err as Error).message}` };
    }
  }
  if (!req.podIP) return { reached: false, error: 'the pod has no IP for its HTTP shutdown' };
  const host = req.podIP.includes(':') ? `[${req.podIP}]` : req.podIP;
  const url = `http://${host}:${shutdown.httpPost.port}${shutdown.httpPost.path}`;
  // A sidecar that started just before the main container finished may not listen yet (its endpoint comes up a
  // moment after the process): a refused connection is tried again within the wait while the container runs.
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const sent = await postShutdown(url, deadline - Date.now());
    if (sent.reached || Date.now() + SHUTDOWN_RETRY_MS >= deadline) return sent;
    if ((await cri.containerStatus(req.containerId)).state === 'CONTAINER_EXITED') return sent;
    await new Promise((r) => setTimeout(r, SHUTDOWN_RETRY_MS));
  }
}

/** How often a refused HTTP shutdown is tried again. */
const SHUTDOWN_RETRY_MS = 200;

async function postShutdown(url: string, timeoutMs: number): Promise<{ readonly reached: boolean; readonly error?: string }> {
  try {
    const res = await fetch(url, { method: 'POST', redirect: 'manual', signal: AbortSignal.timeout(Math.max(1, timeoutMs)) });
    await res.body?.cancel();
    return res.status >= 400 ? { reached: true, error: `shutdown POST answered ${res.status}` } : { reached: true };
  } catch (err) {
    const code = ((err as Error).cause as { code?: string } | undefined)?.code;
    // Nothing listening: the request never reached a server. Any other failure happened after it was sent.
    if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') {
      return { reached: false, error: `shutdown POST not delivered: ${code}` };
    }
    return { reached: true, error: `shutdown POST: ${code ?? (err as Error).message}` };
  }
}

/** Whether CRI shows the container exited within `ms`. */
async function exitsWithin(cri: CriClient, containerId: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const status = await cri.containerStatus(containerId);
    if (status.state === 'CONTAINER_EXITED') return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, EXIT_POLL_MS));
  }
}

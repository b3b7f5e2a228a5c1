import type { ContainerRecreateRequestContainer } from '../../../api/kinds/containerrecreaterequest.js';
import type { CriClient } from '../../cri/client.js';
import { stopTimeoutSeconds } from './decide.js';

export interface KillRequest {
  readonly containerId: string;
  readonly container: ContainerRecreateRequestContainer;
  /** CRR strategy's terminationGracePeriodSeconds (the pod's, copied by the webhook). */
  readonly gracePeriodSeconds?: number;
  /** Pod IP, the default host of an httpGet preStop. */
  readonly podIP?: string;
}

export interface KillOutcome {
  readonly preStopMs: number;
  /** Non-fatal preStop problem (the kubelet also kills after a failed hook). */
  readonly preStopError?: string;
}

function resolvePort(port: number | string, container: ContainerRecreateRequestContainer): number {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  const named = container.ports?.find((p) => p.name === port);
  if (!named) throw new Error(`preStop httpGet port "${port}" is not a named port of container ${container.name}`);
  return named.containerPort;
}

/** Runs the preStop hook like the kubelet: exec through CRI, or an HTTP GET; tcpSocket is a no-op. */
async function runPreStop(cri: CriClient, req: KillRequest, timeoutSeconds: number): Promise<void> {
  const hook = req.container.preStop;
  if (!hook) return;
  if (hook.exec?.command?.length) {
    const res = await cri.execSync(req.containerId, hook.exec.command, timeoutSeconds);
    if (res.exitCode !== 0) throw new Error(`preStop exec exited ${res.exitCode}: ${res.stderr.toString('utf8').slice(0, 200)}`);
    return;
  }
  if (hook.httpGet) {
    const g = hook.httpGet;
    const host = g.host || req.podIP || '127.0.0.1';
    const scheme = (g.scheme ?? 'HTTP').toLowerCase();
    const path = g.path ? (g.path.startsWith('/') ? g.path : `/${g.path}`) : '/';
    const headers = Object.fromEntries((g.httpHeaders ?? []).map((h) => [h.name, h.value]));
    const res = await fetch(`${scheme}://${host}:${resolvePort(g.port, req.container)}${path}`, { headers, signal: AbortSignal.timeout(timeoutSeconds * 1000) });
    await res.arrayBuffer();
    if (res.status >= 400) throw new Error(`preStop httpGet answered ${res.status}`);
  }
}

/**
 * Stops one container as the kubelet's KillContainer does: preStop within the grace period, then
 * CRI StopContainer with what is left of it (at least 2 s), which escalates to SIGKILL.
 * A failing preStop does not prevent the stop; a failing stop is the error.
 */
export async function killContainer(cri: CriClient, req: KillRequest): Promise<KillOutcome> {
  const grace = req.gracePeriodSeconds ?? 30;
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

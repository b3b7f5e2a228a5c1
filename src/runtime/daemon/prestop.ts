import type { CriClient } from '../cri/client.js';
import type { Container } from '../core/types.js';
import { clampTimerSeconds } from '../core/timers.js';
import { readExitPriorityHook } from '../../api/pod-contracts.js';

/**
 * A container's preStop hook run by the daemon the way the kubelet runs it (CRR kills, and the own hook an
 * exit-priority hook carries). Shared by the daemon's controllers.
 */

/** The parts of a pod container's preStop handler the kubelet acts on. */
interface PreStopHandler {
  exec?: { command?: string[] };
  httpGet?: { host?: string; port: number | string; path?: string; scheme?: string; httpHeaders?: Array<{ name: string; value: string }> };
  tcpSocket?: unknown;
  sleep?: { seconds?: number };
}

/** What running the preStop hook means, decided from the pod's container alone. */
export type PreStopPlan =
  | { readonly type: 'none' }
  | { readonly type: 'exec'; readonly command: string[] }
  | { readonly type: 'httpGet'; readonly url: string; readonly headers: Record<string, string> }
  | { readonly type: 'sleep'; readonly seconds: number }
  | { readonly type: 'error'; readonly message: string };

function resolvePort(port: number | string, container: Container): number | string {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  const ports = (container.ports as Array<{ name?: string; containerPort: number }> | undefined) ?? [];
  const named = ports.find((p) => p.name === port);
  if (!named) return `preStop httpGet port "${port}" is not a named port of container ${container.name}`;
  return named.containerPort;
}

const hostForUrl = (host: string): string => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/**
 * The kubelet's preStop, from the pod's own container: exec through CRI, or an HTTP GET to the host the
 * hook names, else the pod's IP (never the node's loopback: the daemon runs in the host network, and a
 * hook without a host means the pod). Without a pod IP there is nowhere the kubelet would send it.
 */
export function planPreStop(podContainer: Container | undefined, podIP: string | undefined): PreStopPlan {
  const declared = (podContainer?.lifecycle as { preStop?: PreStopHandler } | undefined)?.preStop;
  // An exit-priority hook only orders the pod's deletion; outside it (a CRR kill) the container's own hook,
  // which the exit-priority hook carries, is what the pod owner declared.
  const exitHook = readExitPriorityHook(declared);
  const hook = exitHook ? (exitHook.own as PreStopHandler | undefined) : declared;
  if (!podContainer || !hook) return { type: 'none' };
  if (hook.exec?.command?.length) return { type: 'exec', command: hook.exec.command };
  if (hook.httpGet) {
    const g = hook.httpGet;
    const host = g.host || podIP;
    if (!host)
      return {
        type: 'error',
        message: `preStop httpGet of container ${podContainer.name} names no host and the pod has no IP yet; skipped`,
      };
    const port = resolvePort(g.port, podContainer);
    if (typeof port === 'string') return { type: 'error', message: port };
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      return { type: 'error', message: `preStop httpGet port ${port} of container ${podContainer.name} is not a TCP port` };
    const scheme = (g.scheme ?? 'HTTP').toLowerCase() === 'https' ? 'https' : 'http';
    const path = g.path ? (g.path.startsWith('/') ? g.path : `/${g.path}`) : '/';
    const headers = Object.fromEntries((g.httpHeaders ?? []).map((h) => [h.name, h.value]));
    return { type: 'httpGet', url: `${scheme}://${hostForUrl(host)}:${port}${path}`, headers };
  }
  if (hook.sleep?.seconds !== undefined) return { type: 'sleep', seconds: hook.sleep.seconds };
  return { type: 'none' };
}

/** Runs the preStop hook like the kubelet: exec through CRI, or an HTTP GET; tcpSocket is a no-op. */
export async function runPreStop(
  cri: CriClient,
  req: { readonly containerId: string; readonly podContainer: Container | undefined; readonly podIP?: string },
  timeoutSeconds: number,
): Promise<void> {
  const plan = planPreStop(req.podContainer, req.podIP);
  switch (plan.type) {
    case 'none':
      return;
    case 'error':
      throw new Error(plan.message);
    case 'exec': {
      const res = await cri.execSync(req.containerId, plan.command, timeoutSeconds);
      if (res.exitCode !== 0) throw new Error(`preStop exec exited ${res.exitCode}: ${res.stderr.toString('utf8').slice(0, 200)}`);
      return;
    }
    case 'httpGet': {
      const res = await fetch(plan.url, { headers: plan.headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutSeconds * 1000) });
      await res.body?.cancel();
      if (res.status >= 400) throw new Error(`preStop httpGet answered ${res.status}`);
      return;
    }
    case 'sleep':
      await new Promise((r) => setTimeout(r, clampTimerSeconds(Math.min(plan.seconds, timeoutSeconds)) * 1000));
      return;
  }
}

import { statSync } from 'node:fs';
import { CriClient } from './client.js';

/**
 * Where CRI runtimes listen by default, probed in this order when no endpoint is configured:
 * containerd, CRI-O, cri-dockerd, and k3s's embedded containerd.
 */
export const DEFAULT_CRI_ENDPOINTS = [
  '/run/containerd/containerd.sock',
  '/var/run/crio/crio.sock',
  '/run/crio/crio.sock',
  '/var/run/cri-dockerd.sock',
  '/run/k3s/containerd/containerd.sock',
] as const;

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

/**
 * Picks the CRI endpoint: the configured one if given (no probing: an operator's choice is never
 * second-guessed), else the first default socket that exists and answers Version.
 */
export async function resolveCriEndpoint(
  configured: string | undefined,
  candidates: readonly string[] = DEFAULT_CRI_ENDPOINTS,
): Promise<string> {
  if (configured) return configured;
  const tried: string[] = [];
  for (const path of candidates) {
    if (!isSocket(path)) {
      tried.push(`${path} (no socket)`);
      continue;
    }
    const client = new CriClient(path, { callTimeoutMs: 3000 });
    try {
      await client.version();
      return path;
    } catch (err) {
      tried.push(`${path} (${(err as Error).message})`);
    } finally {
      client.close();
    }
  }
  throw new Error(
    `no CRI runtime found; tried ${tried.join(', ')}. Pass --cri-socket <path> (or set CRI_SOCKET) to the runtime's socket, ` +
      'and mount it into the daemon pod.',
  );
}

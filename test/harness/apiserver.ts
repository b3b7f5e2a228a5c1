// Stops/starts the shared kube-apiserver from a test worker (the control plane lives in the vitest
// main process; see global-setup.ts). etcd keeps running, so all objects survive a restart.
import { inject } from 'vitest';

async function call(action: 'stop' | 'start' | 'restart'): Promise<{ startMs: number }> {
  const base = inject('controlPlaneControlUrl');
  if (!base) throw new Error('no control plane: run this test in the vitest "e2e" project');
  const res = await fetch(`${base}/apiserver/${action}`, { method: 'POST' });
  const text = await res.text();
  if (!res.ok) throw new Error(`kube-apiserver ${action} failed: ${text}`);
  return JSON.parse(text) as { startMs: number };
}

/** Stops kube-apiserver (clients then get connection refused). */
export async function stopApiServer(): Promise<void> {
  await call('stop');
}

/** Starts it again on the same address; resolves once /readyz passes. Returns the start time. */
export async function startApiServer(): Promise<{ startMs: number }> {
  return call('start');
}

/** Stop + start; resolves once the new kube-apiserver is ready. */
export async function restartApiServer(): Promise<{ startMs: number }> {
  return call('restart');
}

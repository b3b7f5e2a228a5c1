// vitest globalSetup of the "e2e" project: one control plane per run, shared by all e2e files.
// Tests run in worker processes, so they reach the apiserver through the provided kubeconfig, and
// stop/start it through a small loopback control endpoint (guarded by a random token).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { ControlPlane } from './controlplane.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the admin kubeconfig of the shared control plane. */
    kubeconfig: string;
    /** Base URL (token included) of the endpoint that stops/starts the shared kube-apiserver. */
    controlPlaneControlUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const plane = await ControlPlane.start();
  console.log(`[controlplane] etcd + kube-apiserver ready at ${plane.url} in ${Date.now() - started} ms`);

  const token = randomBytes(16).toString('hex');
  const control = http.createServer((req, res) => {
    const action =
      req.url === `/${token}/apiserver/stop`
        ? () => plane.stopApiServer()
        : req.url === `/${token}/apiserver/start`
          ? () => plane.startApiServer()
          : req.url === `/${token}/apiserver/restart`
            ? () => plane.restartApiServer()
            : undefined;
    if (req.method !== 'POST' || !action) {
      res.writeHead(404).end();
      return;
    }
    action().then(
      () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ startMs: plane.lastStartMs })),
      (error: Error) => res.writeHead(500).end(`${error.message}\n${plane.logTail('kube-apiserver')}`),
    );
  });
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  const { port } = control.address() as AddressInfo;

  project.provide('kubeconfig', plane.kubeconfigPath);
  project.provide('controlPlaneControlUrl', `http://127.0.0.1:${port}/${token}`);
  process.env.KUBECONFIG = plane.kubeconfigPath;

  return async () => {
    await new Promise<void>((resolve) => control.close(() => resolve()));
    await plane.stop();
  };
}

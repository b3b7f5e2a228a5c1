// The node-local sidecar terminator on a real node: the daemon (from the runtime image, installed from dist/) stops a
// finished Job pod's marked sidecars itself, from container exits it reads over CRI, with the pod's own preStop.
// With the controller-manager scaled to 0 nothing else can stop them: no CRR can even be created (the CRR webhook is
// down), so a Job that completes did so through the node-local path.
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { sidecarTerminationCrrName } from '../../src/api/pod-contracts.js';
import {
  ANNOTATION_SIDECARS_STOPPED_ON_NODE,
  EVENT_REASON_SIDECAR_TERMINATOR,
  LABEL_POD_WEBHOOK_OPT_OUT,
  POD_WEBHOOK_OPT_OUT_VALUE,
} from '../../src/contracts/index.js';
import { kubectl } from '../harness/index.js';
import { seedJob } from './jobs.js';
import { apps, containerLog, core, installRuntime, jobPods, namespace, node, waitFor, waitForJobComplete } from './support.js';

const RUNTIME_NS = 'kruise-system';
const MANAGER = 'kruise-controller-manager';

async function runJob(ns: string, restartPolicy: 'Never' | 'OnFailure', eventsDir: string): Promise<V1Pod> {
  const manifests = seedJob({
    name: 'seed',
    image: node().images.busybox,
    restartPolicy,
    mainSeconds: 1,
    preStop: { seconds: 1, eventsDir },
  });
  await kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }) });
  await waitForJobComplete(ns, 'seed', 60_000);
  const pods = await jobPods(ns, 'seed');
  expect(pods).toHaveLength(1);
  return pods[0]!;
}

function eventsDir(): string {
  const dir = mkdtempSync(path.join(node().dir, 'events-'));
  chmodSync(dir, 0o777);
  return dir;
}

async function daemonEvents(ns: string, pod: V1Pod): Promise<string[]> {
  const events = await core().listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.uid=${pod.metadata!.uid}` });
  return events.items.filter((e) => e.reason === EVENT_REASON_SIDECAR_TERMINATOR).map((e) => `${e.source?.component}: ${e.message}`);
}

async function crrOf(ns: string, pod: V1Pod): Promise<any> {
  const out = await kubectl([
    'get',
    'containerrecreaterequests.apps.kruise.io',
    '-n',
    ns,
    sidecarTerminationCrrName(pod.metadata!.uid!),
    '--ignore-not-found',
    '-o',
    'json',
  ]);
  return out.trim() ? JSON.parse(out) : undefined;
}

describe('node-local sidecar terminator with the controller-manager scaled to 0', () => {
  let replicas = 2;

  beforeAll(async () => {
    await installRuntime();
    replicas = (await apps().readNamespacedDeployment({ name: MANAGER, namespace: RUNTIME_NS })).spec?.replicas ?? 2;
    await kubectl(['scale', 'deployment', '-n', RUNTIME_NS, MANAGER, '--replicas=0']);
    await waitFor(
      'no controller-manager pod left',
      async () =>
        (await core().listNamespacedPod({ namespace: RUNTIME_NS, labelSelector: 'control-plane=controller-manager' })).items.length === 0,
      90_000,
      500,
    );
  }, 900_000);

  afterAll(async () => {
    await kubectl(['scale', 'deployment', '-n', RUNTIME_NS, MANAGER, `--replicas=${replicas}`]);
    await kubectl(['rollout', 'status', '-n', RUNTIME_NS, `deployment/${MANAGER}`, '--timeout=300s']);
  }, 320_000);

  for (const restartPolicy of ['Never', 'OnFailure'] as const) {
    it(`restartPolicy ${restartPolicy}: the daemon alone stops the sidecar (its preStop first) and the Job completes`, async () => {
      const ns = await namespace(`node-local-${restartPolicy.toLowerCase()}`);
      // The pod webhook is the manager's too: with it down (failurePolicy Fail) no pod could be created here.
      await kubectl(['label', 'namespace', ns, `${LABEL_POD_WEBHOOK_OPT_OUT}=${POD_WEBHOOK_OPT_OUT_VALUE}`]);
      const dir = eventsDir();
      const pod = await runJob(ns, restartPolicy, dir);
      expect(pod.status?.phase).toBe('Succeeded');
      const sidecar = pod.status?.containerStatuses?.find((c) => c.name === 'sidecar');
      expect(sidecar?.state?.terminated?.exitCode).toBe(0);
      expect(sidecar?.restartCount).toBe(0);
      // The pod's own preStop ran to its end before SIGTERM, as for a CRR kill.
      expect(readFileSync(path.join(dir, 'log'), 'utf8').trim().split('\n')).toEqual(['prestop-start', 'prestop-end', 'term']);
      expect(containerLog(pod, 'sidecar').filter((l) => l.line === 'sidecar got TERM')).toHaveLength(1);
      // No CRR: the record could not be written (the CRR webhook is the manager's), and nothing else made one.
      expect(await crrOf(ns, pod)).toBeUndefined();
      expect(await daemonEvents(ns, pod)).toEqual([
        expect.stringMatching(/^kruise-daemon: Stopped sidecar\(s\) sidecar on node \S+ once the main/),
      ]);
    });
  }
});

describe('node-local sidecar terminator with the controller-manager up: one CRR, the daemon stops once', () => {
  beforeAll(async () => {
    await installRuntime();
    await kubectl(['rollout', 'status', '-n', RUNTIME_NS, `deployment/${MANAGER}`, '--timeout=300s']);
  }, 900_000);

  it("the daemon's stop is recorded in the pod's sidecar-termination CRR, whichever side created it", async () => {
    const ns = await namespace('node-local-audit');
    const pod = await runJob(ns, 'Never', eventsDir());
    expect(pod.status?.phase).toBe('Succeeded');
    expect(containerLog(pod, 'sidecar').filter((l) => l.line === 'sidecar got TERM')).toHaveLength(1);
    let crr: any;
    await waitFor('the record CRR Completed', async () => (crr = await crrOf(ns, pod))?.status?.phase === 'Completed', 30_000, 250);
    expect(crr.spec.containers.map((c: { name: string }) => c.name)).toEqual(['sidecar']);
    expect(crr.status.containerRecreateStates).toEqual([expect.objectContaining({ name: 'sidecar', isKilled: true })]);
    // Which side acts first is a race: when the manager's CRR reaches the daemon's cache before the daemon sees the
    // exit, the daemon leaves the pod to that CRR (no double action). Either way there is one CRR and one stop (the
    // single TERM above); when the daemon stopped first, its stop is recorded in that CRR.
    const byNode = crr.metadata.annotations?.[ANNOTATION_SIDECARS_STOPPED_ON_NODE];
    if (byNode !== undefined) {
      expect(byNode).toBe(node().nodeName);
      expect(await daemonEvents(ns, pod)).toContainEqual(
        // Recorded with the stop, or later in the manager's CRR when the record was refused at first.
        expect.stringMatching(
          /^kruise-daemon: (Stopped sidecar\(s\) sidecar on node .* \(recorded|Recorded the stop of sidecar\(s\) sidecar on node \S+) in ContainerRecreateRequest/,
        ),
      );
    }
  });
});

// Liveness restarts within a budget (issue #35, beyond upstream) on a real kubelet and containerd, with the runtime
// from dist/ and its image (gate EnhancedLivenessProbe turned on in its manager's flags, as an app using the
// annotation gets it). Ten pods of a CloneSet under a PodUnavailableBudget of maxUnavailable 2 all fail liveness at
// once (the file their exec probe looks for is made through CRI): the pod webhook moved their probes, the node daemon
// runs them, and the manager restarts the containers through ContainerRecreateRequests two at a time, never more
// than two pods restarting or unready. The same CloneSet with the kubelet's own liveness probe, broken the same
// way in the same run, has all ten restarted at once. Both restart timelines are printed.
import { setTimeout as sleep } from 'node:timers/promises';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/runtime/cri/client.js';
import { distManifests, installRuntime as installOnNode } from '../harness/runtime-install.js';
import { kubectl } from '../harness/index.js';
import { core, namespace, node, waitFor } from './support.js';

const REPLICAS = 10;
const BUDGET = 2;
// Liveness fails while /tmp/broken exists, which no new container has: a restarted container passes from its first
// instant, however late its shell starts on a loaded machine (a probe needing a file the container makes can fail
// on a new container whose shell runs after the first probe at 1 s, restarting it again; an exec of this test once
// hit a container stopping in the CI). The file
// its readiness probe tests appears 2 s after start, so a restarted container is unready for a moment (what the
// budget counts). Not the harness's stand-in sleeper: its clean-up matches that command line.
const COMMAND = ['sh', '-c', "sleep 2; touch /tmp/ready; trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"];

let cri: CriClient;

beforeAll(async () => {
  const { crds, runtime } = distManifests();
  // The examples app uses no enhanced liveness, so dist/ installs the gate off; an app using it gets it on.
  const docs = YAML.parseAllDocuments(runtime).map((d) => d.toJS() as Record<string, any> | null);
  const manager = docs.find((d) => d?.kind === 'Deployment' && d.metadata.name === 'kruise-controller-manager')!;
  const args: string[] = manager.spec.template.spec.containers[0].args;
  const i = args.findIndex((a) => a.startsWith('--feature-gates='));
  if (i < 0) throw new Error('no --feature-gates flag on the manager in dist/10-runtime.yaml');
  args[i] = `${args[i]},EnhancedLivenessProbe=true`;
  const gated = docs
    .filter(Boolean)
    .map((d) => YAML.stringify(d))
    .join('---\n');
  await installOnNode(node(), { crds, runtime: gated }, { reapply: true });
  cri = new CriClient(node().containerdSocket);
}, 900_000);
afterAll(() => cri?.close());

function cloneSet(name: string, enhanced: boolean): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: { app: name } },
      updateStrategy: { maxUnavailable: BUDGET },
      template: {
        metadata: { labels: { app: name }, ...(enhanced ? { annotations: { 'apps.kruise.io/using-enhanced-liveness': 'true' } } : {}) },
        spec: {
          terminationGracePeriodSeconds: 2,
          securityContext: { fsGroup: 65534 },
          volumes: [{ name: 'data', emptyDir: {} }],
          containers: [
            {
              name: 'main',
              image: node().images.busybox,
              imagePullPolicy: 'IfNotPresent',
              command: COMMAND,
              // The restart runs the container's preStop, as the kubelet's own liveness restart does: each run leaves a line in
              // a volume that outlives the container.
              lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo stopped >> /data/prestop'] } } },
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
              livenessProbe: {
                exec: { command: ['sh', '-c', 'test ! -f /tmp/broken'] },
                periodSeconds: 1,
                failureThreshold: 1,
                initialDelaySeconds: 1,
              },
              readinessProbe: { exec: { command: ['sh', '-c', 'test -f /tmp/ready'] }, periodSeconds: 1, failureThreshold: 1 },
              resources: { requests: { cpu: '5m', memory: '8Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
              securityContext: { runAsUser: 65534, runAsGroup: 65534 },
            },
          ],
        },
      },
    },
  };
}

async function pods(ns: string, app: string): Promise<V1Pod[]> {
  return (await core().listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` })).items.filter(
    (p) => !p.metadata!.deletionTimestamp,
  );
}

const ready = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
const mainStatus = (p: V1Pod) => p.status?.containerStatuses?.find((c) => c.name === 'main');
const bareId = (id: string | undefined) => (id ?? '').replace(/^[a-z]+:\/\//, '');

interface Run {
  /** Most pods unready or with their container not running at one sample. */
  readonly maxDown: number;
  /** ms after the break at which each pod's container was seen replaced, sorted. */
  readonly restarts: readonly { readonly pod: string; readonly ms: number }[];
  readonly samples: number;
  /** `+ms:down` at each change of the down count. */
  readonly timeline: string;
}

/**
 * Breaks every pod's liveness at once (the file the probe looks for made through CRI ExecSync, as `kubectl exec` would), then
 * samples the pods' status every 200 ms until each container was replaced and every pod is ready again.
 */
async function breakAndWatch(ns: string, app: string, timeoutMs: number): Promise<Run> {
  const before = await pods(ns, app);
  expect(before).toHaveLength(REPLICAS);
  const first = new Map(before.map((p) => [p.metadata!.name!, bareId(mainStatus(p)?.containerID)]));
  const t0 = Date.now();
  await Promise.all([...first.values()].map((id) => cri.execSync(id, ['busybox', 'touch', '/tmp/broken'], 5)));
  const restarts = new Map<string, number>();
  const changes: string[] = [];
  let maxDown = 0;
  let last = -1;
  let samples = 0;
  for (;;) {
    const now = await pods(ns, app);
    const t = Date.now() - t0;
    samples++;
    const down = now.filter((p) => !ready(p) || !mainStatus(p)?.state?.running).length;
    maxDown = Math.max(maxDown, down);
    if (down !== last) changes.push(`+${t}ms:${down}`);
    last = down;
    for (const p of now) {
      const name = p.metadata!.name!;
      const id = bareId(mainStatus(p)?.containerID);
      if (!restarts.has(name) && first.has(name) && id && id !== first.get(name)) restarts.set(name, t);
    }
    if (restarts.size === REPLICAS && down === 0 && now.length === REPLICAS) break;
    if (t > timeoutMs)
      throw new Error(`${app}: ${restarts.size}/${REPLICAS} restarted, ${down} down after ${t} ms; timeline ${changes.join(' ')}`);
    await sleep(200);
  }
  return {
    maxDown,
    samples,
    timeline: changes.join(' '),
    restarts: [...restarts].map(([pod, ms]) => ({ pod, ms })).sort((a, b) => a.ms - b.ms),
  };
}

async function allReady(ns: string, app: string): Promise<void> {
  await waitFor(
    `${ns}: ${REPLICAS} ${app} pods ready`,
    async () => {
      const ps = await pods(ns, app);
      return ps.length === REPLICAS && ps.every(ready);
    },
    180_000,
    500,
  );
}

describe('enhanced liveness on a real node (runtime from dist/ and its image)', () => {
  it('ten pods failing liveness at once under maxUnavailable 2: at most two down at any moment, all recover; native liveness restarts all ten at once', async () => {
    const ns = await namespace('liveness');
    await kubectl(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          cloneSet('budgeted', true),
          {
            apiVersion: 'policy.kruise.io/v1alpha1',
            kind: 'PodUnavailableBudget',
            metadata: { name: 'budgeted' },
            spec: { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'budgeted' }, maxUnavailable: BUDGET },
          },
        ],
      }),
    });
    await allReady(ns, 'budgeted');
    const opted = await pods(ns, 'budgeted');
    // The webhook moved the probe: the kubelet has none to run.
    for (const p of opted) {
      expect(p.spec!.containers[0]!.livenessProbe).toBeUndefined();
      expect(JSON.parse(p.metadata!.annotations!['apps.kruise.io/container-probe-context']!)[0].name).toBe('main');
    }
    // The budget covers all ten before anything breaks (its controller annotates them and counts 10, 8 desired).
    await waitFor(
      `${ns}: the budget counts the ten pods`,
      async () => {
        const pub = JSON.parse(await kubectl(['get', 'podunavailablebudgets.policy.kruise.io', '-n', ns, 'budgeted', '-o', 'json']));
        const covered = (await pods(ns, 'budgeted')).filter((p) => p.metadata!.annotations?.['kruise.io/related-pub'] === 'budgeted');
        return pub.status?.totalReplicas === REPLICAS && pub.status?.desiredAvailable === REPLICAS - BUDGET && covered.length === REPLICAS;
      },
      60_000,
      500,
    );

    const budgeted = await breakAndWatch(ns, 'budgeted', 240_000);
    const crrs = JSON.parse(
      await kubectl(['get', 'containerrecreaterequests.apps.kruise.io', '-n', ns, '-l', 'kruise.cdk8s.io/liveness-restart', '-o', 'json']),
    ).items as Array<{ spec: { podName: string } }>;
    const events = JSON.parse(
      await kubectl(['get', 'events', '-n', ns, '--field-selector', 'reason=ClusterWideLivenessFailure', '-o', 'json']),
    ).items as Array<{
      message: string;
    }>;
    console.log(
      `[liveness] budgeted (maxUnavailable ${BUDGET}): all ${REPLICAS} restarted by ${budgeted.restarts.at(-1)!.ms} ms, ` +
        `most down at once ${budgeted.maxDown} (${budgeted.samples} samples); restarts: ${budgeted.restarts.map((r) => `${r.pod}@${r.ms}`).join(' ')}; ` +
        `down count: ${budgeted.timeline}; ${crrs.length} ContainerRecreateRequests; event: ${events[0]?.message}`,
    );
    expect(budgeted.maxDown).toBeLessThanOrEqual(BUDGET);
    // One restart per pod: the new containers' probes pass, so nothing restarts twice.
    expect(crrs.length).toBe(REPLICAS);
    expect(new Set(crrs.map((c) => c.spec.podName)).size).toBe(REPLICAS);
    // Each restart ran the preStop hook of the container it replaced.
    for (const p of await pods(ns, 'budgeted')) {
      const out = await cri.execSync(bareId(mainStatus(p)?.containerID), ['busybox', 'cat', '/data/prestop'], 5);
      expect(out.stdout?.toString().trim(), p.metadata!.name).toBe('stopped');
    }
    expect(events.length).toBeGreaterThanOrEqual(1);
    await kubectl(['delete', 'clonesets.apps.kruise.io', '-n', ns, 'budgeted', '--wait=true', '--timeout=120s']);

    await kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(cloneSet('native', false)) });
    await allReady(ns, 'native');
    expect((await pods(ns, 'native'))[0]!.spec!.containers[0]!.livenessProbe).toBeDefined();
    const native = await breakAndWatch(ns, 'native', 120_000);
    console.log(
      `[liveness] native (kubelet): all ${REPLICAS} restarted by ${native.restarts.at(-1)!.ms} ms, most down at once ${native.maxDown} ` +
        `(${native.samples} samples); restarts: ${native.restarts.map((r) => `${r.pod}@${r.ms}`).join(' ')}; down count: ${native.timeline}`,
    );
    // The kubelet restarts every failing container as soon as its own probe fails, with no budget: more than the
    // budget's two down at once, and all ten restarted. (How fast it does so follows the machine's load, 5.4 s from
    // the first restart to the last once under the e2e and node tiers side by side, so no time is judged here.)
    expect(native.maxDown).toBeGreaterThan(BUDGET);
    expect(new Set(native.restarts.map((r) => r.pod)).size).toBe(REPLICAS);
  }, 900_000);
});

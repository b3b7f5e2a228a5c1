// PodUnavailableBudget on the real node, runtime installed from its image with the conformance tier's gates (the
// budget's update gate among them, off in dist/): the kubelet runs the containers, restarts them on an in-place image
// change and decides readiness; the test only edits objects, asks for evictions and reads state. A budget of one
// unavailable pod over a CloneSet of 3 lets one eviction through and refuses the next; an in-place update the
// CloneSet's own strategy would take all at once (maxUnavailable 100%) goes one pod at a time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { tierManifests } from '../conformance/install.js';
import { kubectl } from '../harness/index.js';
import { distManifests, installRuntime } from '../harness/runtime-install.js';
import { apply, core, namespace, node, waitFor } from './support.js';

const SLEEPER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];
const REFUSED = /podunavailablebudgets.policy.kruise.io "web-pub" is forbidden: pub unavailable allowed is negative/;

type Obj = Record<string, any>;

async function pods(ns: string, includeDeleting = false): Promise<V1Pod[]> {
  const list = await core().listNamespacedPod({ namespace: ns, labelSelector: 'app=web' });
  return list.items
    .filter((p) => includeDeleting || !p.metadata!.deletionTimestamp)
    .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
}

async function budget(ns: string): Promise<Obj> {
  return (
    (JSON.parse(await kubectl(['get', 'podunavailablebudgets.policy.kruise.io', 'web-pub', '-n', ns, '-o', 'json'])) as Obj).status ?? {}
  );
}

async function waitBudget(ns: string, what: string, pred: (s: Obj) => boolean): Promise<Obj> {
  let last: Obj = {};
  await waitFor(`web-pub: ${what}`, async () => pred((last = await budget(ns))), 120_000, 500).catch((err: Error) => {
    throw new Error(`${err.message}; last status ${JSON.stringify(last)}`);
  });
  return last;
}

/** Runs kubectl: undefined when it succeeds, else the API server's refusal. */
async function attempt(args: string[], input?: string): Promise<string | undefined> {
  try {
    await kubectl(args, input === undefined ? {} : { input });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const evict = (ns: string, pod: string) =>
  attempt(
    ['create', '--raw', `/api/v1/namespaces/${ns}/pods/${pod}/eviction`, '-f', '-'],
    JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: ns } }),
  );

const ready = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
/** Ready, and each container runs the image its spec names (no in-place restart pending). */
const available = (p: V1Pod) =>
  ready(p) &&
  p.spec!.containers.every((c) => {
    const s = p.status?.containerStatuses?.find((x) => x.name === c.name);
    return !!s?.ready && s.image.endsWith((c.image ?? '').replace(/^.*\//, ''));
  });

function cloneSet(image: string): Obj {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'web' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          terminationGracePeriodSeconds: 2,
          containers: [
            {
              name: 'main',
              image,
              imagePullPolicy: 'IfNotPresent',
              command: SLEEPER,
              resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
              securityContext: { runAsUser: 65534, runAsGroup: 65534 },
            },
          ],
        },
      },
      updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '100%' },
    },
  };
}

beforeAll(async () => {
  const t = await installRuntime(node(), tierManifests(), { reapply: true });
  console.log(`[pub] runtime installed with the tier's gates (image ${t.imageMs} ms, rollout ${t.rolloutMs} ms)`);
}, 900_000);

// The suites after this one expect dist/'s install (its gates), which they do not reapply over an existing runtime.
afterAll(async () => {
  await installRuntime(node(), distManifests(), { reapply: true });
}, 900_000);

describe('PodUnavailableBudget on the real node (runtime image, update gate on)', () => {
  it('a budget of 1 over a CloneSet of 3: one eviction through, the next refused; an in-place update of all 3 goes one pod at a time', async () => {
    const ns = await namespace('pub-node');
    await apply(ns, [
      cloneSet(node().images.busybox),
      {
        apiVersion: 'policy.kruise.io/v1alpha1',
        kind: 'PodUnavailableBudget',
        metadata: { name: 'web-pub' },
        spec: { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' }, maxUnavailable: 1 },
      },
    ]);
    await waitBudget(ns, '3 available, 1 allowed', (s) => s.currentAvailable === 3 && s.unavailableAllowed === 1);
    await waitFor(
      'pods annotated with their budget',
      async () => (await pods(ns)).every((p) => p.metadata!.annotations?.['kruise.io/related-pub'] === 'web-pub'),
      60_000,
      300,
    );

    // Evictions: the first within the budget, the second beyond it.
    const [a, b] = (await pods(ns)).map((p) => p.metadata!.name!);
    expect(await evict(ns, a!)).toBeUndefined();
    expect(await evict(ns, b!)).toMatch(REFUSED);
    // The refused pod gets upstream's event (events are written after the answer).
    await waitFor(
      `event PubPreventPodDeletion on ${b}`,
      async () => {
        const events = JSON.parse(
          await kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${b}`, '-o', 'json']),
        ) as Obj;
        return (events.items as Obj[]).some((e) => e.reason === 'PubPreventPodDeletion');
      },
      30_000,
      500,
    );
    // The CloneSet replaces the evicted pod; the budget is whole again once the replacement runs.
    await waitBudget(ns, '3 available again', (s) => s.currentAvailable === 3 && s.unavailableAllowed === 1);
    const before = new Map((await pods(ns)).map((p) => [p.metadata!.name!, p.metadata!.uid!]));

    // In place, all 3 at once by the CloneSet's strategy: the budget holds it to one pod at a time.
    const samples: { t: number; available: number; updating: number }[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const ps = await pods(ns, true);
        samples.push({
          t: Date.now(),
          available: ps.filter((p) => !p.metadata!.deletionTimestamp && available(p)).length,
          updating: ps.filter((p) => p.spec!.containers[0]!.image === node().images.busybox2 && !available(p)).length,
        });
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    await apply(ns, [cloneSet(node().images.busybox2)]);
    await waitFor(
      'all 3 updated in place and available',
      async () => {
        const ps = await pods(ns);
        return ps.length === 3 && ps.every((p) => p.spec!.containers[0]!.image === node().images.busybox2 && available(p));
      },
      180_000,
      500,
    );
    sampling = false;
    await sampler;
    const changes = samples.filter((s, i) => i === 0 || s.available !== samples[i - 1]!.available);
    console.log(
      `[pub] in-place update of 3, budget 1: available over time ${changes.map((s) => `+${s.t - samples[0]!.t}ms:${s.available}`).join(' ')}`,
    );
    expect(Math.min(...samples.map((s) => s.available))).toBe(2);
    expect(Math.max(...samples.map((s) => s.updating))).toBe(1);
    // In place: the same pods (names and UIDs), each restarted once.
    const after = await pods(ns);
    expect(new Map(after.map((p) => [p.metadata!.name!, p.metadata!.uid!]))).toEqual(before);
    expect(after.every((p) => p.status!.containerStatuses![0]!.restartCount === 1)).toBe(true);
  }, 600_000);
});

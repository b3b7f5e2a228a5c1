// PodUnavailableBudget on the real kube-apiserver: the install's own /validate-pod entries (match conditions, rules,
// failure policies) registered and dialled at a running manager with both PUB gates on. The manager's CloneSet
// controller makes the pods; the test plays the kubelet (pod status). Status is computed for a CloneSet's pods
// (targetRef) and a Deployment's pods (selector, through its ReplicaSet); an eviction and a deletion within the budget
// are let through and recorded, beyond it refused with upstream's message; an in-place image update beyond it refused.
// Then, with the test playing the kubelet for the pods' whole life: a budget recounts when its Deployment is deleted,
// and CloneSet in-place and recreate updates and a SidecarSet sidecar update, each allowed to take every pod at
// once by its own strategy, never take more pods down than the budget allows (the controllers ask it first).
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AdmissionregistrationV1Api, type V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SidecarSet } from '../../src/api/kinds/sidecarset.js';
import { POD_VALIDATING_PATH, VALIDATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { validatingWebhookConfiguration } from '../../src/install/webhooks.js';
import type { Pod } from '../../src/runtime/core/types.js';
import { injectSidecarSets } from '../../src/runtime/webhooks/sidecarset/decision.js';
import { adminKubeConfig, createNamespace, kubectl } from '../harness/index.js';
import {
  eventually,
  freePort,
  loopbackWebhookArgs,
  podWebhookInstallSpec,
  startController,
  type ControllerProcess,
} from './runtime/support.js';

type Obj = Record<string, any>;

const REFUSED = /podunavailablebudgets.policy.kruise.io "[^"]+" is forbidden: pub unavailable allowed is negative/;

let adm: AdmissionregistrationV1Api;
let runtimeNs: string;
let ns: string;
let ctl: ControllerProcess;

async function apply(o: Obj): Promise<void> {
  await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=pub-e2e', '-f', '-'], { input: JSON.stringify(o) });
}

async function getJson(resource: string, name?: string, extra: string[] = []): Promise<Obj> {
  return JSON.parse(await kubectl(['get', resource, ...(name ? [name] : []), '-n', ns, '-o', 'json', ...extra])) as Obj;
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

const evict = (pod: string) =>
  attempt(
    ['create', '--raw', `/api/v1/namespaces/${ns}/pods/${pod}/eviction`, '-f', '-'],
    JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: ns } }),
  );
const del = (pod: string) => attempt(['delete', 'pod', pod, '-n', ns, '--wait=false']);

/** Plays the kubelet: the pod Running and Ready, its container running the spec's image. */
async function markReady(p: Obj): Promise<void> {
  const now = new Date().toISOString();
  const status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
    containerStatuses: p.spec.containers.map((c: Obj) => ({
      name: c.name,
      image: c.image,
      imageID: `sha256:${c.image.length}`,
      containerID: `containerd://${p.metadata.name}-${c.name}`,
      ready: true,
      restartCount: 0,
      started: true,
      state: { running: { startedAt: now } },
    })),
  };
  await kubectl(['patch', 'pod', p.metadata.name, '-n', ns, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
}

async function podsOf(selector: string, n: number): Promise<Obj[]> {
  return eventually(async () => {
    const items = ((await getJson('pods', undefined, ['-l', selector])).items as Obj[]).filter((p) => !p.metadata.deletionTimestamp);
    return items.length === n ? items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)) : undefined;
  });
}

async function statusOf(pub: string, want: (s: Obj) => boolean): Promise<Obj> {
  return eventually(async () => {
    const s = (await getJson('podunavailablebudgets.policy.kruise.io', pub)).status as Obj | undefined;
    return s && want(s) ? s : undefined;
  });
}

async function applyIn(n: string, o: Obj): Promise<void> {
  await kubectl(['apply', '-n', n, '--server-side', '--force-conflicts', '--field-manager=pub-e2e', '-f', '-'], {
    input: JSON.stringify(o),
  });
}

/** The pods of `n` matching `selector`, sorted by name; those being deleted only when asked. */
async function podsIn(n: string, selector: string, withDeleting = false): Promise<Obj[]> {
  const items = JSON.parse(await kubectl(['get', 'pods', '-n', n, '-l', selector, '-o', 'json'])).items as Obj[];
  return items.filter((p) => withDeleting || !p.metadata.deletionTimestamp).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

async function budgetStatus(n: string, name: string, want: (s: Obj) => boolean): Promise<Obj> {
  return eventually(
    async () => {
      const s = JSON.parse(await kubectl(['get', 'podunavailablebudgets.policy.kruise.io', name, '-n', n, '-o', 'json'])).status as
        Obj | undefined;
      return s && want(s) ? s : undefined;
    },
    30_000,
    `status of ${name}`,
  );
}

const containerOf = (p: Obj, name: string): Obj | undefined =>
  (p.status?.containerStatuses as Obj[] | undefined)?.find((s) => s.name === name);
const condOf = (p: Obj, type: string): Obj | undefined => (p.status?.conditions as Obj[] | undefined)?.find((c) => c.type === type);
const isReady = (p: Obj): boolean => condOf(p, 'Ready')?.status === 'True';
/** Every container runs the image its spec names, and one of them is `image`. */
const runs = (p: Obj, image: string): boolean =>
  (p.spec.containers as Obj[]).some((c) => c.image === image) &&
  (p.spec.containers as Obj[]).every((c) => containerOf(p, c.name)?.image === c.image);
const image = (p: Obj, name: string) => (p.spec.containers as Obj[]).find((c) => c.name === name)?.image as string | undefined;
const digest = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;

interface Sample {
  readonly t: number;
  readonly available: number;
}

/** The available count's changes, as `+<ms>:<count>` from the first sample. */
function timeline(samples: readonly Sample[]): string {
  const out: string[] = [];
  let last: number | undefined;
  for (const s of samples) {
    if (s.available === last) continue;
    last = s.available;
    out.push(`+${s.t - samples[0]!.t}ms:${s.available}`);
  }
  return out.join(' ');
}

/** How long a restarted container takes to run again. */
const RESTART_MS = 800;

/**
 * Plays the kubelet for the pods of `namespace` matching `selector` until stopped: a pod whose containers do not
 * run the images its spec names restarts them (not ready for RESTART_MS, then running them with a new image ID and
 * container ID), a pod being deleted goes (grace 0), and Ready follows the containers and the pod's readiness
 * gates. Each pass first counts the available pods (not being deleted, Ready, running their spec's images).
 */
class Kubelet {
  readonly samples: Sample[] = [];
  private stopped = false;
  private failure: Error | undefined;
  private readonly restarting = new Map<string, { downAt: number; down: boolean }>();
  private readonly loop: Promise<void>;

  constructor(
    private readonly namespace: string,
    private readonly selector: string,
    /** How long a running container whose image changed keeps running, Ready, before it stops (0: at once). */
    private readonly graceMs = 0,
  ) {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    if (this.failure) throw this.failure;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.pass();
      } catch (err) {
        // A pod gone or changed between the list and the write is met again on the next pass.
        if (!/NotFound|not found|Conflict|the object has been modified/.test((err as Error).message)) {
          this.failure = err as Error;
          return;
        }
      }
      await sleep(200);
    }
  }

  private async pass(): Promise<void> {
    const items = await podsIn(this.namespace, this.selector, true);
    const now = Date.now();
    this.samples.push({
      t: now,
      available: items.filter((p) => !p.metadata.deletionTimestamp && isReady(p) && runs(p, p.spec.containers[0].image)).length,
    });
    for (const p of items) {
      const name = p.metadata.name as string;
      if (p.metadata.deletionTimestamp) {
        await kubectl(['delete', 'pod', name, '-n', this.namespace, '--grace-period=0', '--force', '--wait=false']);
        continue;
      }
      const containers = p.spec.containers as Obj[];
      const stale = containers.filter((c) => containerOf(p, c.name)?.image !== c.image || !containerOf(p, c.name)?.ready);
      if (stale.length > 0) {
        const key = `${p.metadata.uid}/${stale.map((c) => c.image).join(',')}`;
        const r = this.restarting.get(key);
        const down = new Set(stale.map((c) => c.name));
        if (r === undefined) {
          // A running container whose spec changed keeps running, Ready, through its grace period (a process that
          // ignores TERM); a container not running yet starts at once.
          const graceful = this.graceMs > 0 && stale.every((c) => containerOf(p, c.name)?.ready);
          this.restarting.set(key, { downAt: graceful ? now + this.graceMs : now, down: !graceful });
          if (!graceful) await this.writeStatus(p, containers, down);
        } else if (!r.down) {
          if (now >= r.downAt) {
            r.down = true;
            await this.writeStatus(p, containers, down);
          }
        } else if (now - r.downAt >= RESTART_MS) {
          this.restarting.delete(key);
          await this.writeStatus(p, containers, new Set());
        }
        continue;
      }
      const gates = ((p.spec.readinessGates as Obj[] | undefined) ?? []).every((g) => condOf(p, g.conditionType)?.status === 'True');
      if (isReady(p) !== gates) await this.patchStatus(name, { conditions: [{ type: 'Ready', status: gates ? 'True' : 'False' }] });
    }
  }

  /** Containers in `down` restarting (their previous image, not ready), the others running their spec's image. */
  private async writeStatus(p: Obj, containers: Obj[], down: Set<string>): Promise<void> {
    const at = new Date().toISOString();
    const containerStatuses = containers.map((c) => {
      const old = containerOf(p, c.name);
      if (down.has(c.name))
        return {
          ...(old ?? { name: c.name, image: c.image, imageID: '', restartCount: 0 }),
          ready: false,
          started: false,
          state: { waiting: { reason: 'ContainerCreating' } },
        };
      const same = old?.image === c.image && old?.ready;
      return {
        name: c.name,
        image: c.image,
        imageID: digest(c.image),
        containerID: same ? old!.containerID : `containerd://${digest(`${p.metadata.uid}/${c.name}/${at}`).slice(7, 39)}`,
        ready: true,
        started: true,
        restartCount: same ? old!.restartCount : ((old?.restartCount as number | undefined) ?? -1) + 1,
        state: { running: { startedAt: at } },
      };
    });
    const containersReady = down.size === 0;
    const gates = ((p.spec.readinessGates as Obj[] | undefined) ?? []).every((g) => condOf(p, g.conditionType)?.status === 'True');
    await this.patchStatus(p.metadata.name, {
      phase: 'Running',
      containerStatuses,
      conditions: [
        { type: 'ContainersReady', status: containersReady ? 'True' : 'False', lastTransitionTime: at },
        { type: 'Ready', status: containersReady && gates ? 'True' : 'False', lastTransitionTime: at },
      ],
    });
  }

  private async patchStatus(name: string, status: Obj): Promise<void> {
    await kubectl([
      'patch',
      'pod',
      name,
      '-n',
      this.namespace,
      '--subresource=status',
      '--type=strategic',
      '-p',
      JSON.stringify({ status }),
    ]);
  }
}

beforeAll(async () => {
  adm = adminKubeConfig().makeApiClient(AdmissionregistrationV1Api);
  runtimeNs = await createNamespace('kruise-pub');
  ns = await createNamespace('pub');
  const port = await freePort();
  // The install's entries, as KruiseRuntime renders them for an app with a budget and both gates, dialled at this process.
  const rendered = validatingWebhookConfiguration({
    ...podWebhookInstallSpec(runtimeNs),
    webhook: { timeoutSeconds: 10, pods: false, podUnavailableBudget: { update: true }, certificates: { mode: 'self' } },
  }) as unknown as V1ValidatingWebhookConfiguration;
  const hooks = rendered.webhooks!.filter((w) => w.clientConfig.service?.path === POD_VALIDATING_PATH);
  expect(hooks.map((w) => w.name)).toEqual(['vpod.kb.io', 'vpodeviction.kb.io']);
  for (const w of hooks) w.clientConfig = { url: `https://127.0.0.1:${port}${POD_VALIDATING_PATH}` };
  await adm.deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await adm.createValidatingWebhookConfiguration({ body: { metadata: { name: VALIDATING_WEBHOOK_CONFIGURATION }, webhooks: hooks } });
  ctl = await startController(runtimeNs, [
    ...loopbackWebhookArgs(port),
    '--feature-gates=PodUnavailableBudgetDeleteGate=true,PodUnavailableBudgetUpdateGate=true',
    // The SidecarSet controller keeps its revisions there.
    '--sidecarset-revision-namespace',
    runtimeNs,
  ]);
  await ctl.waitReady();
  await eventually(async () => {
    const live = await adm.readValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION });
    return (live.webhooks ?? []).every((w) => w.clientConfig.caBundle) || undefined;
  });
}, 120_000);

afterAll(async () => {
  await ctl?.stop();
  await adm?.deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
});

describe('PodUnavailableBudget, manager serving', () => {
  it('a CloneSet budget (targetRef, maxUnavailable 25%): counts, one eviction let through (its unit spent), the next eviction, a deletion and an in-place update refused', async () => {
    await apply({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
        updateStrategy: { type: 'InPlaceIfPossible' },
      },
    });
    const pods = await podsOf('app=web', 4);
    for (const p of pods) await markReady(p);
    await apply({
      apiVersion: 'policy.kruise.io/v1alpha1',
      kind: 'PodUnavailableBudget',
      metadata: { name: 'web-pub', namespace: ns },
      spec: { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' }, maxUnavailable: '25%' },
    });
    const s0 = await statusOf('web-pub', (s) => s.currentAvailable === 4);
    expect(s0).toMatchObject({ totalReplicas: 4, desiredAvailable: 3, currentAvailable: 4, unavailableAllowed: 1, observedGeneration: 1 });
    // The controller marks every covered pod for the webhook's match condition.
    await eventually(async () => {
      const items = (await getJson('pods', undefined, ['-l', 'app=web'])).items as Obj[];
      return items.every((p) => p.metadata.annotations?.['kruise.io/related-pub'] === 'web-pub') || undefined;
    });
    const [a, b, c] = pods.map((p) => p.metadata.name as string);

    // Within the budget: evicted, its unit spent before the answer (the record goes once the pod is seen leaving).
    expect(await evict(a!)).toBeUndefined();
    expect(((await getJson('podunavailablebudgets.policy.kruise.io', 'web-pub')).status as Obj).unavailableAllowed).toBe(0);

    // Beyond it: refused with upstream's message, whatever the road.
    expect(await evict(b!)).toMatch(REFUSED);
    expect(await del(b!)).toMatch(REFUSED);
    expect(
      await attempt([
        'patch',
        'pod',
        c!,
        '-n',
        ns,
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'replace', path: '/spec/containers/0/image', value: 'nginx:1.28' }]),
      ]),
    ).toMatch(REFUSED);
    // A metadata-only update of a covered pod is not an in-place update: never sent, let through.
    expect(await attempt(['label', 'pod', c!, '-n', ns, 'touched=yes'])).toBeUndefined();
    // A dry run beyond the budget is refused too, and spends nothing within it (checked below).
    expect(await attempt(['delete', 'pod', b!, '-n', ns, '--dry-run=server'])).toMatch(REFUSED);
  }, 120_000);

  it('a Deployment budget (selector, minAvailable 1): its ReplicaSet counts as the Deployment; a deletion within it let through, beyond it refused; uncovered pods never wait', async () => {
    const dep = (await JSON.parse(
      await kubectl(['create', '-n', ns, '-o', 'json', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'api', namespace: ns },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: 'api' } },
            template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
          },
        }),
      }),
    )) as Obj;
    // No kube-controller-manager here: the ReplicaSet and its pods are made as the Deployment controller would.
    const rs = JSON.parse(
      await kubectl(['create', '-n', ns, '-o', 'json', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: {
            name: 'api-1',
            namespace: ns,
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'api', uid: dep.metadata.uid, controller: true }],
          },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: 'api' } },
            template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
          },
        }),
      }),
    ) as Obj;
    for (const n of ['api-1-a', 'api-1-b']) {
      await apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: n,
          namespace: ns,
          labels: { app: 'api' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'api-1', uid: rs.metadata.uid, controller: true }],
        },
        spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
      });
    }
    // A pod no budget selects, never ready: its deletion never reaches the runtime.
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'loner', namespace: ns },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
    });
    for (const p of await podsOf('app=api', 2)) await markReady(p);
    await apply({
      apiVersion: 'policy.kruise.io/v1alpha1',
      kind: 'PodUnavailableBudget',
      metadata: { name: 'api-pub', namespace: ns },
      spec: { selector: { matchLabels: { app: 'api' } }, minAvailable: 1 },
    });
    const s0 = await statusOf('api-pub', (s) => s.currentAvailable === 2);
    expect(s0).toMatchObject({ totalReplicas: 2, desiredAvailable: 1, currentAvailable: 2, unavailableAllowed: 1 });
    await eventually(async () => {
      const items = (await getJson('pods', undefined, ['-l', 'app=api'])).items as Obj[];
      return items.every((p) => p.metadata.annotations?.['kruise.io/related-pub'] === 'api-pub') || undefined;
    });
    // A dry run within the budget spends nothing.
    expect(await attempt(['delete', 'pod', 'api-1-a', '-n', ns, '--dry-run=server'])).toBeUndefined();
    expect(((await getJson('podunavailablebudgets.policy.kruise.io', 'api-pub')).status as Obj).unavailableAllowed).toBe(1);
    expect(await del('api-1-a')).toBeUndefined();
    expect(await del('api-1-b')).toMatch(REFUSED);
    expect(await del('loner')).toBeUndefined();
    // The deleted pod (kept by its graceful deletion, no kubelet here) stays recorded; the status holds the count.
    const s1 = await statusOf('api-pub', (s) => s.currentAvailable === 1);
    expect(s1).toMatchObject({ desiredAvailable: 1, currentAvailable: 1, unavailableAllowed: 0 });
  }, 120_000);

  it('a deleted Deployment is no longer counted: the budget recounts at once and lets its pods go', async () => {
    const n = await createNamespace('pub-gone');
    const dep = JSON.parse(
      await kubectl(['create', '-n', n, '-o', 'json', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'gone' },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'gone' } },
            template: { metadata: { labels: { app: 'gone' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
          },
        }),
      }),
    ) as Obj;
    // No kube-controller-manager here: the ReplicaSet and its pod are made as the Deployment controller would.
    const rs = JSON.parse(
      await kubectl(['create', '-n', n, '-o', 'json', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: {
            name: 'gone-1',
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gone', uid: dep.metadata.uid, controller: true }],
          },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'gone' } },
            template: { metadata: { labels: { app: 'gone' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
          },
        }),
      }),
    ) as Obj;
    const kubelet = new Kubelet(n, 'app=gone');
    await kubectl(['create', '-n', n, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'gone-1-a',
          labels: { app: 'gone' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'gone-1', uid: rs.metadata.uid, controller: true }],
        },
        spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
      }),
    });
    // upstream's spec: maxUnavailable 0, so while the Deployment stands its one pod may not go.
    await kubectl(['create', '-n', n, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'policy.kruise.io/v1alpha1',
        kind: 'PodUnavailableBudget',
        metadata: { name: 'gone-pub' },
        spec: { selector: { matchLabels: { app: 'gone' } }, maxUnavailable: 0 },
      }),
    });
    expect(await budgetStatus(n, 'gone-pub', (s) => s.currentAvailable === 1)).toMatchObject({
      totalReplicas: 1,
      desiredAvailable: 1,
      unavailableAllowed: 0,
    });
    await eventually(
      async () => (await podsIn(n, 'app=gone'))[0]?.metadata.annotations?.['kruise.io/related-pub'] === 'gone-pub' || undefined,
    );
    expect(await attempt(['delete', 'pod', 'gone-1-a', '-n', n, '--dry-run=server'])).toMatch(REFUSED);

    // Deleting the Deployment changes no pod; the garbage collector's deletion of its pod follows. The budget must
    // have recounted by then (desired 0), or it refuses the collector for as long as nothing else touches it.
    const t0 = Date.now();
    await kubectl(['delete', 'deployment', 'gone', '-n', n, '--wait=false']);
    const s = await budgetStatus(n, 'gone-pub', (x) => x.totalReplicas === 0);
    console.log(`[pub] budget recounted ${Date.now() - t0} ms after the Deployment's deletion`);
    expect(s).toMatchObject({ totalReplicas: 0, desiredAvailable: 0 });
    expect(await attempt(['delete', 'pod', 'gone-1-a', '-n', n, '--wait=false'])).toBeUndefined();
    expect(await budgetStatus(n, 'gone-pub', (x) => x.currentAvailable === 0)).toMatchObject({
      totalReplicas: 0,
      desiredAvailable: 0,
      currentAvailable: 0,
      unavailableAllowed: 0,
    });
    await kubelet.stop();
  }, 120_000);

  it('two CloneSets updated in place at once (maxUnavailable 100% each) never take more pods down than their one budget allows', async () => {
    // Each pod the budget let go counts as unavailable for 10 s after it is back (upstream's record of an update),
    // so the pods go about 10 s apart: 2 CloneSets of 2 keep the test short.
    const n = await createNamespace('pub-inplace');
    const kubelet = new Kubelet(n, 'app=ipu');
    const cloneSet = (name: string, image: string) => ({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name, namespace: n },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'ipu', set: name } },
        template: {
          metadata: { labels: { app: 'ipu', set: name } },
          // The gate the pod webhook adds to CloneSet pods: the controller marks it False through pods/status,
          // which no webhook sees, before it patches the image.
          spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }], containers: [{ name: 'app', image }] },
        },
        updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '100%' },
      },
    });
    await applyIn(n, cloneSet('ipu-a', 'nginx:1.27'));
    await applyIn(n, cloneSet('ipu-b', 'nginx:1.27'));
    await applyIn(n, {
      apiVersion: 'policy.kruise.io/v1alpha1',
      kind: 'PodUnavailableBudget',
      metadata: { name: 'ipu-pub', namespace: n },
      spec: { selector: { matchLabels: { app: 'ipu' } }, maxUnavailable: 1 },
    });
    expect(await budgetStatus(n, 'ipu-pub', (s) => s.currentAvailable === 4)).toMatchObject({
      totalReplicas: 4,
      desiredAvailable: 3,
      unavailableAllowed: 1,
    });
    await eventually(async () => {
      const items = await podsIn(n, 'app=ipu');
      return (items.length === 4 && items.every((p) => p.metadata.annotations?.['kruise.io/related-pub'] === 'ipu-pub')) || undefined;
    });
    const from = kubelet.samples.length;
    await applyIn(n, cloneSet('ipu-a', 'nginx:1.28'));
    await applyIn(n, cloneSet('ipu-b', 'nginx:1.28'));
    await eventually(
      async () => {
        const items = await podsIn(n, 'app=ipu');
        return (items.length === 4 && items.every((p) => runs(p, 'nginx:1.28') && isReady(p))) || undefined;
      },
      180_000,
      'every pod updated in place and ready',
    );
    await kubelet.stop();
    const during = kubelet.samples.slice(from);
    console.log(`[pub] in place, 2 CloneSets x 2, budget 1: available over time ${timeline(during)}`);
    expect(Math.min(...during.map((x) => x.available))).toBe(3);
    // One pod at a time: every pod was updated in place (same pod names, no recreate).
    expect((await podsIn(n, 'app=ipu')).every((p) => p.metadata.annotations?.['apps.kruise.io/inplace-update-state'])).toBe(true);
    expect(await budgetStatus(n, 'ipu-pub', (s) => s.currentAvailable === 4)).toMatchObject({ desiredAvailable: 3, unavailableAllowed: 1 });
  }, 240_000);

  it('a CloneSet recreate update (maxUnavailable 100%) never takes more pods down than the budget allows', async () => {
    const n = await createNamespace('pub-recreate');
    const kubelet = new Kubelet(n, 'app=rc');
    const cloneSet = (image: string) => ({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'rc', namespace: n },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'rc' } },
        template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'app', image }] } },
        updateStrategy: { type: 'ReCreate', maxUnavailable: '100%' },
      },
    });
    await applyIn(n, cloneSet('nginx:1.27'));
    await applyIn(n, {
      apiVersion: 'policy.kruise.io/v1alpha1',
      kind: 'PodUnavailableBudget',
      metadata: { name: 'rc-pub', namespace: n },
      spec: { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'rc' }, maxUnavailable: 1 },
    });
    expect(await budgetStatus(n, 'rc-pub', (s) => s.currentAvailable === 4)).toMatchObject({
      totalReplicas: 4,
      desiredAvailable: 3,
      unavailableAllowed: 1,
    });
    await eventually(async () => {
      const items = await podsIn(n, 'app=rc');
      return (items.length === 4 && items.every((p) => p.metadata.annotations?.['kruise.io/related-pub'] === 'rc-pub')) || undefined;
    });
    const before = new Set((await podsIn(n, 'app=rc')).map((p) => p.metadata.name as string));
    const from = kubelet.samples.length;
    await applyIn(n, cloneSet('nginx:1.28'));
    await eventually(
      async () => {
        const items = await podsIn(n, 'app=rc', true);
        return (
          (items.length === 4 && items.every((p) => !p.metadata.deletionTimestamp && runs(p, 'nginx:1.28') && isReady(p))) || undefined
        );
      },
      180_000,
      'every pod recreated and ready',
    );
    await kubelet.stop();
    const during = kubelet.samples.slice(from);
    console.log(`[pub] recreate, CloneSet x 4, budget 1: available over time ${timeline(during)}`);
    expect(Math.min(...during.map((x) => x.available))).toBe(3);
    // Every pod was replaced (new names).
    expect((await podsIn(n, 'app=rc')).filter((p) => before.has(p.metadata.name))).toEqual([]);
  }, 240_000);

  it('a SidecarSet sidecar update (maxUnavailable 100%) never takes more pods down than the budget allows, though each old sidecar stays Ready 12 s', async () => {
    const n = await createNamespace('pub-sidecar');
    const setName = `pub-sidecar-${n}`;
    const set = JSON.parse(
      await kubectl(['create', '-o', 'json', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'SidecarSet',
          metadata: { name: setName },
          spec: {
            namespace: n,
            selector: { matchLabels: { app: 'sc' } },
            containers: [{ name: 'logtail', image: 'logtail:1' }],
            updateStrategy: { type: 'RollingUpdate', maxUnavailable: '100%' },
          },
        }),
      }),
    ) as SidecarSet;
    // The old sidecar stays Ready for 12 s after its spec changed, longer than the budget's 10 s record of the pod:
    // the budget must still count it as mid-update (upstream's sidecar state check), not available again.
    const kubelet = new Kubelet(n, 'app=sc', 12_000);
    // The pod webhook is not registered here: each pod is injected by its pure step, as that webhook would.
    for (const i of [0, 1, 2, 3]) {
      const pod: Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `sc-${i}`, namespace: n, labels: { app: 'sc' } },
        spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
      };
      injectSidecarSets({
        pod,
        namespace: n,
        namespaceLabels: {},
        sidecarSets: [set],
        now: new Date().toISOString(),
        metadataKeyAllowed: () => false,
      });
      await kubectl(['create', '-n', n, '-f', '-'], { input: JSON.stringify(pod) });
    }
    // No workload counts these pods: the budget names its floor.
    await applyIn(n, {
      apiVersion: 'policy.kruise.io/v1alpha1',
      kind: 'PodUnavailableBudget',
      metadata: { name: 'sc-pub', namespace: n },
      spec: { selector: { matchLabels: { app: 'sc' } }, minAvailable: 3 },
    });
    expect(await budgetStatus(n, 'sc-pub', (s) => s.currentAvailable === 4)).toMatchObject({ desiredAvailable: 3, unavailableAllowed: 1 });
    await eventually(async () => {
      const items = await podsIn(n, 'app=sc');
      return (items.length === 4 && items.every((p) => p.metadata.annotations?.['kruise.io/related-pub'] === 'sc-pub')) || undefined;
    });
    const from = kubelet.samples.length;
    await kubectl([
      'patch',
      'sidecarset',
      setName,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { containers: [{ name: 'logtail', image: 'logtail:2' }] } }),
    ]);
    await eventually(
      async () => {
        const items = await podsIn(n, 'app=sc');
        return (items.length === 4 && items.every((p) => runs(p, 'logtail:2') && isReady(p))) || undefined;
      },
      150_000,
      'every sidecar updated and ready',
    ).catch(async (err: Error) => {
      const st = JSON.parse(await kubectl(['get', 'sidecarset', setName, '-o', 'json'])).status as Obj;
      const pods = (await podsIn(n, 'app=sc')).map((p) => `${p.metadata.name} ${image(p, 'logtail')} ready=${isReady(p)}`);
      throw new Error(`${err.message}; SidecarSet status ${JSON.stringify(st)}; pods ${pods.join(', ')}`);
    });
    await kubelet.stop();
    const during = kubelet.samples.slice(from);
    console.log(`[pub] sidecar update, 4 pods, budget minAvailable 3: available over time ${timeline(during)}`);
    expect(Math.min(...during.map((x) => x.available))).toBe(3);
    await kubectl(['delete', 'sidecarset', setName, '--wait=false']);
  }, 240_000);

  it('with the manager stopped: a covered pod stays, an uncovered pod is deleted or evicted at once', async () => {
    for (const name of ['free', 'free-evicted']) {
      await apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: ns },
        spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
      });
    }
    await ctl.stop();
    expect(await del('free')).toBeUndefined();
    expect(await evict('free-evicted')).toBeUndefined();
    expect(await del('api-1-b')).toMatch(/failed calling webhook "vpod.kb.io"/);
  }, 60_000);
});

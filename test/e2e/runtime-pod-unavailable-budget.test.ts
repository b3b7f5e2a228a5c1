// PodUnavailableBudget on the real kube-apiserver: the install's own /validate-pod entries (match conditions, rules,
// failure policies) registered and dialled at a running manager with both PUB gates on. The manager's CloneSet
// controller makes the pods; the test plays the kubelet (pod status). Status is computed for a CloneSet's pods
// (targetRef) and a Deployment's pods (selector, through its ReplicaSet); an eviction and a deletion within the budget
// are let through and recorded, beyond it refused with upstream's message; an in-place image update beyond it refused.
import { AdmissionregistrationV1Api, type V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POD_VALIDATING_PATH, VALIDATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { validatingWebhookConfiguration } from '../../src/install/webhooks.js';
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

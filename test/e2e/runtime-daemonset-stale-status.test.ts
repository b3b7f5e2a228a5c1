// An Advanced DaemonSet's own status write and a cache that has not shown it yet, on the real kube-apiserver. The
// fault: the round after an image update (jobs created, status written with the new revision and 0 pods updated)
// runs from the DaemonSet's copy before that write (a lagging watch, a loaded process), whose counts still say every
// pod is updated. Read together with the revision just written, that copy says the update is finished, and image
// pre-download deleted the jobs it had just created (seen once in a loaded CI run). Here the real DaemonSet
// controller (setup, caches and writes as in the manager) runs its rounds by hand, its DaemonSet cache replaced by
// the held copy for one round: that round waits for the cache, the jobs stay, and the rounds after it keep them.
import { randomBytes } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonSetDefinition, ImagePullJobDefinition, NodeImageDefinition } from '../../src/api/registry.js';
import { ADVANCED_DAEMONSETS } from '../../src/contracts/index.js';
import { KubeClient } from '../../src/runtime/core/client.js';
import type { ControllerContext, Reconciler } from '../../src/runtime/core/controller.js';
import { EventRecorder } from '../../src/runtime/core/events.js';
import { InformerFactory, type Informer } from '../../src/runtime/core/informer.js';
import { createLogger } from '../../src/runtime/core/log.js';
import { daemonSetController } from '../../src/runtime/controllers/daemonset/index.js';
import type { DaemonSetObject } from '../../src/runtime/controllers/daemonset/placement-decision.js';
import { adminKubeConfig, createNamespace, createNode, forceDelete, mergePatch } from '../harness/index.js';
import { reportRunning } from './runtime/kubelet.js';
import { installCrds } from './runtime/support.js';

type Obj = Record<string, any>;

const suffix = randomBytes(2).toString('hex');
const LABEL = 'e2e.cdk8s-kruise.io/ds-stale-status';
const nodes = ['a', 'b', 'c', 'd'].map((n) => `node-dsstale-${suffix}-${n}`);
const DS = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'daemonsets' } as const;
const JOBS = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'imagepulljobs' } as const;

let core: CoreV1Api;
let custom: CustomObjectsApi;
let ns: string;
let factory: InformerFactory;
let sync: Reconciler;
let sets: Informer<DaemonSetObject>;
/** While set, the DaemonSet cache the controller reads answers this copy. */
let held: DaemonSetObject | undefined;

const agent = (image: string) => [{ name: 'agent', image }];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The scheduler and the kubelet: binds the set's pods where their affinity says, runs them, confirms deletions. */
async function kubelet(): Promise<void> {
  for (const p of (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=agent' })).items) {
    if (p.metadata!.deletionTimestamp) await forceDelete({ apiVersion: 'v1', kind: 'Pod', metadata: p.metadata });
    else {
      const node =
        p.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0]!.matchFields![0]!.values![0]!;
      await reportRunning(p, node);
    }
  }
}

/** Rounds of the controller and the kubelet until `pred` holds. */
async function roundsUntil(pred: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await sync.reconcile(`${ns}/agent`);
    await kubelet();
    if (await pred()) return;
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

const status = async (): Promise<Obj | undefined> =>
  ((await custom.getNamespacedCustomObject({ ...DS, namespace: ns, name: 'agent' })) as Obj).status;
const jobNames = async (): Promise<string[]> =>
  ((await custom.listNamespacedCustomObject({ ...JOBS, namespace: ns })) as { items: Obj[] }).items
    .map((j) => j.metadata.name as string)
    .sort();

beforeAll(async () => {
  await installCrds([DaemonSetDefinition, ImagePullJobDefinition, NodeImageDefinition]);
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  ns = await createNamespace('ds-stale-status');
  for (const n of nodes) {
    await createNode(n, { labels: { [LABEL]: suffix } });
    await core.patchNode({ name: n, body: { spec: { taints: [] } } }, mergePatch);
  }
  const client = new KubeClient(kc);
  const logger = createLogger({ level: 'silent' });
  factory = new InformerFactory(client, logger);
  const informers = {
    for: (type: typeof ADVANCED_DAEMONSETS, opts?: object) => {
      const inf = factory.for(type, opts);
      if (type !== ADVANCED_DAEMONSETS) return inf;
      sets = inf as unknown as Informer<DaemonSetObject>;
      return new Proxy(inf, {
        get: (target, prop) => {
          if (prop === 'get' && held) return () => held;
          const v = Reflect.get(target, prop, target) as unknown;
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
    },
  };
  const ctx = {
    client,
    logger,
    informers,
    events: new EventRecorder(client, 'e2e', logger),
    featureGates: new Map([['PreDownloadImageForDaemonSetUpdate', true]]),
  } as unknown as ControllerContext;
  sync = daemonSetController.setup(ctx, () => undefined) as Reconciler;
  factory.startAll();
  await factory.waitForSync();
});

afterAll(() => factory?.stopAll());

describe('Advanced DaemonSet: a round from the copy before its own status write', () => {
  it('waits for the cache instead of reading the update as finished: the pre-download jobs stay', async () => {
    await custom.createNamespacedCustomObject({
      ...DS,
      namespace: ns,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'DaemonSet',
        metadata: { name: 'agent', namespace: ns },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: {
            metadata: { labels: { app: 'agent' } },
            spec: { nodeSelector: { [LABEL]: suffix }, containers: agent('example.io/agent:1') },
          },
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, partition: 2 } },
        },
      },
    });
    await roundsUntil(async () => {
      const st = await status();
      return st?.numberReady === 4 && st.updatedNumberScheduled === 4;
    }, 'agent: 4 ready');

    await custom.patchNamespacedCustomObject(
      { ...DS, namespace: ns, name: 'agent', body: { spec: { template: { spec: { containers: agent('example.io/agent:2') } } } } },
      mergePatch,
    );
    const key = `${ns}/agent`;
    for (let i = 0; sets.get(key)?.spec.template.spec?.containers[0]?.image !== 'example.io/agent:2'; i++) {
      if (i > 100) throw new Error('the DaemonSet cache did not show the image update');
      await sleep(50);
    }
    // The copy every round after this one will be tempted to read: the new template, the counts of the old revision.
    const stale = structuredClone(sets.get(key)!);
    expect(stale.status).toMatchObject({ desiredNumberScheduled: 4, updatedNumberScheduled: 4 });

    await sync.reconcile(key);
    expect(await jobNames()).toHaveLength(1);
    expect((await status())?.updatedNumberScheduled).toBeLessThan(4);
    // Every other cache has caught up with the round's writes (pods, jobs, revisions): only the DaemonSet's lags.
    await sleep(1000);
    held = stale;
    const round = await sync.reconcile(key).finally(() => (held = undefined));
    expect(await jobNames()).toHaveLength(1);
    expect(round).toEqual({ requeueAfterMs: expect.any(Number) });

    // From the cache that shows the write, the rollout goes on behind its partition and the job stays.
    await roundsUntil(async () => (await status())?.updatedNumberScheduled === 2, 'agent: 2 of 4 updated (partition 2)');
    expect(await jobNames()).toHaveLength(1);
  });
});

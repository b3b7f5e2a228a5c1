// The pod webhook fails safe, on the real kube-apiserver. With the install applied and the manager absent (no
// kubelet here: its pods never run, the webhook Service has no endpoints) or the webhook Service deleted, pods that
// use no runtime feature are created and edited as if no runtime were installed, while a pod the app's SidecarSet
// selects, or one carrying a runtime marker, is refused rather than created without its sidecar or wiring. With
// the runtime serving the same two entries, every pod is reviewed exactly once: the app's pods through the `Fail`
// entry, the others (a SidecarSet applied outside the app) through the `Ignore` one.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiObject, App, Chart } from 'cdk8s';
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, type V1MutatingWebhook, type V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KruiseRuntime } from '../../constructs/kruise-runtime.js';
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  MUTATING_WEBHOOK_CONFIGURATION,
  POD_MUTATING_PATH,
  VALIDATING_WEBHOOK_CONFIGURATION,
} from '../../src/contracts/index.js';
import { sidecarSetMatches } from '../../src/runtime/control/sidecarset-pod.js';
import type { SidecarSetTarget } from '../../src/install/pod-webhook-needs.js';
import { mutatingWebhookConfiguration, POD_WEBHOOK_BEST_EFFORT } from '../../src/install/webhooks.js';
import { adminKubeConfig, createNamespace, kubectl } from '../harness/index.js';
import {
  conversionNone,
  eventually,
  freePort,
  loopbackWebhookArgs,
  podWebhookInstallSpec,
  startController,
  type ControllerProcess,
} from './runtime/support.js';

type Obj = Record<string, any>;

let core: CoreV1Api;
let adm: AdmissionregistrationV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
/** The namespace the app's SidecarSet injects into (`spec.namespace`). */
let appNs: string;
/** A namespace that uses no runtime feature. */
let otherNs: string;
let dir: string;
let runtimeFile: string;
const appSet = `fs-logtail-${process.pid}`;
const outsideSet = `fs-outside-${process.pid}`;

const docsOf = (file: string): Obj[] =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);

function sidecarSet(name: string, selector: Record<string, string>, namespace?: string): Obj {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      ...(namespace ? { namespace } : {}),
      selector: { matchLabels: selector },
      containers: [{ name: 'logtail', image: 'example.io/logtail:1.0.0' }],
    },
  };
}

function pod(name: string, extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): V1Pod {
  return {
    metadata: { name, ...(extra.labels ? { labels: extra.labels } : {}), ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
  };
}

/** Kruise's own kinds are refused while the manager is down (their webhooks are Fail): nothing else of ours is. */
async function deleteWebhookConfigurations(): Promise<void> {
  await adm.deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await adm.deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  adm = kc.makeApiClient(AdmissionregistrationV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  runtimeNs = await createNamespace('kruise-fs');
  appNs = await createNamespace('fs-app');
  otherNs = await createNamespace('fs-other');
  dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-failsafe-'));
  const app = new App({ outdir: dir });
  new KruiseRuntime(app, 'kruise', { namespace: runtimeNs });
  const chart = new Chart(app, 'app');
  new ApiObject(chart, 'logtail', sidecarSet(appSet, { app: 'web' }, appNs) as never);
  app.synth();
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.k8s.yaml'))
    .sort()
    .map((f) => path.join(dir, f));
  // Another file's install (another runtime namespace in the SidecarSet CRD's conversion) must not conflict with
  // this one's; and since no manager answers `/convert` here, the SidecarSets below are written with conversion None.
  await conversionNone();
  await kubectl(['apply', '--server-side', '--field-manager=cdk8s-kruise-e2e', '-f', files[0]!]);
  await kubectl(['wait', '--for', 'condition=established', '--timeout=60s', 'crd', '-l', 'app.kubernetes.io/part-of=cdk8s-kruise']);
  await conversionNone();
  runtimeFile = files[1]!;
  // The whole runtime, webhook configurations included: the manager's pods are never started here.
  await kubectl(['apply', '--server-side', '--field-manager=cdk8s-kruise-e2e', '-f', runtimeFile]);
});

afterAll(async () => {
  await deleteWebhookConfigurations();
  await conversionNone();
  for (const name of [appSet, outsideSet]) {
    await custom
      .deleteClusterCustomObject({ group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets', name })
      .catch(() => undefined);
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('install applied, manager absent', () => {
  it('registers the pod webhook as a Fail entry limited by match conditions and an Ignore entry for the rest', async () => {
    const live = await adm.readMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION });
    const pods = (live.webhooks ?? []).filter((w) => w.clientConfig.service?.path === POD_MUTATING_PATH);
    expect(pods.map((w) => [w.name, w.failurePolicy])).toEqual([
      ['mpod.kb.io', 'Fail'],
      [POD_WEBHOOK_BEST_EFFORT, 'Ignore'],
    ]);
    // The API server kept (compiled and stored) the conditions: without them both entries would match every pod.
    expect(pods[0]!.matchConditions?.[0]?.expression).toContain(JSON.stringify(appNs));
    expect(pods[1]!.matchConditions?.[0]?.expression).toBe(`!(${pods[0]!.matchConditions![0]!.expression})`);
  });

  it('creates and edits pods of a namespace that uses no runtime feature', async () => {
    const created = await core.createNamespacedPod({ namespace: otherNs, body: pod('plain') });
    expect(created.spec!.containers.map((c) => c.name)).toEqual(['app']);
    // The app's SidecarSet injects into its own namespace only: the same labels elsewhere need no runtime.
    const labelled = await core.createNamespacedPod({ namespace: otherNs, body: pod('web-elsewhere', { labels: { app: 'web' } }) });
    expect(labelled.spec!.containers.map((c) => c.name)).toEqual(['app']);
    const edited = await core.patchNamespacedPod({
      name: 'plain',
      namespace: otherNs,
      body: [{ op: 'add', path: '/metadata/labels', value: { edited: 'yes' } }],
    });
    expect(edited.metadata!.labels).toEqual({ edited: 'yes' });
  });

  it('creates the pods of the app namespace the SidecarSet does not select', async () => {
    const created = await core.createNamespacedPod({ namespace: appNs, body: pod('unselected', { labels: { app: 'db' } }) });
    expect(created.spec!.containers.map((c) => c.name)).toEqual(['app']);
  });

  it('refuses a pod the SidecarSet selects, rather than creating it without its sidecar', async () => {
    await expect(core.createNamespacedPod({ namespace: appNs, body: pod('web-0', { labels: { app: 'web' } }) })).rejects.toThrow(
      /mpod\.kb\.io/,
    );
  });

  it('refuses a pod carrying a runtime marker in any namespace (exit priority, a Kruise owner)', async () => {
    const marked = pod('exit-ordered', { annotations: { [ANNOTATION_CONTAINER_EXIT_PRIORITY]: '{"app":1}' } });
    await expect(core.createNamespacedPod({ namespace: otherNs, body: marked })).rejects.toThrow(/mpod\.kb\.io/);
    const owned = pod('clone-0');
    owned.metadata!.ownerReferences = [
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        name: 'web',
        uid: '00000000-0000-0000-0000-000000000002',
        controller: true,
      },
    ];
    await expect(core.createNamespacedPod({ namespace: otherNs, body: owned })).rejects.toThrow(/mpod\.kb\.io/);
  });

  it("leaves a malformed pod to the API server's own validation (no match-condition error)", async () => {
    const empty = { metadata: { name: 'no-containers' }, spec: { containers: [] } };
    await expect(core.createNamespacedPod({ namespace: otherNs, body: empty as V1Pod, dryRun: 'All' })).rejects.toThrow(
      /spec\.containers: Required value/,
    );
  });

  it('keeps both answers with the webhook Service deleted', async () => {
    const service = docsOf(runtimeFile).find((d) => d.kind === 'Service');
    expect(service).toBeDefined();
    await core.deleteNamespacedService({ name: service!.metadata.name, namespace: runtimeNs });
    const created = await core.createNamespacedPod({ namespace: otherNs, body: pod('after-service-deleted') });
    expect(created.spec!.containers.map((c) => c.name)).toEqual(['app']);
    await expect(core.createNamespacedPod({ namespace: appNs, body: pod('web-1', { labels: { app: 'web' } }) })).rejects.toThrow(
      /mpod\.kb\.io/,
    );
  });
});

describe('the match condition decides as the SidecarSet selectors do', () => {
  const table = `fs-selector-table-${process.pid}`;
  const sets: SidecarSetTarget[] = [];

  beforeAll(async () => {
    await deleteWebhookConfigurations();
    sets.push(
      { name: 'ns-web', namespace: appNs, selector: { matchLabels: { app: 'web' } } },
      {
        name: 'tiers',
        selector: {
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['a', 'b'] },
            { key: 'canary', operator: 'NotIn', values: ['true'] },
          ],
        },
      },
      {
        name: 'teams',
        selector: {
          matchLabels: { role: 'api' },
          matchExpressions: [
            { key: 'team', operator: 'Exists' },
            { key: 'legacy', operator: 'DoesNotExist' },
          ],
        },
      },
      { name: 'empty', selector: {} },
    );
    const spec = podWebhookInstallSpec(runtimeNs);
    const rendered = mutatingWebhookConfiguration({
      ...spec,
      webhook: { ...spec.webhook, podFailClosed: { mode: 'needed', sidecarSets: sets } },
    }) as unknown as {
      webhooks: V1MutatingWebhook[];
    };
    // Nothing listens on port 1: every call fails at once, so a refusal means the Fail entry's condition held.
    const hooks = rendered.webhooks.filter((w) => w.clientConfig.service?.path === POD_MUTATING_PATH);
    for (const w of hooks) w.clientConfig = { url: `https://127.0.0.1:1${POD_MUTATING_PATH}` };
    await adm.createMutatingWebhookConfiguration({ body: { metadata: { name: table }, webhooks: hooks } });
  });

  afterAll(async () => {
    await adm.deleteMutatingWebhookConfiguration({ name: table }).catch(() => undefined);
  });

  const cases: Array<[string, () => string, Record<string, string>]> = [
    ['app=web in its namespace', () => appNs, { app: 'web' }],
    ['app=web elsewhere', () => otherNs, { app: 'web' }],
    ['no labels', () => otherNs, {}],
    ['tier=a', () => otherNs, { tier: 'a' }],
    ['tier=b, canary=false', () => otherNs, { tier: 'b', canary: 'false' }],
    ['tier=a, canary=true', () => otherNs, { tier: 'a', canary: 'true' }],
    ['tier=c', () => otherNs, { tier: 'c' }],
    ['role=api, team=x', () => otherNs, { role: 'api', team: 'x' }],
    ['role=api, team=x, legacy=1', () => otherNs, { role: 'api', team: 'x', legacy: '1' }],
    ['role=api without team', () => otherNs, { role: 'api' }],
  ];

  it.each(cases)('%s', async (_what, namespaceOf, labels) => {
    const namespace = namespaceOf();
    const expected = sets.some((s) => sidecarSetMatches({ spec: s as never }, { namespace, labels, namespaceLabels: undefined }));
    const body = pod(`table-${Object.keys(labels).length}`, { labels });
    const refused = await core.createNamespacedPod({ namespace, body, dryRun: 'All' }).then(
      () => false,
      (error: Error) => {
        expect(error.message).toMatch(/mpod\.kb\.io/);
        return true;
      },
    );
    expect(refused).toBe(expected);
  });
});

describe('the same two entries with the runtime serving, then stopped', () => {
  let ctl: ControllerProcess | undefined;

  beforeAll(async () => {
    await deleteWebhookConfigurations();
    const port = await freePort();
    const spec = podWebhookInstallSpec(runtimeNs);
    const rendered = mutatingWebhookConfiguration({
      ...spec,
      webhook: {
        ...spec.webhook,
        podFailClosed: { mode: 'needed', sidecarSets: [{ name: appSet, namespace: appNs, selector: { matchLabels: { app: 'web' } } }] },
      },
    }) as unknown as { webhooks: V1MutatingWebhook[] };
    const podHooks = rendered.webhooks.filter((w) => w.clientConfig.service?.path === POD_MUTATING_PATH);
    for (const w of podHooks) w.clientConfig = { url: `https://127.0.0.1:${port}${POD_MUTATING_PATH}` };
    await adm.createMutatingWebhookConfiguration({ body: { metadata: { name: MUTATING_WEBHOOK_CONFIGURATION }, webhooks: podHooks } });
    ctl = await startController(runtimeNs, loopbackWebhookArgs(port));
    await ctl.waitReady();
    // The app's SidecarSet, and one applied by another tool (not in the app, so not in the Fail entry's conditions).
    for (const body of [sidecarSet(appSet, { app: 'web' }, appNs), sidecarSet(outsideSet, { app: 'outside' })]) {
      await custom.createClusterCustomObject({ group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets', body });
    }
  });

  afterAll(async () => {
    await ctl?.stop('SIGTERM');
  });

  const names = (p: V1Pod) => p.spec!.containers.map((c) => c.name);

  it('reviews an app pod once through the Fail entry: injected, launch-priority wired once', async () => {
    const body = pod('web-ordered', { labels: { app: 'web' } });
    body.spec!.containers = [
      { name: 'first', image: 'nginx:1.27', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '1' }] },
      { name: 'second', image: 'nginx:1.27' },
    ];
    const created = await eventually(
      async () => {
        const p = await core.createNamespacedPod({ namespace: appNs, body, dryRun: 'All' });
        return names(p).includes('logtail') ? p : undefined;
      },
      30_000,
      'app SidecarSet injected',
    );
    expect(names(created)).toEqual(['logtail', 'first', 'second']);
    for (const c of created.spec!.containers.filter((x) => x.name !== 'logtail')) {
      expect(
        c.env!.filter((e) => e.name === 'KRUISE_CONTAINER_BARRIER'),
        c.name,
      ).toHaveLength(1);
    }
    expect(created.metadata!.annotations!['kruise.io/sidecarset-injected-list']).toBe(appSet);
  });

  it('injects a SidecarSet applied outside the app through the Ignore entry while the runtime answers', async () => {
    const created = await eventually(
      async () => {
        const p = await core.createNamespacedPod({
          namespace: otherNs,
          body: pod('outside-0', { labels: { app: 'outside' } }),
          dryRun: 'All',
        });
        return names(p).includes('logtail') ? p : undefined;
      },
      30_000,
      'outside SidecarSet injected',
    );
    expect(names(created)).toEqual(['logtail', 'app']);
    expect(created.metadata!.annotations!['kruise.io/sidecarset-injected-list']).toBe(outsideSet);
  });

  it('once the runtime stops: the app pod is refused, the outside SidecarSet is skipped (the trade-off)', async () => {
    await ctl!.stop('SIGTERM');
    ctl = undefined;
    await expect(
      core.createNamespacedPod({ namespace: appNs, body: pod('web-2', { labels: { app: 'web' } }), dryRun: 'All' }),
    ).rejects.toThrow(/mpod\.kb\.io/);
    const skipped = await core.createNamespacedPod({
      namespace: otherNs,
      body: pod('outside-1', { labels: { app: 'outside' } }),
      dryRun: 'All',
    });
    expect(names(skipped)).toEqual(['app']);
  });
});

// Compatibility of SidecarSet injection with upstream kruise-manager (the version test/kruise-peer pins):
// the same SidecarSets and the same pods go through upstream's pod webhook and then through ours, each
// runtime alone (their webhook configurations are never registered at once), and the injected pods must be
// equal apart from the documented differences below. Pods are created with dryRun=All: each webhook mutates
// and the API server defaults and validates in full, and nothing is left behind.
//
// It runs on a control plane of its own (like kruise-peer.test.ts): upstream's CRDs have the same names as
// ours and would replace them on the shared API server, and upstream's pod webhook sees every namespace
// without a `control-plane` label, so other test files' pods would go through it.
//
// The revision history (revisionHistoryLimit pruning) is played the same way on both and must keep the same
// set versions after each step.
//
// Documented differences (everything else must be equal):
//  - `updateTimestamp` inside the two hash annotations: the time of each create.
//  - The values of `hash` in the two hash annotations and the suffix of `controllerRevision`: upstream hashes
//    Go's JSON encoding of the containers its SidecarSet webhook defaulted, ours the canonical JSON of the
//    stored containers (src/api/sidecarset-pod.ts). Each runtime compares only values it computed itself;
//    the shape is compared (a safe-encoded string; `<set name>-` and a suffix).
//  - Native sidecars: a SidecarSet annotated `kruise.cdk8s.io/native-sidecars: "true"` is injected by us as
//    init containers with `restartPolicy: Always`; upstream does not know the annotation and injects plain
//    containers. Proven below as the only difference for such a set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mutatingWebhookConfiguration, validatingWebhookConfiguration } from '../../src/install/webhooks.js';
import { toCustomResourceDefinition } from '../../src/api/crd.js';
import { KINDS } from '../../src/api/registry.js';
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
  ANNOTATION_SIDECARSET_INJECTED_LIST,
  ANNOTATION_SIDECARSET_NATIVE_SIDECARS,
  MUTATING_WEBHOOK_CONFIGURATION,
  POD_MUTATING_PATH,
  VALIDATING_WEBHOOK_CONFIGURATION,
} from '../../src/contracts/index.js';
import { ControlPlane } from '../harness/controlplane.js';
import { KRUISE_PEER_NAMESPACE, KruisePeer, installKruisePeerCrds, kubectlOn, pinnedKruiseVersion } from '../harness/kruise-peer.js';
import { ControllerProcess, freePort } from './runtime/process.js';
import { podWebhookInstallSpec } from './runtime/support.js';

type Obj = Record<string, unknown>;
interface Pod {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> } & Obj;
  spec: Obj & { containers: Obj[]; initContainers?: Obj[] };
}

const ns = 'compat';
const otherNs = 'compat-other';
let plane: ControlPlane;
let peer: KruisePeer | undefined;
let ours: ControllerProcess | undefined;
const k = (args: string[], input?: unknown) => kubectlOn(plane, args, input === undefined ? undefined : JSON.stringify(input));

/** The kruise-configuration whitelist both runtimes read from their namespace (kruise-system for both here). */
const whitelist = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'kruise-configuration', namespace: KRUISE_PEER_NAMESPACE },
  data: {
    SidecarSet_PatchPodMetadata_WhiteList: JSON.stringify({
      rules: [{ selector: { matchLabels: { 'patch-allowed': 'true' } }, allowedAnnotationKeyExprs: ['^compat\\.example/.+$'] }],
    }),
  },
};

const sidecarSet = (name: string, spec: Obj, metadata: Obj = {}): Obj => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name, ...metadata },
  spec,
});

/** One SidecarSet per feature under comparison; all select `app: compat` pods. */
const SETS: Obj[] = [
  sidecarSet(
    'compat-main',
    {
      selector: { matchLabels: { app: 'compat' } },
      namespace: ns,
      containers: [
        {
          name: 'proxy',
          image: 'registry.example/proxy:1',
          podInjectPolicy: 'BeforeAppContainer',
          shareVolumePolicy: { type: 'enabled' },
          volumeMounts: [{ name: 'proxy-conf', mountPath: '/etc/proxy' }],
          env: [{ name: 'OWN', value: 'x' }],
          // Both forms: a named source container, and one named through a pod label.
          transferEnv: [
            { sourceContainerName: 'app', envName: 'REGION' },
            { sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['main']" } }, envNames: ['ZONE', 'MISSING'] },
          ],
          ports: [{ name: 'proxy', containerPort: 15001 }],
          readinessProbe: { tcpSocket: { port: 15001 }, periodSeconds: 5 },
        },
        {
          name: 'logtail',
          image: 'registry.example/logtail:1',
          podInjectPolicy: 'AfterAppContainer',
          volumeMounts: [{ name: 'logs', mountPath: '/var/log/app' }],
        },
      ],
      initContainers: [
        { name: 'z-init', image: 'registry.example/init:1', command: ['true'] },
        { name: 'b-init', image: 'registry.example/init:1', command: ['true'], volumeMounts: [{ name: 'proxy-conf', mountPath: '/c' }] },
      ],
      volumes: [
        { name: 'proxy-conf', emptyDir: {} },
        // The pod has its own `logs`: the pod's wins.
        { name: 'logs', emptyDir: { medium: 'Memory' } },
        // No injected container mounts it: not injected.
        { name: 'unused', emptyDir: {} },
      ],
      imagePullSecrets: [{ name: 'cred-main' }, { name: 'cred-common' }],
      patchPodMetadata: [
        { annotations: { 'compat.example/retain': 'from-set', 'compat.example/new': 'added' } },
        { patchPolicy: 'Overwrite', annotations: { 'compat.example/overwrite': 'from-set' } },
        { patchPolicy: 'MergePatchJson', annotations: { 'compat.example/merge': '{"b":2,"c":null}' } },
      ],
    },
    { labels: { 'patch-allowed': 'true' } },
  ),
  sidecarSet('compat-selected-ns', {
    selector: { matchLabels: { app: 'compat' } },
    namespaceSelector: { matchLabels: { compat: 'selected' } },
    containers: [{ name: 'agent', image: 'registry.example/agent:1', podInjectPolicy: 'AfterAppContainer' }],
    imagePullSecrets: [{ name: 'cred-common' }, { name: 'cred-agent' }],
  }),
  // Never injected: paused, another namespace, a selector no pod has.
  sidecarSet('compat-paused', {
    selector: { matchLabels: { app: 'compat' } },
    injectionStrategy: { paused: true },
    containers: [{ name: 'paused', image: 'registry.example/paused:1' }],
  }),
  sidecarSet('compat-elsewhere', {
    selector: { matchLabels: { app: 'compat' } },
    namespace: 'nowhere',
    containers: [{ name: 'elsewhere', image: 'registry.example/elsewhere:1' }],
  }),
  // A same-named app container is replaced where it stands.
  sidecarSet('compat-replace', {
    selector: { matchLabels: { replace: 'yes' } },
    containers: [{ name: 'sidecar', image: 'registry.example/sidecar:2', podInjectPolicy: 'AfterAppContainer' }],
  }),
  // HotUpgrade: the sidecar becomes a working and an idle container, with version annotations and env.
  sidecarSet('compat-hot', {
    selector: { matchLabels: { app: 'hot' } },
    namespace: ns,
    containers: [
      {
        name: 'envoy',
        image: 'registry.example/envoy:1',
        env: [{ name: 'OWN', value: 'x' }],
        upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'registry.example/envoy-empty:1' },
      },
    ],
  }),
  sidecarSet(
    'compat-native',
    {
      selector: { matchLabels: { app: 'native' } },
      containers: [{ name: 'native', image: 'registry.example/native:1', volumeMounts: [{ name: 'n', mountPath: '/n' }] }],
      volumes: [{ name: 'n', emptyDir: {} }],
    },
    { annotations: { [ANNOTATION_SIDECARSET_NATIVE_SIDECARS]: 'true' } },
  ),
];

/** The pods compared: name → body (namespace given at create). */
const PODS: Record<string, { namespace: string; body: Pod }> = {
  full: {
    namespace: ns,
    body: {
      metadata: {
        name: 'full',
        labels: { app: 'compat', main: 'app' },
        annotations: {
          'compat.example/retain': 'from-pod',
          'compat.example/overwrite': 'from-pod',
          'compat.example/merge': '{"a":1,"c":3}',
        },
      },
      spec: {
        initContainers: [{ name: 'pod-init', image: 'registry.example/init:1', command: ['true'] }],
        containers: [
          {
            name: 'app',
            image: 'registry.example/app:1',
            env: [
              { name: 'REGION', value: 'eu' },
              { name: 'ZONE', value: 'eu-1' },
              { name: 'OTHER', value: 'no' },
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            ],
            volumeMounts: [
              { name: 'logs', mountPath: '/logs' },
              // Shared into the proxy (shareVolumePolicy): the env its subPathExpr names goes with it.
              { name: 'data', mountPath: '/data', subPathExpr: 'd/$(POD_NAME)/$(REGION)/$(UNSET)' },
            ],
          },
        ],
        volumes: [
          { name: 'logs', emptyDir: {} },
          { name: 'data', emptyDir: {} },
        ],
        imagePullSecrets: [{ name: 'cred-common' }],
      },
    },
  },
  // namespaceSelector matches here, `namespace: compat` does not.
  'other-ns': {
    namespace: otherNs,
    body: {
      metadata: { name: 'other-ns', labels: { app: 'compat', main: 'app' } },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    },
  },
  replace: {
    namespace: otherNs,
    body: {
      metadata: { name: 'replace', labels: { replace: 'yes' } },
      spec: {
        containers: [
          { name: 'sidecar', image: 'registry.example/sidecar:1' },
          { name: 'app', image: 'registry.example/app:1' },
        ],
      },
    },
  },
  unmatched: {
    namespace: ns,
    body: {
      metadata: { name: 'unmatched', labels: { app: 'other' } },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    },
  },
  hot: {
    namespace: ns,
    body: {
      metadata: { name: 'hot', labels: { app: 'hot' } },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    },
  },
  native: {
    namespace: ns,
    body: {
      metadata: { name: 'native', labels: { app: 'native' } },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    },
  },
};

/** The SidecarSets a pod should have been injected with (to know when a webhook's cache has them all). */
const EXPECTED_INJECTED: Record<string, string | undefined> = {
  full: 'compat-main',
  'other-ns': 'compat-selected-ns',
  replace: 'compat-replace',
  unmatched: undefined,
  hot: 'compat-hot',
  native: 'compat-native',
};

async function dryRunCreate(name: string): Promise<Pod> {
  const { namespace, body } = PODS[name]!;
  return JSON.parse(
    await k(['create', '--dry-run=server', '-n', namespace, '-o', 'json', '-f', '-'], { apiVersion: 'v1', kind: 'Pod', ...body }),
  ) as Pod;
}

/**
 * Creates every pod once each runtime has a revision for every set (both then name it in the hash
 * annotation: upstream writes `controllerRevision` only once its controller recorded `latestRevision`) and
 * its webhook's cache holds every set (probe pods until each is injected).
 */
async function createAll(runtime: string): Promise<Record<string, Pod>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const sets = JSON.parse(await k(['get', 'sidecarsets.v1alpha1.apps.kruise.io', '-o', 'json'])) as {
      items: { metadata: { generation?: number }; status?: { observedGeneration?: number; latestRevision?: string } }[];
    };
    const revised =
      sets.items.length === SETS.length &&
      sets.items.every((x) => x.status?.latestRevision && x.status.observedGeneration === x.metadata.generation);
    if (revised) break;
    if (Date.now() > deadline)
      throw new Error(`${runtime}: SidecarSets without latestRevision after 60 s: ${JSON.stringify(sets.items.map((x) => x.status))}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  for (;;) {
    const out: Record<string, Pod> = {};
    for (const name of Object.keys(PODS)) out[name] = await dryRunCreate(name);
    const ready = Object.entries(EXPECTED_INJECTED).every(
      ([name, list]) => out[name]!.metadata.annotations?.[ANNOTATION_SIDECARSET_INJECTED_LIST] === list,
    );
    if (ready) return out;
    if (Date.now() > deadline) {
      const got = Object.fromEntries(
        Object.entries(out).map(([n, p]) => [n, p.metadata.annotations?.[ANNOTATION_SIDECARSET_INJECTED_LIST]]),
      );
      throw new Error(`${runtime}: pods not injected as expected after 60 s: ${JSON.stringify(got)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** What is compared: spec and labels/annotations, with the create-time fields and timestamps normalised. */
function comparable(pod: Pod): Obj {
  const annotations = { ...pod.metadata.annotations };
  for (const key of [ANNOTATION_SIDECARSET_HASH, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE]) {
    if (!annotations[key]) continue;
    const entries = JSON.parse(annotations[key]) as Record<string, Obj>;
    for (const [name, e] of Object.entries(entries)) {
      e.updateTimestamp = '<time>';
      if (typeof e.hash === 'string' && /^[bcdfghjklmnpqrstvwxz2456789]{16,}$/.test(e.hash)) e.hash = '<hash>';
      if (typeof e.controllerRevision === 'string' && e.controllerRevision.startsWith(`${name}-`)) e.controllerRevision = `${name}-<hash>`;
    }
    annotations[key] = entries as unknown as string;
  }
  return { labels: pod.metadata.labels, annotations, spec: pod.spec };
}

async function applySets(): Promise<void> {
  await k(['create', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: SETS });
}

async function deleteSets(): Promise<void> {
  await k([
    'delete',
    '--ignore-not-found',
    '--wait',
    'sidecarsets.v1alpha1.apps.kruise.io',
    ...SETS.map((s) => (s.metadata as { name: string }).name),
  ]);
}

/** The conversion stanza upstream's chart gives its SidecarSet CRD. */
const CONVERSION = {
  spec: {
    conversion: {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1', 'v1beta1'],
        clientConfig: { service: { namespace: KRUISE_PEER_NAMESPACE, name: 'kruise-webhook-service', path: '/convert' } },
      },
    },
  },
};

/** The same conversion for the bundled manager, which serves its webhooks on loopback `port`. */
const ourConversion = (port: number) => ({
  spec: {
    conversion: {
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `https://127.0.0.1:${port}/convert` } },
    },
  },
});

/** SidecarSets both runtimes' SidecarSet webhooks must refuse (dry run), and one they must accept. */
const REFUSED: Record<string, Obj> = {
  // Selects pods compat-main selects and injects a container of the same name.
  overlap: sidecarSet('compat-overlap', {
    selector: { matchLabels: { main: 'app' } },
    containers: [{ name: 'proxy', image: 'registry.example/p:2' }],
  }),
  // Patches a key the whitelist does not allow for it (the rule selects `patch-allowed: true` sets only).
  'not-whitelisted': sidecarSet('compat-patch', {
    selector: { matchLabels: { app: 'patched' } },
    containers: [{ name: 'patcher', image: 'registry.example/p:1' }],
    patchPodMetadata: [{ annotations: { 'compat.example/x': 'y' } }],
  }),
};
const ACCEPTED = sidecarSet(
  'compat-patch-ok',
  {
    selector: { matchLabels: { app: 'patched' } },
    containers: [{ name: 'patcher', image: 'registry.example/p:1' }],
    patchPodMetadata: [{ annotations: { 'compat.example/x': 'y' } }],
  },
  { labels: { 'patch-allowed': 'true' } },
);

/**
 * A whitelist edited right before a SidecarSet is honoured (upstream reads it from a watched cache): the set
 * is refused, the key is whitelisted, and the same set sent at once is accepted. Returns both outcomes.
 */
async function freshWhitelistOutcomes(): Promise<{ before?: string; after?: string }> {
  const set = sidecarSet(
    'compat-fresh',
    {
      selector: { matchLabels: { app: 'fresh' } },
      containers: [{ name: 'fresh', image: 'registry.example/f:1' }],
      patchPodMetadata: [{ annotations: { 'fresh.example/k': 'v' } }],
    },
    { labels: { 'patch-allowed': 'true' } },
  );
  const create = () =>
    k(['create', '--dry-run=server', '-f', '-'], set).then(
      () => undefined,
      (e: Error) => e.message,
    );
  const before = await create();
  const rules = JSON.parse(whitelist.data.SidecarSet_PatchPodMetadata_WhiteList) as { rules: Obj[] };
  const widened = { rules: [...rules.rules, { allowedAnnotationKeyExprs: ['^fresh\\.example/'] }] };
  await k(['apply', '-f', '-'], { ...whitelist, data: { SidecarSet_PatchPodMetadata_WhiteList: JSON.stringify(widened) } });
  const after = await create();
  await k(['apply', '-f', '-'], whitelist);
  return { before, after };
}

/** Dry-run creates of REFUSED and ACCEPTED: the error text of each (undefined when accepted). */
async function admissionOutcomes(): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const [name, body] of [...Object.entries(REFUSED), ['accepted', ACCEPTED] as const]) {
    out[name] = await k(['create', '--dry-run=server', '-f', '-'], body).then(
      () => undefined,
      (e: Error) => e.message,
    );
  }
  return out;
}

/**
 * The revision history under `revisionHistoryLimit: 2`, played the same way on each runtime: which set
 * versions (sidecar images) keep a ControllerRevision after each step. Revision names differ (hashes); the
 * images inside the revisions are compared.
 */
const HISTORY_SET = 'compat-history';
const historyImage = (n: number) => `registry.example/hist:${n}`;
const historyContainers = (n: number) => [{ name: 'hist', image: historyImage(n) }];
type HistorySnapshots = Record<string, string[]>;

async function historySet(): Promise<{
  metadata: { generation: number };
  status?: { observedGeneration?: number; latestRevision?: string };
}> {
  return JSON.parse(await k(['get', 'sidecarsets.v1alpha1.apps.kruise.io', HISTORY_SET, '-o', 'json']));
}

/** Waits until the set's status reflects its current generation; returns its latest revision. */
async function historyObserved(runtime: string, what: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const set = await historySet();
    if (set.status?.latestRevision && set.status.observedGeneration === set.metadata.generation) return set.status.latestRevision;
    if (Date.now() > deadline) throw new Error(`${runtime}: ${what}: status not observed after 60 s: ${JSON.stringify(set.status)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** The images of the set's ControllerRevisions, once they stay the same for 3 s (pruning follows the status). */
async function historyImages(): Promise<string[]> {
  const read = async () => {
    const list = JSON.parse(
      await k(['get', 'controllerrevisions', '-n', KRUISE_PEER_NAMESPACE, '-l', `kruise.io/sidecarset-name=${HISTORY_SET}`, '-o', 'json']),
    ) as { items: { data?: { spec?: { containers?: { image?: string }[] } } }[] };
    return list.items.map((r) => r.data?.spec?.containers?.[0]?.image ?? '?').sort();
  };
  let last = await read();
  for (let stable = 0; stable < 10;) {
    await new Promise((r) => setTimeout(r, 300));
    const now = await read();
    stable = JSON.stringify(now) === JSON.stringify(last) ? stable + 1 : 0;
    last = now;
  }
  return last;
}

async function historyScenario(runtime: string): Promise<HistorySnapshots> {
  const patch = (spec: Obj) =>
    k(['patch', 'sidecarsets.v1alpha1.apps.kruise.io', HISTORY_SET, '--type=merge', '-p', JSON.stringify({ spec })]);
  const out: HistorySnapshots = {};
  await k(
    ['create', '-f', '-'],
    sidecarSet(HISTORY_SET, {
      selector: { matchLabels: { app: 'compat-history' } },
      namespace: ns,
      containers: historyContainers(1),
      // NotUpdate: the pod keeps the version it was created with, so that revision stays in use.
      updateStrategy: { type: 'NotUpdate' },
      revisionHistoryLimit: 2,
    }),
  );
  await historyObserved(runtime, 'v1');
  // A real pod (no kubelet: it stays Pending) injected by this runtime's webhook with revision v1.
  const deadline = Date.now() + 30_000;
  for (;;) {
    await k(['create', '-n', ns, '-f', '-'], {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'history-0', labels: { app: 'compat-history' } },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    });
    const pod = JSON.parse(await k(['get', 'pod', '-n', ns, 'history-0', '-o', 'json'])) as Pod;
    if (pod.metadata.annotations?.[ANNOTATION_SIDECARSET_HASH]?.includes('controllerRevision')) break;
    await k(['delete', 'pod', '-n', ns, 'history-0', '--grace-period=0', '--wait']);
    if (Date.now() > deadline) throw new Error(`${runtime}: history pod not injected with a revision`);
    await new Promise((r) => setTimeout(r, 500));
  }
  await patch({ containers: historyContainers(2) });
  const v2 = await historyObserved(runtime, 'v2');
  await patch({ injectionStrategy: { revision: { revisionName: v2 } } });
  await historyObserved(runtime, 'pin v2');
  await patch({ containers: historyContainers(3) });
  await historyObserved(runtime, 'v3');
  out['v3: pod on v1, pin on v2'] = await historyImages();
  await patch({ containers: historyContainers(4) });
  await historyObserved(runtime, 'v4');
  out['v4: pod on v1, pin on v2'] = await historyImages();
  await k(['delete', 'pod', '-n', ns, 'history-0', '--grace-period=0', '--wait']);
  await patch({ injectionStrategy: null });
  await historyObserved(runtime, 'unpin');
  out['v4: pod gone, unpinned'] = await historyImages();
  await patch({ containers: historyContainers(2) });
  await historyObserved(runtime, 'back to v2');
  out['back to v2'] = await historyImages();
  await patch({ containers: historyContainers(5) });
  await historyObserved(runtime, 'v5');
  out['v5 after the return to v2'] = await historyImages();
  await k(['delete', '--wait', 'sidecarsets.v1alpha1.apps.kruise.io', HISTORY_SET]);
  await k(['delete', 'controllerrevisions', '-n', KRUISE_PEER_NAMESPACE, '-l', `kruise.io/sidecarset-name=${HISTORY_SET}`]);
  return out;
}

const upstream: Record<string, Pod> = {};
let upstreamAdmission: Record<string, string | undefined> = {};
let ourAdmission: Record<string, string | undefined> = {};
const bundled: Record<string, Pod> = {};
let ourFreshWhitelist: { before?: string; after?: string } = {};
let upstreamHistory: HistorySnapshots = {};
let ourHistory: HistorySnapshots = {};

beforeAll(async () => {
  plane = await ControlPlane.start();
  // Upstream alone: its CRDs, its webhooks, its SidecarSets. Its SidecarSet CRD stores v1beta1, which has no
  // `spec.namespace`; the chart converts v1alpha1 through the manager's /convert endpoint (the manager
  // fills in its URL and CA at start), without which the API server would silently prune the field.
  await installKruisePeerCrds(plane);
  await k(['patch', 'crd', 'sidecarsets.apps.kruise.io', '--type=merge', '-p', JSON.stringify(CONVERSION)]);
  peer = await KruisePeer.start(plane, { installCrds: false });
  await k(['create', '-f', '-'], {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: otherNs, labels: { compat: 'selected' } } },
      whitelist,
    ],
  });
  await applySets();
  Object.assign(upstream, await createAll(`upstream ${pinnedKruiseVersion()}`));
  upstreamAdmission = await admissionOutcomes();
  upstreamHistory = await historyScenario(`upstream ${pinnedKruiseVersion()}`);
  await deleteSets(); // while upstream still serves the conversion of its stored v1beta1 objects
  await peer.stop(); // removes its webhook configurations
  peer = undefined;

  // Ours alone: our CRDs (in place of upstream's, which store versions ours do not serve), the install's own
  // pod webhook entry, the same SidecarSets.
  await k(['delete', '--wait', 'crd', ...KINDS.map((kind) => `${kind.plural}.${kind.group}`)]);
  const crds = { apiVersion: 'v1', kind: 'List', items: KINDS.map((kind) => toCustomResourceDefinition(kind)) };
  await k(['apply', '--server-side', '--force-conflicts', '-f', '-'], crds);
  await k(['wait', '--for=condition=Established', '--timeout=60s', 'crd', ...KINDS.map((kind) => `${kind.plural}.${kind.group}`)]);
  const port = await freePort();
  const spec = podWebhookInstallSpec(KRUISE_PEER_NAMESPACE);
  const rendered = mutatingWebhookConfiguration(spec) as unknown as { webhooks: Array<Obj & { name: string }> };
  const podHook = rendered.webhooks.find((w) => w.name === 'mpod.kb.io')!;
  podHook.clientConfig = { url: `https://127.0.0.1:${port}${POD_MUTATING_PATH}` };
  // The install's SidecarSet validating entry, pointed at this process.
  const validating = validatingWebhookConfiguration(spec) as unknown as {
    webhooks: Array<Obj & { clientConfig: { service?: { path: string }; url?: string } }>;
  };
  const setHook = validating.webhooks.find((w) => w.clientConfig.service?.path.endsWith('-sidecarset'))!;
  setHook.clientConfig = { url: `https://127.0.0.1:${port}${setHook.clientConfig.service!.path}` };
  await k(['create', '-f', '-'], {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: VALIDATING_WEBHOOK_CONFIGURATION },
    webhooks: [setHook],
  });
  await k(['create', '-f', '-'], {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: MUTATING_WEBHOOK_CONFIGURATION },
    webhooks: [podHook],
  });
  ours = await ControllerProcess.start(plane.kubeconfigPath, KRUISE_PEER_NAMESPACE, [
    '--webhook-port',
    String(port),
    '--webhook-host',
    '127.0.0.1',
    '--webhook-cert-host',
    '127.0.0.1',
    '--mutating-webhook-configuration',
    MUTATING_WEBHOOK_CONFIGURATION,
    '--validating-webhook-configuration',
    VALIDATING_WEBHOOK_CONFIGURATION,
  ]);
  await ours.waitReady();
  // Our CRD stores v1beta1 as upstream's does, so v1alpha1 writes go through this manager's /convert (the install's
  // conversion, pointed at this process; the manager fills its caBundle): with conversion None the API server would
  // prune `spec.namespace` on the way to storage.
  await k(['patch', 'crd', 'sidecarsets.apps.kruise.io', '--type=merge', '-p', JSON.stringify(ourConversion(port))]);
  for (const deadline = Date.now() + 30_000; ;) {
    const crd = JSON.parse(await k(['get', 'crd', 'sidecarsets.apps.kruise.io', '-o', 'json'])) as {
      spec: { conversion?: { webhook?: { clientConfig?: { caBundle?: string } } } };
    };
    if (crd.spec.conversion?.webhook?.clientConfig?.caBundle) break;
    if (Date.now() > deadline) throw new Error('bundled runtime: the SidecarSet CRD has no conversion caBundle after 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  await applySets();
  Object.assign(bundled, await createAll('bundled runtime'));
  // The SidecarSet webhook reads the existing sets from its cache: wait until it refuses the overlap.
  const deadline = Date.now() + 30_000;
  do ourAdmission = await admissionOutcomes();
  while (!ourAdmission.overlap && Date.now() < deadline);
  ourFreshWhitelist = await freshWhitelistOutcomes();
  ourHistory = await historyScenario('bundled runtime');
});

afterAll(async () => {
  await peer?.stop();
  await ours?.stop('SIGTERM');
  await plane?.stop();
});

describe(`SidecarSet injection: bundled runtime vs upstream kruise-manager ${pinnedKruiseVersion()}`, () => {
  it.each(['full', 'other-ns', 'replace', 'unmatched', 'hot'])('pod "%s" is injected identically', (name) => {
    expect(comparable(bundled[name]!)).toEqual(comparable(upstream[name]!));
  });

  it('both SidecarSet webhooks refuse an overlapping set and a non-whitelisted patchPodMetadata key, and accept a whitelisted one', () => {
    expect(upstreamAdmission.accepted).toBeUndefined();
    expect(ourAdmission.accepted).toBeUndefined();
    for (const name of Object.keys(REFUSED)) {
      expect(upstreamAdmission[name], `upstream: ${name}`).toMatch(/denied the request/);
      expect(ourAdmission[name], `ours: ${name}`).toMatch(/denied the request/);
    }
    expect(ourAdmission.overlap).toMatch(/existing SidecarSet compat-main .*"proxy"/);
    expect(ourAdmission['not-whitelisted']).toMatch(/"compat\.example\/x" not allowed/);
  });

  it('our SidecarSet webhook honours a whitelist edited right before the set (read fresh, not a cached copy)', () => {
    expect(ourFreshWhitelist.before).toMatch(/"fresh\.example\/k" not allowed/);
    expect(ourFreshWhitelist.after).toBeUndefined();
  });

  it('the comparison covers what it claims (guards against two equally empty results)', () => {
    const full = upstream.full!;
    expect(full.spec.containers.map((c) => c.name)).toEqual(['proxy', 'app', 'logtail']);
    expect(full.spec.initContainers!.map((c) => c.name)).toEqual(['pod-init', 'b-init', 'z-init']);
    expect(full.metadata.annotations).toMatchObject({
      'compat.example/retain': 'from-pod',
      'compat.example/new': 'added',
      'compat.example/overwrite': 'from-set',
      [ANNOTATION_SIDECARSET_INJECTED_LIST]: 'compat-main',
    });
    expect(JSON.parse(full.metadata.annotations!['compat.example/merge']!)).toEqual({ a: 1, b: 2 });
    // transferEnv, then the env the shared mount's subPathExpr names (UNSET is defined nowhere: left out).
    expect((full.spec.containers[0]!.env as Array<{ name: string }>).map((e) => e.name)).toEqual([
      'OWN',
      'IS_INJECTED',
      'REGION',
      'ZONE',
      'POD_NAME',
    ]);
    expect(upstream.replace!.spec.containers.map((c) => [c.name, c.image])).toEqual([
      ['sidecar', 'registry.example/sidecar:2'],
      ['app', 'registry.example/app:1'],
    ]);
    expect(upstream['other-ns']!.spec.containers.map((c) => c.name)).toEqual(['app', 'agent']);
    expect(upstream.unmatched!.spec.containers.map((c) => c.name)).toEqual(['app']);
    expect(upstream.hot!.spec.containers.map((c) => [c.name, c.image])).toEqual([
      ['envoy-1', 'registry.example/envoy:1'],
      ['envoy-2', 'registry.example/envoy-empty:1'],
      ['app', 'registry.example/app:1'],
    ]);
  });

  it('revisionHistoryLimit keeps the same set versions after each step (pod, pin and latest spared; a returned-to version counts as newest)', () => {
    expect(ourHistory).toEqual(upstreamHistory);
    // Guards against two equally wrong results: the limit of 2 is exceeded only while revisions are in use.
    expect(upstreamHistory).toEqual({
      'v3: pod on v1, pin on v2': [1, 2, 3].map(historyImage),
      'v4: pod on v1, pin on v2': [1, 2, 4].map(historyImage),
      'v4: pod gone, unpinned': [2, 4].map(historyImage),
      'back to v2': [2, 4].map(historyImage),
      'v5 after the return to v2': [2, 5].map(historyImage),
    });
  });

  it('a native-sidecar SidecarSet differs only in where the sidecar goes (documented)', () => {
    const theirs = comparable(upstream.native!) as { spec: Pod['spec'] };
    const mine = comparable(bundled.native!) as { spec: Pod['spec'] };
    const nativeInit = mine.spec.initContainers?.find((c) => c.name === 'native');
    expect(nativeInit?.restartPolicy).toBe('Always');
    // Move our native sidecar back to where upstream puts it: the rest must be equal.
    const { restartPolicy: _, ...asContainer } = nativeInit!;
    const moved = {
      ...mine,
      spec: {
        ...mine.spec,
        initContainers: undefined,
        containers: [asContainer, ...mine.spec.containers],
      },
    };
    const { initContainers: __, ...theirSpec } = theirs.spec;
    expect({ ...moved, spec: { ...moved.spec, initContainers: undefined } }).toEqual({
      ...theirs,
      spec: { ...theirSpec, initContainers: undefined },
    });
  });
});

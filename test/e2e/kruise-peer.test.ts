// The upstream peer harness (test/harness/kruise-peer.ts) on a control plane of its own: upstream
// kruise-manager starts with its own CRDs and webhook configurations, its CloneSet controller creates
// pods, its pod webhook injects a SidecarSet's sidecar, and stopping it removes its webhooks.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEATURE_GATES } from '../../src/contracts/features.js';
import { ControlPlane } from '../harness/controlplane.js';
import { KRUISE_PEER_WEBHOOK_CONFIGURATIONS, KruisePeer, kubectlOn, pinnedKruiseVersion } from '../harness/kruise-peer.js';

interface Item {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] };
}

const ns = 'peer-e2e';
const dist = path.resolve(import.meta.dirname, '../../dist');

/** The gates dist/'s runtime turns on that upstream knows (ours alone, such as ContainerExitPriority, it refuses). */
function distFeatureGates(): string {
  const gates = /--feature-gates=(\S+)/.exec(readFileSync(path.join(dist, '10-runtime.yaml'), 'utf8'))?.[1];
  if (!gates) throw new Error('no --feature-gates in dist/10-runtime.yaml');
  const upstream = new Set<string>(FEATURE_GATES.filter((g) => g.upstream).map((g) => g.name));
  return gates
    .split(',')
    .filter((g) => upstream.has(g.split('=')[0]!))
    .join(',');
}
let plane: ControlPlane;
let peer: KruisePeer;
const k = (args: string[], input?: unknown) => kubectlOn(plane, args, input === undefined ? undefined : JSON.stringify(input));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; kruise-manager log:\n${peer.logTail()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  plane = await ControlPlane.start();
  // The gates dist/'s runtime turns on for the app, so the app files below meet the webhooks as users would.
  peer = await KruisePeer.start(plane, { featureGates: distFeatureGates() });
  await k(['create', '-f', '-'], { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

afterAll(async () => {
  await peer?.stop();
  await plane?.stop();
});

describe(`upstream kruise-manager ${pinnedKruiseVersion()} as a peer`, () => {
  it('runs with its own CRDs and rewrote both webhook configurations to its own endpoint', async () => {
    const crds = JSON.parse(await k(['get', 'crd', '-o', 'json'])) as { items: { metadata: { name: string } }[] };
    expect(crds.items.map((c) => c.metadata.name)).toEqual(
      expect.arrayContaining(['clonesets.apps.kruise.io', 'sidecarsets.apps.kruise.io', 'containerrecreaterequests.apps.kruise.io']),
    );
    const hooks = JSON.parse(
      await k(['get', `mutatingwebhookconfiguration/${KRUISE_PEER_WEBHOOK_CONFIGURATIONS.mutating}`, '-o', 'json']),
    ) as {
      webhooks: { name: string; clientConfig: { url?: string } }[];
    };
    expect(hooks.webhooks.map((w) => w.name)).toContain('mpod.kb.io');
    for (const w of hooks.webhooks) expect(w.clientConfig.url).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:${peer.webhookPort}/`));
    expect(peer.rssBytes()).toBeGreaterThan(0);
    expect(peer.cpuSeconds()).toBeGreaterThan(0);
  });

  it("creates pods for a CloneSet (upstream's naming and lifecycle labels)", async () => {
    await k(['apply', '-f', '-'], {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'registry.example/web:1' }] } },
      },
    });
    const pods = await until('2 CloneSet pods', async () => {
      const list = JSON.parse(await k(['get', 'pods', '-n', ns, '-l', 'app=web', '-o', 'json'])) as { items: Item[] };
      return list.items.length === 2 ? list.items : undefined;
    });
    for (const pod of pods) {
      const id = pod.metadata.labels?.['apps.kruise.io/cloneset-instance-id'];
      expect(id).toMatch(/^[a-z0-9]{5}$/);
      expect(pod.metadata.name).toBe(`web-${id}`);
      expect(pod.metadata.labels?.['controller-revision-hash']).toMatch(/^web-/);
      expect(pod.metadata.labels?.['lifecycle.apps.kruise.io/state']).toBe('PreparingNormal');
    }
  });

  it("injects a SidecarSet's sidecar through its pod webhook", async () => {
    await k(['apply', '-f', '-'], {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'logtail' },
      spec: {
        selector: { matchLabels: { app: 'logged' } },
        containers: [{ name: 'logtail', image: 'registry.example/logtail:1', volumeMounts: [{ name: 'logs', mountPath: '/logs' }] }],
        volumes: [{ name: 'logs', emptyDir: {} }],
      },
    });
    // The webhook reads SidecarSets from the manager's cache: wait until the controller has seen it.
    await until('the SidecarSet to be observed', async () => {
      const set = JSON.parse(await k(['get', 'sidecarset/logtail', '-o', 'json'])) as { status?: { observedGeneration?: number } };
      return set.status?.observedGeneration ? true : undefined;
    });
    const pod = JSON.parse(
      await k(['create', '-o', 'json', '-f', '-'], {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'logged', namespace: ns, labels: { app: 'logged' } },
        spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
      }),
    ) as Item;
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['logtail', 'app']);
    expect(pod.spec.containers[0]!.env).toContainEqual({ name: 'IS_INJECTED', value: 'true' });
    expect(pod.metadata.annotations?.['kruise.io/sidecarset-injected-list']).toBe('logtail');
  });

  // What Argo CD or Flux syncs from dist/ (its app files; ops/ holds one-shot operations and is never synced)
  // must be accepted by upstream's webhooks as it is by ours: the output stays API-compatible.
  it('accepts every app file of dist/ through its own webhooks, with its own CRDs', async () => {
    const files = readdirSync(dist).filter((f) => f.startsWith('20-app-') && f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(8);
    for (const file of files) {
      // kubectl fails (and the test with it, naming the file and upstream's reason) on any rejection.
      const out = await k(['apply', '-f', path.join(dist, file)]);
      expect(out, file).toMatch(/created|configured|unchanged/);
    }
    const stored = JSON.parse(await k(['get', 'clonesets,sidecarsets,imagepulljobs', '-A', '-o', 'json'])) as { items: unknown[] };
    expect(stored.items.length).toBeGreaterThan(0);
  });

  it('stops cleanly and removes its webhook configurations', async () => {
    await peer.stop();
    const left = await k(['get', 'mutatingwebhookconfigurations,validatingwebhookconfigurations', '-o', 'name']);
    expect(left).not.toContain('kruise-');
    // Without upstream's webhooks, pod writes pass again.
    await k(['create', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'after-stop', namespace: ns, labels: { app: 'logged' } },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    });
  });
});

// The ImageListPullJob controller on the real kube-apiserver: `cdk8s-kruise controller` runs as a child process (strict
// permissions, access log checked against src/contracts/permissions.ts) with its ImagePullJob and NodeImage
// controllers, so each list's children really become tags on the NodeImages of the test's nodes; the test plays the
// node daemons (reports each tag Succeeded or Failed in the NodeImage status). Lists are written as
// apps.kruise.io/v1beta1, as upstream's typed clients write them, and read back as v1alpha1. No garbage collector
// runs here: the children's controller references are checked; the cascade itself is proven on the real node
// (test/node/image-list-pull.test.ts).
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitImageRef } from '../../src/contracts/index.js';
import { adminKubeConfig, createNamespace, createNode, mergePatch } from '../harness/index.js';
import { accessCoverage, accessLogs, eventually, startController, type ControllerProcess } from './runtime/support.js';

let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
const procs: ControllerProcess[] = [];
/** Other test files add nodes to the shared control plane: the lists here select only the nodes of this file. */
const LABEL = 'e2e.cdk8s-kruise.io/imagelistpulljob';
const MARK = String(process.pid);
const nodes = ['a', 'b'].map((n) => `node-ilpj-${process.pid}-${n}`);
const GROUP = 'apps.kruise.io';
const LISTS_V1BETA1 = { group: GROUP, version: 'v1beta1', plural: 'imagelistpulljobs' } as const;
const LISTS = { ...LISTS_V1BETA1, version: 'v1alpha1' } as const;
const JOBS = { group: GROUP, version: 'v1alpha1', plural: 'imagepulljobs' } as const;
const NODE_IMAGES = { group: GROUP, version: 'v1alpha1', plural: 'nodeimages' } as const;

type Obj = {
  metadata: { name: string; uid: string; labels?: Record<string, string>; ownerReferences?: Record<string, unknown>[] };
  spec: Record<string, any>;
  status?: Record<string, any>;
};

function list(name: string, images: string[], template: Record<string, unknown>) {
  return {
    apiVersion: `${GROUP}/v1beta1`,
    kind: 'ImageListPullJob',
    metadata: { name, namespace: ns },
    spec: { images, selector: { matchLabels: { [LABEL]: MARK } }, parallelism: 2, ...template },
  };
}

async function getList(name: string): Promise<Obj> {
  return (await custom.getNamespacedCustomObject({ ...LISTS, namespace: ns, name })) as never;
}

async function patchList(name: string, spec: Record<string, unknown>): Promise<void> {
  await custom.patchNamespacedCustomObject({ ...LISTS, namespace: ns, name, body: { spec } }, mergePatch);
}

/** The ImagePullJobs the list `uid` controls, not being deleted. */
async function childrenOf(uid: string): Promise<Obj[]> {
  const all = (await custom.listNamespacedCustomObject({ ...JOBS, namespace: ns })) as {
    items: (Obj & { metadata: { deletionTimestamp?: string } })[];
  };
  return all.items.filter((j) => !j.metadata.deletionTimestamp && j.metadata.ownerReferences?.some((o) => o.uid === uid && o.controller));
}

/**
 * The node daemons: every tag on the test's NodeImages gets a finished status of the same version, Failed for the
 * images `fail` names on the nodes it names, Succeeded otherwise.
 */
async function reportTags(fail: Record<string, string[]> = {}): Promise<void> {
  for (const node of nodes) {
    const ni = (await custom.getClusterCustomObject({ ...NODE_IMAGES, name: node })) as {
      spec?: { images?: Record<string, { tags: { tag: string; version?: number }[] }> };
    };
    const imageStatuses: Record<string, unknown> = {};
    for (const [image, spec] of Object.entries(ni.spec?.images ?? {})) {
      imageStatuses[image] = {
        tags: spec.tags.map((t) => {
          const failed = (fail[`${image}:${t.tag}`] ?? []).includes(node);
          return {
            tag: t.tag,
            version: t.version ?? 0,
            phase: failed ? 'Failed' : 'Succeeded',
            completionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            ...(failed ? { message: 'e2e: the node refused the pull' } : {}),
          };
        }),
      };
    }
    const desired = Object.values(ni.spec?.images ?? {}).reduce((n, i) => n + i.tags.length, 0);
    await custom.patchClusterCustomObjectStatus(
      { ...NODE_IMAGES, name: node, body: { status: { desired, succeeded: desired, failed: 0, pulling: 0, imageStatuses } } },
      mergePatch,
    );
  }
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  custom = kc.makeApiClient(CustomObjectsApi);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('imagelistpulljob');
  for (const n of nodes) await createNode(n, { labels: { [LABEL]: MARK } });
  const p = await startController(runtimeNs, [
    '--webhook-port',
    '0',
    '--feature-gates',
    'ImagePullJobGate=true',
    ...(process.env.DEBUG_IMAGELISTPULLJOB ? ['--log-level', 'debug'] : []),
  ]);
  procs.push(p);
  await p.waitReady();
  // The NodeImage controller makes one NodeImage per Ready node.
  for (const n of nodes) await eventually(() => custom.getClusterCustomObject({ ...NODE_IMAGES, name: n }), 20_000, `NodeImage ${n}`);
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  for (const p of procs)
    for (const l of p.logs.filter((x) => x.level >= 40 || process.env.DEBUG_IMAGELISTPULLJOB).slice(-40))
      console.log('[controller]', JSON.stringify(l));
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  console.log(`[runtime permissions] ${report.calls} API calls recorded; declared but unused here: ${report.unused.join(', ') || 'none'}`);
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('ImageListPullJob controller on the real API server', () => {
  it('one ImagePullJob per image with the template, controlled by the list; status aggregated; completion; TTL deletes the list', async () => {
    const images = ['e2e.example/ilpj-web:1', 'e2e.example/ilpj-sidecar:2'];
    const template = {
      pullPolicy: { timeoutSeconds: 30, backoffLimit: 1 },
      completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 2 },
      imagePullPolicy: 'Always',
      sandboxConfig: { labels: { team: 'web' } },
    };
    await custom.createNamespacedCustomObject({ ...LISTS_V1BETA1, namespace: ns, body: list('warm', images, template) });
    const job = await getList('warm');
    const kids = await eventually(async () => {
      const c = await childrenOf(job.metadata.uid);
      return c.length === 2 ? c : undefined;
    }, 20_000);
    expect(kids.map((k) => k.spec.image).sort()).toEqual([...images].sort());
    for (const k of kids) {
      expect(k.metadata.name).toMatch(/^warm-[a-z0-9]{5}$/);
      expect(k.metadata.ownerReferences).toEqual([
        expect.objectContaining({
          kind: 'ImageListPullJob',
          name: 'warm',
          uid: job.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        }),
      ]);
      expect(k.metadata.labels?.['controller-revision-hash']).toMatch(/^\d+$/);
      expect(k.spec).toEqual({ image: k.spec.image, selector: { matchLabels: { [LABEL]: MARK } }, parallelism: 2, ...template });
    }
    // The children's tags reach both nodes; the list counts its children while they pull.
    const running = await eventually(async () => {
      const s = (await getList('warm')).status;
      return s?.desired === 2 && s.active === 2 ? s : undefined;
    });
    expect(running).toMatchObject({ completed: 0, succeeded: 0 });
    expect(running.startTime).toBeTruthy();
    expect(running.completionTime).toBeUndefined();

    // The daemons report every tag pulled: each child completes, then the list.
    const done = await eventually(async () => {
      await reportTags();
      const s = (await getList('warm')).status;
      return s?.completionTime ? s : undefined;
    });
    expect(done).toMatchObject({ desired: 2, active: 0, completed: 2, succeeded: 2 });
    expect(done.failedImageStatuses).toBeUndefined();
    const doneAt = Date.parse(done.completionTime);
    await eventually(
      async () => {
        try {
          await getList('warm');
          return undefined;
        } catch {
          return true;
        }
      },
      20_000,
      'list deleted after its TTL',
    );
    expect(Date.now() - doneAt).toBeGreaterThanOrEqual(2000);
  });

  it('list edits: an added image gets a child, a removed image loses its child, a changed template replaces every child', async () => {
    await custom.createNamespacedCustomObject({
      ...LISTS_V1BETA1,
      namespace: ns,
      body: list('edits', ['e2e.example/ilpj-a:1', 'e2e.example/ilpj-b:1'], { completionPolicy: { type: 'Never' } }),
    });
    const uid = (await getList('edits')).metadata.uid;
    const byImage = async (want: string[]) =>
      eventually(async () => {
        const c = await childrenOf(uid);
        const got = c.map((k) => k.spec.image).sort();
        return JSON.stringify(got) === JSON.stringify([...want].sort()) ? new Map(c.map((k) => [k.spec.image, k])) : undefined;
      }, 20_000);
    const first = await byImage(['e2e.example/ilpj-a:1', 'e2e.example/ilpj-b:1']);

    await patchList('edits', { images: ['e2e.example/ilpj-a:1', 'e2e.example/ilpj-c:1'] });
    const second = await byImage(['e2e.example/ilpj-a:1', 'e2e.example/ilpj-c:1']);
    expect(second.get('e2e.example/ilpj-a:1')!.metadata.uid).toBe(first.get('e2e.example/ilpj-a:1')!.metadata.uid);
    expect((await getList('edits')).status).toMatchObject({ desired: 2 });

    await patchList('edits', { parallelism: 1 });
    const third = await eventually(async () => {
      const m = await byImage(['e2e.example/ilpj-a:1', 'e2e.example/ilpj-c:1']);
      return [...m.values()].every((k) => k.spec.parallelism === 1) ? m : undefined;
    }, 20_000);
    for (const [image, k] of third) {
      expect(k.metadata.uid).not.toBe(second.get(image)!.metadata.uid);
      expect(k.metadata.labels?.['controller-revision-hash']).not.toBe(second.get(image)!.metadata.labels?.['controller-revision-hash']);
    }
    // Never: the children finish, the list counts them completed and goes on.
    const counted = await eventually(async () => {
      await reportTags();
      const s = (await getList('edits')).status;
      return s?.completed === 2 ? s : undefined;
    });
    expect(counted).toMatchObject({ desired: 2, succeeded: 2 });
    expect(counted.completionTime).toBeUndefined();
  });

  it('a node that fails an image: the list completes with that image in failedImageStatuses', async () => {
    const bad = 'e2e.example/ilpj-bad:1';
    await custom.createNamespacedCustomObject({
      ...LISTS_V1BETA1,
      namespace: ns,
      body: list('failing', [bad, 'e2e.example/ilpj-good:1'], { completionPolicy: { type: 'Always' } }),
    });
    const { image, tag } = splitImageRef(bad);
    const done = await eventually(async () => {
      await reportTags({ [`${image}:${tag}`]: [nodes[1]!] });
      const s = (await getList('failing')).status;
      return s?.completionTime ? s : undefined;
    });
    expect(done).toMatchObject({ desired: 2, completed: 2, succeeded: 1, active: 0 });
    const uid = (await getList('failing')).metadata.uid;
    const badChild = (await childrenOf(uid)).find((k) => k.spec.image === bad)!;
    expect(done.failedImageStatuses).toEqual([
      { imagePullJob: badChild.metadata.name, name: bad, message: expect.stringContaining('pull failed on 1 of 2 node(s)') },
    ]);
  });
});

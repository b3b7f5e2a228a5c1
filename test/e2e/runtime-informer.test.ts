// The runtime's informer against the real kube-apiserver: initial paged list, watch events, transform,
// an index kept current by real events, and resuming a broken watch from the last resourceVersion. (The 410 Gone relist path needs an etcd
// compaction, which the shared control plane does not expose to tests; it is not exercised here.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { KubeClient, loadKubeConfig, Informer, type KubeObject, type ResourceType } from '../../src/runtime/core/index.js';
import { createNamespace, kubeconfigPath } from '../harness/index.js';
import { eventually } from './runtime/support.js';

const CONFIGMAPS: ResourceType = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };

let client: KubeClient;
let ns: string;
let informer: Informer<KubeObject>;
const seen = { add: [] as string[], update: [] as string[], delete: [] as string[] };

const cm = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
  data,
});
const byTier = (o: KubeObject) => (o.metadata.labels?.tier ? [o.metadata.labels.tier] : []);
const tierNames = (tier: string) =>
  informer
    .byIndex('tier', tier)
    .map((o) => o.metadata.name)
    .sort();

beforeAll(async () => {
  client = new KubeClient(loadKubeConfig(kubeconfigPath()));
  ns = await createNamespace('informer');
  for (let i = 0; i < 7; i++) await client.create(CONFIGMAPS, cm(`pre-${i}`, { i: String(i) }, i < 2 ? { tier: 'front' } : undefined));
  informer = new Informer(client, CONFIGMAPS, {
    namespace: ns,
    pageSize: 3,
    logger: pino({ level: 'silent' }),
    backoffMinMs: 50,
    backoffMaxMs: 500,
    transform: (o) => {
      delete o.metadata.managedFields;
      return o;
    },
  });
  informer.addIndex('tier', byTier);
  informer.addHandlers({
    add: (o) => seen.add.push(o.metadata.name!),
    update: (o) => seen.update.push(o.metadata.name!),
    delete: (o) => seen.delete.push(o.metadata.name!),
  });
  informer.start();
  await informer.waitForSync();
});

afterAll(() => informer?.stop());

describe('informer on the real API server', () => {
  it('lists in pages into the cache, applying the transform', () => {
    expect(informer.stats.lists).toBeGreaterThanOrEqual(3);
    expect(
      informer
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(Array.from({ length: 7 }, (_, i) => `pre-${i}`));
    expect(informer.get(`${ns}/pre-0`)?.metadata.managedFields).toBeUndefined();
    expect(informer.get(`${ns}/pre-0`)?.kind).toBe('ConfigMap');
  });

  it('keeps an index current through the list and real add, update and delete events', async () => {
    expect(tierNames('front')).toEqual(['pre-0', 'pre-1']);
    await client.create(CONFIGMAPS, cm('tiered', {}, { tier: 'front' }));
    await eventually(async () => tierNames('front').includes('tiered'), 10_000, 'indexed on add');
    const live = await client.get(CONFIGMAPS, 'tiered', ns);
    await client.update(CONFIGMAPS, { ...live, metadata: { ...live.metadata, labels: { tier: 'back' } } });
    await eventually(async () => tierNames('back').includes('tiered') && !tierNames('front').includes('tiered'), 10_000, 'moved on update');
    await client.delete(CONFIGMAPS, 'tiered', ns);
    await eventually(async () => tierNames('back').length === 0, 10_000, 'dropped on delete');
    expect(tierNames('front')).toEqual(['pre-0', 'pre-1']);
  });

  it('delivers watch events for adds, updates and deletes', async () => {
    await client.create(CONFIGMAPS, cm('live', { v: '1' }));
    await eventually(async () => informer.get(`${ns}/live`), 10_000, 'add');
    await client.update(CONFIGMAPS, { ...(await client.get(CONFIGMAPS, 'live', ns)), data: { v: '2' } });
    await eventually(async () => (informer.get(`${ns}/live`)?.data as { v?: string })?.v === '2', 10_000, 'update');
    await client.delete(CONFIGMAPS, 'live', ns);
    await eventually(async () => !informer.get(`${ns}/live`), 10_000, 'delete');
    expect(seen.delete).toContain('live');
  });

  it('splits the watch stream into events itself: an event larger than a network chunk, and many events at once, arrive whole', async () => {
    // ~600 KB of UTF-8 with multi-byte characters: the stream's chunks end inside the event (and may end
    // inside a character); the event is only parsed once its newline has arrived.
    const big = 'ü€'.repeat(100_000) + 'end';
    await client.create(CONFIGMAPS, cm('big', { big }));
    await Promise.all(Array.from({ length: 40 }, (_, i) => client.create(CONFIGMAPS, cm(`burst-${i}`, { i: String(i) }))));
    await eventually(async () => Array.from({ length: 40 }, (_, i) => informer.get(`${ns}/burst-${i}`)).every(Boolean), 15_000, 'burst');
    await eventually(async () => (informer.get(`${ns}/big`)?.data as { big?: string } | undefined)?.big === big, 15_000, 'big event');
    expect(informer.stats.watchErrors).toBe(0);
  });

  it('a broken watch resumes from the last resourceVersion and replays what it missed', async () => {
    const internals = informer as unknown as { abort?: AbortController };
    const errorsBefore = informer.stats.watchErrors;
    const listsBefore = informer.stats.lists;
    internals.abort?.abort();
    await client.delete(CONFIGMAPS, 'pre-1', ns);
    await client.create(CONFIGMAPS, cm('while-broken'));
    await eventually(async () => informer.get(`${ns}/while-broken`) && !informer.get(`${ns}/pre-1`), 15_000, 'missed changes replayed');
    expect(informer.stats.watchErrors).toBeGreaterThan(errorsBefore);
    // Resumed by watch, not by a relist.
    expect(informer.stats.lists).toBe(listsBefore);
    expect(seen.delete).toContain('pre-1');
    expect(seen.add).toContain('while-broken');
    // The delete replayed after the break left the index too.
    expect(tierNames('front')).toEqual(['pre-0']);
  });
});

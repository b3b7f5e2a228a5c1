// Informer indexes (src/runtime/core/informer.ts, addIndex/byIndex): kept current on every add, update,
// delete and relist, before the handlers run. A fake client feeds the list and the watch events.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Informer, type KubeClient, type KubeObject, type ResourceType, type WatchEventType } from '../../../../src/runtime/core/index.js';

const PODS: ResourceType = { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true };

type OnEvent = (type: WatchEventType, obj: KubeObject) => void;

function pod(name: string, rv: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', resourceVersion: rv, labels } };
}

/** A client whose list returns `items` and whose watch hands its callbacks to the test. */
function fakeClient(items: () => KubeObject[]) {
  const watches: Array<{ onEvent: OnEvent; onDone: (err: unknown) => void }> = [];
  const client = {
    list: () =>
      Promise.resolve({
        apiVersion: 'v1',
        kind: 'PodList',
        metadata: { resourceVersion: '100' },
        items: items().map((o) => structuredClone(o)),
      }),
    watch: (_t: ResourceType, _o: unknown, onEvent: OnEvent, onDone: (err: unknown) => void) => {
      watches.push({ onEvent, onDone });
      return Promise.resolve(new AbortController());
    },
  } as unknown as KubeClient;
  return { client, watches, last: () => watches[watches.length - 1]! };
}

const settle = () => new Promise((r) => setImmediate(r));
const byApp = (o: KubeObject) => (o.metadata.labels?.app ? [o.metadata.labels.app] : []);
const names = (objs: KubeObject[]) => objs.map((o) => o.metadata.name ?? '').sort();

async function started(items: KubeObject[]) {
  let current = items;
  const fake = fakeClient(() => current);
  const inf = new Informer<KubeObject>(fake.client, PODS, { logger: pino({ level: 'silent' }) });
  inf.addIndex('app', byApp);
  inf.start();
  await inf.waitForSync();
  await settle();
  return { inf, ...fake, setList: (next: KubeObject[]) => (current = next) };
}

describe('informer indexes', () => {
  it('indexes the initial list', async () => {
    const { inf } = await started([
      pod('a', '1', { app: 'web' }),
      pod('b', '1', { app: 'web' }),
      pod('c', '1', { app: 'db' }),
      pod('d', '1'),
    ]);
    expect(names(inf.byIndex('app', 'web'))).toEqual(['a', 'b']);
    expect(names(inf.byIndex('app', 'db'))).toEqual(['c']);
    expect(inf.byIndex('app', 'none')).toEqual([]);
    inf.stop();
  });

  it('follows watch adds, updates that change the value, and deletes', async () => {
    const { inf, last } = await started([pod('a', '1', { app: 'web' })]);
    last().onEvent('ADDED', pod('b', '2', { app: 'web' }));
    expect(names(inf.byIndex('app', 'web'))).toEqual(['a', 'b']);
    last().onEvent('MODIFIED', pod('a', '3', { app: 'db' }));
    expect(names(inf.byIndex('app', 'web'))).toEqual(['b']);
    expect(names(inf.byIndex('app', 'db'))).toEqual(['a']);
    // The index returns the cached object as it is now, not the one first indexed.
    expect(inf.byIndex('app', 'db')[0]!.metadata.resourceVersion).toBe('3');
    last().onEvent('MODIFIED', pod('b', '4'));
    expect(inf.byIndex('app', 'web')).toEqual([]);
    last().onEvent('DELETED', pod('a', '5', { app: 'db' }));
    expect(inf.byIndex('app', 'db')).toEqual([]);
    expect(inf.size).toBe(1);
    inf.stop();
  });

  it('a relist after 410 Gone drops vanished objects and moves changed ones', async () => {
    const { inf, last, setList } = await started([
      pod('a', '1', { app: 'web' }),
      pod('b', '1', { app: 'web' }),
      pod('c', '1', { app: 'db' }),
    ]);
    setList([pod('b', '7', { app: 'db' }), pod('c', '1', { app: 'db' }), pod('e', '7', { app: 'web' })]);
    last().onDone({ statusCode: 410 });
    await settle();
    await settle();
    expect(inf.stats.relists410).toBe(1);
    expect(names(inf.byIndex('app', 'web'))).toEqual(['e']);
    expect(names(inf.byIndex('app', 'db'))).toEqual(['b', 'c']);
    inf.stop();
  });

  it('a relist keeps the cached object of what did not change (one copy, not transformed again) and replaces the rest', async () => {
    let current = [pod('a', '1', { app: 'web' }), pod('b', '1', { app: 'web' })];
    const fake = fakeClient(() => current);
    const transformed: string[] = [];
    const inf = new Informer<KubeObject>(fake.client, PODS, {
      logger: pino({ level: 'silent' }),
      transform: (o) => {
        transformed.push(`${o.metadata.name}@${o.metadata.resourceVersion}`);
        return o;
      },
    });
    inf.start();
    await inf.waitForSync();
    await settle();
    const before = inf.get('ns/a');
    current = [pod('a', '1', { app: 'web' }), pod('b', '8', { app: 'db' })];
    fake.last().onDone({ statusCode: 410 });
    await settle();
    await settle();
    expect(inf.stats.relists410).toBe(1);
    expect(inf.get('ns/a')).toBe(before);
    expect(inf.get('ns/b')!.metadata.resourceVersion).toBe('8');
    expect(transformed).toEqual(['a@1', 'b@1', 'b@8']);
    inf.stop();
  });

  it('handlers see the index already updated for the event they are called with', async () => {
    const { inf, last } = await started([]);
    const seen: string[][] = [];
    inf.addHandlers({
      add: () => seen.push(names(inf.byIndex('app', 'web'))),
      update: () => seen.push(names(inf.byIndex('app', 'web'))),
      delete: () => seen.push(names(inf.byIndex('app', 'web'))),
    });
    last().onEvent('ADDED', pod('a', '2', { app: 'web' }));
    last().onEvent('MODIFIED', pod('a', '3', { app: 'db' }));
    last().onEvent('ADDED', pod('b', '4', { app: 'web' }));
    last().onEvent('DELETED', pod('b', '5', { app: 'web' }));
    expect(seen).toEqual([['a'], [], ['b'], []]);
    inf.stop();
  });

  it('an index added after the cache filled covers the objects already cached, with several values each', async () => {
    const { inf, last } = await started([pod('a', '1', { app: 'web', tier: 'x' }), pod('b', '1', { tier: 'x' })]);
    const labelValues = (o: KubeObject) => Object.values(o.metadata.labels ?? {});
    inf.addIndex('labels', labelValues);
    expect(names(inf.byIndex('labels', 'x'))).toEqual(['a', 'b']);
    expect(names(inf.byIndex('labels', 'web'))).toEqual(['a']);
    // A value the function returns twice is indexed once.
    last().onEvent('ADDED', pod('c', '2', { one: 'x', two: 'x' }));
    expect(names(inf.byIndex('labels', 'x'))).toEqual(['a', 'b', 'c']);
    inf.stop();
  });

  it('a shared informer accepts the same index twice, refuses another function under a taken name and reads of an unknown index', async () => {
    const { inf } = await started([pod('a', '1', { app: 'web' })]);
    expect(() => inf.addIndex('app', byApp)).not.toThrow();
    expect(() => inf.addIndex('app', (o) => [o.metadata.name!])).toThrow(/index "app" is already defined/);
    expect(() => inf.byIndex('nodeName', 'n1')).toThrow(/no index "nodeName"/);
    expect(names(inf.byIndex('app', 'web'))).toEqual(['a']);
    inf.stop();
  });

  it('an index function that throws on one object leaves that object out and keeps the cache going', async () => {
    const { inf, last } = await started([]);
    inf.addIndex('strict', (o) => {
      if (!o.metadata.labels?.app) throw new Error('no app label');
      return [o.metadata.labels.app];
    });
    last().onEvent('ADDED', pod('bad', '2'));
    last().onEvent('ADDED', pod('good', '3', { app: 'web' }));
    expect(inf.get('ns/bad')).toBeDefined();
    expect(names(inf.byIndex('strict', 'web'))).toEqual(['good']);
    inf.stop();
  });
});

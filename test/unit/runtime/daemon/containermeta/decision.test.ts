// The daemon's containermeta decision (daemon/containermeta/decision.ts): the record it writes, whose env it reads,
// and which containers it restarts (only during an in-place update, only when the env hash differs, only once the new
// metadata has settled).
import { describe, expect, it } from 'vitest';
import { expectedEnvHash } from '../../../../../src/runtime/control/env-from-metadata.js';
import {
  decideContainerMeta,
  METADATA_SETTLE_MS,
  metadataAges,
  noteMetadata,
  watchesPod,
  type ObservedContainer,
} from '../../../../../src/runtime/daemon/containermeta/decision.js';
import type { Container, Pod } from '../../../../../src/runtime/core/types.js';

const app: Container = {
  name: 'app',
  image: 'a',
  env: [{ name: 'CONFIG', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['config']" } } }],
};
const plain: Container = { name: 'side', image: 's' };
const pod = (config: string, inPlaceReady?: 'True' | 'False', owner = 'apps.kruise.io/v1alpha1'): Pod => ({
  metadata: {
    name: 'p',
    namespace: 'ns',
    annotations: { config },
    ownerReferences: [{ apiVersion: owner, kind: 'CloneSet', name: 'cs', uid: 'u' }],
  },
  spec: { containers: [app, plain] },
  status: {
    conditions: inPlaceReady ? [{ type: 'InPlaceUpdateReady', status: inPlaceReady }] : [],
    containerStatuses: [],
  },
});
const hash = (config: string) => expectedEnvHash(app, { annotations: { config } });
const obs = (name: string, id: string, o: Partial<ObservedContainer> = {}): ObservedContainer => ({
  name,
  containerID: id,
  running: true,
  plainHash: 9,
  restartCount: 0,
  ...o,
});
const rec = (appId: string, appHash: number, sideHash: number) => ({
  containers: [
    { name: 'app', containerID: appId, restartCount: 0, hashes: { plainHash: 9, extractedEnvFromMetadataHash: appHash } },
    { name: 'side', containerID: 's1', restartCount: 0, hashes: { plainHash: 9, extractedEnvFromMetadataHash: sideHash } },
  ],
});
const sideHash = expectedEnvHash(plain, {});

describe('containermeta decision', () => {
  it.each([
    ['a Kruise-owned pod whose container reads an annotation', pod('a'), true],
    ['a pod of a native Deployment', pod('a', undefined, 'apps/v1'), false],
    ['a Kruise pod without env from metadata', { ...pod('a'), spec: { containers: [plain] } }, false],
  ] as const)('watches %s → %s', (_n, p, want) => expect(watchesPod(p as Pod)).toBe(want));

  it.each([
    [
      'first sight: read the env of every running container',
      pod('a'),
      [obs('app', 'c1'), obs('side', 's1')],
      undefined,
      { readEnv: ['app', 'side'], restart: [], record: undefined },
    ],
    [
      'env read: the record holds the hashes',
      pod('a'),
      [obs('app', 'c1', { currentEnvHash: hash('a') }), obs('side', 's1', { currentEnvHash: sideHash })],
      undefined,
      { readEnv: [], restart: [], record: rec('c1', hash('a'), sideHash) },
    ],
    [
      'nothing changed: nothing to write',
      pod('a'),
      [obs('app', 'c1'), obs('side', 's1')],
      rec('c1', hash('a'), sideHash),
      { readEnv: [], restart: [] },
    ],
    // The annotation was changed by hand while no update ran: upstream restarts nothing.
    [
      'metadata changed, no in-place update under way',
      pod('b', 'True'),
      [obs('app', 'c1'), obs('side', 's1')],
      rec('c1', hash('a'), sideHash),
      { readEnv: [], restart: [] },
    ],
    [
      'in-place update under way: only the container whose env changed',
      pod('b', 'False'),
      [obs('app', 'c1'), obs('side', 's1')],
      rec('c1', hash('a'), sideHash),
      { readEnv: [], restart: ['c1'] },
    ],
    [
      'a stopped container is left to the kubelet',
      pod('b', 'False'),
      [obs('app', 'c1', { running: false }), obs('side', 's1')],
      rec('c1', hash('a'), sideHash),
      { readEnv: [], restart: [] },
    ],
    [
      'restarted: the new container ID gets its env read',
      pod('b', 'False'),
      [obs('app', 'c2'), obs('side', 's1')],
      rec('c1', hash('a'), sideHash),
      { readEnv: ['app'], restart: [] },
    ],
    [
      'restarted and read: the record matches the pod, nothing to restart',
      pod('b', 'False'),
      [obs('app', 'c2', { currentEnvHash: hash('b') }), obs('side', 's1')],
      rec('c1', hash('a'), sideHash),
      { readEnv: [], restart: [], record: rec('c2', hash('b'), sideHash) },
    ],
  ] as const)('%s', (_n, p, observed, old, want) => {
    const d = decideContainerMeta(p, observed, old ? JSON.parse(JSON.stringify(old)) : undefined);
    expect(d.readEnv).toEqual(want.readEnv);
    expect(d.restart).toEqual(want.restart);
    expect(d.record).toEqual('record' in want ? want.record : undefined);
  });

  describe("a restart waits until the new metadata has been the pod's for METADATA_SETTLE_MS (the kubelet sees it late)", () => {
    const updating = pod('b', 'False');
    const observed = [obs('app', 'c1'), obs('side', 's1')];
    const old = () => JSON.parse(JSON.stringify(rec('c1', hash('a'), sideHash)));

    it('seen just now: no restart yet, look again when it has settled', () => {
      const d = decideContainerMeta(updating, observed, old(), new Map([['app', 1_000]]));
      expect(d.restart).toEqual([]);
      expect(d.waitMs).toBe(METADATA_SETTLE_MS - 1_000);
    });

    it('settled: restart, nothing to wait for', () => {
      const d = decideContainerMeta(updating, observed, old(), new Map([['app', METADATA_SETTLE_MS]]));
      expect(d.restart).toEqual(['c1']);
      expect(d.waitMs).toBeUndefined();
    });

    it('no wait where nothing is to be restarted', () => {
      expect(decideContainerMeta(pod('a', 'False'), observed, old(), new Map([['app', 0]])).waitMs).toBeUndefined();
    });

    it('the clock starts when a value the container reads changes, and only then', () => {
      const first = noteMetadata(undefined, pod('a'), 100);
      expect([...first.keys()]).toEqual(['app']); // `side` reads no metadata
      const same = noteMetadata(first, { ...pod('a'), metadata: { ...pod('a').metadata, labels: { unrelated: 'x' } } }, 5_000);
      expect(metadataAges(same, 5_000).get('app')).toBe(4_900);
      const changed = noteMetadata(same, pod('b'), 6_000);
      expect(metadataAges(changed, 7_000).get('app')).toBe(1_000);
      expect(metadataAges(undefined, 7_000).size).toBe(0);
    });
  });
});

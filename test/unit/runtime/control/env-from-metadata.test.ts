// Env from metadata (control/env-from-metadata.ts), the agreement of the CloneSet controller and the daemon's
// containermeta unit; and the in-place update halves that use it (control/inplace-update.ts): which template changes ask for it (inPlaceSpec), the
// state it records, and when such an in-place update is complete.
import { describe, expect, it } from 'vitest';
import {
  currentEnvHash,
  envFromMetadataConsistent,
  envMetadataRefs,
  expectedEnvHash,
  parseEnvOutput,
  parseRuntimeContainerMeta,
} from '../../../../src/runtime/control/env-from-metadata.js';
import { inPlaceCompleted, inPlaceSpec, inPlaceState } from '../../../../src/runtime/control/inplace-update.js';
import type { Container, Pod } from '../../../../src/runtime/core/types.js';

const fieldRef = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });
const app: Container = {
  name: 'app',
  image: 'app:1',
  env: [
    fieldRef('CONFIG', "metadata.annotations['config']"),
    fieldRef('TIER', "metadata.labels['tier']"),
    fieldRef('POD', 'metadata.name'),
    { name: 'PLAIN', value: 'x' },
    fieldRef('SIDECARSET_VERSION', "metadata.annotations['version']"),
  ],
};

describe('env entries that read metadata', () => {
  it('only label/annotation subscripts without a literal value, SidecarSet version env excepted', () => {
    expect(envMetadataRefs(app)).toEqual([
      { env: 'CONFIG', field: 'annotations', key: 'config' },
      { env: 'TIER', field: 'labels', key: 'tier' },
    ]);
    expect(envMetadataRefs({ env: [{ name: 'A', value: 'v', valueFrom: { fieldRef: { fieldPath: "metadata.labels['a']" } } }] })).toEqual(
      [],
    );
    expect(envMetadataRefs({})).toEqual([]);
  });

  it.each([
    ['the same values, any order of env', { CONFIG: 'a', TIER: 'web' }, { annotations: { config: 'a' }, labels: { tier: 'web' } }, true],
    ['an annotation changed', { CONFIG: 'a', TIER: 'web' }, { annotations: { config: 'b' }, labels: { tier: 'web' } }, false],
    ['a label removed', { CONFIG: 'a', TIER: 'web' }, { annotations: { config: 'a' } }, false],
    ['absent on both sides', {}, {}, true],
    [
      'a key no env reads changed',
      { CONFIG: 'a', TIER: 'web' },
      { annotations: { config: 'a', other: 'z' }, labels: { tier: 'web' } },
      true,
    ],
  ] as const)('running env vs pod metadata: %s → equal %s', (_n, env, meta, equal) => {
    const running = currentEnvHash(app, new Map(Object.entries(env)));
    expect(running === expectedEnvHash(app, meta)).toBe(equal);
    expect(running).toBeGreaterThan(0);
  });

  it('parses `env` output: NAME=value lines, values may hold =, other lines skipped', () => {
    expect([...parseEnvOutput('A=1\nB=x=y\nnoise\n=bad\n')]).toEqual([
      ['A', '1'],
      ['B', 'x=y'],
    ]);
  });

  it('a hostile record parses to undefined or drops the entries not of its shape', () => {
    expect(parseRuntimeContainerMeta('{')).toBeUndefined();
    expect(parseRuntimeContainerMeta('null')).toBeUndefined();
    expect(parseRuntimeContainerMeta('{"containers":{}}')).toBeUndefined();
    expect(parseRuntimeContainerMeta('{"containers":[1,{"name":"a","containerID":"c","hashes":{"plainHash":"x"}}]}')).toEqual({
      containers: [{ name: 'a', containerID: 'c', hashes: { plainHash: 0, extractedEnvFromMetadataHash: 0 } }],
    });
  });
});

describe('CloneSet: which template changes update env from metadata in place', () => {
  const tpl = (annotations: Record<string, string>, image = 'app:1') => ({
    metadata: { annotations, labels: { tier: 'web' } },
    spec: { containers: [{ ...app, image }] },
  });
  it.each([
    ['an annotation an env reads changes', tpl({ config: 'a' }), tpl({ config: 'b' }), true],
    ['it is added', tpl({}), tpl({ config: 'b' }), true],
    ['it is removed (the env keeps its value)', tpl({ config: 'a' }), tpl({}), false],
    ['another annotation changes', tpl({ config: 'a' }), tpl({ config: 'a', other: '1' }), false],
    ['only the image changes', tpl({ config: 'a' }), tpl({ config: 'a' }, 'app:2'), false],
  ] as const)('%s → %s', (_n, from, to, want) => {
    expect(inPlaceSpec(from, to)?.updateEnvFromMetadata).toBe(want);
  });
  it('gate InPlaceUpdateEnvFromMetadata off: metadata is still patched, no restart is asked for', () => {
    const spec = inPlaceSpec(tpl({ config: 'a' }), tpl({ config: 'b' }), false);
    expect(spec).toMatchObject({ annotations: { config: 'b' }, updateEnvFromMetadata: false });
  });
});

describe('CloneSet: completion of an in-place update of env from metadata', () => {
  const meta = { annotations: { config: 'b' }, labels: { tier: 'web' } };
  const hashB = expectedEnvHash(app, meta);
  const hashA = expectedEnvHash(app, { annotations: { config: 'a' }, labels: { tier: 'web' } });
  const pod = (record: unknown, containerID = 'containerd://c2'): Pod => {
    const p: Pod = {
      metadata: { name: 'p', namespace: 'ns', labels: meta.labels, annotations: { ...meta.annotations } },
      spec: { containers: [app] },
      status: {
        containerStatuses: [{ name: 'app', image: 'app:1', imageID: 'sha:a', containerID, ready: true, restartCount: 1 } as never],
      },
    };
    p.metadata.annotations!['apps.kruise.io/inplace-update-state'] = JSON.stringify(
      inPlaceState(p, 'rev-2', {}, '2026-01-01T00:00:00Z', true),
    );
    if (record !== undefined) p.metadata.annotations!['apps.kruise.io/runtime-containers-meta'] = JSON.stringify(record);
    return p;
  };
  const rec = (containerID: string, h: number) => ({
    containers: [{ name: 'app', containerID, restartCount: 1, hashes: { plainHash: 7, extractedEnvFromMetadataHash: h } }],
  });
  it.each([
    ['no record from the daemon yet', undefined, false],
    ['the record still shows the old env', rec('containerd://c2', hashA), false],
    ['the record is of the previous container', rec('containerd://c1', hashB), false],
    ['the env was not read yet (hash 0)', rec('containerd://c2', 0), false],
    ['the restarted container runs with the new env', rec('containerd://c2', hashB), true],
    ['a hostile record', 'not json', false],
  ] as const)('%s → %s', (_n, record, want) => {
    const p = pod(record);
    expect(inPlaceCompleted(p)).toBe(want);
    expect(envFromMetadataConsistent(p, parseRuntimeContainerMeta(p.metadata.annotations!['apps.kruise.io/runtime-containers-meta']))).toBe(
      want,
    );
  });
  it('the state says the update changed env from metadata', () => {
    expect(JSON.parse(pod(undefined).metadata.annotations!['apps.kruise.io/inplace-update-state'])).toMatchObject({
      updateEnvFromMetadata: true,
    });
  });
});

// Advanced StatefulSet admission: upstream's defaults, its spec checks and the fields an UPDATE may change.
import { describe, expect, it } from 'vitest';
import {
  badReserveOrdinal,
  defaultStatefulSet,
  validateStatefulSet,
  validateStatefulSetUpdate,
} from '../../../../../src/runtime/webhooks/advancedstatefulset/decision.js';
import type { KubeObject } from '../../../../../src/runtime/core/types.js';

const sts = (spec: Record<string, unknown> = {}): KubeObject =>
  ({
    metadata: { name: 'db' },
    spec: {
      replicas: 3,
      podManagementPolicy: 'OrderedReady',
      selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      ...spec,
    },
  }) as KubeObject;

describe('defaults', () => {
  it('fills upstream defaults in, and only absent fields', () => {
    const ops = defaultStatefulSet({ metadata: { name: 'db' }, spec: {} } as KubeObject);
    expect(ops).toEqual(
      expect.arrayContaining([
        { op: 'add', path: '/spec/replicas', value: 1 },
        { op: 'add', path: '/spec/revisionHistoryLimit', value: 10 },
        { op: 'add', path: '/spec/podManagementPolicy', value: 'OrderedReady' },
        {
          op: 'add',
          path: '/spec/updateStrategy',
          value: {
            type: 'RollingUpdate',
            rollingUpdate: { partition: 0, maxUnavailable: 1, podUpdatePolicy: 'ReCreate', minReadySeconds: 0 },
          },
        },
        { op: 'add', path: '/spec/persistentVolumeClaimRetentionPolicy', value: { whenDeleted: 'Retain', whenScaled: 'Retain' } },
      ]),
    );
    const partial = defaultStatefulSet(sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }) as never);
    expect(partial).toContainEqual({ op: 'add', path: '/spec/updateStrategy/rollingUpdate/maxUnavailable', value: 1 });
    expect(partial.some((o) => o.path.endsWith('/partition'))).toBe(false);
  });
});

describe('validation', () => {
  it('accepts a plain set', () => expect(validateStatefulSet(sts() as never)).toBeUndefined());
  it.each([
    [{ reserveOrdinals: [-1] }, '/spec/reserveOrdinals/0', 'negative'],
    [{ reserveOrdinals: ['3-1'] }, '/spec/reserveOrdinals/0', 'starts after it ends'],
    [{ reserveOrdinals: ['a'] }, '/spec/reserveOrdinals/0', 'not a valid range'],
    [{ selector: { matchLabels: {} } }, '/spec/selector', 'empty selector'],
    [{ selector: { matchLabels: { app: 'other' } } }, '/spec/template/metadata/labels', 'does not match'],
    [{ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } }, 'maxUnavailable', 'Parallel'],
    [{ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { minReadySeconds: 301 } } }, 'minReadySeconds', '300'],
    [{ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { unorderedUpdate: {} } } }, 'unorderedUpdate', 'Parallel'],
    [
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } } },
      'readinessGates',
      'InPlaceUpdateReady',
    ],
    [{ updateStrategy: { type: 'OnDelete', rollingUpdate: {} } }, '/spec/updateStrategy/rollingUpdate', 'RollingUpdate'],
    [{ scaleStrategy: { maxUnavailable: 2 } }, '/spec/scaleStrategy/maxUnavailable', 'Parallel'],
  ])('refuses %j at %s', (spec, pointer, words) => {
    const r = validateStatefulSet(sts(spec) as never);
    expect(r?.allowed).toBe(false);
    expect((r as { message: string }).message).toContain(pointer);
    expect((r as { message: string }).message).toContain(words);
  });
  it('Parallel allows maxUnavailable above 1', () => {
    expect(
      validateStatefulSet(sts({ podManagementPolicy: 'Parallel', updateStrategy: { rollingUpdate: { maxUnavailable: '50%' } } }) as never),
    ).toBeUndefined();
  });
  it.each([[1], ['2-4']])('reserve ordinal %j is valid', (v) => expect(badReserveOrdinal(v)).toBeUndefined());
  // Upstream takes a string only as a range: "5" is refused (write the int 5).
  it('a string that is not a range is refused', () => expect(badReserveOrdinal('5')).toContain('not a valid range'));
});

describe('update', () => {
  it('replicas, template, strategy, reserveOrdinals and lifecycle may change; serviceName and selector may not', () => {
    expect(validateStatefulSetUpdate(sts({ replicas: 5, reserveOrdinals: [1] }) as never, sts() as never)).toBeUndefined();
    const r = validateStatefulSetUpdate(sts({ serviceName: 'b' }) as never, sts({ serviceName: 'a' }) as never);
    expect(r?.allowed).toBe(false);
    expect((r as { message: string }).message).toContain('spec.serviceName');
    expect(validateStatefulSetUpdate(sts({ selector: { matchLabels: { app: 'db', x: 'y' } } }) as never, sts() as never)?.allowed).toBe(
      false,
    );
  });
});

describe('claim templates under OnPodRollingUpdate (gate StatefulSetAutoResizePVCGate)', () => {
  const template = (name: string, storage: string, storageClassName?: string) => ({
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...(storageClassName ? { storageClassName } : {}) },
  });
  const withClaims = (templates: unknown[], type = 'OnPodRollingUpdate') =>
    sts({ volumeClaimTemplates: templates, volumeClaimUpdateStrategy: { type } }) as never;
  const classes = [
    { metadata: { name: 'grows' }, allowVolumeExpansion: true },
    { metadata: { name: 'fixed' }, allowVolumeExpansion: false },
    {
      metadata: {
        name: 'old-default',
        annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
        creationTimestamp: '2026-01-01T00:00:00Z',
      },
    },
    {
      metadata: {
        name: 'new-default',
        annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
        creationTimestamp: '2026-02-01T00:00:00Z',
      },
      allowVolumeExpansion: false,
    },
  ];
  const on = { enabled: true, storageClasses: () => classes };
  const check = (next: unknown[], prev: unknown[], resize = on, type?: string) =>
    validateStatefulSetUpdate(withClaims(next, type), withClaims(prev, type), resize) as { allowed: false; message: string } | undefined;

  it.each([
    ['a class that allows expansion: admitted', [template('data', '2Gi', 'grows')], [template('data', '1Gi', 'grows')], undefined],
    ['same size, other class allowed to stay', [template('data', '1Gi', 'fixed')], [template('data', '1Gi', 'fixed')], undefined],
    [
      'a class that does not allow expansion: refused at the storage request',
      [template('data', '2Gi', 'fixed')],
      [template('data', '1Gi', 'fixed')],
      '/spec/volumeClaimTemplates/0/spec/resources/requests/storage: storage class fixed does not support volume expansion',
    ],
    [
      'no class named: the newest default class decides (refuses here)',
      [template('data', '2Gi')],
      [template('data', '1Gi')],
      'storage class new-default does not support volume expansion',
    ],
    [
      'a class that does not exist',
      [template('data', '2Gi', 'gone')],
      [template('data', '1Gi', 'gone')],
      '/spec/volumeClaimTemplates/0/spec/storageClassName: StorageClass "gone" not found',
    ],
    [
      'a template added',
      [template('data', '1Gi', 'grows'), template('logs', '1Gi', 'grows')],
      [template('data', '1Gi', 'grows')],
      'volumeClaimTemplate can not be added or deleted when OnRollingUpdate',
    ],
    [
      'a template renamed',
      [template('other', '1Gi', 'grows')],
      [template('data', '1Gi', 'grows')],
      'volumeClaimTemplate name can not be modified',
    ],
    [
      'a class changed',
      [template('data', '1Gi', 'fixed')],
      [template('data', '1Gi', 'grows')],
      '/spec/volumeClaimTemplates/0: volumeClaimTemplate can not be modified when OnRollingUpdate',
    ],
  ])('%s', (_, next, prev, refusal) => {
    const r = check(next, prev);
    if (refusal === undefined) expect(r).toBeUndefined();
    else {
      expect(r?.allowed).toBe(false);
      expect(r?.message).toContain(refusal);
      expect(r?.message).toContain('(fix: ');
    }
  });
  it('the gate off, or OnDelete: a template may change freely (new claims only)', () => {
    const grown = [template('data', '2Gi', 'fixed')];
    const before = [template('data', '1Gi', 'fixed')];
    expect(check(grown, before, { enabled: false, storageClasses: () => classes })).toBeUndefined();
    expect(check(grown, before, on, 'OnDelete')).toBeUndefined();
  });
  it('hostile templates get a 422 naming the entry, never an exception', () => {
    const prev = [template('data', '1Gi', 'grows')];
    expect(check([null], prev)?.message).toContain('/spec/volumeClaimTemplates/0: a volumeClaimTemplate must be an object');
    const notList = validateStatefulSetUpdate(withClaims('x' as never), withClaims(prev), on) as { message: string } | undefined;
    expect(notList?.message).toContain('/spec/volumeClaimTemplates: must be a list');
  });
  it('no class named and no default class: nothing to check', () => {
    const r = check([template('data', '2Gi')], [template('data', '1Gi')], { enabled: true, storageClasses: () => [] });
    expect(r).toBeUndefined();
  });
});

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

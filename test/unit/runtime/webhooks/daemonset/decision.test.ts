import { describe, expect, it } from 'vitest';
import { defaultDaemonSet, validateDaemonSet, validateDaemonSetUpdate } from '../../../../../src/runtime/webhooks/daemonset/decision.js';
import type { KubeObject } from '../../../../../src/runtime/core/types.js';

function obj(spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'ns' },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'a', image: 'a:1' }] } },
      ...spec,
    },
  } as KubeObject;
}

describe('Advanced DaemonSet webhook', () => {
  it('fills upstream defaults in', () => {
    expect(defaultDaemonSet(obj({}) as never)).toEqual([
      { op: 'add', path: '/spec/burstReplicas', value: 250 },
      { op: 'add', path: '/spec/revisionHistoryLimit', value: 10 },
      {
        op: 'add',
        path: '/spec/updateStrategy',
        value: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'Standard', maxUnavailable: 1, maxSurge: 0 } },
      },
    ]);
    // The deprecated Surging type becomes Standard with one surge pod.
    const surging = defaultDaemonSet(
      obj({
        burstReplicas: 1,
        revisionHistoryLimit: 1,
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'Surging' } },
      }) as never,
    );
    expect(surging).toEqual([
      { op: 'add', path: '/spec/updateStrategy/rollingUpdate/maxSurge', value: 1 },
      { op: 'add', path: '/spec/updateStrategy/rollingUpdate/maxUnavailable', value: 0 },
      { op: 'replace', path: '/spec/updateStrategy/rollingUpdate/rollingUpdateType', value: 'Standard' },
    ]);
    // OnDelete gets no rolling update.
    expect(defaultDaemonSet(obj({ burstReplicas: 1, revisionHistoryLimit: 1, updateStrategy: { type: 'OnDelete' } }) as never)).toEqual([]);
  });

  const ru = (r: Record<string, unknown>) => obj({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: r } });
  it.each([
    [
      'both maxUnavailable and maxSurge',
      ru({ maxUnavailable: 1, maxSurge: 1 }),
      '/spec/updateStrategy/rollingUpdate/maxSurge: may not be set when maxUnavailable is non-zero',
    ],
    ['neither', ru({ maxUnavailable: 0, maxSurge: '0%' }), 'cannot be 0 when maxSurge is 0'],
    [
      'surge with InPlaceIfPossible',
      ru({ maxUnavailable: 0, maxSurge: 1, rollingUpdateType: 'InPlaceIfPossible' }),
      'must be 0 for InPlaceIfPossible type',
    ],
    ['a percentage above 100', ru({ maxUnavailable: '120%' }), 'must not be greater than 100%'],
    ['a negative partition', ru({ maxUnavailable: 1, partition: -1 }), '/partition: must be at least 0'],
    ['a malformed count', ru({ maxUnavailable: 'many' }), 'is neither a count nor a percentage'],
    ['no rollingUpdate', obj({ updateStrategy: { type: 'RollingUpdate' } }), 'Required value'],
    [
      'restartPolicy Never',
      obj({ template: { metadata: { labels: { app: 'agent' } }, spec: { restartPolicy: 'Never', containers: [] } } }),
      'supported values: "Always"',
    ],
    [
      'a selector the template does not match',
      obj({ selector: { matchLabels: { app: 'other' } } }),
      '`selector` does not match template `labels`',
    ],
    ['an empty selector', obj({ selector: {} }), 'empty selector is invalid'],
  ])('refuses %s', (_w, o, msg) => {
    expect(validateDaemonSet(o as never)).toMatchObject({ allowed: false, code: 422, message: expect.stringContaining(msg) });
  });

  it('accepts what upstream accepts, and an inPlaceUpdate hook (beyond upstream)', () => {
    expect(validateDaemonSet(ru({ maxUnavailable: '10%', partition: 3, rollingUpdateType: 'InPlaceIfPossible' }) as never)).toBeUndefined();
    expect(validateDaemonSet(ru({ maxUnavailable: 0, maxSurge: '20%' }) as never)).toBeUndefined();
    expect(
      validateDaemonSet(
        obj({ updateStrategy: { type: 'OnDelete' }, lifecycle: { inPlaceUpdate: { labelsHandler: { a: 'b' } } } }) as never,
      ),
    ).toBeUndefined();
  });

  it('the selector is immutable', () => {
    const before = obj({});
    const after = obj({
      selector: { matchLabels: { app: 'agent', tier: 'x' } },
      template: { metadata: { labels: { app: 'agent', tier: 'x' } }, spec: {} },
    });
    expect(validateDaemonSetUpdate(after as never, before as never)).toMatchObject({
      allowed: false,
      message: expect.stringContaining('/spec/selector: field is immutable'),
    });
    expect(validateDaemonSetUpdate(before as never, before as never)).toBeUndefined();
  });
});

// SidecarSet admission checks that need the cluster (pure): conflicts with existing SidecarSets and the
// patchPodMetadata whitelist refusal message.
import { describe, expect, it } from 'vitest';
import type { SidecarSet } from '../../../../../src/api/kinds/sidecarset.js';
import { parsePatchMetadataWhitelist } from '../../../../../src/runtime/control/sidecarset-pod.js';
import {
  patchMetadataRefusal,
  selectorsMayOverlap,
  sidecarSetConflict,
} from '../../../../../src/runtime/webhooks/sidecarset/validation.js';

const set = (name: string, spec: Record<string, unknown>): SidecarSet =>
  ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: { containers: [], ...spec },
  }) as unknown as SidecarSet;
const c = (name: string) => ({ name, image: `${name}:1` });

describe('selectorsMayOverlap', () => {
  const cases: Array<[string, object, object, boolean]> = [
    ['same labels', { matchLabels: { app: 'a' } }, { matchLabels: { app: 'a' } }, true],
    ['different values of one key', { matchLabels: { app: 'a' } }, { matchLabels: { app: 'b' } }, false],
    ['different keys can meet', { matchLabels: { app: 'a' } }, { matchLabels: { tier: 'web' } }, true],
    [
      'In lists that share a value',
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['a', 'b'] }] },
      { matchLabels: { app: 'b' } },
      true,
    ],
    [
      'In lists without a common value',
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['a'] }] },
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['c'] }] },
      false,
    ],
    [
      'NotIn covers the other In',
      { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['a'] }] },
      { matchLabels: { app: 'a' } },
      false,
    ],
    [
      'Exists vs DoesNotExist',
      { matchExpressions: [{ key: 'x', operator: 'Exists' }] },
      { matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] },
      false,
    ],
    ['DoesNotExist vs a label', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, { matchLabels: { app: 'a' } }, false],
  ];
  it.each(cases)('%s', (_, a, b, overlap) => {
    expect(selectorsMayOverlap(a, b)).toBe(overlap);
    expect(selectorsMayOverlap(b, a)).toBe(overlap);
  });
});

describe('sidecarSetConflict', () => {
  const existing = set('logs', {
    selector: { matchLabels: { app: 'web' } },
    containers: [c('logtail')],
    volumes: [{ name: 'v', emptyDir: {} }],
  });
  const cases: Array<[string, SidecarSet, RegExp | undefined]> = [
    [
      'same container name, overlapping selectors',
      set('new', { selector: { matchLabels: { app: 'web' } }, containers: [c('logtail')] }),
      /existing SidecarSet logs .*"logtail"/,
    ],
    [
      'same name as an init container of the other',
      set('new', { selector: { matchLabels: { app: 'web' } }, initContainers: [c('logtail')] }),
      /"logtail"/,
    ],
    ['disjoint selectors', set('new', { selector: { matchLabels: { app: 'db' } }, containers: [c('logtail')] }), undefined],
    [
      'a namespaced set still meets one of every namespace',
      set('new', { selector: { matchLabels: { app: 'web' } }, namespace: 'b', containers: [c('logtail')] }),
      /"logtail"/,
    ],
    ['other names', set('new', { selector: { matchLabels: { app: 'web' } }, containers: [c('proxy')] }), undefined],
    [
      'same-named volume defined differently',
      set('new', {
        selector: { matchLabels: { app: 'web' } },
        containers: [c('proxy')],
        volumes: [{ name: 'v', hostPath: { path: '/x' } }],
      }),
      /volume "v" differently/,
    ],
    [
      'same-named volume defined the same',
      set('new', { selector: { matchLabels: { app: 'web' } }, containers: [c('proxy')], volumes: [{ name: 'v', emptyDir: {} }] }),
      undefined,
    ],
    ['an update of the set itself', set('logs', { selector: { matchLabels: { app: 'web' } }, containers: [c('logtail')] }), undefined],
  ];
  it.each(cases)('%s', (_, s, message) => {
    const found = sidecarSetConflict(s, [existing]);
    if (message) expect(found).toMatch(message);
    else expect(found).toBeUndefined();
  });

  it('sets in different namespaces do not overlap', () => {
    const a = set('a', { selector: { matchLabels: { app: 'web' } }, namespace: 'one', containers: [c('x')] });
    const b = set('b', { selector: { matchLabels: { app: 'web' } }, namespace: 'two', containers: [c('x')] });
    expect(sidecarSetConflict(a, [b])).toBeUndefined();
  });

  it('a namespace scope and a namespaceSelector on another name do not overlap', () => {
    const scoped = set('a', { selector: { matchLabels: { app: 'web' } }, namespace: 'one', containers: [c('x')] });
    const selected = set('b', {
      selector: { matchLabels: { app: 'web' } },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'two' } },
      containers: [c('x')],
    });
    expect(sidecarSetConflict(scoped, [selected])).toBeUndefined();
    expect(sidecarSetConflict(set('c', { selector: { matchLabels: { app: 'web' } }, containers: [c('x')] }), [selected])).toMatch(/"x"/);
  });

  it('ignores sets being deleted', () => {
    const deleting = { ...existing, metadata: { ...existing.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } } as SidecarSet;
    expect(
      sidecarSetConflict(set('new', { selector: { matchLabels: { app: 'web' } }, containers: [c('logtail')] }), [deleting]),
    ).toBeUndefined();
  });
});

describe('patchMetadataRefusal', () => {
  const patching = set('p', {
    selector: { matchLabels: { app: 'web' } },
    patchPodMetadata: [{ annotations: { 'a.example/x': '1', other: '2' } }],
  });
  it('names the refused keys, the reason and where an admin allows them', () => {
    const list = parsePatchMetadataWhitelist(JSON.stringify({ rules: [{ allowedAnnotationKeyExprs: ['^a\\.example/'] }] }));
    expect(patchMetadataRefusal(patching, list, false)).toMatch(
      /annotation key "other" not allowed: not matched .*ConfigMap kruise-configuration/,
    );
    expect(patchMetadataRefusal(patching, undefined, false)).toMatch(
      /keys "a.example\/x", "other" not allowed: there is no SidecarSet_PatchPodMetadata_WhiteList/,
    );
    expect(patchMetadataRefusal(patching, undefined, true)).toBeUndefined();
  });
});

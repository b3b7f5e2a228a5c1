// The kruise-configuration patchPodMetadata whitelist (upstream's semantics), pure: parsing hostile text
// and deciding which of a SidecarSet's patched annotation keys are refused.
import { describe, expect, it } from 'vitest';
import type { SidecarSet } from '../../src/api/kinds/sidecarset.js';
import { parsePatchMetadataWhitelist, patchMetadataKeysRefused } from '../../src/api/sidecarset-pod.js';

const set = (labels: Record<string, string>, ...keys: string[]): SidecarSet =>
  ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 's', labels },
    spec: {
      selector: { matchLabels: { app: 'a' } },
      containers: [],
      patchPodMetadata: [{ annotations: Object.fromEntries(keys.map((k) => [k, 'v'])) }],
    },
  }) as unknown as SidecarSet;

const list = (rules: unknown[]) => parsePatchMetadataWhitelist(JSON.stringify({ rules }));

describe('patchPodMetadata whitelist', () => {
  const cases: Array<[string, ReturnType<typeof parsePatchMetadataWhitelist> | undefined, boolean, SidecarSet, string[]]> = [
    ['no whitelist, gate off: every key refused', undefined, false, set({}, 'a', 'b'), ['a', 'b']],
    ['no whitelist, gate on: allowed', undefined, true, set({}, 'a'), []],
    [
      'a rule without selector applies to every set',
      list([{ allowedAnnotationKeyExprs: ['^oom-score$'] }]),
      false,
      set({}, 'oom-score', 'other'),
      ['other'],
    ],
    [
      'expressions are unanchored, as upstream',
      list([{ allowedAnnotationKeyExprs: ['example\\.com/'] }]),
      false,
      set({}, 'x.example.com/y'),
      [],
    ],
    [
      'a rule whose selector misses the set does not apply; none left and gate off: refused',
      list([{ selector: { matchLabels: { team: 'a' } }, allowedAnnotationKeyExprs: ['.*'] }]),
      false,
      set({ team: 'b' }, 'k'),
      ['k'],
    ],
    [
      'none applies and the gate is on: allowed',
      list([{ selector: { matchLabels: { team: 'a' } }, allowedAnnotationKeyExprs: ['^z$'] }]),
      true,
      set({ team: 'b' }, 'k'),
      [],
    ],
    [
      'a rule that applies is not widened by the gate',
      list([{ selector: { matchLabels: { team: 'a' } }, allowedAnnotationKeyExprs: ['^z$'] }]),
      true,
      set({ team: 'a' }, 'k', 'z'),
      ['k'],
    ],
    ['a broken whitelist refuses every key', parsePatchMetadataWhitelist('{not json'), true, set({}, 'k'), ['k']],
  ];
  it.each(cases)('%s', (_, whitelist, gate, s, refused) => {
    expect(patchMetadataKeysRefused(s, whitelist, gate).refused).toEqual(refused);
  });

  it('a set without patchPodMetadata is never refused', () => {
    const s = set({});
    s.spec.patchPodMetadata = undefined;
    expect(patchMetadataKeysRefused(s, undefined, false)).toEqual({ refused: [] });
  });

  it.each([
    ['{not json', /not JSON/],
    ['[]', /expected \{"rules": \[\.\.\.\]\}/],
    ['{"rules":[7]}', /\/rules\/0 must be an object/],
    ['{"rules":[{"selector":"x"}]}', /\/rules\/0\/selector/],
    ['{"rules":[{"allowedAnnotationKeyExprs":"x"}]}', /\/rules\/0\/allowedAnnotationKeyExprs must be a list/],
    ['{"rules":[{"allowedAnnotationKeyExprs":["("]}]}', /\/rules\/0\/allowedAnnotationKeyExprs\/0: /],
    [JSON.stringify({ rules: [{ allowedAnnotationKeyExprs: ['a'.repeat(2000)] }] }), /at most 1024 characters/],
    [' '.repeat(70_000), /larger than/],
  ])('reports hostile text %#, naming where it is', (text, message) => {
    const parsed = parsePatchMetadataWhitelist(text);
    expect('error' in parsed && parsed.error).toMatch(message);
    expect('error' in parsed && parsed.error).toMatch(/kruise-configuration key SidecarSet_PatchPodMetadata_WhiteList/);
  });
});

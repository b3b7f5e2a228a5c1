// The kruise-configuration patchPodMetadata whitelist (upstream's semantics), pure: parsing hostile text
// and deciding which of a SidecarSet's patched annotation keys are refused; and the webhooks' reads of it
// (against a fake reader): fresh for every admission, coalesced, keeping the last value on a failed read.
import { describe, expect, it } from 'vitest';
import type { SidecarSet } from '../../../../../src/api/kinds/sidecarset.js';
import { parsePatchMetadataWhitelist, patchMetadataKeysRefused } from '../../../../../src/runtime/control/sidecarset-pod.js';
import { WhitelistSource } from '../../../../../src/runtime/webhooks/sidecarset/index.js';

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

describe('WhitelistSource: every admission sees a read sent after it arrived', () => {
  const text = (expr: string) => ({
    data: { SidecarSet_PatchPodMetadata_WhiteList: JSON.stringify({ rules: [{ allowedAnnotationKeyExprs: [expr] }] }) },
  });
  const exprs = (v: ReturnType<typeof parsePatchMetadataWhitelist> | undefined) =>
    v && 'rules' in v ? v.rules.flatMap((r) => r.allowedAnnotationKeyExprs.map((x) => x.source)) : v;

  /** A reader whose calls the test answers one at a time. */
  function manualReader() {
    const pending: Array<(v: { data?: Record<string, string> } | undefined | Error) => void> = [];
    let calls = 0;
    const read = () =>
      new Promise<{ data?: Record<string, string> } | undefined>((resolve, reject) => {
        calls++;
        pending.push((v) => (v instanceof Error ? reject(v) : resolve(v)));
      });
    return { read, answer: (v: { data?: Record<string, string> } | undefined | Error) => pending.shift()!(v), calls: () => calls, pending };
  }
  const tick = () => new Promise((r) => setTimeout(r, 0));

  it('a change made just before a call is seen by it (no reuse of an earlier read)', async () => {
    let current: { data?: Record<string, string> } | undefined;
    const source = new WhitelistSource(async () => current);
    expect(await source.get()).toBeUndefined();
    current = text('^a$');
    expect(exprs(await source.get())).toEqual(['^a$']);
    current = undefined;
    expect(await source.get()).toBeUndefined();
  });

  it('calls arriving during a read wait for one next read, shared by all of them', async () => {
    const r = manualReader();
    const source = new WhitelistSource(r.read);
    const first = source.get();
    await tick();
    const late = [source.get(), source.get(), source.get()];
    await tick();
    expect(r.calls()).toBe(1);
    r.answer(text('^old$'));
    expect(exprs(await first)).toEqual(['^old$']);
    await tick();
    expect(r.calls()).toBe(2);
    r.answer(text('^new$'));
    for (const v of await Promise.all(late)) expect(exprs(v)).toEqual(['^new$']);
    expect(r.calls()).toBe(2);
  });

  it('a failed read keeps the last value; before any value it refuses with the reason', async () => {
    const r = manualReader();
    const source = new WhitelistSource(r.read);
    const failed = source.get();
    await tick();
    r.answer(new Error('connection refused'));
    expect(await failed).toEqual({ error: 'ConfigMap kruise-configuration could not be read: connection refused' });
    const ok = source.get();
    await tick();
    r.answer(text('^a$'));
    expect(exprs(await ok)).toEqual(['^a$']);
    const again = source.get();
    await tick();
    r.answer(new Error('timeout'));
    expect(exprs(await again)).toEqual(['^a$']);
  });
});

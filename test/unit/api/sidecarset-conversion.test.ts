import { describe, expect, it } from 'vitest';
import { convertSidecarSet, SIDECARSET_V1ALPHA1 as A, SIDECARSET_V1BETA1 as B } from '../../../src/api/sidecarset-conversion.js';
import { validateObject } from '../../../src/api/validate.js';

const CUSTOM = 'apps.kruise.io/sidecarset-custom-version';
const NS_LABEL = 'kubernetes.io/metadata.name';

/** Every field of the spec and status both versions share, each set (carried unchanged either way). */
const shared = {
  selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] },
  initContainers: [{ name: 'init', image: 'busybox:1', podInjectPolicy: 'BeforeAppContainer' }],
  containers: [
    {
      name: 'proxy',
      image: 'envoy:1',
      podInjectPolicy: 'AfterAppContainer',
      upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
      shareVolumePolicy: { type: 'enabled' },
      shareVolumeDevicePolicy: { type: 'disabled' },
      transferEnv: [
        { sourceContainerName: 'app', envName: 'A' },
        { sourceContainerNameFrom: { fieldRef: { fieldPath: 'metadata.labels[x]' } }, envNames: ['B'] },
      ],
      resourcesPolicy: {
        targetContainersMode: 'sum',
        targetContainersNameRegex: '^app$',
        resourcesExpr: { limits: { cpu: 'max(cpu*50%, 50m)', memory: '200Mi' }, requests: { cpu: '10m', memory: '20Mi' } },
      },
    },
  ],
  volumes: [{ name: 'v', emptyDir: {} }],
  updateStrategy: {
    type: 'RollingUpdate',
    paused: false,
    selector: { matchLabels: { canary: 'true' } },
    partition: '10%',
    maxUnavailable: 2,
    priorityStrategy: { weightPriority: [{ weight: 5, matchSelector: { matchLabels: { a: 'b' } } }] },
    scatterStrategy: [{ key: 'zone', value: 'z1' }],
  },
  injectionStrategy: { paused: true, revision: { customVersion: 'v1', revisionName: 'rev-1', policy: 'Partial' } },
  imagePullSecrets: [{ name: 'pull' }],
  revisionHistoryLimit: 3,
  patchPodMetadata: [{ annotations: { 'x/y': '1' }, patchPolicy: 'Overwrite' }],
};
const status = {
  observedGeneration: 4,
  matchedPods: 3,
  updatedPods: 2,
  readyPods: 3,
  updatedReadyPods: 2,
  latestRevision: 'rev-2',
  collisionCount: 1,
  conditions: [{ type: 'RolloutStuck', status: 'False' }],
};
const meta = { name: 'proxy', uid: 'u-1', resourceVersion: '7', generation: 4, annotations: { note: 'n' } };

const alpha = (spec: object, labels?: Record<string, string>) => ({
  apiVersion: A,
  kind: 'SidecarSet',
  metadata: { ...meta, ...(labels ? { labels } : {}) },
  spec: { ...shared, ...spec },
  status,
});
const beta = (spec: object, labels?: Record<string, string>) => ({ ...alpha(spec, labels), apiVersion: B });

const ok = (obj: unknown, to: string) => {
  const r = convertSidecarSet(obj, to);
  if (!r.ok) throw new Error(r.message);
  return r.object;
};

describe('SidecarSet conversion v1alpha1 -> v1beta1 (upstream v1.9 semantics)', () => {
  it.each([
    ['every shared field, no namespace nor custom version', alpha({}, { team: 'a' }), beta({}, { team: 'a' })],
    [
      'spec.namespace becomes a namespaceSelector on kubernetes.io/metadata.name',
      alpha({ namespace: 'prod' }),
      beta({ namespaceSelector: { matchLabels: { [NS_LABEL]: 'prod' } } }),
    ],
    [
      'spec.namespace wins over a namespaceSelector (the narrower scope), as upstream',
      alpha({ namespace: 'prod', namespaceSelector: { matchLabels: { env: 'x' } } }),
      beta({ namespaceSelector: { matchLabels: { [NS_LABEL]: 'prod' } } }),
    ],
    [
      'a namespaceSelector alone is kept',
      alpha({ namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'Exists' }] } }),
      beta({ namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'Exists' }] } }),
    ],
    ['an empty spec.namespace is dropped', alpha({ namespace: '' }), beta({})],
    [
      'the custom-version label moves to spec.customVersion, other labels stay',
      alpha({}, { [CUSTOM]: 'v2', team: 'a' }),
      beta({ customVersion: 'v2' }, { team: 'a' }),
    ],
    ['the custom-version label as the only label leaves no labels', alpha({}, { [CUSTOM]: 'v2' }), beta({ customVersion: 'v2' })],
    ['an empty custom-version label is dropped', alpha({}, { [CUSTOM]: '' }), beta({})],
  ])('%s', (_name, from, want) => {
    expect(ok(from, B)).toEqual(want);
  });

  it('does not touch its input', () => {
    const input = alpha({ namespace: 'prod' }, { [CUSTOM]: 'v2' });
    const copy = structuredClone(input);
    ok(input, B);
    expect(input).toEqual(copy);
  });
});

describe('SidecarSet conversion v1beta1 -> v1alpha1', () => {
  it.each([
    ['every shared field', beta({}, { team: 'a' }), alpha({}, { team: 'a' })],
    [
      'spec.customVersion becomes the label, beside the other labels',
      beta({ customVersion: 'v3' }, { team: 'a' }),
      alpha({}, { team: 'a', [CUSTOM]: 'v3' }),
    ],
    ['spec.customVersion on an object without labels', beta({ customVersion: 'v3' }), alpha({}, { [CUSTOM]: 'v3' })],
    ['spec.customVersion overrides a stale label', beta({ customVersion: 'v3' }, { [CUSTOM]: 'old' }), alpha({}, { [CUSTOM]: 'v3' })],
    [
      'a namespaceSelector stays a selector (upstream does not turn it back into spec.namespace)',
      beta({ namespaceSelector: { matchLabels: { [NS_LABEL]: 'prod' } } }),
      alpha({ namespaceSelector: { matchLabels: { [NS_LABEL]: 'prod' } } }),
    ],
  ])('%s', (_name, from, want) => {
    expect(ok(from, A)).toEqual(want);
  });
});

describe('round trips', () => {
  const betas = [
    beta({}),
    beta({ customVersion: 'v1' }, { team: 'a' }),
    beta({ namespaceSelector: { matchLabels: { [NS_LABEL]: 'prod' } }, customVersion: 'x' }),
    { apiVersion: B, kind: 'SidecarSet', metadata: { name: 'bare' }, spec: { selector: { matchLabels: { a: 'b' } } } },
  ];
  it.each(betas.map((b, i) => [i, b]))('v1beta1 -> v1alpha1 -> v1beta1 is the identity (#%s)', (_i, b) => {
    expect(ok(ok(b, A), B)).toEqual(b);
  });

  const alphas = [
    alpha({}),
    alpha({}, { [CUSTOM]: 'v1', team: 'a' }),
    alpha({ namespaceSelector: { matchLabels: { env: 'x' } } }, { [CUSTOM]: 'v9' }),
  ];
  it.each(alphas.map((a, i) => [i, a]))('v1alpha1 -> v1beta1 -> v1alpha1 is the identity without spec.namespace (#%s)', (_i, a) => {
    expect(ok(ok(a, B), A)).toEqual(a);
  });

  it('a spec.namespace comes back as the equivalent namespaceSelector', () => {
    expect(ok(ok(alpha({ namespace: 'prod' }), B), A)).toEqual(alpha({ namespaceSelector: { matchLabels: { [NS_LABEL]: 'prod' } } }));
  });

  it('the converted objects are valid at their version (schema check with servedIn)', () => {
    const issuesOf = (o: unknown) => validateObject(o).issues;
    expect(issuesOf(ok(alpha({ namespace: 'prod' }, { [CUSTOM]: 'v2' }), B))).toEqual([]);
    expect(issuesOf(ok(beta({ customVersion: 'v2' }), A))).toEqual([]);
    // And the fields of the other version are refused where they do not exist.
    expect(issuesOf(alpha({ customVersion: 'v2' })).map((i) => i.jsonPointer)).toContain('/spec/customVersion');
    expect(issuesOf(beta({ namespace: 'prod' })).map((i) => i.jsonPointer)).toContain('/spec/namespace');
  });

  it('an object already at the desired version is returned as it is', () => {
    const b = beta({ customVersion: 'v1' });
    expect(convertSidecarSet(b, B)).toEqual({ ok: true, object: b });
  });
});

describe('hostile input: a refusal naming the field, never a throw', () => {
  it.each([
    ['not an object', 'x', B, /object: must be a JSON object/],
    ['null', null, B, /object: must be a JSON object/],
    ['an array', [1], B, /object: must be a JSON object/],
    ['another kind', { apiVersion: A, kind: 'CloneSet' }, B, /object.kind: "CloneSet": only SidecarSet/],
    ['another group', { apiVersion: 'apps/v1', kind: 'SidecarSet' }, B, /object.apiVersion: "apps\/v1": must be one of/],
    ['a version not served', alpha({}), 'apps.kruise.io/v2', /desiredAPIVersion "apps.kruise.io\/v2": SidecarSet is served at/],
    ['a non-string desired version', alpha({}), 7 as unknown as string, /desiredAPIVersion 7/],
    ['metadata not an object', { ...alpha({}), metadata: 'm' }, B, /object.metadata: must be a JSON object/],
    ['labels not a map', { ...alpha({}), metadata: { labels: ['a'] } }, B, /object.metadata.labels: must be a map of strings/],
    [
      'a label not a string',
      { ...alpha({}), metadata: { labels: { [CUSTOM]: 5 } } },
      B,
      /metadata.labels\["apps.kruise.io\/sidecarset-custom-version"\]: must be a string/,
    ],
    ['spec not an object', { ...alpha({}), spec: 3 }, B, /object.spec: must be a JSON object/],
    ['spec.namespace not a string', alpha({ namespace: { a: 1 } }), B, /object.spec.namespace: must be a string/],
    ['spec.customVersion not a string', beta({ customVersion: ['x'] }), A, /object.spec.customVersion: must be a string/],
    ['namespaceSelector not an object', alpha({ namespaceSelector: 'all' }), B, /object.spec.namespaceSelector: must be a JSON object/],
  ])('%s', (_name, input, to, message) => {
    const r = convertSidecarSet(input, to);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toMatch(message);
  });

  it('quotes a huge value within a bounded message', () => {
    const r = convertSidecarSet(alpha({ namespace: { big: 'x'.repeat(1_000_000) } }), B);
    expect(!r.ok && r.message.length).toBeLessThan(400);
  });
});

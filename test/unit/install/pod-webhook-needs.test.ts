// The pod webhook's fail-safe layout: which pods the Fail entry's match condition covers (the app's SidecarSets,
// the runtime markers), the Ignore entry for the rest, the strict layout on request, and that no webhook of ours
// holds a core kind to Fail unconditionally. The conditions are evaluated by a real API server in
// test/e2e/pod-webhook-fail-safe.test.ts.
import { ApiObject, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { KruiseRuntime, PodWebhookFailClosed, type KruiseRuntimeProps } from '../../../constructs/kruise-runtime.js';
import { KRUISE_GROUPS } from '../../../src/contracts/index.js';
import { podNeedsWebhookExpression, selectorExpression, sidecarSetTargets } from '../../../src/install/pod-webhook-needs.js';
import { POD_WEBHOOK_BEST_EFFORT } from '../../../src/install/webhooks.js';

type Obj = Record<string, any>;

function synthWith(props: KruiseRuntimeProps, sets: Obj[]): Obj[] {
  const app = Testing.app();
  const runtime = new KruiseRuntime(app, 'kruise', props);
  const chart = new Chart(app, 'app');
  sets.forEach(
    (spec, i) =>
      new ApiObject(chart, `set${i}`, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: `set${i}` }, spec }),
  );
  return Testing.synth(runtime) as Obj[];
}

const podEntries = (docs: Obj[]) =>
  docs.find((d) => d.kind === 'MutatingWebhookConfiguration')!.webhooks.filter((w: Obj) => w.clientConfig.service.path === '/mutate-pod');

const logtail = {
  namespace: 'team-a',
  selector: { matchLabels: { app: 'web' } },
  containers: [{ name: 'logtail', image: 'busybox:1.36' }],
};

describe('pod webhook entries', () => {
  it('default: a Fail entry for the pods that need the runtime, then an Ignore entry for all others', () => {
    const [fail, ignore, ...rest] = podEntries(synthWith({}, [logtail]));
    expect(rest).toEqual([]);
    expect([fail.name, fail.failurePolicy, ignore.name, ignore.failurePolicy]).toEqual([
      'mpod.kb.io',
      'Fail',
      POD_WEBHOOK_BEST_EFFORT,
      'Ignore',
    ]);
    const needs = fail.matchConditions[0].expression as string;
    expect(fail.matchConditions).toEqual([{ name: 'needs-runtime', expression: needs }]);
    expect(ignore.matchConditions).toEqual([{ name: 'needs-no-runtime', expression: `!(${needs})` }]);
    // The app's SidecarSet, in its namespace only.
    expect(needs).toContain(
      '(request.namespace == "team-a" && ((has(object.metadata.labels) && "app" in object.metadata.labels) && object.metadata.labels["app"] in ["web"]))',
    );
    // Same rules, selector and service for both: only the failure policy and the condition differ.
    for (const key of ['rules', 'namespaceSelector', 'clientConfig', 'timeoutSeconds', 'reinvocationPolicy'])
      expect(ignore[key]).toEqual(fail[key]);
  });

  it('PodWebhookFailClosed.ALL_PODS: one Fail entry for every pod, as upstream registers it', () => {
    const entries = podEntries(synthWith({ podWebhookFailClosed: PodWebhookFailClosed.ALL_PODS }, [logtail]));
    expect(entries.map((w: Obj) => [w.name, w.failurePolicy, w.matchConditions])).toEqual([['mpod.kb.io', 'Fail', undefined]]);
  });

  it('refuses a podWebhookFailClosed that is not one of the enum values', () => {
    expect(() => synthWith({ podWebhookFailClosed: 'sometimes' as PodWebhookFailClosed }, [logtail])).toThrow(
      /podWebhookFailClosed must be PodWebhookFailClosed.NEEDED or PodWebhookFailClosed.ALL_PODS, got "sometimes"/,
    );
  });

  it('no webhook of ours holds a core kind to Fail without a condition (only Kruise kinds are Fail throughout)', () => {
    const docs = synthWith({}, [logtail]);
    const hooks = docs.filter((d) => /WebhookConfiguration$/.test(d.kind)).flatMap((d) => d.webhooks as Obj[]);
    const unconditionalCore = hooks.filter(
      (w) =>
        w.failurePolicy === 'Fail' &&
        !w.matchConditions &&
        w.rules.some((r: Obj) => r.apiGroups.some((g: string) => !KRUISE_GROUPS.has(g))),
    );
    expect(unconditionalCore.map((w) => w.name)).toEqual([]);
  });
});

describe('the needs expression', () => {
  it('covers the markers whatever the app holds, and one term per SidecarSet that can match a pod', () => {
    const bare = podNeedsWebhookExpression([]);
    expect(bare).toContain('"kruise.io/container-exit-priority" in object.metadata.annotations');
    expect(bare).toContain('"apps.kruise.io/container-launch-priority" in object.metadata.annotations');
    expect(bare).toContain('e.name == "KRUISE_CONTAINER_PRIORITY"');
    expect(bare).toContain('o.apiVersion.startsWith("apps.kruise.io/")');
    // Kruise's empty selector and an unknown operator match no pod: no term.
    expect(podNeedsWebhookExpression([{ name: 'empty', selector: {} }])).toBe(bare);
    expect(
      podNeedsWebhookExpression([{ name: 'odd', selector: { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] } }]),
    ).toBe(bare);
    // Two sets selecting the same pods: one term; no namespace: every namespace.
    const twice = podNeedsWebhookExpression([
      { name: 'a', selector: { matchLabels: { app: 'x' } } },
      { name: 'b', selector: { matchLabels: { app: 'x' } } },
    ]);
    expect(twice).toBe(`${bare} || (${selectorExpression({ matchLabels: { app: 'x' } })})`);
  });

  it('translates every selector operator', () => {
    expect(
      selectorExpression({
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['a', 'b'] },
          { key: 'canary', operator: 'NotIn', values: ['true'] },
          { key: 'team', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe(
      [
        '((has(object.metadata.labels) && "tier" in object.metadata.labels) && object.metadata.labels["tier"] in ["a", "b"])',
        '!((has(object.metadata.labels) && "canary" in object.metadata.labels) && object.metadata.labels["canary"] in ["true"])',
        '(has(object.metadata.labels) && "team" in object.metadata.labels)',
        '!(has(object.metadata.labels) && "legacy" in object.metadata.labels)',
      ].join(' && '),
    );
  });

  it('quotes hostile strings as CEL literals', () => {
    expect(selectorExpression({ matchLabels: { 'a"b': 'c\\d' } })).toBe(
      '((has(object.metadata.labels) && "a\\"b" in object.metadata.labels) && object.metadata.labels["a\\"b"] in ["c\\\\d"])',
    );
  });

  it('reads the SidecarSets of rendered objects (namespace, selector) and nothing else', () => {
    expect(
      sidecarSetTargets([
        { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 's' }, spec: logtail } as never,
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'SidecarSet',
          metadata: { name: 'all' },
          spec: { selector: { matchLabels: { a: 'b' } } },
        } as never,
        { apiVersion: 'example.com/v1', kind: 'SidecarSet', metadata: { name: 'other' }, spec: logtail } as never,
      ]),
    ).toEqual([
      { name: 's', namespace: 'team-a', selector: { matchLabels: { app: 'web' } } },
      { name: 'all', selector: { matchLabels: { a: 'b' } } },
    ]);
  });

  it("reads a v1beta1 SidecarSet's namespace from a selector on kubernetes.io/metadata.name alone (its v1alpha1 namespace)", () => {
    const beta = (name: string, namespaceSelector: unknown) =>
      ({
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name },
        spec: { selector: { matchLabels: { a: 'b' } }, namespaceSelector },
      }) as never;
    expect(
      sidecarSetTargets([
        beta('one', { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } }),
        beta('two-labels', { matchLabels: { 'kubernetes.io/metadata.name': 'team-a', env: 'x' } }),
        beta('expressions', { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' }, matchExpressions: [] }),
        beta('other-label', { matchLabels: { env: 'x' } }),
      ]),
    ).toEqual([
      { name: 'one', namespace: 'team-a', selector: { matchLabels: { a: 'b' } } },
      { name: 'two-labels', selector: { matchLabels: { a: 'b' } } },
      { name: 'expressions', selector: { matchLabels: { a: 'b' } } },
      { name: 'other-label', selector: { matchLabels: { a: 'b' } } },
    ]);
  });
});

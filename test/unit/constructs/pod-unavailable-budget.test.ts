// PodUnavailableBudget: what it renders (targetRef from a construct, selector, exactly one limit), the mistakes it
// refuses with the construct path, and what the KruiseRuntime of an app with one installs: the delete gate and the
// pod validating webhook entries (match condition on the covered pods), the update gate when asked.
import { Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { CloneSet, KruiseRuntime, PodUnavailableBudget } from '../../../constructs/index.js';
import { POD_VALIDATING_PATH } from '../../../src/contracts/index.js';

type Obj = Record<string, any>;
const percent = (n: number) => kplus.PercentOrAbsolute.percent(n);
const absolute = (n: number) => kplus.PercentOrAbsolute.absolute(n);
const budgets = (docs: Obj[]) => docs.filter((d) => d.kind === 'PodUnavailableBudget');

describe('PodUnavailableBudget', () => {
  it('forWorkload names the workload in targetRef, in its namespace; a selector budget renders the selector', () => {
    const chart = Testing.chart();
    const cs = new CloneSet(chart, 'web', { metadata: { namespace: 'shop' }, containers: [{ name: 'app', image: 'nginx:1.27' }] });
    const dep = new kplus.Deployment(chart, 'api', { containers: [{ image: 'nginx:1.27', portNumber: 80 }] });
    PodUnavailableBudget.forWorkload(cs, { maxUnavailable: percent(25) });
    new PodUnavailableBudget(chart, 'api-pub', { selector: kplus.LabelSelector.of({ labels: { app: 'api' } }), minAvailable: absolute(1) });
    PodUnavailableBudget.forWorkload(dep, { minAvailable: percent(50) });
    const all = budgets(Testing.synth(chart) as Obj[]);
    const a = all.find((d) => d.spec.targetRef?.kind === 'CloneSet')!;
    const b = all.find((d) => d.spec.selector)!;
    const c = all.find((d) => d.spec.targetRef?.kind === 'Deployment')!;
    expect(a).toMatchObject({
      apiVersion: 'policy.kruise.io/v1alpha1',
      metadata: { namespace: 'shop' },
      spec: { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: cs.name }, maxUnavailable: '25%' },
    });
    expect(b.spec).toEqual({ selector: { matchLabels: { app: 'api' } }, minAvailable: 1 });
    expect(c.spec).toEqual({ targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: dep.name }, minAvailable: '50%' });
  });

  it.each([
    [
      'both limits',
      (ch: Chart) =>
        PodUnavailableBudget.forWorkload(new kplus.Deployment(ch, 'd'), { maxUnavailable: absolute(1), minAvailable: absolute(1) }),
      /\[test\/d\/PodUnavailableBudget\] set exactly one of maxUnavailable and minAvailable, not both/,
    ],
    ['no limit', (ch: Chart) => PodUnavailableBudget.forWorkload(new kplus.Deployment(ch, 'd'), {}), /not neither/],
    [
      'a percentage above 100',
      (ch: Chart) => PodUnavailableBudget.forWorkload(new kplus.Deployment(ch, 'd'), { maxUnavailable: percent(150) }),
      /maxUnavailable: 150% is above 100%/,
    ],
    [
      'a negative count',
      (ch: Chart) => PodUnavailableBudget.forWorkload(new kplus.Deployment(ch, 'd'), { minAvailable: absolute(-1) }),
      /minAvailable: -1 is not a non-negative integer/,
    ],
    [
      'an empty selector',
      (ch: Chart) => new PodUnavailableBudget(ch, 'p', { selector: kplus.LabelSelector.of({}), maxUnavailable: absolute(1) }),
      /\[test\/p\] selector is empty: the budget would cover no pod/,
    ],
    [
      'neither workload nor selector',
      (ch: Chart) => new PodUnavailableBudget(ch, 'p', { maxUnavailable: absolute(1) }),
      /give either workload .* or selector, not neither/,
    ],
    [
      'a kind whose replicas are not counted',
      (ch: Chart) =>
        PodUnavailableBudget.forWorkload(new kplus.Job(ch, 'j', { containers: [{ image: 'x' }] }), { maxUnavailable: absolute(1) }),
      /workload test\/j is a Job; a budget's workload is one of Deployment, ReplicaSet, StatefulSet, CloneSet/,
    ],
    [
      'another namespace',
      (ch: Chart) =>
        new PodUnavailableBudget(ch, 'p', {
          workload: new kplus.Deployment(ch, 'd', { metadata: { namespace: 'a' } }),
          metadata: { namespace: 'b' },
          maxUnavailable: absolute(1),
        }),
      /must share a namespace/,
    ],
  ] as const)('refuses %s with the construct path', (_t, build, message) => {
    expect(() => build(Testing.chart())).toThrow(message);
  });

  it("the app's KruiseRuntime: delete gate and the /validate-pod entries; the update gate adds UPDATE", () => {
    for (const update of [false, true]) {
      const a = Testing.app();
      const runtime = new KruiseRuntime(a, 'kruise', update ? { featureGates: { PodUnavailableBudgetUpdateGate: true } } : {});
      const chart = new Chart(a, 'app');
      const cs = new CloneSet(chart, 'web', { containers: [{ name: 'app', image: 'nginx:1.27' }] });
      PodUnavailableBudget.forWorkload(cs, { maxUnavailable: absolute(1) });
      const docs = Testing.synth(runtime) as Obj[];
      const args: string[] = docs.find((d) => d.kind === 'Deployment')!.spec.template.spec.containers[0].args;
      expect(args.find((x) => x.startsWith('--feature-gates'))).toMatch(
        update ? /PodUnavailableBudgetDeleteGate=true.*PodUnavailableBudgetUpdateGate=true/ : /PodUnavailableBudgetDeleteGate=true/,
      );
      const hooks = docs
        .find((d) => d.kind === 'ValidatingWebhookConfiguration')!
        .webhooks.filter((w: Obj) => w.clientConfig.service.path === POD_VALIDATING_PATH);
      expect(hooks.map((w: Obj) => [w.name, w.failurePolicy, w.rules[0].operations])).toEqual([
        ['vpod.kb.io', 'Fail', update ? ['DELETE', 'UPDATE'] : ['DELETE']],
        ['vpodeviction.kb.io', 'Ignore', ['CREATE']],
      ]);
      expect(hooks[0].matchConditions[0].expression).toContain("'kruise.io/related-pub' in oldObject.metadata.annotations");
    }
  });

  it('an app without a budget registers no /validate-pod entry, unless the delete gate is forced on (budgets applied elsewhere)', () => {
    for (const forced of [false, true]) {
      const a = Testing.app();
      const runtime = new KruiseRuntime(a, 'kruise', forced ? { featureGates: { PodUnavailableBudgetDeleteGate: true } } : {});
      new CloneSet(new Chart(a, 'app'), 'web', { containers: [{ name: 'app', image: 'nginx:1.27' }] });
      const cfg = (Testing.synth(runtime) as Obj[]).find((d) => d.kind === 'ValidatingWebhookConfiguration')!;
      expect(cfg.webhooks.filter((w: Obj) => w.clientConfig.service.path === POD_VALIDATING_PATH)).toHaveLength(forced ? 2 : 0);
    }
  });
});

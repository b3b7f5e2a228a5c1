// DeletionProtection: the label it sets, the kinds and modes it refuses (with the construct path), and what the
// KruiseRuntime of an app that uses it installs: the gate and the deletion-protection webhook entries, narrowed by
// an object selector to the labelled objects.
import { ApiObject, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { CloneSet, DeletionProtection, DeletionProtectionMode, KruiseRuntime } from '../../../constructs/index.js';
import { DELETION_PROTECTION_PATH } from '../../../src/contracts/index.js';

type Obj = Record<string, any>;

function app(build: (chart: Chart) => void, featureGates?: Record<string, boolean>) {
  const a = Testing.app();
  const runtime = new KruiseRuntime(a, 'kruise', featureGates ? { featureGates } : {});
  const chart = new Chart(a, 'app');
  build(chart);
  return { a, runtime, chart };
}

const labelOf = (o: Obj) => o.metadata?.labels?.['policy.kruise.io/delete-protection'];

describe('DeletionProtection.of', () => {
  it('labels a cdk8s-plus resource, one of our constructs and a raw ApiObject', () => {
    const chart = Testing.chart();
    const ns = new kplus.Namespace(chart, 'ns');
    const svc = new kplus.Service(chart, 'svc', { ports: [{ port: 80 }] });
    const cs = new CloneSet(chart, 'cs', { containers: [{ name: 'app', image: 'nginx' }] });
    const crd = new ApiObject(chart, 'crd', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' });
    expect(DeletionProtection.of(ns, DeletionProtectionMode.CASCADING).mode).toBe('Cascading');
    DeletionProtection.of(svc, DeletionProtectionMode.ALWAYS);
    DeletionProtection.of(cs, DeletionProtectionMode.CASCADING);
    DeletionProtection.of(crd, DeletionProtectionMode.ALWAYS);
    const docs = Testing.synth(chart) as Obj[];
    expect(docs.filter((d) => labelOf(d)).map((d) => [d.kind, labelOf(d)])).toEqual([
      ['Namespace', 'Cascading'],
      ['Service', 'Always'],
      ['CloneSet', 'Cascading'],
      ['CustomResourceDefinition', 'Always'],
    ]);
  });

  it('refuses Cascading on a Service or an Ingress, naming the construct', () => {
    const chart = Testing.chart();
    const svc = new kplus.Service(chart, 'svc', { ports: [{ port: 80 }] });
    expect(() => DeletionProtection.of(svc, DeletionProtectionMode.CASCADING)).toThrow(
      /\[test\/svc\] deletion protection: policy.kruise.io\/delete-protection=Cascading is not honoured on a Service \(it takes only Always\).*use Always$/,
    );
    const ing = new kplus.Ingress(chart, 'ing');
    expect(() => DeletionProtection.of(ing, DeletionProtectionMode.CASCADING)).toThrow(/not honoured on a Ingress/);
  });

  it('refuses a kind no runtime protects, and a mode that is not one', () => {
    const chart = Testing.chart();
    const cm = new kplus.ConfigMap(chart, 'cm');
    expect(() => DeletionProtection.of(cm, DeletionProtectionMode.ALWAYS)).toThrow(
      /\[test\/cm\] deletion protection: a v1 ConfigMap cannot be protected \(no runtime checks its deletions\)/,
    );
    const ns = new kplus.Namespace(chart, 'ns');
    expect(() => DeletionProtection.of(ns, 'always' as DeletionProtectionMode)).toThrow(/mode "always" is neither Always nor Cascading/);
  });
});

describe('the install of an app that protects an object', () => {
  const entries = (docs: Obj[]) =>
    (docs.find((d) => d.kind === 'ValidatingWebhookConfiguration')?.webhooks ?? []).filter(
      (w: Obj) => w.clientConfig.service.path === DELETION_PROTECTION_PATH,
    );
  const gatesFlag = (docs: Obj[]) =>
    (docs.find((d) => d.kind === 'Deployment')!.spec.template.spec.containers[0].args as string[]).find((a) =>
      a.startsWith('--feature-gates='),
    );

  it('turns ResourcesDeletionProtection on and registers one Fail entry per protected kind, sent only labelled objects', () => {
    const { runtime } = app((c) => DeletionProtection.of(new kplus.Namespace(c, 'ns'), DeletionProtectionMode.CASCADING));
    const docs = Testing.synth(runtime) as Obj[];
    expect(gatesFlag(docs)).toContain('ResourcesDeletionProtection=true');
    const hooks = entries(docs);
    expect(hooks.map((w: Obj) => [w.name, w.rules[0].resources[0], w.objectSelector.matchExpressions[0].values])).toEqual([
      ['vdeletionprotection-namespace.kb.io', 'namespaces', ['Always', 'Cascading']],
      ['vdeletionprotection-customresourcedefinition.kb.io', 'customresourcedefinitions', ['Always', 'Cascading']],
      ['vdeletionprotection-deployment.kb.io', 'deployments', ['Always', 'Cascading']],
      ['vdeletionprotection-replicaset.kb.io', 'replicasets', ['Always', 'Cascading']],
      ['vdeletionprotection-statefulset.kb.io', 'statefulsets', ['Always', 'Cascading']],
      ['vdeletionprotection-cloneset.kb.io', 'clonesets', ['Always', 'Cascading']],
      ['vdeletionprotection-service.kb.io', 'services', ['Always']],
      ['vdeletionprotection-ingress.kb.io', 'ingresses', ['Always']],
    ]);
    for (const w of hooks) {
      expect(w.failurePolicy).toBe('Fail');
      expect(w.rules[0].operations).toEqual(['DELETE']);
      expect(w.objectSelector.matchExpressions[0]).toMatchObject({ key: 'policy.kruise.io/delete-protection', operator: 'In' });
      expect(w.namespaceSelector.matchExpressions[0].values).toEqual(['kruise-system', 'kube-system']);
    }
  });

  it('registers nothing for an app that protects nothing, and registers it when the gate is forced on', () => {
    const plain = Testing.synth(app(() => {}).runtime) as Obj[];
    expect(entries(plain)).toEqual([]);
    expect(gatesFlag(plain) ?? '').not.toContain('ResourcesDeletionProtection');
    const forced = Testing.synth(app(() => {}, { ResourcesDeletionProtection: true }).runtime) as Obj[];
    expect(entries(forced)).toHaveLength(8);
  });
});

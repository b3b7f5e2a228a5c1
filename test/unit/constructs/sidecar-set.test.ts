// SidecarSet under the bundled runtime: the native-sidecar opt-in (refused below Kubernetes 1.29 or with no
// known version) and HotUpgrade (carried out by the bundled runtime as by upstream: synthesized under both targets).
import { App, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import {
  KruiseApiVersion,
  KruiseApiVersions,
  KruiseRuntime,
  RuntimeTarget,
  SidecarSet,
  SidecarUpgradeStrategy,
  TargetContainersMode,
} from '../../../constructs/index.js';
import { validateObject } from '../../../src/api/validate.js';
import { KUBERNETES_VERSION_CONTEXT } from '../../../constructs/sidecar-strategy.js';

function app(version?: string): { app: App; chart: Chart } {
  const a = Testing.app();
  if (version !== undefined) a.node.setContext(KUBERNETES_VERSION_CONTEXT, version);
  return { app: a, chart: new Chart(a, 'app') };
}

function logtail(chart: Chart, extra: Partial<ConstructorParameters<typeof SidecarSet>[2]> = {}): SidecarSet {
  return new SidecarSet(chart, 'logtail', {
    selector: kplus.LabelSelector.of({ labels: { app: 'web' } }),
    containers: [{ name: 'logtail', image: 'logtail:1' }],
    ...extra,
  });
}

describe('SidecarSet nativeSidecars', () => {
  it('annotates the SidecarSet when the target is Kubernetes >= 1.29', () => {
    const { chart } = app('1.29');
    logtail(chart, { nativeSidecars: true });
    const [set] = Testing.synth(chart) as Array<Record<string, any>>;
    expect(set!.metadata.annotations).toEqual({ 'kruise.cdk8s.io/native-sidecars': 'true' });
  });

  it.each([
    ['1.28', /needs Kubernetes >= 1\.29, but the target is 1\.28/],
    [undefined, /needs Kubernetes >= 1\.29, but the target version is unknown/],
  ])('is refused for target %s, naming the construct and the fix', (version, message) => {
    const { chart } = app(version);
    logtail(chart, { nativeSidecars: true });
    expect(() => Testing.synth(chart)).toThrow(message);
    expect(() => Testing.synth(chart)).toThrow(/app\/logtail.*cdk8s-kruise:kubernetesVersion/);
  });
});

describe('SidecarSet HotUpgrade under the bundled runtime', () => {
  it('synthesizes under both targets with the upgrade strategy as written, and no runtime-support finding', () => {
    for (const target of [RuntimeTarget.BUNDLED, RuntimeTarget.OPENKRUISE]) {
      const a = Testing.app();
      new KruiseRuntime(a, 'kruise', { target });
      const chart = new Chart(a, 'app');
      logtail(chart, { containers: [{ name: 'envoy', image: 'envoy:1', upgradeStrategy: SidecarUpgradeStrategy.hotUpgrade('empty:1') }] });
      const set = (Testing.synth(chart) as Array<Record<string, any>>).find((o) => o.kind === 'SidecarSet')!;
      expect(set.spec.containers[0].upgradeStrategy, String(target)).toEqual({
        upgradeType: 'HotUpgrade',
        hotUpgradeEmptyImage: 'empty:1',
      });
      expect(() => a.synth()).not.toThrow();
    }
  });
});

describe('SidecarSet namespace scope', () => {
  const chartIn = (namespace?: string) => new Chart(Testing.app(), 'team', { namespace });
  const synthOne = (chart: Chart) => (Testing.synth(chart) as Array<Record<string, any>>)[0]!;

  it("injects only into the chart's namespace by default, and carries no metadata.namespace (cluster-scoped)", () => {
    const chart = chartIn('team-a');
    logtail(chart, { metadata: { name: 'logtail' } });
    const set = synthOne(chart);
    expect(set.spec.namespace).toBe('team-a');
    expect(set.metadata).toEqual({ name: 'logtail' });
  });

  it('allNamespaces: true selects every namespace even in a namespaced chart', () => {
    const chart = chartIn('team-a');
    logtail(chart, { allNamespaces: true });
    const set = synthOne(chart);
    expect(set.spec.namespace).toBeUndefined();
    expect(set.spec.namespaceSelector).toBeUndefined();
    expect(set.metadata.namespace).toBeUndefined();
  });

  it('an explicit namespace or namespaceSelector wins over the chart namespace', () => {
    const a = chartIn('team-a');
    logtail(a, { namespace: 'team-b' });
    expect(synthOne(a).spec.namespace).toBe('team-b');
    const b = chartIn('team-a');
    logtail(b, { namespaceSelector: kplus.LabelSelector.of({ labels: { team: 'b' } }) });
    expect(synthOne(b).spec).toMatchObject({ namespaceSelector: { matchLabels: { team: 'b' } } });
    expect(synthOne(b).spec.namespace).toBeUndefined();
  });

  it('a chart without a namespace keeps every namespace, as before', () => {
    const chart = chartIn(undefined);
    logtail(chart);
    const set = synthOne(chart);
    expect(set.spec.namespace).toBeUndefined();
    expect(set.metadata.namespace).toBeUndefined();
  });

  it('refuses two scopes at once, naming them', () => {
    expect(() => logtail(chartIn('team-a'), { allNamespaces: true, namespace: 'x' })).toThrow(
      /team\/logtail\] namespace and allNamespaces are mutually exclusive/,
    );
  });
});

describe('SidecarSet apiVersion', () => {
  const synth = (chart: Chart) => (Testing.synth(chart) as Array<Record<string, any>>)[0]!;

  it('emits v1alpha1 by default: the chart namespace as spec.namespace, customVersion as the label', () => {
    const a = Testing.app();
    const chart = new Chart(a, 'app', { namespace: 'prod' });
    logtail(chart, { customVersion: 'v7' });
    const set = synth(chart);
    expect(set.apiVersion).toBe('apps.kruise.io/v1alpha1');
    expect(set.spec.namespace).toBe('prod');
    expect(set.spec.customVersion).toBeUndefined();
    expect(set.metadata.labels).toEqual({ 'apps.kruise.io/sidecarset-custom-version': 'v7' });
  });

  it('emits v1beta1 on request, shaped as upstream converts: a namespaceSelector, spec.customVersion', () => {
    const a = Testing.app();
    const chart = new Chart(a, 'app', { namespace: 'prod' });
    logtail(chart, { customVersion: 'v7', apiVersion: KruiseApiVersion.V1BETA1 });
    const set = synth(chart);
    expect(set.apiVersion).toBe('apps.kruise.io/v1beta1');
    expect(set.spec.namespace).toBeUndefined();
    expect(set.spec.namespaceSelector).toEqual({ matchLabels: { 'kubernetes.io/metadata.name': 'prod' } });
    expect(set.spec.customVersion).toBe('v7');
    expect(set.metadata.labels).toBeUndefined();
    expect(validateObject(set).issues).toEqual([]);
  });

  it('follows the app-level choice (KruiseApiVersions.emitIn)', () => {
    const a = Testing.app();
    KruiseApiVersions.emitIn(a, KruiseApiVersion.V1BETA1);
    const chart = new Chart(a, 'app');
    logtail(chart);
    expect(synth(chart).apiVersion).toBe('apps.kruise.io/v1beta1');
  });

  it('refuses the v1alpha1 custom-version label at v1beta1, and an empty customVersion', () => {
    const { chart } = app();
    expect(() =>
      logtail(chart, {
        apiVersion: KruiseApiVersion.V1BETA1,
        metadata: { labels: { 'apps.kruise.io/sidecarset-custom-version': 'v1' } },
      }),
    ).toThrow(/app\/logtail.*at v1beta1 it is spec.customVersion: use the customVersion prop/);
    expect(() => logtail(app().chart, { customVersion: '' })).toThrow(/customVersion must be a non-empty string/);
  });
});

describe('SidecarSet resourcesPolicy', () => {
  const policy = { mode: TargetContainersMode.MAX, targetContainersNameRegex: '^app', limits: { cpu: 'max(cpu*50%, 50m)' } };

  it('emits the policy and no resources (cdk8s-plus defaults left out), valid under both API versions', () => {
    for (const apiVersion of [undefined, KruiseApiVersion.V1BETA1]) {
      const { chart } = app();
      logtail(chart, { containers: [{ name: 'envoy', image: 'envoy:1', resourcesPolicy: policy }], ...(apiVersion ? { apiVersion } : {}) });
      const [set] = Testing.synth(chart) as Array<Record<string, any>>;
      const c = set!.spec.containers[0];
      expect(c.resources).toBeUndefined();
      expect(c.resourcesPolicy).toEqual({
        targetContainersMode: 'max',
        targetContainersNameRegex: '^app',
        resourcesExpr: { limits: { cpu: 'max(cpu*50%, 50m)' } },
      });
      expect(validateObject(set).issues).toEqual([]);
    }
  });

  it.each([
    [
      { ...policy, limits: { cpu: 'cpu * cpu' } },
      {},
      /resourcesPolicy.resourcesExpr.limits.cpu: invalid expression: a quantity cannot be multiplied by a quantity/,
    ],
    [{ ...policy, targetContainersNameRegex: '(' }, {}, /targetContainersNameRegex: invalid regex pattern/],
    [{ mode: TargetContainersMode.SUM }, {}, /at least one of limits or requests must be configured/],
    [policy, { resources: { cpu: { request: kplus.Cpu.millis(100) } } }, /resourcesPolicy and resources cannot be configured together/],
  ])('refuses a bad policy eagerly (case %#)', (p, extra, message) => {
    const { chart } = app();
    expect(() => logtail(chart, { containers: [{ name: 'envoy', image: 'envoy:1', resourcesPolicy: p, ...extra }] })).toThrow(message);
  });
});

// SidecarSet under the bundled runtime: the native-sidecar opt-in (refused below Kubernetes 1.29 or with no
// known version) and HotUpgrade (carried out by the bundled runtime as by upstream: synthesized under both targets).
import { App, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { KruiseRuntime, RuntimeTarget, SidecarSet, SidecarUpgradeStrategy } from '../../../constructs/index.js';
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

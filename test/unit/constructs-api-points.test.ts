// Construct API behaviours users hit from TypeScript and plain JavaScript: KruiseRuntime in any chart order,
// clear errors (not TypeErrors) for missing or mistyped props, percent values rendered as "50%".
import { App, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { CloneSet, CloneSetUpdateStrategy, KruiseRuntime, SidecarSet, SidecarSetUpdateStrategy } from '../../constructs/index.js';

describe('KruiseRuntime', () => {
  it('works whichever chart is created first, and still refuses a second runtime', () => {
    const app = new App();
    const chart = new Chart(app, 'first');
    const runtime = new KruiseRuntime(app, 'kruise');
    expect(KruiseRuntime.isKruiseRuntime(runtime)).toBe(true);
    expect(KruiseRuntime.isKruiseRuntime(chart)).toBe(false);
    expect(() => new KruiseRuntime(app, 'again')).toThrow(/the app already has a KruiseRuntime at kruise/);
  });
});

describe('errors from plain JavaScript', () => {
  it('a SidecarSet without a selector gets the construct error, not a TypeError', () => {
    const chart = Testing.chart();
    const make = () => new SidecarSet(chart, 'logs', { containers: [{ name: 'x', image: 'busybox:1.36' }] } as never);
    expect(make).toThrow(/\[test\/logs\] SidecarSet needs a selector .* but got none\. Fix: selector: LabelSelector\.of/);
    expect(make).not.toThrow(TypeError);
  });

  it('a mistyped percent value names what was expected and what was given', () => {
    expect(() => CloneSetUpdateStrategy.inPlaceIfPossible({ maxUnavailable: { half: true } as never })).toThrow(
      'CloneSetUpdateStrategy: maxUnavailable: expected PercentOrAbsolute.percent(N) or PercentOrAbsolute.absolute(N) (or, from JavaScript, a non-negative integer or a string like "50%"), but got {"half":true}.',
    );
    expect(() => SidecarSetUpdateStrategy.rollingUpdate({ maxUnavailable: '0%' as never })).toThrow(/must not be 0/);
  });
});

describe('percent values', () => {
  it('render as "50%" from PercentOrAbsolute and from a plain string', () => {
    const chart = Testing.chart();
    new CloneSet(chart, 'a', {
      containers: [{ image: 'nginx:1.27' }],
      updateStrategy: CloneSetUpdateStrategy.inPlaceIfPossible({ maxUnavailable: kplus.PercentOrAbsolute.percent(50), partition: '20%' as never }),
    });
    const [cloneSet] = Testing.synth(chart);
    expect(cloneSet.spec.updateStrategy).toMatchObject({ maxUnavailable: '50%', partition: '20%' });
  });
});

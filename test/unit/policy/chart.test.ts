// validateChart: the findings of a chart's rendered objects, each naming the construct path of its resource, and
// errorsOf, the one-liner a test asserts "no errors" with while notes and warnings stay allowed.
import { ApiObject, App, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { KruiseRuntime, SidecarSet } from '../../../constructs/index.js';
import { errorsOf, validateChart, validateManifests } from '../../../src/index.js';

function brokenCloneSet(scope: Chart, id: string): ApiObject {
  return new ApiObject(scope, id, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', spec: { replicas: 'two' } });
}

describe('validateChart', () => {
  it('names the construct path of the resource in each finding, where validateManifests has only its hashed name', () => {
    const chart = new Chart(Testing.app(), 'my-app', { namespace: 'team-a' });
    brokenCloneSet(chart, 'web');
    const plain = validateManifests(Testing.synth(chart)).filter((f) => f.ruleId === 'KRUISE-SCHEMA-001');
    expect(plain.length).toBeGreaterThan(0);
    expect(plain.every((f) => f.constructPath === undefined && /^my-app-web-c[0-9a-f]+$/.test(f.resource.name))).toBe(true);
    const found = validateChart(chart).filter((f) => f.ruleId === 'KRUISE-SCHEMA-001');
    expect(found.map((f) => f.constructPath)).toEqual(plain.map(() => 'my-app/web'));
    expect(found.map(({ constructPath: _, ...rest }) => rest)).toEqual(plain);
  });

  it('errorsOf keeps only errors: a chart with only notes passes `toEqual([])`, a broken one shows its errors', () => {
    const app = Testing.app();
    new KruiseRuntime(app, 'kruise');
    const chart = new Chart(app, 'web');
    new SidecarSet(chart, 'logtail', {
      selector: kplus.LabelSelector.of({ labels: { app: 'web' } }),
      containers: [{ name: 'logtail', image: 'example.io/logtail:1.0.0' }],
    });
    const all = validateChart(app);
    expect(all.length).toBeGreaterThan(0);
    expect(all.some((f) => f.severity !== 'error')).toBe(true);
    expect(errorsOf(all)).toEqual([]);
    brokenCloneSet(chart, 'broken');
    const errors = errorsOf(validateChart(chart));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((f) => f.severity === 'error' && f.constructPath === 'web/broken')).toBe(true);
  });

  it('given an App, validates every chart together (nested charts included) and names paths in each', () => {
    const app = new App({ outdir: Testing.app().outdir });
    const outer = new Chart(app, 'outer');
    const inner = new Chart(outer, 'inner');
    brokenCloneSet(outer, 'a');
    brokenCloneSet(inner, 'b');
    const paths = new Set(errorsOf(validateChart(app)).map((f) => f.constructPath));
    expect(paths).toEqual(new Set(['outer/a', 'outer/inner/b']));
    expect(new Set(errorsOf(validateChart(outer)).map((f) => f.constructPath))).toEqual(paths);
  });

  it('leaves the path out when two objects of one kind share a name in one namespace (it cannot tell them apart)', () => {
    const app = Testing.app();
    const one = new Chart(app, 'one');
    const two = new Chart(app, 'two');
    for (const c of [one, two])
      new ApiObject(c, 'same', {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'same' },
        spec: { replicas: 'two' },
      });
    const errors = errorsOf(validateChart(app));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((f) => f.constructPath === undefined)).toBe(true);
  });

  it('refuses what is not a construct, or a construct with no chart, with a clear error', () => {
    expect(() => validateChart({} as never)).toThrow(/needs a cdk8s Chart or App/);
    expect(() => validateChart((() => []) as never)).toThrow(/needs a cdk8s Chart or App/);
    expect(() => validateChart(new App({ outdir: Testing.app().outdir }))).toThrow(/holds no cdk8s Chart/);
  });
});

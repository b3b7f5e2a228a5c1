import { describe, expect, it } from 'vitest';
import { AppFeature, FEATURES } from '../../../src/contracts/features.js';
import type { FeatureUse } from '../../../src/install/app-features.js';
import { runtimeSupport, type TargetRuntime } from '../../../src/install/runtime-support.js';

function use(feature: AppFeature): FeatureUse {
  return {
    feature,
    resource: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', namespace: 'default', path: 'app/web' },
    pointer: '',
  };
}

describe('runtime-support advice comes from the feature table', () => {
  const rows: Array<{ feature: AppFeature; target: TargetRuntime; expect: 'none' | RegExp; not?: RegExp }> = [
    { feature: AppFeature.SIDECAR_TERMINATOR_KILL, target: 'bundled', expect: 'none' },
    { feature: AppFeature.SIDECAR_TERMINATOR_KILL, target: 'upstream', expect: 'none' },
    // The bundled runtime runs the CloneSet controller: a CloneSet needs no advice under either target.
    { feature: AppFeature.CLONESET, target: 'bundled', expect: 'none' },
    { feature: AppFeature.CLONESET, target: 'upstream', expect: 'none' },
    // The bundled runtime runs the BroadcastJob controller: no advice under either target.
    { feature: AppFeature.BROADCAST_JOB, target: 'bundled', expect: 'none' },
    { feature: AppFeature.BROADCAST_JOB, target: 'upstream', expect: 'none' },
    // The bundled runtime injects SidecarSets (pod webhook) and upgrades them (SidecarSet controller).
    { feature: AppFeature.SIDECARSET, target: 'bundled', expect: 'none' },
    // Exit priority: the bundled runtime carries it out (pod webhook + daemon); upstream never shipped it, so
    // its advice names the bundled runtime or the native-sidecar compile target, never openkruise.
    { feature: AppFeature.CONTAINER_EXIT_PRIORITY, target: 'bundled', expect: 'none' },
    {
      feature: AppFeature.CONTAINER_EXIT_PRIORITY,
      target: 'upstream',
      expect: /upstream OpenKruise does not carry out\. Use target bundled.*native sidecars/,
      not: /No runtime carries it out/,
    },
  ];
  for (const row of rows) {
    it(`${row.feature} under ${row.target}`, () => {
      const { errors, warnings } = runtimeSupport([use(row.feature)], row.target);
      const all = [...errors, ...warnings];
      if (row.expect === 'none') {
        expect(all).toEqual([]);
        return;
      }
      expect(all).toHaveLength(1);
      expect(all[0]).toMatch(row.expect);
      if (row.not) expect(all[0]).not.toMatch(row.not);
      // bundled: warnings (the manifests are valid); upstream: errors (upstream refuses or ignores them)
      expect(row.target === 'bundled' ? warnings : errors).toHaveLength(1);
    });
  }

  it('every advice names only a runtime that carries the feature out', () => {
    for (const feature of Object.values(AppFeature)) {
      for (const target of ['bundled', 'upstream'] as const) {
        const [message] = [...runtimeSupport([use(feature)], target).errors, ...runtimeSupport([use(feature)], target).warnings];
        if (!message) continue;
        if (/Use target openkruise/.test(message)) expect(FEATURES[feature].carriedOutBy.upstream, feature).toBe(true);
        if (/Use target bundled/.test(message)) expect(FEATURES[feature].carriedOutBy.bundled, feature).toBe(true);
      }
    }
  });
});

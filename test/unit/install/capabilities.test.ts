import { describe, expect, it } from 'vitest';
import {
  CAPABILITIES_API_VERSION,
  CAPABILITIES_CONFIGMAP,
  CAPABILITIES_KEY,
  CapabilitiesError,
  capabilitiesInManifests,
  capabilitiesJson,
  capabilityErrors,
  featuresCarriedOut,
  MAX_CAPABILITIES_BYTES,
  parseCapabilities,
  type RuntimeCapabilities,
} from '../../../src/install/capabilities.js';
import { AppFeature } from '../../../src/contracts/features.js';
import type { FeatureUse } from '../../../src/install/app-features.js';

const base: RuntimeCapabilities = {
  apiVersion: CAPABILITIES_API_VERSION,
  kind: 'RuntimeCapabilities',
  runtime: 'bundled',
  version: '0.1.0',
  namespace: 'kruise-system',
  featureGates: { KruiseDaemon: true, SidecarTerminator: false, PodWebhook: true, ImagePullJobGate: false },
  daemon: true,
  podWebhook: false,
  servedKinds: ['apps.kruise.io/v1alpha1/CloneSet'],
  features: [],
};
const text = (o: unknown) => JSON.stringify(o);
const parse = (o: unknown) => parseCapabilities(text(o), 'caps.json');

describe('capabilities document', () => {
  it('round-trips through its JSON form', () => {
    expect(parseCapabilities(capabilitiesJson(base), 'x')).toEqual(base);
  });

  it.each([
    ['not JSON', '{', /caps\.json: not valid JSON/],
    ['an array', '[]', /must be a JSON object/],
    [
      'another version',
      text({ ...base, apiVersion: 'kruise.cdk8s.io/v9' }),
      /apiVersion\/kind must be kruise\.cdk8s\.io\/v1alpha1\/RuntimeCapabilities/,
    ],
    ['an unknown field', text({ ...base, extra: 1 }), /unknown field\(s\) "extra"/],
    ['a missing field', text({ ...base, daemon: undefined }), /missing field "daemon"/],
    ['a bad runtime', text({ ...base, runtime: 'kubevela' }), /runtime must be "bundled" or "upstream", got "kubevela"/],
    ['a gate with a prototype name', '{"featureGates":{"__proto__":true}}', /unknown field|apiVersion/],
    ['a prototype gate', text({ ...base, featureGates: JSON.parse('{"__proto__": true}') }), /"__proto__" is not a gate name/],
    [
      'a non-boolean gate',
      text({ ...base, featureGates: { PodWebhook: 'yes' } }),
      /featureGates\.PodWebhook must be true or false, got "yes"/,
    ],
    ['a malformed kind', text({ ...base, servedKinds: ['CloneSet'] }), /servedKinds: "CloneSet" is not a kind as group\/version\/Kind/],
    ['a bad namespace', text({ ...base, namespace: 'Kruise_System' }), /namespace must be a namespace name/],
    ['too many kinds', text({ ...base, servedKinds: Array(600).fill('a/v1/B') }), /servedKinds has 600 entries/],
  ])('refuses %s, naming the source', (_what, input, message) => {
    expect(() => parseCapabilities(input, 'caps.json')).toThrow(CapabilitiesError);
    expect(() => parseCapabilities(input, 'caps.json')).toThrow(message);
  });

  it('refuses an oversized document before parsing it', () => {
    expect(() => parseCapabilities(' '.repeat(MAX_CAPABILITIES_BYTES + 1), 'big.json')).toThrow(/more than the 262144 accepted/);
  });

  it('quotes hostile values with a budget and no control characters', () => {
    const e = (() => {
      try {
        parse({ ...base, version: `\u001b[31m${'x'.repeat(10_000)}` });
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    })();
    expect(e.length).toBeLessThan(400);
    expect(e).not.toContain('\u001b');
  });

  it('finds the ConfigMap among manifests, and refuses two different ones', () => {
    const cm = (caps: RuntimeCapabilities) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: CAPABILITIES_CONFIGMAP, namespace: 'kruise-system' },
      data: { [CAPABILITIES_KEY]: capabilitiesJson(caps) },
    });
    expect(capabilitiesInManifests([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }], 'dist')).toBeUndefined();
    expect(capabilitiesInManifests([cm(base), cm(base)], 'dist')).toEqual(base);
    expect(() => capabilitiesInManifests([cm(base), cm({ ...base, daemon: false })], 'dist')).toThrow(
      /2 different kruise-runtime-capabilities/,
    );
    expect(() => capabilitiesInManifests([{ ...cm(base), data: { [CAPABILITIES_KEY]: 3 } }], 'dist')).toThrow(/no string data/);
  });

  it('lists the features whose gates, daemon and webhook are there', () => {
    const features = featuresCarriedOut(base);
    expect(features).toContain(AppFeature.CONTAINER_RECREATE_REQUEST);
    expect(features).toContain(AppFeature.CLONESET);
    expect(features).not.toContain(AppFeature.SIDECAR_TERMINATOR_KILL); // gate off
    expect(features).not.toContain(AppFeature.SIDECARSET); // no pod webhook
    expect(features).not.toContain(AppFeature.WORKLOAD_SPREAD); // the bundled runtime does not carry it out
  });
});

describe('checking an app against capabilities', () => {
  const resource = { apiVersion: 'batch/v1', kind: 'Job', name: 'migrate', namespace: 'team-a', path: 'team-a/migrate' };
  const use = (feature: AppFeature): FeatureUse => ({ feature, resource, pointer: '/spec/template/spec/containers/1/env/0' });

  it('names the resource, feature, missing gate and the fix', () => {
    const [error, ...rest] = capabilityErrors([use(AppFeature.SIDECAR_TERMINATOR_KILL)], [], base, 'platform/dist');
    expect(rest).toEqual([]);
    expect(error).toContain(
      'Job team-a/migrate (team-a/migrate) uses job sidecar termination (kill) at /spec/template/spec/containers/1/env/0',
    );
    expect(error).toContain("in the platform's runtime (bundled 0.1.0, from platform/dist) feature gate SidecarTerminator is off");
    expect(error).toContain(
      "Add AppFeature.SIDECAR_TERMINATOR_KILL to the platform KruiseRuntime's `features` (or featureGates { SidecarTerminator: true, KruiseDaemon: true })",
    );
    expect(error).toContain('refresh platform/dist');
  });

  it('names a missing daemon or pod webhook', () => {
    const [e1] = capabilityErrors([use(AppFeature.SIDECARSET)], [], base, 's');
    expect(e1).toContain('the pod webhook is not registered');
    const [e2] = capabilityErrors([use(AppFeature.CONTAINER_RECREATE_REQUEST)], [], { ...base, daemon: false }, 's');
    expect(e2).toContain('no node daemon runs');
    expect(capabilityErrors([use(AppFeature.CONTAINER_RECREATE_REQUEST)], [], base, 's')).toEqual([]);
  });

  it('refuses a Kruise kind the runtime does not serve', () => {
    const objects = [{ object: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'log' } }, path: 'a/log' }];
    expect(capabilityErrors([], objects, base, 's')).toEqual([
      expect.stringContaining("SidecarSet log (a/log) is a apps.kruise.io/v1alpha1/SidecarSet, which the platform's runtime"),
    ]);
    const clone = [{ object: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'web' } } }];
    expect(capabilityErrors([], clone, base, 's')).toEqual([]);
  });
});

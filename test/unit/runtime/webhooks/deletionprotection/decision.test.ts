// Deletion protection's pure half: what the object alone decides, what must be counted first, and the verdict on the
// counts; upstream v1.9's rules per kind and mode.
import { describe, expect, it } from 'vitest';
import { DELETION_PROTECTED_KINDS, DELETION_PROTECTION_REFUSAL } from '../../../../../src/contracts/index.js';
import type { KubeObject } from '../../../../../src/runtime/core/types.js';
import {
  customResourceListOf,
  firstLook,
  isActivePod,
  isBoundClaim,
  judgeCounts,
  protectedKindOf,
} from '../../../../../src/runtime/webhooks/deletionprotection/decision.js';

const LABEL = 'policy.kruise.io/delete-protection';

function object(kind: string, value?: string, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind,
    metadata: { name: 'x', ...(value !== undefined ? { labels: { [LABEL]: value } } : {}), ...(extra.metadata ?? {}) },
    ...(extra.spec ? { spec: extra.spec } : {}),
    ...(extra.status ? { status: extra.status } : {}),
  } as KubeObject;
}

const kind = (group: string, k: string) => protectedKindOf(group, k)!;

describe('deletion protection: the first look', () => {
  it.each([
    // [group, kind, label, spec, expected]
    ['apps', 'Deployment', 'Always', { replicas: 0 }, 'refused'],
    ['apps', 'Deployment', 'Cascading', { replicas: 2 }, 'refused'],
    ['apps', 'Deployment', 'Cascading', { replicas: 0 }, 'allowed'],
    ['apps', 'ReplicaSet', 'Cascading', { replicas: 1 }, 'refused'],
    ['apps', 'StatefulSet', 'Cascading', { replicas: 3 }, 'refused'],
    ['apps.kruise.io', 'CloneSet', 'Cascading', { replicas: 2 }, 'refused'],
    ['apps.kruise.io', 'CloneSet', 'Cascading', {}, 'allowed'],
    ['apps', 'Deployment', 'always', { replicas: 2 }, 'allowed'],
    ['apps', 'Deployment', undefined, { replicas: 2 }, 'allowed'],
    ['', 'Service', 'Always', {}, 'refused'],
    // Services and Ingresses take only Always: Cascading is as if unlabelled, as upstream.
    ['', 'Service', 'Cascading', {}, 'allowed'],
    ['networking.k8s.io', 'Ingress', 'Always', {}, 'refused'],
    ['networking.k8s.io', 'Ingress', 'Cascading', {}, 'allowed'],
    ['', 'Namespace', 'Always', {}, 'refused'],
  ] as const)('%s %s labelled %s with spec %j: %s', (group, k, value, spec, expected) => {
    const look = firstLook(kind(group, k), object(k, value, { spec }), false);
    expect('count' in look).toBe(false);
    expect((look as { allowed: boolean }).allowed).toBe(expected === 'allowed');
    if (expected === 'refused')
      expect((look as { message: string }).message).toContain(`${DELETION_PROTECTION_REFUSAL} for ${LABEL}=${value}`);
  });

  it('names the replicas in a Cascading refusal, as upstream words it', () => {
    expect(firstLook(kind('apps', 'Deployment'), object('Deployment', 'Cascading', { spec: { replicas: 2 } }), false)).toEqual({
      allowed: false,
      message: 'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 2>0',
    });
  });

  it('lets an object already being deleted go, whatever its label', () => {
    const o = object('Deployment', 'Always', {
      metadata: { name: 'x', deletionTimestamp: '2026-01-01T00:00:00Z', labels: { [LABEL]: 'Always' } },
    });
    expect(firstLook(kind('apps', 'Deployment'), o, false)).toEqual({ allowed: true });
  });

  it('a Cascading namespace is counted: its pods and claims', () => {
    expect(firstLook(kind('', 'Namespace'), object('Namespace', 'Cascading'), false)).toEqual({
      count: 'namespace-contents',
      namespace: 'x',
    });
  });

  const widgets = {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [
      { name: 'v1beta1', served: true, storage: false },
      { name: 'v1', served: true, storage: true },
    ],
  };

  it('a Cascading CRD is counted at its storage version, only with DeletionProtectionForCRDCascadingGate', () => {
    const crd = object('CustomResourceDefinition', 'Cascading', { spec: widgets });
    const p = kind('apiextensions.k8s.io', 'CustomResourceDefinition');
    expect(firstLook(p, crd, true)).toEqual({
      count: 'custom-resources',
      list: { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true },
    });
    const off = firstLook(p, crd, false) as { allowed: boolean; message: string };
    expect(off.allowed).toBe(false);
    expect(off.message).toMatch(/feature gate DeletionProtectionForCRDCascadingGate is not enabled/);
  });

  it('a CRD without a storage version cannot be counted and is refused under Cascading', () => {
    const crd = object('CustomResourceDefinition', 'Cascading', { spec: { ...widgets, versions: [{ name: 'v1', storage: false }] } });
    expect(customResourceListOf(crd)).toBeUndefined();
    expect((firstLook(kind('apiextensions.k8s.io', 'CustomResourceDefinition'), crd, true) as { allowed: boolean }).allowed).toBe(false);
  });

  it('answers only the kinds the bundled runtime serves (upstream also protects Advanced StatefulSet and UnitedDeployment)', () => {
    expect(protectedKindOf('apps.kruise.io', 'StatefulSet')).toBeUndefined();
    expect(protectedKindOf('apps.kruise.io', 'UnitedDeployment')).toBeUndefined();
    expect(protectedKindOf('', 'ConfigMap')).toBeUndefined();
    expect(DELETION_PROTECTED_KINDS.filter((p) => p.bundled).map((p) => p.kind)).toEqual([
      'Namespace',
      'CustomResourceDefinition',
      'Deployment',
      'ReplicaSet',
      'StatefulSet',
      'CloneSet',
      'Service',
      'Ingress',
    ]);
  });
});

describe('deletion protection: the counts', () => {
  it.each([
    [{ activePods: 1, boundClaims: 0 }, 'active pods 1>0'],
    [{ activePods: 0, boundClaims: 2 }, '"Bound" status pvc 2>0'],
    [{ activeCustomResources: 3 }, 'active CRs 3>0'],
  ])('%j is refused (%s)', (counts, why) => {
    expect(judgeCounts(counts)).toEqual({
      allowed: false,
      message: `forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and ${why}`,
    });
  });

  it('nothing left: allowed', () => {
    expect(judgeCounts({ activePods: 0, boundClaims: 0 })).toEqual({ allowed: true });
    expect(judgeCounts({ activeCustomResources: 0 })).toEqual({ allowed: true });
  });

  it.each([
    [{ phase: 'Running' }, undefined, true],
    [{ phase: 'Pending' }, undefined, true],
    [{ phase: 'Succeeded' }, undefined, false],
    [{ phase: 'Failed' }, undefined, false],
    [{ phase: 'Running' }, '2026-01-01T00:00:00Z', false],
  ])('a pod with status %j and deletionTimestamp %s is active: %s', (status, deletionTimestamp, active) => {
    expect(
      isActivePod(object('Pod', undefined, { status, metadata: { name: 'p', ...(deletionTimestamp ? { deletionTimestamp } : {}) } })),
    ).toBe(active);
  });

  it.each([
    [{ phase: 'Bound' }, true],
    [{ phase: 'Pending' }, false],
    [{ phase: 'Lost' }, false],
  ])('a claim with status %j holds a volume: %s', (status, bound) => {
    expect(isBoundClaim(object('PersistentVolumeClaim', undefined, { status }))).toBe(bound);
  });
});

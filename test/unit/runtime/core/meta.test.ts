import { describe, expect, it } from 'vitest';
import { KRUISE_API_VERSION } from '../../../../src/contracts/index.js';
import {
  controllerOf,
  kruiseControllerKey,
  kruiseControllerOf,
  kruiseOwnerReference,
  ownedBy,
  ownerOfKind,
  ownerReference,
  podOwnerReference,
  rfc3339,
} from '../../../../src/runtime/core/meta.js';
import type { KubeObject } from '../../../../src/runtime/core/types.js';

const set: KubeObject = { metadata: { name: 'logs', uid: 'u-1' } };

describe('runtime core meta', () => {
  it('rfc3339 writes whole seconds, as metav1.Time serializes', () => {
    expect(rfc3339(Date.UTC(2026, 10, 27, 7, 5, 9, 987))).toBe('2026-11-27T07:05:09Z');
    expect(rfc3339(0)).toBe('1970-01-01T00:00:00Z');
    expect(rfc3339()).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  it('an owner reference carries only the options given', () => {
    expect(ownerReference(set, 'v1', 'ConfigMap')).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', name: 'logs', uid: 'u-1' });
    expect(kruiseOwnerReference(set, 'SidecarSet', { controller: true })).toEqual({
      apiVersion: KRUISE_API_VERSION,
      kind: 'SidecarSet',
      name: 'logs',
      uid: 'u-1',
      controller: true,
    });
    expect(podOwnerReference(set, { controller: true, blockOwnerDeletion: true })).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      name: 'logs',
      uid: 'u-1',
      controller: true,
      blockOwnerDeletion: true,
    });
  });

  it('refuses an owner without name or uid, naming what is missing', () => {
    expect(() => podOwnerReference({ metadata: { name: 'p' } })).toThrow(/Pod p: the owner has no uid/);
    expect(() => podOwnerReference({ metadata: { uid: 'x' } })).toThrow(/Pod <unnamed>: the owner has no name/);
  });

  it('finds the controller owner, an owner by kind and an owner by uid', () => {
    const pod: KubeObject = {
      metadata: {
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'n-1' },
          { apiVersion: KRUISE_API_VERSION, kind: 'CloneSet', name: 'web', uid: 'c-1', controller: true },
        ],
      },
    };
    expect(controllerOf(pod)?.name).toBe('web');
    expect(ownerOfKind(pod, 'Node')?.uid).toBe('n-1');
    expect(ownerOfKind(pod, 'Pod')).toBeUndefined();
    expect(controllerOf({ metadata: {} })).toBeUndefined();
    expect(
      controllerOf({ metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'p', controller: false }] } }),
    ).toBeUndefined();
    expect(ownedBy(pod.metadata.ownerReferences, 'c-1')).toBe(true);
    expect(ownedBy(pod.metadata.ownerReferences, 'other')).toBe(false);
    expect(ownedBy(undefined, 'c-1')).toBe(false);
  });

  it('finds an apps.kruise.io controller of a kind at any version, and its work-queue key', () => {
    const owned = (apiVersion: string, kind: string, controller = true): KubeObject => ({
      metadata: { namespace: 'ns', ownerReferences: [{ apiVersion, kind, name: 'db', uid: 'd-1', controller }] },
    });
    expect(kruiseControllerOf(owned('apps.kruise.io/v1beta1', 'StatefulSet'), 'StatefulSet')?.uid).toBe('d-1');
    expect(kruiseControllerKey(owned('apps.kruise.io/v1alpha1', 'StatefulSet'), 'StatefulSet')).toBe('ns/db');
    // The native StatefulSet, another kind, or an owner that is not the controller: none.
    expect(kruiseControllerKey(owned('apps/v1', 'StatefulSet'), 'StatefulSet')).toBeUndefined();
    expect(kruiseControllerKey(owned('apps.kruise.io/v1beta1', 'DaemonSet'), 'StatefulSet')).toBeUndefined();
    expect(kruiseControllerKey(owned('apps.kruise.io/v1beta1', 'StatefulSet', false), 'StatefulSet')).toBeUndefined();
    expect(kruiseControllerKey(owned('apps.kruise.iox/v1', 'StatefulSet'), 'StatefulSet')).toBeUndefined();
  });
});

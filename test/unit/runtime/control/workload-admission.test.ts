// The workload kinds' admission pair as the three webhooks register it: which operations each handler acts on,
// and that it answers what the kind's decisions say.
import { describe, expect, it } from 'vitest';
import type { ControllerContext } from '../../../../src/runtime/core/controller.js';
import type { KubeObject } from '../../../../src/runtime/core/types.js';
import type { AdmissionRequest } from '../../../../src/runtime/core/webhook/types.js';
import { VALIDATING_CHAIN_ORDER } from '../../../../src/runtime/control/admission-order.js';
import { advancedStatefulSetWebhook } from '../../../../src/runtime/webhooks/advancedstatefulset/index.js';
import * as sts from '../../../../src/runtime/webhooks/advancedstatefulset/decision.js';
import { cloneSetWebhook } from '../../../../src/runtime/webhooks/cloneset/index.js';
import * as cs from '../../../../src/runtime/webhooks/cloneset/decision.js';
import { daemonSetWebhook } from '../../../../src/runtime/webhooks/daemonset/index.js';
import * as ds from '../../../../src/runtime/webhooks/daemonset/decision.js';

const workload = (kind: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'apps.kruise.io/v1beta1',
  kind,
  metadata: { name: 'w', namespace: 'ns' },
  spec: {
    selector: { matchLabels: { app: 'w' } },
    template: { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } },
    ...spec,
  },
});

const request = (operation: AdmissionRequest['operation'], object?: KubeObject, oldObject?: KubeObject): AdmissionRequest => ({
  uid: 'u',
  kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: object?.kind ?? '' },
  resource: { group: 'apps.kruise.io', version: 'v1beta1', resource: '' },
  operation,
  object,
  oldObject,
});

const KINDS = [
  {
    def: cloneSetWebhook,
    kind: 'CloneSet',
    name: 'cloneset',
    plural: 'clonesets',
    defaultsOnUpdate: false,
    invalid: { updateStrategy: { type: 'OnDelete' } },
    defaults: cs.defaultCloneSet,
    validate: cs.validateStrategy,
    validateUpdate: cs.validateCloneSetUpdate,
  },
  {
    def: advancedStatefulSetWebhook,
    kind: 'StatefulSet',
    name: 'statefulset',
    plural: 'statefulsets',
    defaultsOnUpdate: true,
    invalid: { selector: { matchLabels: { app: 'other' } } },
    defaults: sts.defaultStatefulSet,
    validate: sts.validateStatefulSet,
    validateUpdate: sts.validateStatefulSetUpdate,
  },
  {
    def: daemonSetWebhook,
    kind: 'DaemonSet',
    name: 'daemonset',
    plural: 'daemonsets',
    defaultsOnUpdate: false,
    invalid: { selector: { matchLabels: { app: 'other' } } },
    defaults: ds.defaultDaemonSet,
    validate: ds.validateDaemonSet,
    validateUpdate: ds.validateDaemonSetUpdate,
  },
] as const;

describe.each(KINDS)('$kind admission', (k) => {
  // No gate on: the Advanced StatefulSet webhook then starts no StorageClass cache.
  const [mutate, validate] = k.def.setup({ featureGates: new Map() } as unknown as ControllerContext);
  const obj = workload(k.kind);
  // A changed selector is refused by each kind's update check.
  const labels = { app: 'w', other: 'x' };
  const reselected = workload(k.kind, {
    selector: { matchLabels: labels },
    template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'i:1' }] } },
  });

  it('registers a mutating and a validating handler on the kind paths, the checks after the policy rules', () => {
    expect(mutate).toMatchObject({
      name: `m${k.name}`,
      type: 'mutating',
      path: expect.stringMatching(new RegExp(`^/mutate-.*-${k.name}$`)),
    });
    expect(validate).toMatchObject({
      name: `v${k.name}`,
      type: 'validating',
      order: VALIDATING_CHAIN_ORDER.kindChecks,
      path: expect.stringMatching(new RegExp(`^/validate-.*-${k.name}$`)),
    });
  });

  it('defaults on CREATE, on UPDATE only where upstream does, never on DELETE', async () => {
    const patch = k.defaults(obj as never);
    expect(patch.length).toBeGreaterThan(0);
    expect(await mutate!.handle(request('CREATE', obj))).toEqual({ allowed: true, patch });
    expect(await mutate!.handle(request('UPDATE', obj, obj))).toEqual(k.defaultsOnUpdate ? { allowed: true, patch } : { allowed: true });
    expect(await mutate!.handle(request('DELETE', undefined, obj))).toEqual({ allowed: true });
  });

  it("validates CREATE and UPDATE with the kind's checks, the update's only on UPDATE", async () => {
    expect(await validate!.handle(request('CREATE', obj))).toEqual({ allowed: true });
    const refused = k.validateUpdate(reselected as never, obj as never);
    expect(refused?.allowed).toBe(false);
    expect(await validate!.handle(request('UPDATE', reselected, obj))).toEqual(refused);
    expect(k.validate(reselected as never)).toBeUndefined();
    expect(await validate!.handle(request('CREATE', reselected))).toEqual({ allowed: true });
    // The kind's own checks come first: an object they refuse is refused on UPDATE with their answer.
    const broken = workload(k.kind, k.invalid);
    const invalid = k.validate(broken as never);
    expect(invalid?.allowed).toBe(false);
    expect(await validate!.handle(request('UPDATE', broken, obj))).toEqual(invalid);
    expect(await validate!.handle(request('DELETE', undefined, obj))).toEqual({ allowed: true });
  });
});

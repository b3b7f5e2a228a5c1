// The install registers only admission paths the bundled runtime serves: compare the install's list
// with the handlers the runtime's webhook registry actually sets up (setup() only wires handlers).
import { describe, expect, it } from 'vitest';
import { servedKinds } from '../../../src/install/crds.js';
import { bundledWebhookPaths } from '../../../src/install/runtime-support.js';
import { WEBHOOKS } from '../../../src/runtime/manager/registry.js';
import { composeAdmission } from '../../../src/runtime/core/webhook/compose.js';
import type { ControllerContext } from '../../../src/runtime/core/controller.js';

describe('bundled runtime webhook paths', () => {
  it('match the handlers registered in src/runtime/manager/registry.ts', () => {
    // Empty caches: setup() only wires handlers and asks for the informers it reads.
    const informers = { for: () => ({ list: () => [], get: () => undefined }) };
    const ctx = { options: {}, featureGates: new Map(), informers } as unknown as ControllerContext;
    // Composed as the manager composes them: the pod mutators share /mutate-pod.
    const handlers = composeAdmission(WEBHOOKS.flatMap((w) => w.setup(ctx)));
    const served = bundledWebhookPaths(servedKinds());
    // Several pod mutators share /mutate-pod (composed into one chain): each path counts once.
    expect([...new Set(handlers.filter((h) => h.type === 'mutating').map((h) => h.path))].sort()).toEqual([...served.mutating].sort());
    expect(
      handlers
        .filter((h) => h.type === 'validating')
        .map((h) => h.path)
        // Several handlers may chain on one validating path (CloneSet: the rules, then its own checks).
        .filter((p, i, all) => all.indexOf(p) === i)
        .sort(),
    ).toEqual([...served.validating].sort());
  });
});

// createRunners is the one place the manager and the daemon turn controller definitions into runners.
// The two differ only for a definition whose gate is missing from the gates map: the manager leaves it off
// ('skip'), the daemon runs it ('run'). Both gate maps come from parseFeatureGates, which holds every runtime
// gate, so for the registered controllers the two policies agree (last test).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  createRunners,
  type ControllerContext,
  type ControllerDefinition,
  type UnknownGatePolicy,
} from '../../../../src/runtime/core/controller.js';
import { parseFeatureGates, prerequisitesOf, BUNDLED_RUNTIME_GATES, type FeatureGateName } from '../../../../src/contracts/features.js';
import { createLogger } from '../../../../src/runtime/core/log.js';
import { RuntimeMetrics } from '../../../../src/runtime/core/metrics.js';
import { DAEMON_CONTROLLERS } from '../../../../src/runtime/daemon/registry.js';
import { CONTROLLERS } from '../../../../src/runtime/manager/registry.js';

function capture(): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, any>[] } {
  const out: string[] = [];
  const logger = createLogger({ level: 'debug', name: 'test', destination: { write: (s: string) => void out.push(s) } });
  return { logger, lines: () => out.map((l) => JSON.parse(l)) };
}

/** Only featureGates and logger are read by createRunners; the definitions below use nothing else. */
function context(gates: ReadonlyMap<FeatureGateName, boolean>, logger: ReturnType<typeof createLogger>): ControllerContext {
  return { featureGates: gates, logger, options: {} } as unknown as ControllerContext;
}

function def(
  name: string,
  featureGate?: FeatureGateName,
  seen: { ctx?: ControllerContext; enqueue?: (k: string) => void }[] = [],
): ControllerDefinition<ControllerContext> {
  return {
    name,
    featureGate,
    defaultWorkers: 1,
    reads: [],
    setup(ctx, enqueue) {
      seen.push({ ctx, enqueue });
      return { reconcile: async () => undefined };
    },
  };
}

function names(
  defs: readonly ControllerDefinition<ControllerContext>[],
  gates: ReadonlyMap<FeatureGateName, boolean>,
  unknownGate: UnknownGatePolicy,
): string[] {
  const { logger } = capture();
  return createRunners(defs, context(gates, logger), { workers: {}, metrics: new RuntimeMetrics(), logger, unknownGate }).map(
    (r) => r.name,
  );
}

describe('createRunners', () => {
  // Gate names are typed by the feature table; which are on here is this test's own choice.
  const gates = new Map<FeatureGateName, boolean>([
    ['PodWebhook', true],
    ['SidecarTerminator', false],
  ]);
  const defs = [
    def('ungated'),
    def('gate-on', 'PodWebhook'),
    def('gate-off', 'SidecarTerminator'),
    def('gate-unknown', 'ImagePullJobGate'),
  ];

  it("manager policy 'skip': a controller runs only when its gate is on; a gate missing from the map counts as off", () => {
    expect(names(defs, gates, 'skip')).toEqual(['ungated', 'gate-on']);
  });

  it("daemon policy 'run': a controller is left off only when its gate is known and off", () => {
    expect(names(defs, gates, 'run')).toEqual(['ungated', 'gate-on', 'gate-unknown']);
  });

  it('a gate name outside the feature table is a type error (and, forced through, never on)', () => {
    // @ts-expect-error 'SidecarTerminater' is not a gate of src/contracts/features.ts
    const misspelt = def('typo', 'SidecarTerminater');
    expect(names([misspelt], gates, 'skip')).toEqual([]);
  });

  it('logs each controller left off with its gate, and does not set it up', () => {
    const { logger, lines } = capture();
    const seen: { ctx?: ControllerContext }[] = [];
    createRunners([def('gate-off', 'SidecarTerminator', seen)], context(gates, logger), {
      workers: {},
      metrics: new RuntimeMetrics(),
      logger,
      unknownGate: 'run',
    });
    expect(seen).toHaveLength(0);
    expect(lines()).toContainEqual(
      expect.objectContaining({ msg: 'controller disabled by feature gate', controller: 'gate-off', gate: 'SidecarTerminator' }),
    );
  });

  it("sets each controller up with a child logger bound to its name, and its enqueue feeds that controller's queue", () => {
    const { logger, lines } = capture();
    const seen: { ctx?: ControllerContext; enqueue?: (k: string) => void }[] = [];
    const [runner] = createRunners([def('alpha', undefined, seen)], context(gates, logger), {
      workers: {},
      metrics: new RuntimeMetrics(),
      logger,
      unknownGate: 'skip',
    });
    expect(seen).toHaveLength(1);
    seen[0]!.ctx!.logger.info('hello');
    expect(lines()).toContainEqual(expect.objectContaining({ msg: 'hello', controller: 'alpha' }));
    expect(seen[0]!.ctx!.featureGates).toBe(gates);
    seen[0]!.enqueue!('ns/a');
    seen[0]!.enqueue!('ns/b');
    expect(runner!.queue.depth).toBe(2);
  });

  it('uses the --workers count for a controller when given, its default otherwise', async () => {
    const { logger } = capture();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const blocking = (name: string, defaultWorkers: number): ControllerDefinition<ControllerContext> => ({
      name,
      defaultWorkers,
      reads: [],
      setup: () => ({ reconcile: async () => void (await gate) }),
    });
    const runners = createRunners([blocking('overridden', 1), blocking('default', 2)], context(gates, logger), {
      workers: { overridden: 3 },
      metrics: new RuntimeMetrics(),
      logger,
      unknownGate: 'skip',
    });
    for (const r of runners) {
      for (let i = 0; i < 5; i++) r.enqueue(`ns/k${i}`);
      r.start();
    }
    const active = () => runners.map((r) => r.queue.active);
    for (let i = 0; i < 100 && active().join() !== '3,2'; i++) await sleep(10);
    expect(active()).toEqual([3, 2]);
    release();
    await Promise.all(runners.map((r) => r.stop()));
  });

  it('every registered manager and daemon controller names a gate the runtime knows, so both policies pick the same controllers', () => {
    for (const d of [...CONTROLLERS, ...DAEMON_CONTROLLERS]) {
      if (d.featureGate) expect(Object.keys(BUNDLED_RUNTIME_GATES)).toContain(d.featureGate);
    }
    for (const spec of [undefined, 'ImagePullJobGate=true', 'SidecarTerminator=true,KruiseDaemon=false']) {
      expect([...parseFeatureGates(spec).keys()].sort()).toEqual(Object.keys(BUNDLED_RUNTIME_GATES).sort());
    }
  });

  it('every gate a runtime unit reads can be set on its command line (a gate --feature-gates refuses could never be on)', () => {
    const root = path.resolve(import.meta.dirname, '../../../../src/runtime');
    const read = new Set<string>();
    for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
      for (const m of readFileSync(path.join(root, file), 'utf8').matchAll(/featureGates\.get\('(\w+)'\)/g)) read.add(m[1]!);
    }
    expect(read).toContain('PreparingUpdateAsUpdate');
    for (const gate of read) {
      expect(Object.keys(BUNDLED_RUNTIME_GATES), gate).toContain(gate);
      // With the gates it depends on (a child of a gate that is off stays off, as upstream's cascades do).
      const spec = [gate, ...prerequisitesOf(gate)].map((g) => `${g}=true`).join(',');
      expect(parseFeatureGates(spec).get(gate as FeatureGateName), spec).toBe(true);
    }
  });
});

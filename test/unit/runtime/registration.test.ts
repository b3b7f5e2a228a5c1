// Two steps of ARCHITECTURE.md's "add a controller / add a pod mutator" that no type error catches: a
// definition written but never registered (the manager or daemon would simply not run it), and a decision file
// that reaches for I/O (its table tests would then need a cluster). Both are checked here over the source tree, so
// a new unit folder is covered the day it is added.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AppFeature, needsOf } from '../../../src/contracts/index.js';
import { CONTROLLERS, POD_MUTATORS, WEBHOOKS } from '../../../src/runtime/manager/registry.js';
import { DAEMON_CONTROLLERS } from '../../../src/runtime/daemon/registry.js';

const runtime = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src/runtime');

/** The `index.ts` of every unit folder under `src/runtime/<dir>/`. */
function unitIndexes(dir: string): string[] {
  return readdirSync(path.join(runtime, dir))
    .map((name) => path.join(runtime, dir, name, 'index.ts'))
    .filter((file) => statSync(path.dirname(file)).isDirectory() && statSync(file, { throwIfNoEntry: false })?.isFile());
}

const isControllerDefinition = (v: unknown): v is { name: string } =>
  typeof v === 'object' && v !== null && 'name' in v && 'reads' in v && 'defaultWorkers' in v && 'setup' in v;
const isWebhookDefinition = (v: unknown): v is { name: string } =>
  typeof v === 'object' && v !== null && 'name' in v && 'reads' in v && 'setup' in v && !('defaultWorkers' in v);

async function exported(file: string): Promise<unknown[]> {
  return Object.values((await import(pathToFileURL(file).href)) as Record<string, unknown>);
}

describe('every unit folder is registered', () => {
  it('each controller folder exports at least one controller definition, and each is in CONTROLLERS', async () => {
    const folders = unitIndexes('controllers');
    expect(folders.length).toBeGreaterThan(5);
    for (const file of folders) {
      const defs = (await exported(file)).filter(isControllerDefinition);
      expect(defs.length, `${path.relative(runtime, file)} exports a ControllerDefinition`).toBeGreaterThan(0);
      for (const d of defs) expect(CONTROLLERS, `${d.name} (${path.relative(runtime, file)}) is in CONTROLLERS`).toContain(d);
    }
  });

  it('each webhook folder exports at least one webhook definition, and each is in WEBHOOKS (pod mutators through POD_MUTATORS)', async () => {
    const folders = unitIndexes('webhooks');
    expect(folders.length).toBeGreaterThan(5);
    for (const file of folders) {
      const defs = (await exported(file)).filter(isWebhookDefinition);
      expect(defs.length, `${path.relative(runtime, file)} exports a WebhookDefinition`).toBeGreaterThan(0);
      for (const d of defs) expect(WEBHOOKS, `${d.name} (${path.relative(runtime, file)}) is in WEBHOOKS`).toContain(d);
    }
  });

  it("each daemon folder's controller definitions are in DAEMON_CONTROLLERS", async () => {
    const defs = (await Promise.all(unitIndexes('daemon').map(exported))).flat().filter(isControllerDefinition);
    expect(defs.length).toBeGreaterThanOrEqual(3);
    for (const d of defs) expect(DAEMON_CONTROLLERS, `${d.name} is in DAEMON_CONTROLLERS`).toContain(d);
  });
});

describe('a pod mutator is installed for the features it carries out', () => {
  it("each pod mutator's gate is a gate of a feature the bundled runtime carries out that needs the pod webhook", () => {
    // Otherwise the install would never register /mutate-pod for an app using only that feature.
    const needing = Object.values(AppFeature)
      .map((f) => needsOf(f, 'bundled'))
      .filter((n) => n.podWebhook);
    for (const m of POD_MUTATORS) {
      expect(m.featureGate, `${m.name} is gated`).toBeDefined();
      expect(
        needing.some((n) => n.gates.includes(m.featureGate!)),
        `a feature gated by ${m.featureGate} needs the pod webhook (src/contracts/features.ts)`,
      ).toBe(true);
    }
  });
});

/** Modules whose use means I/O: the API client, caches, queues, leases, CRI and the process's own servers. */
const IO = [
  /(^|\/)core\/(client|informer|leader|queue|health|metrics|shutdown|process-guard|watch-liveness)\.js$/,
  // (core/webhook/server.js is not listed: decisions take its pure JSON-pointer escaping.)
  /(^|\/)core\/webhook\/(certs|cert-issuer)\.js$/,
  /(^|\/)cri\//,
  /(^|\/)(reconcile|[\w-]*-sync|pod-writes)\.js$/,
  /^@kubernetes\//,
  /^@grpc\//,
  /^node:(fs|net|http|https|http2|tls|child_process|dgram|worker_threads)(\/|$)/,
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

/** The specifiers of the value imports of a file (`import type …` carries no code and is left out). */
function valueImports(source: string): string[] {
  return [
    ...source.matchAll(/^import\s+(?!type\s)[^;]*?from\s+'([^']+)'/gms),
    ...source.matchAll(/^export\s+(?!type\s)[^;]*?from\s+'([^']+)'/gms),
  ].map((m) => m[1]!);
}

describe('decision files are pure', () => {
  const decisions = files(runtime).filter((f) => /(^|[-/])(decision|decide)\.ts$/.test(f));

  it('finds the decision files of the controllers, webhooks and daemon', () => {
    expect(decisions.length).toBeGreaterThan(10);
  });

  it('no decision file imports a module that does I/O (client, caches, queues, CRI, servers, reconcile files)', () => {
    const found = decisions.flatMap((f) =>
      valueImports(readFileSync(f, 'utf8'))
        .filter((spec) => IO.some((re) => re.test(spec)))
        .map((spec) => `${path.relative(runtime, f)} imports ${spec}`),
    );
    expect(found).toEqual([]);
  });

  it('catches a value import of I/O and lets a type-only import through', () => {
    const flagged = (s: string) => valueImports(s).filter((spec) => IO.some((re) => re.test(spec)));
    expect(flagged("import { KubeClient } from '../../core/client.js';")).toEqual(['../../core/client.js']);
    expect(flagged("import { reconcileScale } from './scale-sync.js';")).toEqual(['./scale-sync.js']);
    expect(flagged("import type { KubeClient } from '../../core/client.js';")).toEqual([]);
    expect(flagged("import { ownerReference } from '../../core/meta.js';")).toEqual([]);
  });
});

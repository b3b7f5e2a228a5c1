// The Argo CD health checks `synth --gitops argocd` emits, run by a real Lua interpreter (fengari, Lua 5.3) the way
// Argo CD runs them: the live object as the global `obj`, the script's returned table read back. Each row is a
// status the bundled runtime writes (field names and condition reasons from its controllers).
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ARGOCD_HEALTH_LUA } from '../../../src/policy/argocd-health.js';

interface LuaState {
  readonly brand: 'lua_State';
}
interface Fengari {
  lua: {
    lua_pcall(L: LuaState, nargs: number, nresults: number, msgh: number): number;
    lua_getfield(L: LuaState, idx: number, k: Uint8Array): number;
    lua_tojsstring(L: LuaState, idx: number): string | null;
    lua_settop(L: LuaState, idx: number): void;
    lua_istable(L: LuaState, idx: number): boolean;
    LUA_OK: number;
  };
  lauxlib: { luaL_newstate(): LuaState; luaL_loadstring(L: LuaState, s: Uint8Array): number };
  lualib: { luaL_openlibs(L: LuaState): void };
  to_luastring(this: void, s: string): Uint8Array;
}
const fengari = createRequire(import.meta.url)('fengari') as Fengari;
const { lua, lauxlib, lualib, to_luastring } = fengari;

/** A JSON value as a Lua table constructor (null drops out, as a missing field does in Argo CD's conversion). */
function luaLiteral(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `{${v.map(luaLiteral).join(', ')}}`;
  return `{${Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== null && x !== undefined)
    .map(([k, x]) => `[${JSON.stringify(k)}] = ${luaLiteral(x)}`)
    .join(', ')}}`;
}

function run(kind: string, obj: Record<string, unknown>): { status: string; message: string } {
  const script = ARGOCD_HEALTH_LUA[kind];
  if (!script) throw new Error(`no health script for ${kind}`);
  const L = lauxlib.luaL_newstate();
  lualib.luaL_openlibs(L);
  const exec = (code: string, results: number) => {
    if (lauxlib.luaL_loadstring(L, to_luastring(code)) !== lua.LUA_OK || lua.lua_pcall(L, 0, results, 0) !== lua.LUA_OK)
      throw new Error(`lua: ${lua.lua_tojsstring(L, -1)}`);
  };
  exec(`obj = ${luaLiteral(obj)}`, 0);
  exec(script, 1);
  if (!lua.lua_istable(L, -1)) throw new Error(`${kind}: the script did not return a table`);
  lua.lua_getfield(L, -1, to_luastring('status'));
  const status = lua.lua_tojsstring(L, -1) ?? '';
  lua.lua_settop(L, -2);
  lua.lua_getfield(L, -1, to_luastring('message'));
  const message = lua.lua_tojsstring(L, -1) ?? '';
  return { status, message };
}

const meta = (generation = 2) => ({ name: 'x', namespace: 'ns', generation });

describe('Argo CD health: CloneSet', () => {
  const cs = (spec: Record<string, unknown>, status?: Record<string, unknown>, generation = 2) => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: meta(generation),
    spec: { replicas: 3, ...spec },
    ...(status ? { status } : {}),
  });
  const settled = {
    observedGeneration: 2,
    replicas: 3,
    readyReplicas: 3,
    updatedReplicas: 3,
    updatedReadyReplicas: 3,
    expectedUpdatedReplicas: 3,
  };
  it.each([
    ['no status yet', cs({}), 'Progressing', /observed/],
    ['spec not yet observed', cs({}, { ...settled, observedGeneration: 1 }), 'Progressing', /observed/],
    ['all updated and ready', cs({}, settled), 'Healthy', /3 of 3/],
    [
      'replicas defaults to 1',
      cs({ replicas: undefined }, { ...settled, replicas: 1, readyReplicas: 1, updatedReadyReplicas: 1, expectedUpdatedReplicas: 1 }),
      'Healthy',
      /1 of 1/,
    ],
    ['updated pods not ready yet', cs({}, { ...settled, updatedReadyReplicas: 1 }), 'Progressing', /1 of 3 updated pod\(s\) ready/],
    [
      'partition holds pods back: healthy once the expected ones are ready',
      cs({}, { ...settled, updatedReadyReplicas: 1, expectedUpdatedReplicas: 1 }),
      'Healthy',
      /./,
    ],
    ['surge pod not yet removed', cs({}, { ...settled, replicas: 4 }), 'Progressing', /1 old pod/],
    [
      'an old pod not ready',
      cs({}, { ...settled, readyReplicas: 2, updatedReadyReplicas: 3, expectedUpdatedReplicas: 3 }),
      'Progressing',
      /2 of 3 pod/,
    ],
    ['update paused', cs({ updateStrategy: { paused: true } }, { ...settled, updatedReadyReplicas: 0 }), 'Suspended', /paused/],
    [
      'progress deadline exceeded',
      cs(
        {},
        {
          ...settled,
          updatedReadyReplicas: 1,
          conditions: [
            {
              type: 'Progressing',
              status: 'False',
              reason: 'ProgressDeadlineExceeded',
              message: 'CloneSet revision r2 has timed out progressing',
            },
          ],
        },
      ),
      'Degraded',
      /timed out progressing/,
    ],
    [
      'progressing within the deadline',
      cs({}, { ...settled, updatedReadyReplicas: 1, conditions: [{ type: 'Progressing', status: 'True', reason: 'CloneSetUpdated' }] }),
      'Progressing',
      /1 of 3/,
    ],
  ])('%s → %s', (_name, obj, status, message) => {
    const hs = run('CloneSet', obj);
    expect(hs.status).toBe(status);
    expect(hs.message).toMatch(message);
  });
});

describe('Argo CD health: SidecarSet', () => {
  const ss = (status?: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'log', generation: 2 },
    spec,
    ...(status ? { status } : {}),
  });
  const settled = { observedGeneration: 2, matchedPods: 4, updatedPods: 4, readyPods: 4, updatedReadyPods: 4 };
  it.each([
    ['no status yet', ss(), 'Progressing', /observed/],
    ['every matched pod updated and ready', ss(settled), 'Healthy', /4 matched/],
    ['no matched pod', ss({ ...settled, matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 }), 'Healthy', /0 matched/],
    ['rolling out', ss({ ...settled, updatedPods: 2, updatedReadyPods: 2 }), 'Progressing', /2 of 4/],
    ['spec not yet observed', ss({ ...settled, observedGeneration: 1 }), 'Progressing', /observed/],
    ['paused', ss({ ...settled, updatedReadyPods: 1 }, { updateStrategy: { paused: true } }), 'Suspended', /paused/],
    [
      'rollout stuck',
      ss({
        ...settled,
        updatedReadyPods: 1,
        conditions: [{ type: 'RolloutStuck', status: 'True', reason: 'ImagePullBackOff', message: 'pod a: sidecar log cannot pull' }],
      }),
      'Degraded',
      /cannot pull/,
    ],
    [
      'stuck condition cleared',
      ss({ ...settled, conditions: [{ type: 'RolloutStuck', status: 'False', reason: 'Progressing' }] }),
      'Healthy',
      /./,
    ],
  ])('%s → %s', (_name, obj, status, message) => {
    const hs = run('SidecarSet', obj);
    expect(hs.status).toBe(status);
    expect(hs.message).toMatch(message);
  });
});

describe('Argo CD health: ImagePullJob', () => {
  const job = (status?: Record<string, unknown>) => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: meta(),
    ...(status ? { status } : {}),
  });
  it.each([
    ['no status yet', job(), 'Progressing', /start/],
    [
      'pulling',
      job({ startTime: 't', desired: 3, active: 2, succeeded: 1, failed: 0 }),
      'Progressing',
      /1 of 3 node\(s\) pulled, 2 active/,
    ],
    [
      'completed',
      job({ startTime: 't', completionTime: 't', desired: 3, active: 0, succeeded: 3, failed: 0, message: 'job has completed' }),
      'Healthy',
      /completed/,
    ],
    [
      'completed with failed nodes',
      job({
        startTime: 't',
        completionTime: 't',
        desired: 3,
        active: 0,
        succeeded: 2,
        failed: 1,
        message: 'image pull failed on 1 node(s) [n3]',
      }),
      'Degraded',
      /failed on 1 node/,
    ],
    [
      'active deadline passed',
      job({
        startTime: 't',
        completionTime: 't',
        desired: 2,
        succeeded: 0,
        failed: 2,
        message: 'job exceeds activeDeadlineSeconds (60s); 0/2 node(s) pulled',
      }),
      'Degraded',
      /activeDeadlineSeconds/,
    ],
    [
      'a pre-pull completed with failed nodes (an Argo CD hook must not fail the sync before the app)',
      {
        ...job({ startTime: 't', completionTime: 't', desired: 2, succeeded: 1, failed: 1 }),
        metadata: { ...meta(), annotations: { 'kruise.cdk8s.io/pre-pull-for': 'Deployment.apps/web' } },
      },
      'Healthy',
      /pre-pull finished; failed on 1 node/,
    ],
    [
      'a pre-pull still pulling',
      {
        ...job({ startTime: 't', desired: 2, active: 1, succeeded: 1, failed: 0 }),
        metadata: { ...meta(), annotations: { 'kruise.cdk8s.io/pre-pull-for': 'Deployment.apps/web' } },
      },
      'Progressing',
      /1 of 2 node\(s\) pulled/,
    ],
  ])('%s → %s', (_name, obj, status, message) => {
    const hs = run('ImagePullJob', obj);
    expect(hs.status).toBe(status);
    expect(hs.message).toMatch(message);
  });
});

describe('Argo CD health: ContainerRecreateRequest', () => {
  const crr = (status?: Record<string, unknown>) => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: meta(),
    ...(status ? { status } : {}),
  });
  it.each([
    ['no status yet', crr(), 'Progressing', /daemon/],
    ['pending', crr({ phase: 'Pending' }), 'Progressing', /Pending/],
    [
      'recreating',
      crr({ phase: 'Recreating', containerRecreateStates: [{ name: 'app', phase: 'Recreating' }] }),
      'Progressing',
      /Recreating/,
    ],
    [
      'completed, every container recreated',
      crr({ phase: 'Completed', containerRecreateStates: [{ name: 'app', phase: 'Succeeded' }] }),
      'Healthy',
      /recreated/,
    ],
    [
      'completed with a failed container',
      crr({
        phase: 'Completed',
        containerRecreateStates: [
          { name: 'app', phase: 'Succeeded' },
          { name: 'log', phase: 'Failed', message: 'stop timed out' },
        ],
      }),
      'Degraded',
      /container log failed: stop timed out/,
    ],
    ['failed', crr({ phase: 'Failed', message: 'pod gone' }), 'Degraded', /pod gone/],
  ])('%s → %s', (_name, obj, status, message) => {
    const hs = run('ContainerRecreateRequest', obj);
    expect(hs.status).toBe(status);
    expect(hs.message).toMatch(message);
  });
});

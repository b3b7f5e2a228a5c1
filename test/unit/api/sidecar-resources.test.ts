// SidecarSet resourcesPolicy (pure): the expression language, aggregation by sum and max, unlimited limits,
// target selection, output quantities and the validation upstream's SidecarSet webhook performs. The cases follow
// upstream's unit tables (pod mutating webhook and SidecarSet validating webhook).
import { describe, expect, it } from 'vitest';
import {
  computeSidecarResources,
  evaluateResourceExpr,
  formatQuantity,
  MAX_RESOURCE_EXPR_DEPTH,
  MAX_RESOURCE_EXPR_LENGTH,
  quantityMilli,
  ResourceExprError,
  resourceExprError,
  resourcesPolicyProblems,
  type ResourcesPolicyLike,
  type TargetContainer,
} from '../../../src/api/sidecar-resources.js';

const Mi = 2 ** 20 * 1000;

describe('evaluateResourceExpr', () => {
  it.each([
    ['cpu*50%', 'cpu', 600, 300],
    ['max(cpu*50%, 50m)', 'cpu', 200, 100],
    ['max(cpu*50%, 50m)', 'cpu', 60, 50],
    ['min(cpu, 1)', 'cpu', 4000, 1000],
    ['cpu / 4 + 10m', 'cpu', 1000, 260],
    ['-cpu + 2', 'cpu', 500, 1500],
    ['(cpu + 100m) * 2', 'cpu', 100, 400],
    ['0.5', 'cpu', 0, 500],
    ['2 * 3 - 1', 'cpu', 0, 5000],
    ['200Mi', 'memory', 0, 200 * Mi],
    ['memory*30%', 'memory', 600 * Mi, 180 * Mi],
    ['max(memory*50%, 100Mi)', 'memory', 100 * Mi, 100 * Mi],
    // A plain-number memory result is bytes, truncated.
    ['1024.7', 'memory', 0, 1024 * 1000],
    ['1e3', 'cpu', 0, 1_000_000],
    ['MAX(CPU, 1m)', 'cpu', 0, 1],
  ] as const)('%s with %s = %d milli gives %d milli', (expr, variable, agg, want) => {
    expect(evaluateResourceExpr(expr, variable, agg)).toBe(want);
  });

  it('evaluates the tiered expression of upstream story 5', () => {
    const expr = '0.5*cpu - 0.3*max(0, cpu-4) + 0.3*max(0, cpu-8)';
    expect(evaluateResourceExpr(expr, 'cpu', 2000)).toBe(1000);
    expect(evaluateResourceExpr(expr, 'cpu', 6000)).toBe(2400);
    expect(evaluateResourceExpr(expr, 'cpu', 10000)).toBe(3800);
  });

  it.each([
    ['cpu * cpu', /quantity cannot be multiplied by a quantity/],
    ['1 / cpu', /division by a quantity/],
    ['cpu / 0', /division by zero/],
    ['max(cpu)', /exactly 2 arguments, got 1/],
    ['avg(cpu, 1)', /unknown function "avg"/],
    ['memory * 2', /undefined variable "memory"/],
    ['invalid expression @#$', /unexpected "@" at column 20/],
    ['invalidvar * 50%', /undefined variable "invalidvar"/],
    ['max(cpu*50%, 50m', /expected "\)"/],
    ['cpu +', /unexpected end/],
    ['cpu 2', /unexpected value at column 5/],
    ['10Xi', /neither a number nor a quantity/],
    ['50%m', /neither a number nor a quantity/],
    ['cpu # 2', /unexpected "#" at column 5/],
    ['', /unexpected end/],
  ])('refuses %j', (expr, message) => {
    expect(() => evaluateResourceExpr(expr, 'cpu', 1000)).toThrow(message);
    expect(resourceExprError(expr, 'cpu')).toMatch(message);
  });

  it('bounds length and depth, so hostile input fails fast with a clear error', () => {
    expect(resourceExprError('1+'.repeat(MAX_RESOURCE_EXPR_LENGTH) + '1', 'cpu')).toBe(
      `longer than ${MAX_RESOURCE_EXPR_LENGTH} characters`,
    );
    const deep = '('.repeat(MAX_RESOURCE_EXPR_DEPTH + 1) + 'cpu' + ')'.repeat(MAX_RESOURCE_EXPR_DEPTH + 1);
    expect(resourceExprError(deep, 'cpu')).toBe(`nested deeper than ${MAX_RESOURCE_EXPR_DEPTH} levels`);
    expect(resourceExprError('-'.repeat(200) + 'cpu', 'cpu')).toMatch(/nested deeper/);
    expect(resourceExprError('9'.repeat(400), 'cpu')).toMatch(/out of range/);
  });
});

describe('quantities', () => {
  it.each([
    ['100m', 100],
    ['2', 2000],
    ['0.5', 500],
    ['64Mi', 64 * Mi],
    ['1G', 1e12],
    ['129e6', 129e9],
  ])('reads %s', (q, milli) => expect(quantityMilli(q)).toBe(milli));

  it('refuses a malformed quantity', () => {
    expect(() => quantityMilli('12 apples')).toThrow(ResourceExprError);
  });

  it.each([
    [300, 'cpu', '300m'],
    [2000, 'cpu', '2'],
    [0, 'cpu', '0'],
    [180 * Mi, 'memory', '180Mi'],
    [2 ** 30 * 1000, 'memory', '1Gi'],
    [1_000_000, 'memory', '1000'],
    [1500, 'memory', '1500m'],
  ] as const)('writes %d milli of %s as %s', (milli, v, text) => {
    expect(formatQuantity(milli, v)).toBe(text);
  });
});

const c = (name: string, limits?: Record<string, string>, requests?: Record<string, string>): TargetContainer => ({
  name,
  resources: { ...(limits ? { limits } : {}), ...(requests ? { requests } : {}) },
});

const policy = (mode: 'sum' | 'max', exprs: ResourcesPolicyLike['resourcesExpr'], regex?: string): ResourcesPolicyLike => ({
  targetContainersMode: mode,
  ...(regex !== undefined ? { targetContainersNameRegex: regex } : {}),
  resourcesExpr: exprs,
});

const app1 = c('app1', { cpu: '200m', memory: '200Mi' }, { cpu: '50m', memory: '100Mi' });
const app2 = c('app2', { cpu: '400m', memory: '400Mi' }, { cpu: '100m', memory: '200Mi' });

describe('computeSidecarResources', () => {
  it('sum mode with percentages and constants', () => {
    const p = policy('sum', { limits: { cpu: 'cpu*50%', memory: '200Mi' }, requests: { cpu: 'cpu*50%', memory: '100Mi' } }, '.*');
    expect(computeSidecarResources(p, [app1, app2], [], new Set())).toEqual({
      limits: { cpu: '300m', memory: '200Mi' },
      requests: { cpu: '75m', memory: '100Mi' },
    });
  });

  it('max mode with max()', () => {
    const e = { limits: { cpu: 'max(cpu*50%, 50m)' }, requests: { cpu: 'max(cpu*50%, 50m)' } };
    expect(computeSidecarResources(policy('max', e), [app1, app2], [], new Set())).toEqual({
      limits: { cpu: '200m' },
      requests: { cpu: '50m' },
    });
  });

  it('only the containers the regex matches count (unanchored, as upstream)', () => {
    const e = { limits: { cpu: 'cpu*50%' } };
    expect(computeSidecarResources(policy('sum', e, '^app1$'), [app1, app2], [], new Set())).toEqual({ limits: { cpu: '100m' } });
    expect(computeSidecarResources(policy('sum', e, 'p2'), [app1, app2], [], new Set())).toEqual({ limits: { cpu: '200m' } });
  });

  it('refuses when no container matches', () => {
    expect(() => computeSidecarResources(policy('sum', { limits: { cpu: 'cpu' } }, '^db$'), [app1, app2], [], new Set())).toThrow(
      'no containers match the regex pattern "^db$"',
    );
  });

  it('a target without a limit makes the limit unlimited (not set); a missing request counts as 0', () => {
    const noCpuLimit = c('app2', { memory: '400Mi' }, { cpu: '50m', memory: '200Mi' });
    const p = policy('sum', { limits: { cpu: 'cpu*50%', memory: 'memory*30%' }, requests: { cpu: 'cpu*30%', memory: 'memory*20%' } });
    const app = c('app1', { cpu: '200m', memory: '200Mi' }, { cpu: '100m', memory: '100Mi' });
    expect(computeSidecarResources(p, [app, noCpuLimit], [], new Set())).toEqual({
      limits: { memory: '180Mi' },
      requests: { cpu: '45m', memory: '60Mi' },
    });
    const noRequests = c('app2', { cpu: '400m', memory: '400Mi' });
    const q = policy('max', { requests: { cpu: 'cpu*25%', memory: 'memory*20%' } });
    expect(computeSidecarResources(q, [app, noRequests], [], new Set())).toEqual({ requests: { cpu: '25m', memory: '20Mi' } });
  });

  it('counts native sidecars, skips plain init containers and the containers SidecarSets inject', () => {
    const native = { ...c('proxy', { cpu: '600m' }), restartPolicy: 'Always' };
    const plainInit = c('init', { cpu: '8' });
    const injected = c('log-agent', { cpu: '8' });
    const e = { limits: { cpu: 'cpu' } };
    expect(computeSidecarResources(policy('sum', e), [app1, injected], [native, plainInit], new Set(['log-agent']))).toEqual({
      limits: { cpu: '800m' },
    });
  });

  it('refuses a negative result and names the expression', () => {
    expect(() => computeSidecarResources(policy('sum', { limits: { cpu: 'cpu - 1' } }), [app1], [], new Set())).toThrow(
      'limits.cpu "cpu - 1" gives a negative quantity (-800m)',
    );
  });
});

describe('resourcesPolicyProblems (the SidecarSet validation)', () => {
  const sidecar = (p: ResourcesPolicyLike, extra: object = {}) => ({ name: 's', resourcesPolicy: p, ...extra });
  const ok = policy('sum', { limits: { cpu: 'max(cpu*50%, 50m)', memory: 'max(memory*50%, 100Mi)' } }, '.*');

  it('accepts valid policies, including upstream story 5', () => {
    expect(resourcesPolicyProblems(sidecar(ok), false)).toEqual([]);
    const story5 = policy('sum', { limits: { cpu: '0.5*cpu - 0.3*max(0, cpu-4) + 0.3*max(0, cpu-8)' } });
    expect(resourcesPolicyProblems(sidecar(story5), false)).toEqual([]);
    expect(resourcesPolicyProblems({ name: 's' }, false)).toEqual([]);
  });

  it.each([
    [sidecar(policy('sum', { limits: { cpu: 'cpu' } }, '')), 'resourcesPolicy.targetContainersNameRegex', 'invalid empty regex'],
    [sidecar(policy('sum', { limits: { cpu: 'cpu' } }, '[')), 'resourcesPolicy.targetContainersNameRegex', /^invalid regex pattern: /],
    [
      sidecar(ok, { resources: { limits: { cpu: '100m' } } }),
      'resourcesPolicy',
      'resourcesPolicy and resources cannot be configured together',
    ],
    [
      sidecar(ok, { resources: { requests: { cpu: '50m' } } }),
      'resourcesPolicy',
      'resourcesPolicy and resources cannot be configured together',
    ],
    [sidecar(policy('sum', {})), 'resourcesPolicy.resourcesExpr', 'at least one of limits or requests must be configured'],
    [
      sidecar(policy('sum', { limits: { cpu: 'max(cpu*50%)' } })),
      'resourcesPolicy.resourcesExpr.limits.cpu',
      /^invalid expression: max\(\) takes/,
    ],
    [
      sidecar(policy('sum', { requests: { memory: 'cpu * 2' } })),
      'resourcesPolicy.resourcesExpr.requests.memory',
      /undefined variable "cpu"/,
    ],
    [sidecar({ ...ok, targetContainersMode: 'avg' }), 'resourcesPolicy.targetContainersMode', 'must be "sum" or "max"'],
  ])('refuses case %#', (container, field, message) => {
    const problems = resourcesPolicyProblems(container, false);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.field).toBe(field);
    expect(problems[0]!.message).toMatch(message);
  });

  it('an init container needs restartPolicy Always (a native sidecar) to carry a policy', () => {
    expect(resourcesPolicyProblems(sidecar(ok), true).map((p) => p.message)).toEqual([
      'resourcesPolicy is only supported for containers with RestartPolicy Always',
    ]);
    expect(resourcesPolicyProblems(sidecar(ok, { restartPolicy: 'Always' }), true)).toEqual([]);
  });
});

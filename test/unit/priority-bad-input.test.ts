// Bad exit- and launch-priority input says the same thing everywhere: at synth (construct path + JSON pointer),
// in `validate` (file:line + JSON pointer) and in the pod webhook's refusal. Each case takes the one message from
// the API model and finds it, word for word, on all three surfaces.
import { ApiObject, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { ContainerExitPriority, ContainerLaunchPriority } from '../../constructs/index.js';
import { checkExitPriority, exitPriorityValueMessage, parseLaunchPriority } from '../../src/api/pod-contracts.js';
import { validateInputs } from '../../src/policy/engine.js';
import type { Pod } from '../../src/runtime/core/types.js';
import { wireExitPriority } from '../../src/runtime/webhooks/exitpriority/decision.js';
import { wireLaunchPriority } from '../../src/runtime/webhooks/launchpriority/decision.js';

const C3 = [
  { name: 'app', image: 'a' },
  { name: 'log-agent', image: 'b' },
  { name: 'envoy', image: 'c' },
];

/** A chart with a raw Pod construct at `test/pod` (any pod-template owner works the same). */
function podChart(spec: Record<string, unknown> = {}) {
  const chart = Testing.chart();
  const pod = new ApiObject(chart, 'pod', { apiVersion: 'v1', kind: 'Pod', spec: { containers: C3, ...spec } });
  return { chart, pod };
}

function validateYaml(pod: object) {
  return validateInputs([{ file: 'pod.yaml', content: JSON.stringify(pod, null, 2) }]).findings.filter((f) => f.severity === 'error');
}

function webhookDeny(pod: object, step: 'exit' | 'launch'): string {
  const copy = structuredClone(pod) as Pod;
  const result = step === 'exit' ? wireExitPriority(copy, 'ns', 'token') : wireLaunchPriority(copy);
  return (result as { deny?: string } | undefined)?.deny ?? '(allowed)';
}

const podWith = (annotations: Record<string, string>, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', annotations },
  spec: { containers: C3, ...spec },
});

describe('exit priority: one message at synth, validate and the webhook', () => {
  it('a container the pod lacks', () => {
    const bad = podWith({ 'kruise.io/container-exit-priority': '{"envoi":2}' });
    const [finding] = checkExitPriority(bad);
    const message = finding!.message;
    expect(message).toBe(
      'annotation kruise.io/container-exit-priority names container "envoi", which is not in the pod (containers: app, log-agent, envoy)',
    );

    const { chart, pod } = podChart();
    ContainerExitPriority.of(pod).set('envoi', 2);
    expect(() => Testing.synth(chart)).toThrow(`[test/pod] ${message}`);
    expect(() => Testing.synth(chart)).toThrow('(at /spec/containers)');

    const [v] = validateYaml(bad);
    expect(v).toMatchObject({
      ruleId: 'KRUISE-EXITPRIO-002',
      file: 'pod.yaml',
      line: 7,
      jsonPointer: '/metadata/annotations/kruise.io~1container-exit-priority',
    });
    expect(v!.message).toBe(message);

    expect(webhookDeny(bad, 'exit')).toContain(message);
  });

  it.each([
    ['negative', -1, '-1'],
    ['fractional', 1.5, '1.5'],
    ['beyond int32', 2 ** 31, String(2 ** 31)],
  ])('a %s priority', (_name, value, json) => {
    const message = exitPriorityValueMessage('envoy', value)!;
    expect(message).toBe(`priority of "envoy" must be a non-negative integer, got ${json}`);

    const { pod } = podChart();
    expect(() => ContainerExitPriority.of(pod).set('envoy', value)).toThrow(`[test/pod] exit priority: ${message}.`);

    const bad = podWith({ 'kruise.io/container-exit-priority': `{"envoy":${json}}` });
    const [v] = validateYaml(bad);
    expect(v).toMatchObject({
      ruleId: 'KRUISE-EXITPRIO-003',
      line: 7,
      jsonPointer: '/metadata/annotations/kruise.io~1container-exit-priority',
    });
    expect(v!.message).toBe(`annotation kruise.io/container-exit-priority: ${message}`);

    expect(webhookDeny(bad, 'exit')).toContain(`annotation kruise.io/container-exit-priority: ${message}`);
  });

  it('a priority given as a string', () => {
    const bad = podWith({ 'kruise.io/container-exit-priority': '{"envoy":"2"}' });
    const message = exitPriorityValueMessage('envoy', '2')!;
    expect(message).toBe('priority of "envoy" must be a non-negative integer, got "2"');
    expect(validateYaml(bad)[0]!.message).toBe(`annotation kruise.io/container-exit-priority: ${message}`);
    expect(webhookDeny(bad, 'exit')).toContain(message);
  });

  it('a grace period that cannot fit the levels (set, and the 30 s default with many levels)', () => {
    const bad = podWith({ 'kruise.io/container-exit-priority': '{"log-agent":1,"envoy":2}' }, { terminationGracePeriodSeconds: 5 });
    const message = checkExitPriority(bad).find((f) => f.kind === 'grace')!.message;
    expect(message).toMatch(/^terminationGracePeriodSeconds 5 cannot fit the 3 exit levels .* at least 6 s$/);

    const { chart, pod } = podChart({ terminationGracePeriodSeconds: 5 });
    ContainerExitPriority.of(pod).setAll({ 'log-agent': 1, envoy: 2 });
    expect(() => Testing.synth(chart)).toThrow(`[test/pod] ${message}`);
    expect(() => Testing.synth(chart)).toThrow('(at /spec/terminationGracePeriodSeconds)');

    const [v] = validateYaml(bad);
    expect(v).toMatchObject({ ruleId: 'KRUISE-EXITPRIO-004', jsonPointer: '/spec/terminationGracePeriodSeconds' });
    expect(v!.message).toBe(message);
    expect(webhookDeny(bad, 'exit')).toContain(message);

    // 16 levels need 32 s: the default 30 s cannot fit them, and the message says it is the default.
    const many = Array.from({ length: 16 }, (_, i) => ({ name: `c${i}`, image: 'x' }));
    const priorities = Object.fromEntries(many.slice(1).map((c, i) => [c.name, i + 1]));
    const defaulted = { ...podWith({ 'kruise.io/container-exit-priority': JSON.stringify(priorities) }), spec: { containers: many } };
    const m2 = checkExitPriority(defaulted).find((f) => f.kind === 'grace')!.message;
    expect(m2).toMatch(/^terminationGracePeriodSeconds 30 \(the default\) cannot fit the 16 exit levels/);
    expect(validateYaml(defaulted)[0]!.message).toBe(m2);
    expect(webhookDeny(defaulted, 'exit')).toContain(m2);
  });
});

describe('launch priority (KRUISE_CONTAINER_PRIORITY): one message at synth, validate and the webhook', () => {
  it.each([
    ['a fraction', 1.5, '1.5', 'must be an integer, got "1.5"'],
    ['beyond int32', 2 ** 31, String(2 ** 31), `must be within ±2147483647, got "${2 ** 31}"`],
  ])('%s', (_name, value, raw, tail) => {
    const message = parseLaunchPriority(raw).issues[0]!.message;
    expect(message).toBe(`KRUISE_CONTAINER_PRIORITY ${tail}`);

    const { pod } = podChart();
    expect(() => ContainerLaunchPriority.of(pod).set('envoy', value)).toThrow(
      `[test/pod] launch priority of container "envoy": ${message}.`,
    );

    const bad = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [C3[0], { ...C3[2], env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: raw }] }] },
    };
    const [v] = validateYaml(bad);
    expect(v).toMatchObject({ ruleId: 'KRUISE-LAUNCHPRIO-001', file: 'pod.yaml', jsonPointer: '/spec/containers/1/env/0/value' });
    expect(v!.line).toBeGreaterThan(1);
    expect(v!.message).toBe(`container "envoy": ${message}`);
    expect(webhookDeny(bad, 'launch')).toBe(`container launch priority: container "envoy" (at /spec/containers/1): ${message}`);
  });

  it('a word; negative values are fine (upstream allows them); Ordered pods are not read', () => {
    const withValue = (value: string, annotations: Record<string, string> = {}) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', annotations },
      spec: { containers: [C3[0], { ...C3[2], env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value }] }] },
    });
    expect(validateYaml(withValue('high'))[0]!.message).toBe('container "envoy": KRUISE_CONTAINER_PRIORITY must be an integer, got "high"');
    expect(webhookDeny(withValue('high'), 'launch')).toContain('KRUISE_CONTAINER_PRIORITY must be an integer, got "high"');
    expect(validateYaml(withValue('-3'))).toEqual([]);
    expect(webhookDeny(withValue('-3'), 'launch')).toBe('(allowed)');
    const ordered = withValue('high', { 'apps.kruise.io/container-launch-priority': 'Ordered' });
    expect(validateYaml(ordered)).toEqual([]);
    expect(webhookDeny(ordered, 'launch')).toBe('(allowed)');
  });

  it('a hostile value is quoted with a bound', () => {
    const huge = 'x'.repeat(100_000);
    const message = parseLaunchPriority(huge).issues[0]!.message;
    expect(message.length).toBeLessThan(300);
  });
});

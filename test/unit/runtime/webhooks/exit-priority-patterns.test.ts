import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../../src/runtime/core/types.js';
import { resolveExitPriorityPatterns, wireExitPriority } from '../../../../src/runtime/webhooks/exitpriority/decision.js';

const EXPLICIT = 'kruise.io/container-exit-priority';
const PATTERNS = 'kruise.cdk8s.io/container-exit-priority-patterns';

function pod(annotations: Record<string, string>, containers: string[]): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'job-x', namespace: 'ns', annotations: { ...annotations } },
    spec: { terminationGracePeriodSeconds: 30, containers: containers.map((name) => ({ name, image: `example.io/${name}:1` })) },
  } as Pod;
}
const hasHook = (p: Pod, name: string) => (p.spec!.containers.find((c) => c.name === name)!.lifecycle as any)?.preStop !== undefined;

describe('exit-priority pod webhook step: containers named by pattern', () => {
  const table: Array<[string, Record<string, string>, string[], string | undefined]> = [
    [
      'an injected proxy gets its priority',
      { [PATTERNS]: '[{"name":"istio-proxy","priority":2}]' },
      ['app', 'istio-proxy'],
      '{"istio-proxy":2}',
    ],
    [
      'explicit names win and are kept',
      { [EXPLICIT]: '{"log-agent":1}', [PATTERNS]: '[{"namePattern":"-(proxy|agent)$","priority":3}]' },
      ['app', 'log-agent', 'istio-proxy'],
      '{"log-agent":1,"istio-proxy":3}',
    ],
    ['nothing injected (yet): nothing written', { [PATTERNS]: '[{"name":"istio-proxy","priority":2}]' }, ['app'], undefined],
    ['a never-matching pattern: nothing written', { [PATTERNS]: '[{"namePattern":"(a+)+","priority":2}]' }, ['app', 'aaa'], undefined],
    [
      'an unusable explicit annotation is left for the checker',
      { [EXPLICIT]: '{nope', [PATTERNS]: '[{"name":"istio-proxy","priority":2}]' },
      ['app', 'istio-proxy'],
      '{nope',
    ],
  ];
  for (const [name, annotations, containers, expected] of table) {
    it(name, () => {
      const p = pod(annotations, containers);
      resolveExitPriorityPatterns(p);
      expect(p.metadata.annotations![EXPLICIT]).toBe(expected);
    });
  }

  it('wires the hook of the injected proxy; a second call after another injector added a container wires that one too', () => {
    const p = pod({ [PATTERNS]: '[{"name":"istio-proxy","priority":2},{"imagePattern":"vault","priority":1}]' }, ['app', 'istio-proxy']);
    expect(wireExitPriority(p, 'ns', '0123456789abcdef0123')).toBeUndefined();
    expect(hasHook(p, 'istio-proxy')).toBe(true);
    expect(hasHook(p, 'app')).toBe(false);
    // The API server calls the webhook again (reinvocation) after a later injector added its container.
    p.spec!.containers.push({ name: 'vault-agent', image: 'hashicorp/vault:1.17' });
    const before = JSON.stringify(p.spec!.containers[1]);
    expect(wireExitPriority(p, 'ns', '0123456789abcdef0123')).toBeUndefined();
    expect(p.metadata.annotations![EXPLICIT]).toBe('{"vault-agent":1,"istio-proxy":2}');
    expect(hasHook(p, 'vault-agent')).toBe(true);
    expect(JSON.stringify(p.spec!.containers[1])).toBe(before);
  });
});

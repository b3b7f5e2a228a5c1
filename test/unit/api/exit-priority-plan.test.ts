// The exit-priority plan every part shares: levels, each level's share of the grace period, and the
// checks (with their messages) that synth, validate and the pod webhook report.
import { describe, expect, it } from 'vitest';
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  checkExitPriority,
  exitLevelDeadlineMs,
  exitLevels,
  minGraceForExitLevels,
} from '../../../src/api/pod-contracts.js';

describe('exitLevels', () => {
  it.each([
    {
      name: 'main containers first, then ascending priorities',
      containers: ['app', 'log-agent', 'envoy'],
      priorities: { envoy: 2, 'log-agent': 1 },
      want: [
        { priority: 0, containers: ['app'] },
        { priority: 1, containers: ['log-agent'] },
        { priority: 2, containers: ['envoy'] },
      ],
    },
    {
      name: 'priority 0 joins the main containers; equal priorities share a level',
      containers: ['a', 'b', 'c', 'd'],
      priorities: { b: 0, c: 5, d: 5 },
      want: [
        { priority: 0, containers: ['a', 'b'] },
        { priority: 5, containers: ['c', 'd'] },
      ],
    },
    { name: 'names the pod lacks are ignored', containers: ['a'], priorities: { ghost: 3 }, want: [{ priority: 0, containers: ['a'] }] },
    {
      name: 'inherited object keys are not priorities',
      containers: ['constructor', 'toString'],
      priorities: {},
      want: [{ priority: 0, containers: ['constructor', 'toString'] }],
    },
  ])('$name', ({ containers, priorities, want }) => {
    expect(exitLevels(containers, priorities as Record<string, number>)).toEqual(want);
  });
});

describe('exitLevelDeadlineMs: each level waits at most its share, never past grace - 2 s', () => {
  it.each([
    { index: 0, levels: 3, grace: 30, want: 0 },
    { index: 1, levels: 3, grace: 30, want: 10_000 },
    { index: 2, levels: 3, grace: 30, want: 20_000 },
    { index: 2, levels: 3, grace: 6, want: 4_000 },
    // a runtime `--grace-period` shorter than the levels need: clamped so the last level still gets 2 s
    { index: 2, levels: 3, grace: 3, want: 1_000 },
    { index: 1, levels: 2, grace: 1, want: 0 },
    { index: 1, levels: 1, grace: 30, want: 0 },
    { index: 1, levels: 2, grace: -5, want: 0 },
  ])('level $index of $levels, grace $grace s → $want ms', ({ index, levels, grace, want }) => {
    expect(exitLevelDeadlineMs(index, levels, grace)).toBe(want);
  });

  it('minimum grace: 2 s per level, nothing for one level', () => {
    expect(minGraceForExitLevels(1)).toBe(0);
    expect(minGraceForExitLevels(3)).toBe(6);
  });
});

describe('checkExitPriority', () => {
  const pod = (annotation: unknown, spec: Record<string, unknown> = {}) => ({
    metadata: { annotations: { [ANNOTATION_CONTAINER_EXIT_PRIORITY]: annotation } },
    spec: { containers: [{ name: 'app' }, { name: 'log-agent' }, { name: 'envoy' }], ...spec },
  });

  it.each([
    { name: 'valid, default grace 30 s', p: pod('{"log-agent":1,"envoy":2}'), want: [] },
    { name: 'valid at exactly 2 s per level', p: pod('{"log-agent":1,"envoy":2}', { terminationGracePeriodSeconds: 6 }), want: [] },
    { name: 'not JSON', p: pod('{envoy:2}'), want: [['json', /is unusable: not valid JSON/]] },
    { name: 'not a string', p: pod(7), want: [['json', /is unusable: it is not a string/]] },
    { name: 'negative', p: pod('{"envoy":-1}'), want: [['value', /priority of "envoy" must be a non-negative integer, got -1/]] },
    { name: 'fraction', p: pod('{"envoy":1.5}'), want: [['value', /non-negative integer, got 1.5/]] },
    { name: 'string value', p: pod('{"envoy":"2"}'), want: [['value', /got "2"/]] },
    { name: 'unknown container', p: pod('{"envoi":2}'), want: [['unknown-container', /names container "envoi", which is not in the pod/]] },
    {
      name: 'grace too short',
      p: pod('{"log-agent":1,"envoy":2}', { terminationGracePeriodSeconds: 5 }),
      want: [['grace', /terminationGracePeriodSeconds 5 cannot fit the 3 exit levels.*at least 6 s/]],
    },
  ])('$name', ({ p, want }) => {
    const found = checkExitPriority(p);
    expect(found.map((f) => f.kind)).toEqual(want.map(([k]) => k));
    found.forEach((f, i) => expect(f.message).toMatch(want[i]![1] as RegExp));
  });

  it('points at the annotation, or at the grace period', () => {
    expect(checkExitPriority(pod('{"envoi":2}'))[0]!.jsonPointer).toBe('/metadata/annotations/kruise.io~1container-exit-priority');
    expect(checkExitPriority(pod('{"envoy":2,"log-agent":1}', { terminationGracePeriodSeconds: 1 }))[0]!.jsonPointer).toBe(
      '/spec/terminationGracePeriodSeconds',
    );
  });

  it('no annotation, no findings; a huge hostile value is quoted with a bound', () => {
    expect(checkExitPriority({ metadata: {}, spec: {} })).toEqual([]);
    const [f] = checkExitPriority(pod('x'.repeat(1_000_000)));
    expect(f!.message.length).toBeLessThan(500);
  });
});

import { describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  ContainerExitPrioritySchema,
  ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
  formatExitPriority,
  ignoresExitCode,
  isKillSidecar,
  isSidecar,
  launchBarrierConfigMapName,
  launchBarrierKey,
  parseExitPriority,
  parseLaunchPriority,
  quickExitImage,
  sidecarTerminationCrrName,
} from '../../../src/api/index.js';

const env = (pairs: Record<string, string>) => ({ env: Object.entries(pairs).map(([name, value]) => ({ name, value })) });

describe('sidecar markers', () => {
  it('uses the upstream names', () => {
    expect(ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT).toBe('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT');
    expect(ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE).toBe('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE');
    expect(ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE).toBe('KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE');
    expect(ANNOTATION_CONTAINER_EXIT_PRIORITY).toBe('kruise.io/container-exit-priority');
    expect(sidecarTerminationCrrName('abc-123')).toBe('sidecar-termination-abc-123');
  });

  it.each([
    [{}, false, false, undefined],
    [env({ KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT: 'true' }), true, true, undefined],
    [env({ KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT: 'TRUE' }), true, true, undefined],
    [env({ KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT: 'false' }), false, false, undefined],
    [env({ KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE: 'busybox:quit' }), true, false, 'busybox:quit'],
    [env({ KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE: '' }), false, false, undefined],
  ])('classifies %j', (c, sidecar, kill, image) => {
    expect(isSidecar(c)).toBe(sidecar);
    expect(isKillSidecar(c)).toBe(kill);
    expect(quickExitImage(c)).toBe(image);
  });

  it('reads IGNORE_EXIT_CODE case-insensitively', () => {
    expect(ignoresExitCode(env({ KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE: 'True' }))).toBe(true);
    expect(ignoresExitCode(env({ KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE: 'no' }))).toBe(false);
  });
});

describe('parseExitPriority', () => {
  it('parses a valid map', () => {
    expect(parseExitPriority('{"log-agent":1,"envoy":2}')).toEqual({ value: { 'log-agent': 1, envoy: 2 }, issues: [] });
    expect(Value.Check(ContainerExitPrioritySchema, { a: 0, b: 3 })).toBe(true);
  });

  it('reports invalid JSON and non-objects', () => {
    const r = parseExitPriority('{log-agent:1}');
    expect(r.value).toBeUndefined();
    expect(r.issues[0]!.jsonPointer).toBe('');
    expect(r.issues[0]!.message).toMatch(/^not valid JSON/);
    expect(parseExitPriority('[1,2]').issues[0]!.message).toBe('must be a JSON object mapping container names to integers');
  });

  it('reports negative, fractional and non-numeric values at their key and keeps the good ones', () => {
    const r = parseExitPriority('{"a":-1,"b":1.5,"c":"2","d/e":4,"ok":3}');
    expect(r.value).toEqual({ 'd/e': 4, ok: 3 });
    expect(r.issues.map((i) => i.jsonPointer)).toEqual(['/a', '/b', '/c']);
    expect(r.issues[0]!.message).toBe('priority of "a" must be a non-negative integer, got -1');
  });

  it('reports names that are not containers of the pod', () => {
    const r = parseExitPriority('{"envoy":2,"log-agnt":1}', ['app', 'envoy', 'log-agent']);
    expect(r.value).toEqual({ envoy: 2 });
    expect(r.issues).toEqual([
      { jsonPointer: '/log-agnt', message: '"log-agnt" is not a container of this pod', hint: 'containers are: app, envoy, log-agent' },
    ]);
  });

  it('formats deterministically and round-trips', () => {
    const s = formatExitPriority({ envoy: 2, 'log-agent': 1, app: 0 });
    expect(s).toBe('{"app":0,"log-agent":1,"envoy":2}');
    expect(parseExitPriority(s).value).toEqual({ app: 0, 'log-agent': 1, envoy: 2 });
  });
});

describe('launch priority', () => {
  it('parses KRUISE_CONTAINER_PRIORITY within int32 range', () => {
    expect(parseLaunchPriority(undefined)).toEqual({ issues: [] });
    expect(parseLaunchPriority('10').value).toBe(10);
    expect(parseLaunchPriority('-5').value).toBe(-5);
    expect(parseLaunchPriority('1.5').issues[0]!.message).toBe('KRUISE_CONTAINER_PRIORITY must be an integer, got "1.5"');
    expect(parseLaunchPriority('2147483648').issues).toHaveLength(1);
  });
  it('names the barrier', () => {
    expect(launchBarrierConfigMapName('web-0')).toBe('web-0-barrier');
    expect(launchBarrierKey(-1)).toBe('p_-1');
  });
});

import { describe, expect, it } from 'vitest';
import {
  decideLaunchLowering,
  LOWERED_START_WINDOW_SECONDS,
  startupProbeFromReadiness,
  type LaunchLoweringInput,
} from '../../../src/api/launch-lowering.js';

const base: LaunchLoweringInput = {
  containers: ['envoy', 'app'],
  ordered: false,
  priorities: new Map([['envoy', 10]]),
  mechanism: 'auto',
  strategyNative: true,
  nativeAvailable: true,
  versionText: 'context "cdk8s-kruise:kubernetesVersion" is "1.29"',
  jobSidecars: new Set(),
  exitPriority: new Map(),
};

interface Row {
  readonly name: string;
  readonly input: Partial<LaunchLoweringInput>;
  readonly want: { kind: string; sidecars?: string[]; rest?: string[]; text?: RegExp };
}

const ROWS: Row[] = [
  { name: 'one container: nothing to order', input: { containers: ['app'] }, want: { kind: 'none' } },
  {
    name: 'equal priorities: nothing to order',
    input: {
      priorities: new Map([
        ['envoy', 3],
        ['app', 3],
      ]),
    },
    want: { kind: 'none' },
  },
  { name: 'first before the rest lowers', input: {}, want: { kind: 'native', sidecars: ['envoy'], rest: ['app'] } },
  {
    name: 'a chain of single containers lowers, highest first, the lowest level may hold several',
    input: {
      containers: ['app', 'log', 'envoy', 'web'],
      priorities: new Map([
        ['envoy', 10],
        ['log', 5],
      ]),
    },
    want: { kind: 'native', sidecars: ['envoy', 'log'], rest: ['app', 'web'] },
  },
  {
    name: 'Ordered lowers to spec order',
    input: { containers: ['c', 'a', 'b'], ordered: true, priorities: new Map() },
    want: { kind: 'native', sidecars: ['c', 'a'], rest: ['b'] },
  },
  {
    name: 'negative priorities: the containers above the lowest level start first',
    input: { containers: ['envoy', 'app', 'batch'], priorities: new Map([['batch', -5]]) },
    want: { kind: 'barrier', text: /"envoy", "app" share a priority above the lowest/ },
  },
  {
    name: 'two containers sharing a level above the lowest keep the barrier',
    input: {
      containers: ['envoy', 'vault', 'app'],
      priorities: new Map([
        ['envoy', 10],
        ['vault', 10],
      ]),
    },
    want: { kind: 'barrier', text: /"envoy", "vault" share a priority above the lowest, and native sidecars start one at a time/ },
  },
  {
    name: 'forced native on a shared level is an error with a fix',
    input: {
      containers: ['envoy', 'vault', 'app'],
      priorities: new Map([
        ['envoy', 10],
        ['vault', 10],
      ]),
      mechanism: 'native-sidecars',
    },
    want: { kind: 'error', text: /cannot carry out this order: containers "envoy", "vault" share/ },
  },
  { name: 'opt-out keeps the barrier', input: { mechanism: 'barrier' }, want: { kind: 'barrier', text: /LaunchMechanism.BARRIER/ } },
  {
    name: 'auto below 1.29 keeps the barrier and says why',
    input: { strategyNative: false, nativeAvailable: false, versionText: 'context "cdk8s-kruise:kubernetesVersion" is "1.28"' },
    want: { kind: 'barrier', text: /need Kubernetes >= 1.29.*is "1.28"/ },
  },
  {
    name: 'forced native below 1.29 is an error',
    input: { strategyNative: false, nativeAvailable: false, mechanism: 'native-sidecars', versionText: 'context "x" is "1.28"' },
    want: { kind: 'error', text: /NATIVE_SIDECARS needs Kubernetes >= 1.29, but context "x" is "1.28"/ },
  },
  {
    name: 'forced native under the kruise strategy on a 1.29 cluster lowers',
    input: { strategyNative: false, nativeAvailable: true, mechanism: 'native-sidecars' },
    want: { kind: 'native', sidecars: ['envoy'], rest: ['app'] },
  },
  {
    name: 'a Job pod lowers a declared Job sidecar',
    input: { restartPolicy: 'Never', jobSidecars: new Set(['envoy']) },
    want: { kind: 'native', sidecars: ['envoy'], rest: ['app'] },
  },
  {
    name: 'a Job pod keeps the barrier for a container that is not a Job sidecar',
    input: { restartPolicy: 'OnFailure' },
    want: { kind: 'barrier', text: /restartPolicy OnFailure, "envoy" would become native sidecars.*not declared Job sidecars/ },
  },
  {
    name: 'forced native in a Job pod for an undeclared container is an error',
    input: { restartPolicy: 'Never', mechanism: 'native-sidecars' },
    want: { kind: 'error', text: /not declared Job sidecars/ },
  },
  {
    name: 'a lowered Job sidecar under the kruise strategy is an error when forced',
    input: { restartPolicy: 'Never', jobSidecars: new Set(['envoy']), strategyNative: false, mechanism: 'native-sidecars' },
    want: { kind: 'error', text: /"envoy" would become native sidecars, but the sidecar strategy is kruise/ },
  },
  {
    name: 'a lowered container with an exit priority under the kruise strategy is an error when forced',
    input: { exitPriority: new Map([['envoy', 2]]), strategyNative: false, mechanism: 'native-sidecars' },
    want: { kind: 'error', text: /sidecar strategy is kruise/ },
  },
  {
    name: 'exit priorities that fall along the start order lower',
    input: {
      containers: ['envoy', 'log', 'app'],
      priorities: new Map([
        ['envoy', 2],
        ['log', 1],
      ]),
      exitPriority: new Map([
        ['envoy', 2],
        ['log', 1],
      ]),
    },
    want: { kind: 'native', sidecars: ['envoy', 'log'], rest: ['app'] },
  },
  {
    name: 'an exit sidecar that must outlive a lowered container keeps the barrier',
    input: { containers: ['envoy', 'log', 'app'], exitPriority: new Map([['log', 1]]) },
    want: {
      kind: 'barrier',
      text: /"envoy" must start before "log", so as native sidecars it would stop after it, but its exit priority \(0\)/,
    },
  },
  {
    name: 'a lowered container whose exit priority rises along the start order keeps the barrier',
    input: {
      containers: ['envoy', 'log', 'app'],
      priorities: new Map([
        ['envoy', 2],
        ['log', 1],
      ]),
      exitPriority: new Map([['log', 3]]),
    },
    want: { kind: 'barrier', text: /"envoy" must start before "log"/ },
  },
];

describe('decideLaunchLowering', () => {
  for (const row of ROWS) {
    it(row.name, () => {
      const got = decideLaunchLowering({ ...base, ...row.input });
      expect(got.kind).toBe(row.want.kind);
      if (got.kind === 'native')
        expect({ sidecars: got.sidecars, rest: got.rest }).toEqual({ sidecars: row.want.sidecars, rest: row.want.rest });
      if (got.kind === 'barrier') expect(got.reason).toMatch(row.want.text!);
      if (got.kind === 'error') {
        expect(got.message).toMatch(row.want.text!);
        expect(got.fix.length).toBeGreaterThan(20);
      }
    });
  }
});

describe('startupProbeFromReadiness', () => {
  it('takes the readiness check and timing, success 1 and a failure threshold for the start window', () => {
    const readiness = {
      httpGet: { path: '/ready', port: 15021 },
      initialDelaySeconds: 1,
      periodSeconds: 2,
      timeoutSeconds: 3,
      successThreshold: 2,
      failureThreshold: 4,
    };
    expect(startupProbeFromReadiness(readiness)).toEqual({
      httpGet: { path: '/ready', port: 15021 },
      initialDelaySeconds: 1,
      periodSeconds: 2,
      timeoutSeconds: 3,
      successThreshold: 1,
      failureThreshold: LOWERED_START_WINDOW_SECONDS / 2,
    });
  });
  it('uses the default period of 10 s when the probe has none', () => {
    expect(startupProbeFromReadiness({ exec: { command: ['true'] } })).toEqual({
      exec: { command: ['true'] },
      successThreshold: 1,
      failureThreshold: LOWERED_START_WINDOW_SECONDS / 10,
    });
  });
  it('gives no gate without a readiness probe', () => {
    expect(startupProbeFromReadiness(undefined)).toBeUndefined();
  });
});

import { ApiObject, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import {
  ContainerExitPriority,
  ContainerLaunchPriority,
  JobSidecarTermination,
  KUBERNETES_VERSION_CONTEXT,
  LaunchMechanism,
  SIDECAR_STRATEGY_CONTEXT,
} from '../../../constructs/index.js';
import { validateInputs } from '../../../src/policy/engine.js';

type Json = Record<string, any>;

function chartFor(version?: string) {
  const chart = Testing.chart();
  if (version !== undefined) chart.node.setContext(KUBERNETES_VERSION_CONTEXT, version);
  return chart;
}

const spec = (m: Json): Json => m.spec.template.spec;
const metaOf = (m: Json): Json => m.spec.template.metadata ?? {};
const names = (cs: Json[] | undefined) => (cs ?? []).map((c) => c.name);

function deployment(chart: ReturnType<typeof chartFor>) {
  return new kplus.Deployment(chart, 'api', {
    containers: [
      { name: 'app', image: 'example.io/api:1', portNumber: 8080 },
      {
        name: 'envoy',
        image: 'envoyproxy/envoy:v1.31.0',
        readiness: kplus.Probe.fromHttpGet('/ready', { port: 15021, periodSeconds: Duration.seconds(2) }),
      },
    ],
  });
}

function job(chart: ReturnType<typeof chartFor>, containers: string[]) {
  return new ApiObject(chart, 'job', {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'job' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: containers.map((name) => ({ name, image: `${name}:1` })) } } },
  });
}

/** The rule findings of a synthesized chart, by rule id. */
function notes(manifests: Json[], ruleId: string) {
  const content = manifests.map((m) => JSON.stringify(m)).join('\n---\n');
  return validateInputs([{ file: 'out.yaml', content }], { rules: [ruleId] }).findings.filter((f) => f.ruleId === ruleId);
}

describe('launch priority lowered to native sidecars', () => {
  it('on 1.29 the container that starts first becomes a restartable init container gated by its readiness check', () => {
    const chart = chartFor('1.29');
    ContainerLaunchPriority.of(deployment(chart)).set('envoy', 10);
    const [d] = Testing.synth(chart) as Json[];
    const s = spec(d!);
    expect(names(s.containers)).toEqual(['app']);
    expect(names(s.initContainers)).toEqual(['envoy']);
    const envoy = s.initContainers[0];
    expect(envoy.restartPolicy).toBe('Always');
    expect(envoy.env).toBeUndefined();
    expect(envoy.readinessProbe.httpGet).toMatchObject({ path: '/ready', port: 15021 });
    expect(envoy.startupProbe).toMatchObject({
      httpGet: { path: '/ready', port: 15021 },
      periodSeconds: 2,
      successThreshold: 1,
      failureThreshold: 300,
    });
    expect(JSON.stringify(s.containers)).not.toContain('KRUISE_CONTAINER_PRIORITY');
    expect(metaOf(d!).annotations).toEqual({ 'kruise.cdk8s.io/launch-priority-lowered': '["envoy"]' });
    const [note] = notes([d!], 'KRUISE-LAUNCHPRIO-002');
    expect(note).toMatchObject({ severity: 'info', message: expect.stringMatching(/compiled to native sidecars: envoy starts first/) });
  });

  it('gates on readiness where there is a readiness probe, else on the startupProbe the user gave', () => {
    const chart = chartFor('1.30');
    const pod = new ApiObject(chart, 'pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: {
        containers: [
          { name: 'agent', image: 'vault:1', startupProbe: { exec: { command: ['test', '-f', '/started'] } } },
          {
            name: 'proxy',
            image: 'envoy:1',
            startupProbe: { tcpSocket: { port: 15001 }, failureThreshold: 3 },
            readinessProbe: { httpGet: { path: '/ready', port: 15021 }, periodSeconds: 5 },
          },
          { name: 'app', image: 'app:1' },
        ],
      },
    });
    ContainerLaunchPriority.of(pod).inOrder();
    const [p] = Testing.synth(chart) as Json[];
    expect(p!.spec.initContainers[0].startupProbe).toEqual({ exec: { command: ['test', '-f', '/started'] } });
    expect(p!.spec.initContainers[1].startupProbe).toEqual({
      httpGet: { path: '/ready', port: 15021 },
      periodSeconds: 5,
      successThreshold: 1,
      failureThreshold: 120,
    });
    expect(p!.metadata.annotations).toEqual({ 'kruise.cdk8s.io/launch-priority-lowered': '["agent","proxy"]' });
  });

  it('without a version, and with the BARRIER opt-out on 1.29, compiles to the barrier and notes it', () => {
    for (const [version, mechanism] of [
      [undefined, undefined],
      ['1.29', LaunchMechanism.BARRIER],
    ] as const) {
      const chart = chartFor(version);
      ContainerLaunchPriority.of(deployment(chart), mechanism ? { mechanism } : {}).set('envoy', 10);
      const [d] = Testing.synth(chart) as Json[];
      expect(names(spec(d!).containers)).toEqual(['app', 'envoy']);
      expect(spec(d!).initContainers).toBeUndefined();
      expect(spec(d!).containers[1].env).toEqual([{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }]);
      const [note] = notes([d!], 'KRUISE-LAUNCHPRIO-002');
      expect(note).toMatchObject({ severity: 'info', message: expect.stringMatching(/uses the barrier/) });
      expect(note!.hint).toMatch(/On Kubernetes >= 1.29 the constructs lower this order to native sidecars \(envoy first\)/);
    }
  });

  it('a Job lowers its declared sidecars with Ordered and keeps exit order; undeclared first containers keep the barrier', () => {
    const chart = chartFor('1.29');
    const lowered = job(chart, ['proxy', 'log', 'main']);
    ContainerLaunchPriority.of(lowered).inOrder();
    JobSidecarTermination.of(lowered).terminate('proxy').terminate('log');
    ContainerExitPriority.of(lowered).set('proxy', 2).set('log', 1);
    const [j] = Testing.synth(chart) as Json[];
    expect(names(spec(j!).initContainers)).toEqual(['proxy', 'log']);
    expect(names(spec(j!).containers)).toEqual(['main']);
    expect(metaOf(j!).annotations).toEqual({ 'kruise.cdk8s.io/launch-priority-lowered': '["proxy","log"]' });

    const other = chartFor('1.29');
    ContainerLaunchPriority.of(job(other, ['setup', 'main'])).inOrder();
    const [k] = Testing.synth(other) as Json[];
    expect(metaOf(k!).annotations).toEqual({ 'apps.kruise.io/container-launch-priority': 'Ordered' });
    expect(spec(k!).initContainers).toBeUndefined();
    expect(notes([k!], 'KRUISE-LAUNCHPRIO-002')[0]!.hint).toMatch(
      /does not lower to native sidecars: in a pod with restartPolicy Never, "setup"/,
    );
  });

  it('refuses bad combinations at synth with the construct path and a fix', () => {
    const old = chartFor('1.28');
    ContainerLaunchPriority.of(deployment(old), { mechanism: LaunchMechanism.NATIVE_SIDECARS }).set('envoy', 1);
    expect(() => Testing.synth(old)).toThrow(
      /\[test\/api\] launch priority: LaunchMechanism.NATIVE_SIDECARS needs Kubernetes >= 1.29, but context "cdk8s-kruise:kubernetesVersion" is "1.28"\. Fix: set the context/,
    );

    const kruise = chartFor('1.29');
    kruise.node.setContext(SIDECAR_STRATEGY_CONTEXT, 'kruise');
    const j = job(kruise, ['proxy', 'main']);
    ContainerLaunchPriority.of(j, { mechanism: LaunchMechanism.NATIVE_SIDECARS }).inOrder();
    JobSidecarTermination.of(j).terminate('proxy');
    expect(() => Testing.synth(kruise)).toThrow(
      /\[test\/job\] launch priority: .*"proxy" would become native sidecars, but the sidecar strategy is kruise.*Fix: /,
    );

    const shared = chartFor('1.29');
    const p = new ApiObject(shared, 'pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { containers: ['a', 'b', 'c'].map((name) => ({ name, image: 'x' })) },
    });
    ContainerLaunchPriority.of(p, { mechanism: LaunchMechanism.NATIVE_SIDECARS }).set('a', 1).set('b', 1);
    expect(() => Testing.synth(shared)).toThrow(/containers "a", "b" share a priority above the lowest/);

    const twice = chartFor('1.29');
    const d = deployment(twice);
    ContainerLaunchPriority.of(d, { mechanism: LaunchMechanism.BARRIER });
    expect(() => ContainerLaunchPriority.of(d, { mechanism: LaunchMechanism.NATIVE_SIDECARS })).toThrow(/conflicts with "barrier"/);
    expect(() => ContainerLaunchPriority.of(d, { mechanism: 'fast' as LaunchMechanism })).toThrow(
      /"fast" is not one of auto, barrier, native-sidecars/,
    );
  });

  it('under the native strategy, an exit-priority sidecar kept off the lowering starts first: refused when its launch priority says otherwise', () => {
    const ok = chartFor('1.29');
    const pod = new ApiObject(ok, 'pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { containers: ['log', 'envoy', 'vault', 'app'].map((name) => ({ name, image: 'x' })) },
    });
    // envoy and vault share a level: the barrier stays; log (exit priority 1) becomes a native sidecar without the env.
    ContainerLaunchPriority.of(pod).set('log', 20).set('envoy', 10).set('vault', 10);
    ContainerExitPriority.of(pod).set('log', 1);
    const [p] = Testing.synth(ok) as Json[];
    expect(names(p!.spec.initContainers)).toEqual(['log']);
    expect(p!.spec.initContainers[0].env).toBeUndefined();
    expect(p!.spec.containers.map((c: Json) => [c.name, c.env?.[0]?.value])).toEqual([
      ['envoy', '10'],
      ['vault', '10'],
      ['app', undefined],
    ]);
    expect(notes([p!], 'KRUISE-LAUNCHPRIO-003')).toEqual([]);

    const bad = chartFor('1.29');
    const other = new ApiObject(bad, 'pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { containers: ['log', 'envoy', 'vault', 'app'].map((name) => ({ name, image: 'x' })) },
    });
    ContainerLaunchPriority.of(other).set('envoy', 10).set('vault', 10);
    ContainerExitPriority.of(other).set('log', 1);
    expect(() => Testing.synth(bad)).toThrow(
      /\[test\/pod\] launch priority: "log" becomes a native sidecar .* its launch priority \(0\) is below "envoy"'s \(10\)\. Fix: /,
    );
  });

  it('a lowered pod carries nothing the barrier webhooks read', () => {
    const chart = chartFor('1.29');
    ContainerLaunchPriority.of(deployment(chart)).set('envoy', 10).set('app', -1);
    const [d] = Testing.synth(chart) as Json[];
    const text = JSON.stringify(d);
    expect(text).not.toContain('KRUISE_CONTAINER_PRIORITY');
    expect(text).not.toContain('apps.kruise.io/container-launch-priority');
    expect(notes([d!], 'KRUISE-LAUNCHPRIO-003')).toEqual([]);
  });
});

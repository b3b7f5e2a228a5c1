import { ApiObject, Cron, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import {
  CloneSet,
  ContainerExitPriority,
  ContainerLaunchPriority,
  JobSidecarTermination,
  KUBERNETES_VERSION_CONTEXT,
  parseKubernetesVersion,
  SIDECAR_STRATEGY_CONTEXT,
  SidecarStrategy,
  sidecarStrategyOf,
  SidecarTerminationMode,
} from '../../../../constructs/index.js';
import { compilePodFeatures } from '../../../../constructs/internal/pod-features.js';
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
} from '../../../../src/api/pod-contracts.js';

type Json = Record<string, any>;

function chartFor(version?: string) {
  const chart = Testing.chart();
  if (version !== undefined) chart.node.setContext(KUBERNETES_VERSION_CONTEXT, version);
  return chart;
}

function podSpec(manifest: Json): Json {
  return manifest.kind === 'CronJob' ? manifest.spec.jobTemplate.spec.template.spec : manifest.spec.template.spec;
}

function envOf(container: Json): Record<string, string> {
  return Object.fromEntries((container.env ?? []).map((e: Json) => [e.name, e.value]));
}

function named(containers: Json[] | undefined, name: string): Json {
  const found = (containers ?? []).find((c) => c.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

function jobWithSidecar(version?: string) {
  const chart = chartFor(version);
  const job = new kplus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
  return { chart, job };
}

describe('Job sidecar termination (Kruise strategy)', () => {
  it('kill mode marks the sidecar with the env marker and leaves main containers alone', () => {
    const { chart, job } = jobWithSidecar();
    JobSidecarTermination.of(job).addSidecar({ name: 'envoy', image: 'envoyproxy/envoy:v1.30.1' });
    const spec = podSpec(Testing.synth(chart)[0]);
    expect(envOf(named(spec.containers, 'envoy'))).toEqual({ [ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT]: 'true' });
    expect(named(spec.containers, 'main').env).toBeUndefined();
    expect(spec.initContainers).toBeUndefined();
    expect(spec.restartPolicy).toBe('Never');
  });

  it('ignoreExitCode adds the ignore marker; quick-exit-image mode sets the image marker', () => {
    const { chart, job } = jobWithSidecar();
    job.addContainer({ name: 'a', image: 'x' });
    job.addContainer({ name: 'b', image: 'y' });
    JobSidecarTermination.of(job)
      .terminate('a', { ignoreExitCode: true })
      .terminate('b', { mode: SidecarTerminationMode.quickExitImage('example.io/quick-exit:v1') });
    const spec = podSpec(Testing.synth(chart)[0]);
    expect(envOf(named(spec.containers, 'a'))).toEqual({
      [ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT]: 'true',
      [ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE]: 'true',
    });
    expect(envOf(named(spec.containers, 'b'))).toEqual({
      [ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE]: 'example.io/quick-exit:v1',
    });
  });

  it("keeps the sidecar's own env and overwrites a stale marker instead of duplicating it", () => {
    const { chart, job } = jobWithSidecar();
    job.addContainer({
      name: 'envoy',
      image: 'envoy',
      envVariables: { LEVEL: kplus.EnvValue.fromValue('info'), [ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT]: kplus.EnvValue.fromValue('false') },
    });
    JobSidecarTermination.of(job).terminate('envoy');
    const env = named(podSpec(Testing.synth(chart)[0]).containers, 'envoy').env;
    expect(env).toEqual([
      { name: 'LEVEL', value: 'info' },
      { name: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: 'true' },
    ]);
  });

  it('is lazy: containers added after terminate() are found at synth', () => {
    const { chart, job } = jobWithSidecar();
    JobSidecarTermination.of(job).terminate('late');
    job.addContainer({ name: 'late', image: 'busybox' });
    expect(envOf(named(podSpec(Testing.synth(chart)[0]).containers, 'late'))).toHaveProperty(ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, 'true');
  });

  it('works on a cdk8s-plus CronJob (pod template under spec.jobTemplate)', () => {
    const chart = Testing.chart();
    const cron = new kplus.CronJob(chart, 'cron', {
      schedule: Cron.daily(),
      containers: [
        { name: 'main', image: 'busybox' },
        { name: 'proxy', image: 'envoy' },
      ],
    });
    JobSidecarTermination.of(cron).terminate('proxy');
    const spec = podSpec(Testing.synth(chart)[0]);
    expect(envOf(named(spec.containers, 'proxy'))).toEqual({ [ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT]: 'true' });
  });

  it('works on a raw ApiObject Job and CronJob (OnFailure)', () => {
    const chart = Testing.chart();
    const job = new ApiObject(chart, 'raw-job', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      spec: {
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [
              { name: 'main', image: 'a' },
              { name: 'proxy', image: 'b' },
            ],
          },
        },
      },
    });
    const cron = new ApiObject(chart, 'raw-cron', {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      spec: {
        schedule: '0 * * * *',
        jobTemplate: {
          spec: {
            template: {
              spec: {
                restartPolicy: 'OnFailure',
                containers: [
                  { name: 'main', image: 'a' },
                  { name: 'proxy', image: 'b' },
                ],
              },
            },
          },
        },
      },
    });
    JobSidecarTermination.of(job).terminate('proxy');
    JobSidecarTermination.of(cron).terminate('proxy');
    const [j, c] = Testing.synth(chart);
    expect(envOf(named(podSpec(j).containers, 'proxy'))).toEqual({ [ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT]: 'true' });
    expect(envOf(named(podSpec(c).containers, 'proxy'))).toEqual({ [ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT]: 'true' });
    expect(c.spec.schedule).toBe('0 * * * *');
  });
});

describe('Job sidecar termination errors', () => {
  it('rejects a kplus owner with restartPolicy Always eagerly, naming the construct path', () => {
    const chart = Testing.chart();
    const deployment = new kplus.Deployment(chart, 'web', { containers: [{ image: 'nginx' }] });
    expect(() => JobSidecarTermination.of(deployment)).toThrow(
      /\[test\/web\] Job sidecar termination needs restartPolicy Never or OnFailure/,
    );
  });

  it('rejects a raw Job whose restartPolicy is Always or unset at synth, with path and JSON pointer', () => {
    const chart = Testing.chart();
    const job = new ApiObject(chart, 'raw', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'main', image: 'a' },
              { name: 'proxy', image: 'b' },
            ],
          },
        },
      },
    });
    JobSidecarTermination.of(job).terminate('proxy');
    expect(() => Testing.synth(chart)).toThrow(
      /\[test\/raw\] .*has Always \(the Kubernetes default when unset\).*\(at \/spec\/template\/spec\/restartPolicy\)/,
    );
  });

  it('rejects a container name that does not exist, listing the real ones', () => {
    const { chart, job } = jobWithSidecar();
    job.addContainer({ name: 'envoy', image: 'envoy' });
    JobSidecarTermination.of(job).terminate('envoi');
    expect(() => Testing.synth(chart)).toThrow(
      '[test/job] container "envoi" does not exist; the pod template\'s containers are: main, envoy',
    );
  });

  it('explains when the named container is an init container', () => {
    const { chart, job } = jobWithSidecar();
    job.addInitContainer({ name: 'setup', image: 'busybox' });
    JobSidecarTermination.of(job).terminate('setup');
    expect(() => Testing.synth(chart)).toThrow(/"setup" is an init container/);
  });

  it('rejects a pod where no main container would remain', () => {
    const { chart, job } = jobWithSidecar();
    JobSidecarTermination.of(job).terminate('main');
    expect(() => Testing.synth(chart)).toThrow(/\[test\/job\] no main container would remain/);
  });

  it('rejects invalid names, images and ignoreExitCode with a quick-exit image eagerly', () => {
    const { job } = jobWithSidecar();
    expect(() => JobSidecarTermination.of(job).terminate('Bad_Name')).toThrow(/not a valid container name/);
    expect(() => SidecarTerminationMode.quickExitImage('Not An Image')).toThrow(/not a valid image reference/);
    expect(() =>
      JobSidecarTermination.of(job).terminate('main', {
        mode: SidecarTerminationMode.quickExitImage('busybox'),
        ignoreExitCode: true,
      }),
    ).toThrow(/ignoreExitCode is only honoured in kill mode/);
    expect(() => JobSidecarTermination.of(job).addSidecar({ image: 'x' })).toThrow(/needs a name/);
  });

  it('rejects a manifest without a pod template', () => {
    const chart = Testing.chart();
    const cm = new ApiObject(chart, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', data: {} });
    ContainerExitPriority.of(cm).set('x', 1);
    expect(() => Testing.synth(chart)).toThrow(/\[test\/cm\] kind ConfigMap has no pod template/);
  });
});

describe('container exit priority (Kruise strategy)', () => {
  it('writes the annotation as a JSON map on a CloneSet, a Deployment and a raw Pod', () => {
    const chart = Testing.chart();
    const clone = new CloneSet(chart, 'clone', {
      containers: [
        { name: 'app', image: 'a' },
        { name: 'log-agent', image: 'b' },
        { name: 'envoy', image: 'c' },
      ],
    });
    ContainerExitPriority.of(clone).setAll({ envoy: 2, 'log-agent': 1 });
    const deploy = new kplus.Deployment(chart, 'deploy', {
      containers: [
        { name: 'app', image: 'a' },
        { name: 'envoy', image: 'c' },
      ],
    });
    ContainerExitPriority.of(deploy).set('envoy', 3);
    const pod = new ApiObject(chart, 'pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { annotations: { keep: 'me' } },
      spec: {
        containers: [
          { name: 'app', image: 'a' },
          { name: 'envoy', image: 'c' },
        ],
      },
    });
    ContainerExitPriority.of(pod).set('envoy', 1);
    const [c, d, p] = Testing.synth(chart);
    expect(c.spec.template.metadata.annotations).toEqual({ [ANNOTATION_CONTAINER_EXIT_PRIORITY]: '{"log-agent":1,"envoy":2}' });
    expect(d.spec.template.metadata.annotations[ANNOTATION_CONTAINER_EXIT_PRIORITY]).toBe('{"envoy":3}');
    expect(p.metadata.annotations).toEqual({ keep: 'me', [ANNOTATION_CONTAINER_EXIT_PRIORITY]: '{"envoy":1}' });
    expect(ContainerExitPriority.of(clone).priorities).toEqual({ envoy: 2, 'log-agent': 1 });
  });

  it('rejects negative and non-integer priorities eagerly and unknown names at synth', () => {
    const chart = Testing.chart();
    const clone = new CloneSet(chart, 'clone', { containers: [{ name: 'app', image: 'a' }] });
    expect(() => ContainerExitPriority.of(clone).set('app', -1)).toThrow(
      /\[test\/clone\] exit priority: priority of "app" must be a non-negative integer, got -1/,
    );
    expect(() => ContainerExitPriority.of(clone).set('app', 1.5)).toThrow(/non-negative integer, got 1.5/);
    ContainerExitPriority.of(clone).set('sidecar', 1);
    expect(() => Testing.synth(chart)).toThrow(
      '[test/clone] annotation kruise.io/container-exit-priority names container "sidecar", which is not in the pod (containers: app)',
    );
  });

  it('rejects at synth a grace period that cannot fit the exit levels, with the construct path and pointer', () => {
    const chart = Testing.chart();
    const pod = new ApiObject(chart, 'pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: {
        terminationGracePeriodSeconds: 5,
        containers: [
          { name: 'app', image: 'a' },
          { name: 'log-agent', image: 'b' },
          { name: 'envoy', image: 'c' },
        ],
      },
    });
    ContainerExitPriority.of(pod).setAll({ 'log-agent': 1, envoy: 2 });
    expect(() => Testing.synth(chart)).toThrow(
      /\[test\/pod\] terminationGracePeriodSeconds 5 cannot fit the 3 exit levels .*at least 6 s.*\(at \/spec\/terminationGracePeriodSeconds\)/,
    );
  });

  it('rejects priorities above 0 on every container (no main container would remain)', () => {
    const chart = Testing.chart();
    const clone = new CloneSet(chart, 'clone', { containers: [{ name: 'app', image: 'a' }] });
    ContainerExitPriority.of(clone).set('app', 1);
    expect(() => Testing.synth(chart)).toThrow(/no main container would remain/);
  });

  it('priority 0 keeps a container with the main containers', () => {
    const chart = chartFor('1.30');
    const clone = new CloneSet(chart, 'clone', {
      containers: [
        { name: 'app', image: 'a' },
        { name: 'b', image: 'b' },
      ],
    });
    ContainerExitPriority.of(clone).set('b', 0);
    const spec = podSpec(Testing.synth(chart)[0]);
    expect(spec.containers.map((c: Json) => c.name)).toEqual(['app', 'b']);
    expect(spec.initContainers).toBeUndefined();
  });
});

describe('native sidecar strategy (same user code, Kubernetes >= 1.29)', () => {
  function build(version: string | undefined) {
    const chart = chartFor(version);
    const job = new kplus.Job(chart, 'job', {
      containers: [{ name: 'main', image: 'busybox' }],
      initContainers: [{ name: 'setup', image: 'busybox' }],
    });
    const sidecars = JobSidecarTermination.of(job);
    sidecars.addSidecar({ name: 'log-agent', image: 'fluent/fluent-bit:3.0' }, { ignoreExitCode: true });
    sidecars.addSidecar({ name: 'envoy', image: 'envoy', readiness: kplus.Probe.fromTcpSocket({ port: 15001 }) });
    ContainerExitPriority.of(job).setAll({ 'log-agent': 1, envoy: 2 });
    return Testing.synth(chart)[0];
  }

  it('compiles to initContainers with restartPolicy Always, highest priority first, probes kept', () => {
    const manifest = build('1.29');
    const spec = podSpec(manifest);
    expect(spec.containers.map((c: Json) => c.name)).toEqual(['main']);
    expect(spec.initContainers.map((c: Json) => [c.name, c.restartPolicy])).toEqual([
      ['setup', undefined],
      ['envoy', 'Always'],
      ['log-agent', 'Always'],
    ]);
    expect(named(spec.initContainers, 'envoy').readinessProbe).toEqual({ failureThreshold: 3, tcpSocket: { port: 15001 } });
    expect(named(spec.initContainers, 'envoy').env).toBeUndefined();
    expect(manifest.spec.template.metadata.annotations).toBeUndefined();
    expect(spec.restartPolicy).toBe('Never');
  });

  it('the same code below 1.29 compiles to the Kruise contracts', () => {
    const manifest = build('v1.28.4');
    const spec = podSpec(manifest);
    expect(spec.containers.map((c: Json) => c.name)).toEqual(['main', 'log-agent', 'envoy']);
    expect(spec.initContainers.map((c: Json) => c.name)).toEqual(['setup']);
    expect(envOf(named(spec.containers, 'log-agent'))).toHaveProperty(ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE, 'true');
    expect(manifest.spec.template.metadata.annotations[ANNOTATION_CONTAINER_EXIT_PRIORITY]).toBe('{"log-agent":1,"envoy":2}');
  });

  it('unset version means Kruise; the strategy key overrides the version', () => {
    expect(podSpec(build(undefined)).containers).toHaveLength(3);
    const chart = Testing.chart();
    chart.node.setContext(KUBERNETES_VERSION_CONTEXT, '1.27');
    chart.node.setContext(SIDECAR_STRATEGY_CONTEXT, 'native');
    expect(sidecarStrategyOf(chart)).toBe(SidecarStrategy.NATIVE);
  });

  it('exit priorities alone on a CloneSet become ordered native sidecars', () => {
    const chart = chartFor('1.31');
    const clone = new CloneSet(chart, 'clone', {
      containers: [
        { name: 'log-agent', image: 'b' },
        { name: 'app', image: 'a' },
        { name: 'envoy', image: 'c' },
      ],
    });
    ContainerExitPriority.of(clone).setAll({ 'log-agent': 1, envoy: 2 });
    const spec = podSpec(Testing.synth(chart)[0]);
    expect(spec.containers.map((c: Json) => c.name)).toEqual(['app']);
    expect(spec.initContainers.map((c: Json) => c.name)).toEqual(['envoy', 'log-agent']);
    expect(spec.restartPolicy).toBe('Always');
  });

  it('reports the same errors under both strategies', () => {
    for (const version of ['1.28', '1.29']) {
      const { chart, job } = jobWithSidecar(version);
      JobSidecarTermination.of(job).terminate('missing');
      expect(() => Testing.synth(chart)).toThrow('[test/job] container "missing" does not exist');
    }
  });

  it('rejects bad context values with the key name', () => {
    const numeric = Testing.chart();
    numeric.node.setContext(KUBERNETES_VERSION_CONTEXT, 1.3);
    expect(() => sidecarStrategyOf(numeric)).toThrow(/must be a string like "1.29".*1.30 === 1.3/);
    const garbage = Testing.chart();
    garbage.node.setContext(SIDECAR_STRATEGY_CONTEXT, 'sometimes');
    expect(() => sidecarStrategyOf(garbage)).toThrow(/"cdk8s-kruise:sidecarStrategy" = "sometimes" is invalid/);
  });

  it.each([
    ['1.29', { major: 1, minor: 29 }],
    ['v1.30.2', { major: 1, minor: 30 }],
    ['1.28.0-gke.100', { major: 1, minor: 28 }],
  ])('parses version %s', (input, expected) => {
    expect(parseKubernetesVersion(input, 'x')).toEqual(expected);
  });

  it('rejects an unparsable version', () => {
    expect(() => parseKubernetesVersion('latest', 'app')).toThrow(/\[app\] .*"latest" is not a Kubernetes version/);
  });
});

describe('compilePodFeatures (pure)', () => {
  const manifest = () => ({
    kind: 'Job',
    spec: {
      template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'm' }, { name: 's', env: [{ name: 'X', value: '1' }] }] } },
    },
  });
  const decls = {
    sidecars: new Map([['s', { ignoreExitCode: false }]]),
    exitPriority: new Map<string, number>(),
  };

  it('is a no-op without declarations', () => {
    const m = manifest();
    compilePodFeatures(m, { sidecars: new Map(), exitPriority: new Map() }, SidecarStrategy.NATIVE, 'p');
    expect(m).toEqual(manifest());
  });

  it('kruise: appends the marker after existing env', () => {
    const m = manifest();
    compilePodFeatures(m, decls, SidecarStrategy.KRUISE, 'p');
    expect(m.spec.template.spec.containers[1]).toEqual({
      env: [
        { name: 'X', value: '1' },
        { name: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: 'true' },
      ],
      name: 's',
    });
  });

  it('native: moves the sidecar and keeps its env', () => {
    const m = manifest();
    compilePodFeatures(m, decls, SidecarStrategy.NATIVE, 'p');
    expect(m.spec.template.spec).toEqual({
      containers: [{ name: 'm' }],
      initContainers: [{ env: [{ name: 'X', value: '1' }], name: 's', restartPolicy: 'Always' }],
      restartPolicy: 'OnFailure',
    });
  });
});

describe('container launch priority (upstream contract)', () => {
  it('writes KRUISE_CONTAINER_PRIORITY per container, or the Ordered annotation', () => {
    const chart = Testing.chart();
    const deploy = new kplus.Deployment(chart, 'deploy', {
      containers: [
        { name: 'app', image: 'a' },
        { name: 'envoy', image: 'c' },
      ],
    });
    ContainerLaunchPriority.of(deploy).set('envoy', 10).set('app', -1);
    const job = new ApiObject(chart, 'pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: {
        containers: [
          { name: 'a', image: 'a' },
          { name: 'b', image: 'b' },
        ],
      },
    });
    ContainerLaunchPriority.of(job).inOrder();
    const [d, p] = Testing.synth(chart);
    expect(envOf(named(podSpec(d).containers, 'envoy')).KRUISE_CONTAINER_PRIORITY).toBe('10');
    expect(envOf(named(podSpec(d).containers, 'app')).KRUISE_CONTAINER_PRIORITY).toBe('-1');
    expect(p.metadata.annotations).toEqual({ 'apps.kruise.io/container-launch-priority': 'Ordered' });
  });

  it('rejects bad priorities and mixing eagerly, unknown names at synth', () => {
    const chart = Testing.chart();
    const clone = new CloneSet(chart, 'clone', { containers: [{ name: 'app', image: 'a' }] });
    expect(() => ContainerLaunchPriority.of(clone).set('app', 1.5)).toThrow(
      /\[test\/clone\] launch priority of container "app": KRUISE_CONTAINER_PRIORITY must be an integer, got "1.5"/,
    );
    expect(() => ContainerLaunchPriority.of(clone).set('app', 2 ** 31)).toThrow(/within ±2147483647/);
    ContainerLaunchPriority.of(clone).set('ghost', 1);
    expect(() => ContainerLaunchPriority.of(clone).inOrder()).toThrow(/exclude each other/);
    expect(() => Testing.synth(chart)).toThrow('[test/clone] container "ghost" does not exist');
  });
});

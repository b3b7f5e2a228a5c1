import { Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import {
  ContainerExitPriority,
  InjectedSidecar,
  JobSidecarTermination,
  KUBERNETES_VERSION_CONTEXT,
  SidecarShutdownMethod,
} from '../../../constructs/index.js';
import { parseTerminateSidecars } from '../../../src/api/container-patterns.js';

type Json = Record<string, any>;
const TERMINATE = 'kruise.cdk8s.io/terminate-sidecars';
const PRIO = 'kruise.cdk8s.io/container-exit-priority-patterns';

function job(version?: string) {
  const chart = Testing.chart();
  if (version) chart.node.setContext(KUBERNETES_VERSION_CONTEXT, version);
  const j = new kplus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
  return { chart, job: j };
}
const template = (chart: ReturnType<typeof Testing.chart>): Json => Testing.synth(chart)[0].spec.template;

describe('InjectedSidecar: sidecars another webhook adds, declared by name or pattern', () => {
  it('compiles the presets to the terminate-sidecars annotation, on either sidecar strategy', () => {
    for (const version of [undefined, '1.31']) {
      const { chart, job: j } = job(version);
      JobSidecarTermination.of(j, {
        injectedSidecars: [
          InjectedSidecar.istio(),
          InjectedSidecar.linkerd(),
          InjectedSidecar.vaultAgent(),
          InjectedSidecar.cloudSqlProxy(),
        ],
      });
      const t = template(chart);
      expect(JSON.parse(t.metadata.annotations[TERMINATE])).toEqual([
        { name: 'istio-proxy', ignoreExitCode: true, shutdown: { exec: { command: ['pilot-agent', 'request', 'POST', 'quitquitquit'] } } },
        { name: 'linkerd-proxy', ignoreExitCode: true },
        { name: 'vault-agent', ignoreExitCode: true },
        { imagePattern: 'cloud-sql-proxy|cloudsql-proxy|gce-proxy', ignoreExitCode: true },
      ]);
      // The value reads back without an issue through the runtime's parser.
      expect(parseTerminateSidecars(t.metadata.annotations[TERMINATE]).issues).toEqual([]);
      expect(t.spec.containers.map((c: Json) => c.name)).toEqual(['main']);
      expect(t.spec.initContainers).toBeUndefined();
    }
  });

  it('a name declared by pattern is not refused for being absent at synth', () => {
    const { chart, job: j } = job();
    JobSidecarTermination.of(j, { injectedSidecars: [InjectedSidecar.named('istio-proxy')] }).terminate('istio-proxy');
    ContainerExitPriority.of(j).set(InjectedSidecar.istio(), 2);
    const t = template(chart);
    expect(JSON.parse(t.metadata.annotations[PRIO])).toEqual([{ name: 'istio-proxy', priority: 2 }]);
  });

  it('an unseen name without a pattern is still refused', () => {
    const { chart, job: j } = job();
    JobSidecarTermination.of(j).terminate('istio-proxy');
    expect(() => Testing.synth(chart)).toThrow(/container "istio-proxy" does not exist/);
  });

  it('custom shutdowns, image patterns and ignoreExitCode', () => {
    const { chart, job: j } = job();
    JobSidecarTermination.of(j)
      .terminateInjected(InjectedSidecar.image(/cloud-sql-proxy/, { ignoreExitCode: false }))
      .terminateInjected(InjectedSidecar.namePattern('^mesh-', { shutdown: SidecarShutdownMethod.httpPost(15020, '/quitquitquit') }));
    expect(JSON.parse(template(chart).metadata.annotations[TERMINATE])).toEqual([
      { imagePattern: 'cloud-sql-proxy' },
      { namePattern: '^mesh-', ignoreExitCode: true, shutdown: { httpPost: { port: 15020, path: '/quitquitquit' } } },
    ]);
  });

  it('a pattern that matches every container at synth fails (the runtime would ignore it)', () => {
    const { chart, job: j } = job();
    JobSidecarTermination.of(j, { injectedSidecars: [InjectedSidecar.namePattern('ma')] });
    expect(() => Testing.synth(chart)).toThrow(
      /no main container would remain: every container \(main\) matches a declared sidecar pattern/,
    );
  });

  it('hostile patterns and shutdowns fail at once, with the reason', () => {
    expect(() => InjectedSidecar.namePattern('')).toThrow(/is empty/);
    expect(() => InjectedSidecar.namePattern('(a+)+')).toThrow(/exponential/);
    expect(() => InjectedSidecar.image(/proxy/i)).toThrow(/flags \/i are not supported/);
    expect(() => InjectedSidecar.image('(')).toThrow(/not a valid regular expression/);
    expect(() => InjectedSidecar.named('Istio_Proxy')).toThrow(/not a valid container name/);
    expect(() => SidecarShutdownMethod.httpPost(0, '/q')).toThrow(/port must be 1-65535/);
    expect(() => SidecarShutdownMethod.httpPost(80, 'q')).toThrow(/must start with "\/"/);
    expect(() => SidecarShutdownMethod.exec([])).toThrow(/non-empty list/);
  });

  it('needs a restartPolicy Never or OnFailure', () => {
    const chart = Testing.chart();
    const d = new kplus.Deployment(chart, 'web', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
    expect(() => JobSidecarTermination.of(d, { injectedSidecars: [InjectedSidecar.istio()] })).toThrow(
      /needs restartPolicy Never or OnFailure/,
    );
  });

  it('exit priority by pattern works on a Deployment (the app stops before the mesh proxy)', () => {
    const chart = Testing.chart();
    const d = new kplus.Deployment(chart, 'web', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
    ContainerExitPriority.of(d).set(InjectedSidecar.linkerd(), 1);
    const t = Testing.synth(chart)[0].spec.template;
    expect(JSON.parse(t.metadata.annotations[PRIO])).toEqual([{ name: 'linkerd-proxy', priority: 1 }]);
    expect(t.metadata.annotations['kruise.io/container-exit-priority']).toBeUndefined();
  });
});

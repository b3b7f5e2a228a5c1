import { Chart, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { KruiseRuntime, PodProbeMarker } from '../../../constructs/index.js';
import { validateObject } from '../../../src/api/index.js';
import { validateInputs } from '../../../src/policy/engine.js';

const chart = () => new Chart(Testing.app(), 'test');

function game(c: Chart) {
  const d = new kplus.Deployment(c, 'game', { replicas: 2 });
  const main = d.addContainer({ name: 'main', image: 'example.io/game:1', portNumber: 8080, securityContext: { ensureNonRoot: false } });
  return { d, main };
}

describe('PodProbeMarker construct', () => {
  it('renders probes of the workload’s container with their conditions and marks, valid against the schema', () => {
    const c = chart();
    const { d, main } = game(c);
    new PodProbeMarker(c, 'probes', { workloads: [d] })
      .addProbe({
        name: 'idle',
        container: main,
        probe: kplus.Probe.fromCommand(['cat', '/idle'], { periodSeconds: Duration.seconds(5) }),
        conditionType: 'game.io/idle',
        whenSucceeded: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-10' } },
        whenFailed: { labels: { 'game.io/busy': 'true' } },
      })
      .addProbe({ name: 'http', container: main, probe: kplus.Probe.fromHttpGet('/ready'), conditionType: 'game.io/http' });
    const o = Testing.synth(c).find((x) => x.kind === 'PodProbeMarker')!;
    expect(o.spec).toEqual({
      selector: { matchLabels: d.matchLabels },
      probes: [
        {
          name: 'idle',
          containerName: 'main',
          probe: { exec: { command: ['cat', '/idle'] }, failureThreshold: 3, periodSeconds: 5 },
          markerPolicy: [
            { state: 'Succeeded', annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-10' } },
            { state: 'Failed', labels: { 'game.io/busy': 'true' } },
          ],
          podConditionType: 'game.io/idle',
        },
        {
          name: 'http',
          containerName: 'main',
          probe: { httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' }, failureThreshold: 3 },
          podConditionType: 'game.io/http',
        },
      ],
    });
    expect(validateObject(o).issues).toEqual([]);
  });

  it('selects by a label selector when given one', () => {
    const c = chart();
    const { main } = game(c);
    new PodProbeMarker(c, 'probes', {
      selector: kplus.LabelSelector.of({ labels: { app: 'game' } }),
      probes: [{ name: 'tcp', container: main, probe: kplus.Probe.fromTcpSocket(), conditionType: 'game.io/tcp' }],
    });
    const o = Testing.synth(c).find((x) => x.kind === 'PodProbeMarker')!;
    expect(o.spec.selector).toEqual({ matchLabels: { app: 'game' } });
    expect(o.spec.probes[0].probe.tcpSocket).toEqual({ port: 8080 });
  });

  it.each([
    ['neither workloads nor selector', () => ({}), /give either workloads .* or selector, not neither/],
    ['an empty selector', () => ({ selector: kplus.LabelSelector.of({}) }), /selector is empty/],
  ])('refuses %s, naming the construct', (_n, props, message) => {
    expect(() => new PodProbeMarker(chart(), 'probes', props())).toThrow(message);
    expect(() => new PodProbeMarker(chart(), 'probes', props())).toThrow(/\[test\/probes\]/);
  });

  it('refuses a probe on a container the workload does not have, a duplicate name, and a probe that marks nothing', () => {
    const c = chart();
    const { d, main } = game(c);
    const other = new kplus.Deployment(c, 'other').addContainer({ name: 'sidecar', image: 'example.io/s:1' });
    const m = new PodProbeMarker(c, 'probes', { workloads: [d] });
    expect(() => m.addProbe({ name: 'x', container: other, probe: kplus.Probe.fromCommand(['true']), conditionType: 'c' })).toThrow(
      /container "sidecar" is not in test\/game \(its containers: main\)/,
    );
    m.addProbe({ name: 'x', container: main, probe: kplus.Probe.fromCommand(['true']), conditionType: 'c' });
    expect(() => m.addProbe({ name: 'x', container: main, probe: kplus.Probe.fromCommand(['true']), conditionType: 'c' })).toThrow(
      /used twice/,
    );
    expect(() => m.addProbe({ name: 'y', container: main, probe: kplus.Probe.fromCommand(['true']) })).toThrow(/marks nothing/);
  });

  it('a marker without probes fails validation at synth', () => {
    const c = chart();
    new PodProbeMarker(c, 'probes', { workloads: [game(c).d] });
    expect(() => Testing.synth(c)).toThrow(/has no probe/);
  });

  it('its output passes the policy rules (selector matches, container exists)', () => {
    const c = chart();
    const { d, main } = game(c);
    new PodProbeMarker(c, 'probes', {
      workloads: [d],
      probes: [{ name: 'idle', container: main, probe: kplus.Probe.fromCommand(['true']), conditionType: 'game.io/idle' }],
    });
    const content = Testing.synth(c)
      .map((o) => JSON.stringify(o))
      .join('\n---\n');
    const findings = validateInputs([{ file: 'app.yaml', content }]).findings.filter((f) => f.ruleId.startsWith('KRUISE-PODPROBEMARKER'));
    expect(findings).toEqual([]);
  });

  it('an app with one gets the daemon and gate PodProbeMarkerGate from KruiseRuntime; nothing reported as not carried out', () => {
    const app = Testing.app();
    const runtime = new KruiseRuntime(app, 'kruise');
    const c = new Chart(app, 'apps');
    const { d, main } = game(c);
    new PodProbeMarker(c, 'probes', {
      workloads: [d],
      probes: [{ name: 'idle', container: main, probe: kplus.Probe.fromCommand(['true']), conditionType: 'game.io/idle' }],
    });
    app.synth();
    const report = runtime.report();
    expect(report.daemon).toBe(true);
    expect(report.errors).toEqual([]);
    expect(report.warnings.filter((w) => /PodProbeMarker/.test(w))).toEqual([]);
    const all = app.charts.flatMap((ch) => ch.toJson() as { kind: string; metadata: { name: string }; spec: any }[]);
    const daemon = all.find((o) => o.kind === 'DaemonSet')!;
    expect(daemon.spec.template.spec.containers[0].args.find((a: string) => a.startsWith('--feature-gates='))).toMatch(
      /PodProbeMarkerGate=true/,
    );
    expect(
      validateInputs([{ file: 'app.yaml', content: all.map((o) => JSON.stringify(o)).join('\n---\n') }]).findings.filter((f) =>
        f.ruleId.startsWith('KRUISE-RUNTIME-'),
      ),
    ).toEqual([]);
  });
});

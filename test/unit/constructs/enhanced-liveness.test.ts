// EnhancedLiveness: the container-level option compiles to upstream's pod annotation on any pod-template owner, refuses
// what the annotation cannot mean (a container without a probe, another probed container left out, a name that is no
// container), and the KruiseRuntime of an app using it installs the gate, the daemon and the pod webhook.
import { ApiObject, Chart, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { CloneSet, EnhancedLiveness, KruiseRuntime, RuntimeTarget } from '../../../constructs/index.js';

type Obj = Record<string, any>;
const liveness = kplus.Probe.fromCommand(['cat', '/tmp/healthy'], { periodSeconds: Duration.seconds(2) });
const ANNOTATION = 'apps.kruise.io/using-enhanced-liveness';

describe('EnhancedLiveness', () => {
  it('annotates the pod template of a CloneSet, a cdk8s-plus Deployment and a raw ApiObject; the probe stays declared', () => {
    const chart = Testing.chart();
    const cs = new CloneSet(chart, 'web', { containers: [{ name: 'app', image: 'nginx:1.27', liveness }] });
    EnhancedLiveness.of(cs).enable('app');
    const dep = new kplus.Deployment(chart, 'api', { containers: [{ name: 'api', image: 'nginx:1.27', portNumber: 80, liveness }] });
    EnhancedLiveness.of(dep).enable(dep.containers[0]!);
    const raw = new ApiObject(chart, 'raw', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'raw' },
      spec: { containers: [{ name: 'c', image: 'busybox', livenessProbe: { tcpSocket: { port: 80 } } }] },
    });
    EnhancedLiveness.of(raw).enable('c');
    const docs = Testing.synth(chart) as Obj[];
    const template = (kind: string) => docs.find((d) => d.kind === kind)!.spec.template;
    expect(template('CloneSet').metadata.annotations[ANNOTATION]).toBe('true');
    expect(template('CloneSet').spec.containers[0].livenessProbe.exec.command).toEqual(['cat', '/tmp/healthy']);
    expect(template('Deployment').metadata.annotations[ANNOTATION]).toBe('true');
    expect(docs.find((d) => d.kind === 'Pod')!.metadata.annotations[ANNOTATION]).toBe('true');
    expect(EnhancedLiveness.of(cs).containers).toEqual(['app']);
  });

  it.each([
    [
      'a container that does not exist',
      ['nope'],
      /enhanced liveness: container "nope" does not exist; the pod template's containers are: app, side/,
    ],
    [
      'a container without a liveness probe',
      ['app', 'side'],
      /container "side" declares no livenessProbe, so there is nothing for the runtime to run/,
    ],
    ['a probed container left out (the annotation is pod-wide)', [], /container "app" has a livenessProbe too.*enable\("app"\) as well/],
  ])('refuses %s, with the construct path and pointer', (_t, names, message) => {
    const chart = Testing.chart();
    const cs = new CloneSet(chart, 'web', {
      containers: [
        { name: 'app', image: 'nginx:1.27', liveness },
        { name: 'side', image: 'nginx:1.27' },
      ],
    });
    const e = EnhancedLiveness.of(cs);
    for (const n of names) e.enable(n);
    if (names.length === 0) {
      // Another container's probe, declared enhanced, beside the app's left out.
      const two = new CloneSet(chart, 'two', {
        containers: [
          { name: 'app', image: 'nginx:1.27', liveness },
          { name: 'side', image: 'nginx:1.27', liveness },
        ],
      });
      EnhancedLiveness.of(two).enable('side');
    }
    expect(() => Testing.synth(chart)).toThrow(message);
    expect(() => Testing.synth(chart)).toThrow(/\[test\/(web|two)\]/);
  });

  it('refuses a name that cannot be a container at once', () => {
    const cs = new CloneSet(Testing.chart(), 'web', { containers: [{ name: 'app', image: 'nginx:1.27', liveness }] });
    expect(() => EnhancedLiveness.of(cs).enable('Not_A_Name')).toThrow(/is not a valid container name/);
  });

  it('the KruiseRuntime infers gates EnhancedLivenessProbe and PodProbeMarkerGate, the daemon and the pod webhook; target openkruise refuses it', () => {
    const build = (target?: RuntimeTarget) => {
      const app = Testing.app();
      new KruiseRuntime(app, 'kruise', target ? { target } : {});
      const cs = new CloneSet(new Chart(app, 'app'), 'web', { containers: [{ name: 'app', image: 'nginx:1.27', liveness }] });
      EnhancedLiveness.of(cs).enable('app');
      app.synth();
      return app.charts.flatMap((c) => c.toJson() as Obj[]);
    };
    const objects = build();
    const manager = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'kruise-controller-manager')!;
    const gates = (manager.spec.template.spec.containers[0].args as string[]).find((a) => a.startsWith('--feature-gates='))!;
    expect(gates).toMatch(/EnhancedLivenessProbe=true/);
    expect(objects.some((o) => o.kind === 'DaemonSet' && o.metadata.name === 'kruise-daemon')).toBe(true);
    expect(objects.some((o) => o.kind === 'MutatingWebhookConfiguration')).toBe(true);
    expect(() => build(RuntimeTarget.OPENKRUISE)).toThrow(
      /would remove the containers' liveness probes from the pod and nothing would restart/,
    );
  });
});

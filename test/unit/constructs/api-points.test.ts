// Construct API behaviours users hit from TypeScript and plain JavaScript: KruiseRuntime in any chart order,
// clear errors (not TypeErrors) for missing or mistyped props, percent values rendered as "50%".
import { App, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import {
  CloneSet,
  CloneSetUpdateStrategy,
  ImagePullJob,
  JobSidecarTermination,
  KruiseRuntime,
  SidecarSet,
  SidecarSetUpdateStrategy,
} from '../../../constructs/index.js';

describe('KruiseRuntime', () => {
  it('works whichever chart is created first, and still refuses a second runtime', () => {
    const app = new App();
    const chart = new Chart(app, 'first');
    const runtime = new KruiseRuntime(app, 'kruise');
    expect(KruiseRuntime.isKruiseRuntime(runtime)).toBe(true);
    expect(KruiseRuntime.isKruiseRuntime(chart)).toBe(false);
    expect(() => new KruiseRuntime(app, 'again')).toThrow(/the app already has a KruiseRuntime at kruise/);
  });
});

describe('errors from plain JavaScript', () => {
  it('a SidecarSet without a selector gets the construct error, not a TypeError', () => {
    const chart = Testing.chart();
    const make = () => new SidecarSet(chart, 'logs', { containers: [{ name: 'x', image: 'busybox:1.36' }] } as never);
    expect(make).toThrow(/\[test\/logs\] SidecarSet needs a selector .* but got none\. Fix: selector: LabelSelector\.of/);
    expect(make).not.toThrow(TypeError);
  });

  it('a mistyped percent value names what was expected and what was given', () => {
    expect(() => CloneSetUpdateStrategy.inPlaceIfPossible({ maxUnavailable: { half: true } as never })).toThrow(
      'CloneSetUpdateStrategy: maxUnavailable: expected PercentOrAbsolute.percent(N) or PercentOrAbsolute.absolute(N) (or, from JavaScript, a non-negative integer or a string like "50%"), but got {"half":true}.',
    );
    expect(() => SidecarSetUpdateStrategy.rollingUpdate({ maxUnavailable: '0%' as never })).toThrow(/must not be 0/);
  });
});

describe('percent values', () => {
  it('render as "50%" from PercentOrAbsolute and from a plain string', () => {
    const chart = Testing.chart();
    new CloneSet(chart, 'a', {
      containers: [{ image: 'nginx:1.27' }],
      updateStrategy: CloneSetUpdateStrategy.inPlaceIfPossible({
        maxUnavailable: kplus.PercentOrAbsolute.percent(50),
        partition: '20%' as never,
      }),
    });
    const [cloneSet] = Testing.synth(chart);
    expect(cloneSet.spec.updateStrategy).toMatchObject({ maxUnavailable: '50%', partition: '20%' });
  });
});

describe('CloneSet as a cdk8s-plus workload', () => {
  it('is an HPA target (IScalable): scaleTargetRef names the CloneSet and replicas are left to the autoscaler', () => {
    const chart = Testing.chart();
    const containers = [{ image: 'nginx:1.27', portNumber: 8080, resources: { cpu: { request: kplus.Cpu.millis(100) } } }];
    const metrics = [kplus.Metric.resourceCpu(kplus.MetricTarget.averageUtilization(70))];
    const web = new CloneSet(chart, 'web', { containers });
    new kplus.HorizontalPodAutoscaler(chart, 'hpa', { target: web, maxReplicas: 10, metrics });
    const manifests = Testing.synth(chart);
    const cloneSet = manifests.find((m) => m.kind === 'CloneSet');
    const hpa = manifests.find((m) => m.kind === 'HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: cloneSet.metadata.name });
    expect(cloneSet.spec).not.toHaveProperty('replicas');
    // As with a Deployment, fixed replicas and an autoscaler contradict each other.
    const fixed = Testing.chart();
    new kplus.HorizontalPodAutoscaler(fixed, 'hpa', {
      target: new CloneSet(fixed, 'web', { replicas: 3, containers }),
      maxReplicas: 10,
      metrics,
    });
    expect(() => Testing.synth(fixed)).toThrow(/HorizontalPodAutoscaler target cannot have a fixed number of replicas \(3\)/);
  });

  it('exposeViaService selects its pods on the container ports, and refuses a port no container exposes', () => {
    const chart = Testing.chart();
    const web = new CloneSet(chart, 'web', { containers: [{ image: 'nginx:1.27', portNumber: 8080 }] });
    const service = web.exposeViaService({ serviceType: kplus.ServiceType.NODE_PORT });
    const manifests = Testing.synth(chart);
    const svc = manifests.find((m) => m.kind === 'Service');
    const cloneSet = manifests.find((m) => m.kind === 'CloneSet');
    expect(svc.spec.type).toBe('NodePort');
    expect(svc.spec.ports).toEqual([{ port: 8080, targetPort: 8080 }]);
    expect(svc.spec.selector).toEqual(cloneSet.spec.selector.matchLabels);
    expect(service.name).toBe(svc.metadata.name);
    expect(() => web.exposeViaService({ name: 'other', ports: [{ port: 9090 }] })).toThrow(
      '[test/web] exposeViaService: port 9090 is not exposed by any container (container ports: 8080).',
    );
  });
});

describe('image pull secrets', () => {
  it('every construct takes the same secret references: a cdk8s-plus ISecret or a Secret name', () => {
    const app = new App();
    const chart = new Chart(app, 'app');
    const regcred = kplus.Secret.fromSecretName(chart, 'regcred', 'regcred');
    new KruiseRuntime(app, 'kruise', { imagePullSecrets: [regcred, 'mirror'] });
    new SidecarSet(chart, 'logs', {
      selector: kplus.LabelSelector.of({ labels: { app: 'web' } }),
      containers: [{ name: 'logs', image: 'busybox:1.36' }],
      imagePullSecrets: ['mirror', regcred],
    });
    new ImagePullJob(chart, 'pull', { image: 'nginx:1.27', pullSecrets: [regcred, 'mirror'] });
    const objects = app.charts.flatMap((c) => c.toJson());
    const manager = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'kruise-controller-manager');
    expect(manager.spec.template.spec.imagePullSecrets).toEqual([{ name: 'regcred' }, { name: 'mirror' }]);
    expect(objects.find((o) => o.kind === 'SidecarSet').spec.imagePullSecrets).toEqual([{ name: 'mirror' }, { name: 'regcred' }]);
    expect(objects.find((o) => o.kind === 'ImagePullJob').spec.pullSecrets).toEqual(['regcred', 'mirror']);
  });

  it('a wrong secret reference names what was expected and what was given', () => {
    const chart = Testing.chart();
    new ImagePullJob(chart, 'pull', { image: 'nginx:1.27', pullSecrets: [42 as never] });
    expect(() => Testing.synth(chart)).toThrow('[test/pull] pullSecrets[0]: expected a cdk8s-plus ISecret or a Secret name, but got 42.');
  });
});

describe('construct errors', () => {
  it('one synth reports every invalid construct, not only the first', () => {
    const chart = Testing.chart();
    for (const id of ['first', 'second']) {
      const job = new kplus.Job(chart, id, { containers: [{ name: 'main', image: 'busybox:1.36' }] });
      JobSidecarTermination.of(job).terminate('envoi');
    }
    let message = '';
    try {
      Testing.synth(chart);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/\[test\/first\] container "envoi" does not exist/);
    expect(message).toMatch(/\[test\/second\] container "envoi" does not exist/);
  });
});

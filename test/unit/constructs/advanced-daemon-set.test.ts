import { Chart, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { AdvancedDaemonSet, AdvancedDaemonSetUpdateStrategy, KruiseApiVersion, LifecycleHook } from '../../../constructs/index.js';
import { validateObject } from '../../../src/api/index.js';

const chart = () => new Chart(Testing.app(), 'test');
const agent = [{ name: 'agent', image: 'example.io/agent:1' }];

describe('AdvancedDaemonSet construct', () => {
  it('renders the template, an in-place rollout with partition and node labels, hooks and tuning', () => {
    const c = chart();
    const ds = new AdvancedDaemonSet(c, 'agent', {
      updateStrategy: AdvancedDaemonSetUpdateStrategy.inPlaceIfPossible({
        maxUnavailable: kplus.PercentOrAbsolute.percent(10),
        partition: kplus.PercentOrAbsolute.absolute(2),
        nodeLabels: { pool: 'canary' },
        paused: true,
      }),
      lifecycle: { preDelete: LifecycleHook.byLabels({ 'example.io/drain': 'true' }) },
      minReady: Duration.seconds(5),
      burstReplicas: kplus.PercentOrAbsolute.percent(20),
      revisionHistoryLimit: 3,
      partitionedScaling: true,
      containers: agent,
    });
    ds.scheduling.tolerate(kplus.Node.tainted(kplus.NodeTaintQuery.exists('dedicated', { effect: kplus.TaintEffect.NO_SCHEDULE })));
    const [o] = Testing.synth(c);
    expect(o).toMatchObject({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'DaemonSet',
      // v1alpha1's spelling of partitionedScaling.
      metadata: { annotations: { 'daemonset.kruise.io/progressive-create-pod': 'true' } },
      spec: {
        updateStrategy: {
          type: 'RollingUpdate',
          rollingUpdate: {
            rollingUpdateType: 'InPlaceIfPossible',
            maxUnavailable: '10%',
            maxSurge: 0,
            partition: 2,
            selector: { matchLabels: { pool: 'canary' } },
            paused: true,
          },
        },
        lifecycle: { preDelete: { labelsHandler: { 'example.io/drain': 'true' } } },
        minReadySeconds: 5,
        burstReplicas: '20%',
        revisionHistoryLimit: 3,
        template: {
          spec: {
            restartPolicy: 'Always',
            containers: [expect.objectContaining({ name: 'agent', image: 'example.io/agent:1' })],
            tolerations: [expect.objectContaining({ key: 'dedicated', effect: 'NoSchedule' })],
          },
        },
      },
    });
    expect(o.spec.scaleStrategy).toBeUndefined();
    expect(o.spec.selector.matchLabels).toEqual(o.spec.template.metadata.labels);
    expect(validateObject(o).issues).toEqual([]);
  });

  it('at v1beta1, partitionedScaling is the field; a surge rollout and OnDelete render as upstream reads them', () => {
    const c = chart();
    new AdvancedDaemonSet(c, 'beta', {
      apiVersion: KruiseApiVersion.V1BETA1,
      updateStrategy: AdvancedDaemonSetUpdateStrategy.rollingUpdate({
        maxSurge: kplus.PercentOrAbsolute.absolute(1),
        partition: kplus.PercentOrAbsolute.absolute(1),
      }),
      partitionedScaling: true,
      containers: agent,
    });
    new AdvancedDaemonSet(c, 'manual', { updateStrategy: AdvancedDaemonSetUpdateStrategy.onDelete(), containers: agent });
    const [beta, manual] = Testing.synth(c);
    expect(beta).toMatchObject({
      apiVersion: 'apps.kruise.io/v1beta1',
      spec: {
        scaleStrategy: { partitionedScaling: true },
        updateStrategy: { rollingUpdate: { rollingUpdateType: 'Standard', maxSurge: 1, maxUnavailable: 0 } },
      },
    });
    expect(beta.metadata.annotations).toBeUndefined();
    expect(manual.spec.updateStrategy).toEqual({ type: 'OnDelete' });
    expect(validateObject(beta).issues).toEqual([]);
    expect(validateObject(manual).issues).toEqual([]);
  });

  it.each([
    [
      'both maxUnavailable and maxSurge',
      () =>
        AdvancedDaemonSetUpdateStrategy.rollingUpdate({
          maxUnavailable: kplus.PercentOrAbsolute.absolute(1),
          maxSurge: kplus.PercentOrAbsolute.absolute(1),
        }),
      /both set/,
    ],
    [
      'maxUnavailable 0 without surge',
      () => AdvancedDaemonSetUpdateStrategy.rollingUpdate({ maxUnavailable: kplus.PercentOrAbsolute.absolute(0) }),
      /could never start/,
    ],
    [
      'surge in place',
      () => AdvancedDaemonSetUpdateStrategy.inPlaceIfPossible({ maxSurge: kplus.PercentOrAbsolute.absolute(1) }),
      /maxSurge must be 0/,
    ],
  ])('refuses %s', (_w, make, msg) => {
    expect(make).toThrow(msg);
  });

  it('refuses a pod that would finish, partitionedScaling without a partition, and a bad image, naming the construct', () => {
    expect(() => new AdvancedDaemonSet(chart(), 'a', { restartPolicy: kplus.RestartPolicy.NEVER, containers: agent })).toThrow(
      /\[test\/a\] .*restartPolicy must be ALWAYS/,
    );
    expect(() => new AdvancedDaemonSet(chart(), 'b', { partitionedScaling: true, containers: agent })).toThrow(
      /\[test\/b\] partitionedScaling follows the partition/,
    );
    expect(() => new AdvancedDaemonSet(chart(), 'c', { containers: [{ name: 'x', image: 'Not An Image' }] })).toThrow(
      /\[test\/c\] container "x" image/,
    );
  });
});

import { Chart, Duration, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import {
  AdvancedStatefulSet,
  AdvancedStatefulSetPodManagement,
  AdvancedStatefulSetUpdateStrategy,
  ClaimUpdate,
  KruiseRuntime,
  LifecycleHook,
  PvcRetention,
} from '../../../constructs/index.js';
import { validateObject } from '../../../src/api/index.js';

const chart = () => new Chart(Testing.app(), 'test');
const db = [{ name: 'db', image: 'example.io/db:1', portNumber: 5432 }];

describe('AdvancedStatefulSet construct', () => {
  it('renders identities, claims, an in-place rollout with partition, hooks and retention, valid against the schema', () => {
    const c = chart();
    const sts = new AdvancedStatefulSet(c, 'db', {
      replicas: 3,
      podManagement: AdvancedStatefulSetPodManagement.PARALLEL,
      updateStrategy: AdvancedStatefulSetUpdateStrategy.inPlaceIfPossible({
        partition: 1,
        maxUnavailable: kplus.PercentOrAbsolute.absolute(2),
        minReady: Duration.seconds(10),
      }),
      reserveOrdinals: [1, '4-5'],
      lifecycle: { preDelete: LifecycleHook.byLabels({ 'example.io/drain': 'true' }) },
      pvcRetention: { whenScaled: PvcRetention.DELETE },
      scaleMaxUnavailable: kplus.PercentOrAbsolute.absolute(2),
      containers: db,
    });
    const data = sts.addVolumeClaimTemplate({ name: 'data', storage: Size.gibibytes(1) });
    sts.containers[0]!.mount('/data', data);
    const svc = sts.exposeViaService();
    const objs = Testing.synth(c);
    const o = objs.find((x) => x.kind === 'StatefulSet');
    expect(o).toMatchObject({
      apiVersion: 'apps.kruise.io/v1beta1',
      spec: {
        replicas: 3,
        serviceName: svc.name,
        podManagementPolicy: 'Parallel',
        reserveOrdinals: [1, '4-5'],
        updateStrategy: {
          type: 'RollingUpdate',
          rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', partition: 1, maxUnavailable: 2, minReadySeconds: 10 },
        },
        lifecycle: { preDelete: { labelsHandler: { 'example.io/drain': 'true' } } },
        persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete' },
        scaleStrategy: { maxUnavailable: 2 },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '1Gi' } } } }],
        template: { spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] } },
      },
    });
    // The controller supplies the claim volumes; the template keeps only the mount.
    expect(o.spec.template.spec.volumes).toBeUndefined();
    expect(objs.find((x) => x.kind === 'Service')).toMatchObject({ spec: { clusterIP: 'None' } });
    expect(validateObject(o).issues).toEqual([]);
  });

  it('defaults: OrderedReady, ReCreate, no readiness gate added', () => {
    const c = chart();
    new AdvancedStatefulSet(c, 'db', { containers: db });
    const [o] = Testing.synth(c);
    expect(o.spec).toMatchObject({
      replicas: 1,
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { rollingUpdate: { podUpdatePolicy: 'ReCreate' } },
    });
    expect(o.spec.template.spec.readinessGates).toBeUndefined();
    expect(validateObject(o).issues).toEqual([]);
  });

  it('refuses what upstream refuses, with the construct path', () => {
    const maxUnavailable = kplus.PercentOrAbsolute.absolute(2);
    expect(
      () =>
        new AdvancedStatefulSet(chart(), 'a', {
          updateStrategy: AdvancedStatefulSetUpdateStrategy.reCreate({ maxUnavailable }),
          containers: db,
        }),
    ).toThrow(/\[test\/a\] updateStrategy maxUnavailable other than 1 needs podManagement PARALLEL/);
    expect(() => new AdvancedStatefulSet(chart(), 'b', { scaleMaxUnavailable: maxUnavailable, containers: db })).toThrow(
      /scaleMaxUnavailable needs/,
    );
    expect(() => new AdvancedStatefulSet(chart(), 'c', { reserveOrdinals: ['5-3'], containers: db })).toThrow(/reserveOrdinals: "5-3"/);
    expect(() => new AdvancedStatefulSet(chart(), 'd', { replicas: -1, containers: db })).toThrow(
      /replicas must be a non-negative integer/,
    );
    expect(() => AdvancedStatefulSetUpdateStrategy.inPlaceOnly({ minReady: Duration.seconds(301) })).toThrow(/at most 300/);
    expect(() => AdvancedStatefulSetUpdateStrategy.reCreate({ inPlaceUpdateGracePeriod: Duration.seconds(1) })).toThrow(/in-place/);
  });

  it('claimUpdate OnPodRollingUpdate renders volumeClaimUpdateStrategy, and the install turns claim resizing on', () => {
    const app = Testing.app();
    new KruiseRuntime(app, 'kruise');
    const sts = new AdvancedStatefulSet(new Chart(app, 'app'), 'db', { claimUpdate: ClaimUpdate.ON_POD_ROLLING_UPDATE, containers: db });
    sts.containers[0]!.mount('/data', sts.addVolumeClaimTemplate({ name: 'data', storage: Size.gibibytes(1), storageClassName: 'grows' }));
    app.synth();
    const objects = app.charts.flatMap((c) => c.toJson() as Array<Record<string, any>>);
    const o = objects.find((x) => x.kind === 'StatefulSet')!;
    expect(o.spec.volumeClaimUpdateStrategy).toEqual({ type: 'OnPodRollingUpdate' });
    expect(validateObject(o).issues).toEqual([]);
    const manager = objects.find((x) => x.kind === 'Deployment' && x.metadata.name === 'kruise-controller-manager')!;
    const gates = (manager.spec.template.spec.containers[0].args as string[]).find((a) => a.startsWith('--feature-gates='));
    expect(gates).toMatch(/StatefulSetAutoResizePVCGate=true/);
    // Without the option nothing is rendered (upstream then resizes nothing).
    const c = chart();
    new AdvancedStatefulSet(c, 'db', { containers: db });
    expect(Testing.synth(c)[0].spec.volumeClaimUpdateStrategy).toBeUndefined();
  });

  it('OnDelete renders no rollingUpdate', () => {
    const c = chart();
    new AdvancedStatefulSet(c, 'db', { updateStrategy: AdvancedStatefulSetUpdateStrategy.onDelete(), containers: db });
    expect(Testing.synth(c)[0].spec.updateStrategy).toEqual({ type: 'OnDelete' });
  });
});

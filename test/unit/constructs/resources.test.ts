import { Duration, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import {
  CloneSet,
  CloneSetUpdateStrategy,
  ContainerRecreateFailurePolicy,
  ContainerRecreateRequest,
  ImagePullJob,
  ImagePullJobCompletionPolicy,
  ImagePullJobImagePullPolicy,
  ImagePullJobNodeSelector,
  InjectionRevisionPolicy,
  LifecycleHook,
  PatchPolicy,
  PodInjectPolicy,
  SidecarSet,
  SidecarSetUpdateStrategy,
  SidecarUpgradeStrategy,
} from '../../../constructs/index.js';

const P = kplus.PercentOrAbsolute;

describe('CloneSet', () => {
  it('renders the kplus pod template (containers, env, probes, security context, volumes) and Kruise fields', () => {
    const chart = Testing.chart();
    const cache = kplus.Volume.fromEmptyDir(chart, 'cache', 'cache');
    const clone = new CloneSet(chart, 'web', {
      metadata: { name: 'web' },
      replicas: 5,
      minReady: Duration.seconds(10),
      revisionHistoryLimit: 3,
      podMetadata: { labels: { app: 'web' } },
      updateStrategy: CloneSetUpdateStrategy.inPlaceIfPossible({
        partition: P.percent(20),
        maxUnavailable: P.absolute(2),
        maxSurge: P.percent(10),
        paused: true,
        inPlaceUpdateGracePeriod: Duration.seconds(15),
      }),
      scaleStrategy: { disablePVCReuse: true, podsToDelete: ['web-abc'], maxUnavailable: P.absolute(1) },
      lifecycle: {
        preNormal: LifecycleHook.byFinalizers(['example.io/unready-blocker']),
        preDelete: LifecycleHook.byLabels({ 'example.io/block-delete': 'true' }, { markPodNotReady: true }),
        inPlaceUpdate: LifecycleHook.byFinalizers(['example.io/drain'], { markPodNotReady: true }),
      },
      containers: [
        {
          name: 'nginx',
          image: 'nginx:1.25',
          portNumber: 8080,
          envVariables: { MODE: kplus.EnvValue.fromValue('prod') },
          readiness: kplus.Probe.fromHttpGet('/healthz'),
          securityContext: { user: 101 },
          volumeMounts: [{ path: '/cache', volume: cache }],
        },
      ],
    });
    const [m] = Testing.synth(chart);
    expect(m.apiVersion).toBe('apps.kruise.io/v1alpha1');
    expect(m.kind).toBe('CloneSet');
    expect(m.metadata.name).toBe('web');
    const { spec } = m;
    expect(spec.replicas).toBe(5);
    expect(spec.minReadySeconds).toBe(10);
    expect(spec.revisionHistoryLimit).toBe(3);
    expect(spec.selector.matchLabels).toEqual({ 'cdk8s.io/metadata.addr': clone.matchLabels['cdk8s.io/metadata.addr'] });
    expect(spec.template.metadata.labels).toMatchObject({ app: 'web', ...spec.selector.matchLabels });
    expect(spec.updateStrategy).toEqual({
      type: 'InPlaceIfPossible',
      partition: '20%',
      maxUnavailable: 2,
      maxSurge: '10%',
      paused: true,
      inPlaceUpdateStrategy: { gracePeriodSeconds: 15 },
    });
    expect(spec.scaleStrategy).toEqual({ disablePVCReuse: true, podsToDelete: ['web-abc'], maxUnavailable: 1 });
    expect(spec.lifecycle).toEqual({
      preNormal: { finalizersHandler: ['example.io/unready-blocker'] },
      preDelete: { labelsHandler: { 'example.io/block-delete': 'true' }, markPodNotReady: true },
      inPlaceUpdate: { finalizersHandler: ['example.io/drain'], markPodNotReady: true },
    });
    const [c] = spec.template.spec.containers;
    expect(c.env).toEqual([{ name: 'MODE', value: 'prod' }]);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 8080, scheme: 'HTTP' });
    expect(c.securityContext.runAsUser).toBe(101);
    expect(c.resources.requests).toEqual({ cpu: '1000m', memory: '512Mi' });
    expect(spec.template.spec.volumes).toEqual([{ emptyDir: {}, name: 'cache' }]);
    expect(spec.template.spec.restartPolicy).toBe('Always');
  });

  it('defaults to 1 replica and ReCreate, and is lazy (add* after construction shows up)', () => {
    const chart = Testing.chart();
    const clone = new CloneSet(chart, 'c');
    clone.addContainer({ name: 'late', image: 'busybox' });
    clone.podMetadata.addAnnotation('late', 'yes');
    const { spec } = Testing.synth(chart)[0];
    expect(spec.replicas).toBe(1);
    expect(spec.updateStrategy).toEqual({ type: 'ReCreate' });
    expect(spec.template.spec.containers.map((x: any) => x.name)).toEqual(['late']);
    expect(spec.template.metadata.annotations).toEqual({ late: 'yes' });
  });

  it('volumeClaimTemplates: mountable volume, rendered template, no pod volume', () => {
    const chart = Testing.chart();
    const clone = new CloneSet(chart, 'db', {
      replicas: 4,
      scaleStrategy: { disablePVCReuse: true },
      volumeClaimTemplates: [{ name: 'logs', storage: Size.gibibytes(1), storageClassName: 'fast' }],
    });
    const data = clone.addVolumeClaimTemplate({
      name: 'data',
      storage: Size.gibibytes(10),
      accessModes: [kplus.PersistentVolumeAccessMode.READ_WRITE_ONCE_POD],
    });
    clone.addContainer({ name: 'db', image: 'postgres:16', volumeMounts: [{ path: '/data', volume: data }] });
    const { spec } = Testing.synth(chart)[0];
    expect(spec.volumeClaimTemplates).toEqual([
      {
        metadata: { name: 'logs' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'fast' },
      },
      { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOncePod'], resources: { requests: { storage: '10Gi' } } } },
    ]);
    expect(spec.template.spec.volumes).toBeUndefined();
    expect(spec.template.spec.containers[0].volumeMounts).toEqual([{ mountPath: '/data', name: 'data' }]);
    expect(clone.volumeClaimTemplates.map((t) => t.name)).toEqual(['logs', 'data']);
  });

  it('rejects local mistakes eagerly with the construct path', () => {
    const chart = Testing.chart();
    expect(
      () => new CloneSet(chart, 'a', { lifecycle: { preNormal: LifecycleHook.byLabels({ x: 'y' }, { markPodNotReady: true }) } }),
    ).toThrow(/\[test\/a\] lifecycle.preNormal: markPodNotReady has no effect/);
    expect(() => new CloneSet(chart, 'b', { replicas: 1.5 })).toThrow(/\[test\/b\] replicas must be a non-negative integer/);
    expect(() => new CloneSet(chart, 'c', { revisionHistoryLimit: -1 })).toThrow(/revisionHistoryLimit/);
    const d = new CloneSet(chart, 'd', { volumeClaimTemplates: [{ name: 'data', storage: Size.gibibytes(1) }] });
    expect(() => d.addVolumeClaimTemplate({ name: 'data', storage: Size.gibibytes(1) })).toThrow(/"data" already exists/);
    expect(() => d.addVolumeClaimTemplate({ name: 'Data', storage: Size.gibibytes(1) })).toThrow(/not a DNS-1123 label/);
    expect(() => LifecycleHook.byFinalizers([])).toThrow(/at least one finalizer/);
    expect(() => LifecycleHook.byLabels({ 'bad key!': 'x' })).toThrow(/not a qualified name/);
    expect(() => CloneSetUpdateStrategy.reCreate({ inPlaceUpdateGracePeriod: Duration.seconds(1) })).toThrow(/in-place/);
  });

  it('works with the rest of cdk8s-plus: Service selection, scheduling, isolation', () => {
    const chart = Testing.chart();
    const clone = new CloneSet(chart, 'web', { containers: [{ name: 'web', image: 'nginx', portNumber: 8080 }], isolate: true });
    clone.scheduling.attract(kplus.Node.labeled(kplus.NodeLabelQuery.is('pool', 'web')));
    new kplus.Service(chart, 'svc', { selector: clone, ports: [{ port: 80, targetPort: 8080 }] });
    const manifests = Testing.synth(chart);
    const cs = manifests.find((m) => m.kind === 'CloneSet');
    const svc = manifests.find((m) => m.kind === 'Service');
    expect(svc.spec.selector).toEqual(cs.spec.template.metadata.labels);
    expect(cs.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'pool', operator: 'In', values: ['web'] }] },
    ]);
    expect(manifests.some((m) => m.kind === 'NetworkPolicy')).toBe(true);
  });

  it('cdk8s-plus pod rules still apply at synth (no containers)', () => {
    const chart = Testing.chart();
    new CloneSet(chart, 'empty');
    expect(() => Testing.synth(chart)).toThrow(/PodSpec must have at least 1 container/);
  });
});

describe('SidecarSet', () => {
  it('renders selector, containers with Kruise fields, auto-collected volumes and strategies', () => {
    const chart = Testing.chart();
    const logs = kplus.Volume.fromEmptyDir(chart, 'logs', 'log-volume');
    const extra = kplus.Volume.fromConfigMap(chart, 'cfg', kplus.ConfigMap.fromConfigMapName(chart, 'cm', 'logtail-config'), {
      name: 'config',
    });
    const secret = kplus.Secret.fromSecretName(chart, 's', 'registry');
    const set = new SidecarSet(chart, 'logtail', {
      metadata: { name: 'logtail' },
      selector: kplus.LabelSelector.of({ labels: { app: 'webserver' } }),
      namespaceSelector: kplus.LabelSelector.of({ labels: { team: 'web' } }),
      updateStrategy: SidecarSetUpdateStrategy.rollingUpdate({
        maxUnavailable: P.absolute(1),
        partition: P.percent(50),
        paused: false,
        selector: kplus.LabelSelector.of({ labels: { canary: 'true' } }),
      }),
      injectionStrategy: { paused: false, customVersion: 'v2', policy: InjectionRevisionPolicy.PARTIAL },
      imagePullSecrets: [secret],
      patchPodMetadata: [{ annotations: { 'logtail.io/enabled': 'true' }, patchPolicy: PatchPolicy.OVERWRITE }],
      revisionHistoryLimit: 5,
      volumes: [extra],
    });
    set.addContainer({
      name: 'logtail',
      image: 'example.io/logtail:1',
      volumeMounts: [{ path: '/var/log', volume: logs }],
      podInjectPolicy: PodInjectPolicy.AFTER_APP_CONTAINER,
      shareVolumePolicy: true,
      transferEnv: [
        { sourceContainerName: 'app', envName: 'TZ' },
        { sourceContainerNameFromField: "metadata.labels['main']", envNames: ['A', 'B'] },
      ],
      upgradeStrategy: SidecarUpgradeStrategy.hotUpgrade('example.io/empty:1'),
    });
    set.addInitContainer({ name: 'init-logs', image: 'busybox', podInjectPolicy: PodInjectPolicy.BEFORE_APP_CONTAINER });
    const m = Testing.synth(chart)[0];
    expect(m.kind).toBe('SidecarSet');
    expect(m.metadata.namespace).toBeUndefined();
    const { spec } = m;
    expect(spec.selector).toEqual({ matchLabels: { app: 'webserver' } });
    expect(spec.namespaceSelector).toEqual({ matchLabels: { team: 'web' } });
    expect(spec.containers[0]).toMatchObject({
      name: 'logtail',
      podInjectPolicy: 'AfterAppContainer',
      shareVolumePolicy: { type: 'enabled' },
      transferEnv: [
        { sourceContainerName: 'app', envName: 'TZ' },
        { sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['main']" } }, envNames: ['A', 'B'] },
      ],
      upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'example.io/empty:1' },
      volumeMounts: [{ mountPath: '/var/log', name: 'log-volume' }],
    });
    expect(spec.initContainers).toEqual([expect.objectContaining({ name: 'init-logs', podInjectPolicy: 'BeforeAppContainer' })]);
    expect(spec.volumes.map((v: any) => v.name)).toEqual(['config', 'log-volume']);
    expect(spec.updateStrategy).toEqual({
      type: 'RollingUpdate',
      maxUnavailable: 1,
      partition: '50%',
      paused: false,
      selector: { matchLabels: { canary: 'true' } },
    });
    expect(spec.injectionStrategy).toEqual({ paused: false, revision: { customVersion: 'v2', policy: 'Partial' } });
    expect(spec.imagePullSecrets).toEqual([{ name: 'registry' }]);
    expect(spec.patchPodMetadata).toEqual([{ annotations: { 'logtail.io/enabled': 'true' }, patchPolicy: 'Overwrite' }]);
    expect(spec.revisionHistoryLimit).toBe(5);
  });

  it('defaults to RollingUpdate and NotUpdate renders', () => {
    const chart = Testing.chart();
    new SidecarSet(chart, 'a', { selector: kplus.LabelSelector.of({ labels: { a: 'b' } }), containers: [{ name: 'x', image: 'x' }] });
    new SidecarSet(chart, 'b', {
      selector: kplus.LabelSelector.of({ labels: { a: 'b' } }),
      updateStrategy: SidecarSetUpdateStrategy.notUpdate(),
      namespace: 'web',
    });
    const [a, b] = Testing.synth(chart);
    expect(a.spec.updateStrategy).toEqual({ type: 'RollingUpdate' });
    expect(b.spec.updateStrategy).toEqual({ type: 'NotUpdate' });
    expect(b.spec.namespace).toBe('web');
  });

  it('rejects local mistakes', () => {
    const chart = Testing.chart();
    const sel = kplus.LabelSelector.of({ labels: { a: 'b' } });
    expect(() => new SidecarSet(chart, 'e', { selector: kplus.LabelSelector.of() })).toThrow(/\[test\/e\] selector must not be empty/);
    expect(() => new SidecarSet(chart, 'n', { selector: sel, namespace: 'a', namespaceSelector: sel })).toThrow(/mutually exclusive/);
    expect(() => new SidecarSet(chart, 'p', { selector: sel, patchPodMetadata: [{ annotations: {} }] })).toThrow(/at least one annotation/);
    expect(() => SidecarSetUpdateStrategy.rollingUpdate({ maxUnavailable: P.absolute(0) })).toThrow(/must not be 0/);
    const set = new SidecarSet(chart, 'ok', { selector: sel, containers: [{ name: 'x', image: 'x' }] });
    expect(() => set.addContainer({ image: 'x' })).toThrow(/explicit name/);
    expect(() => set.addContainer({ name: 'x', image: 'x' })).toThrow(/"x" already exists/);
    expect(() => set.addContainer({ name: 'y', image: 'y', transferEnv: [{ envName: 'A' }] })).toThrow(
      /exactly one of sourceContainerName/,
    );
    expect(() => set.addContainer({ name: 'z', image: 'z', transferEnv: [{ sourceContainerName: 'a' }] })).toThrow(
      /exactly one of envName/,
    );
    expect(() => set.addInitContainer({ name: 'i', image: 'i', readiness: kplus.Probe.fromTcpSocket({ port: 1 }) })).toThrow(
      /must not have probes/,
    );
    expect(() => set.addVolume(kplus.Volume.fromEmptyDir(chart, 'v1', 'v'))).not.toThrow();
    expect(() => set.addVolume(kplus.Volume.fromEmptyDir(chart, 'v2', 'v'))).toThrow(/volume "v" already exists/);
  });
});

describe('ImagePullJob', () => {
  it('renders every field', () => {
    const chart = Testing.chart();
    new ImagePullJob(chart, 'pull', {
      metadata: { name: 'pull-nginx', namespace: 'ops' },
      image: 'registry.example.com:5000/team/nginx:1.9.1',
      pullSecrets: [kplus.Secret.fromSecretName(chart, 's', 'regcred')],
      selector: ImagePullJobNodeSelector.labels(kplus.LabelSelector.of({ labels: { pool: 'web' } })),
      parallelism: 5,
      pullPolicy: { timeout: Duration.minutes(2), backoffLimit: 1 },
      completionPolicy: ImagePullJobCompletionPolicy.always({
        activeDeadline: Duration.minutes(30),
        ttlAfterFinished: Duration.minutes(1),
      }),
      sandboxConfig: {
        labels: { 'io.kubernetes.image.app': 'foo' },
        annotations: { 'io.kubernetes.image.metrics.tags': 'cluster=cn-shanghai' },
      },
      imagePullPolicy: ImagePullJobImagePullPolicy.ALWAYS,
    });
    new ImagePullJob(chart, 'by-name', {
      image: 'busybox',
      selector: ImagePullJobNodeSelector.names('node-a', 'node-b'),
      completionPolicy: ImagePullJobCompletionPolicy.never(),
    });
    new ImagePullJob(chart, 'by-pod', {
      image: 'busybox@sha256:' + 'a'.repeat(64),
      podSelector: kplus.LabelSelector.of({ labels: { app: 'web' } }),
    });
    const [a, b, c] = Testing.synth(chart);
    expect(a.kind).toBe('ImagePullJob');
    expect(a.metadata).toEqual({ name: 'pull-nginx', namespace: 'ops' });
    expect(a.spec).toEqual({
      image: 'registry.example.com:5000/team/nginx:1.9.1',
      pullSecrets: ['regcred'],
      selector: { matchLabels: { pool: 'web' } },
      parallelism: 5,
      pullPolicy: { timeoutSeconds: 120, backoffLimit: 1 },
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 1800, ttlSecondsAfterFinished: 60 },
      sandboxConfig: {
        labels: { 'io.kubernetes.image.app': 'foo' },
        annotations: { 'io.kubernetes.image.metrics.tags': 'cluster=cn-shanghai' },
      },
      imagePullPolicy: 'Always',
    });
    expect(b.spec.selector).toEqual({ names: ['node-a', 'node-b'] });
    expect(b.spec.completionPolicy).toEqual({ type: 'Never' });
    expect(c.spec.podSelector).toEqual({ matchLabels: { app: 'web' } });
    expect(c.spec.completionPolicy).toEqual({ type: 'Always' });
  });

  it.each(['', 'library/NGINX:1', 'nginx:', 'nginx:tag with space', 'nginx@sha256:short', '-leading/dash'])(
    'rejects image reference %j',
    (image) => {
      expect(() => new ImagePullJob(Testing.chart(), 'p', { image })).toThrow(/\[test\/p\] image: /);
    },
  );

  it('rejects mutually exclusive selectors, non-integer parallelism, bad backoff and a deadline below the timeout', () => {
    const chart = Testing.chart();
    const sel = kplus.LabelSelector.of({ labels: { a: 'b' } });
    expect(() => new ImagePullJob(chart, 'a', { image: 'x', selector: ImagePullJobNodeSelector.names('n'), podSelector: sel })).toThrow(
      /\[test\/a\] selector \(nodes\) and podSelector are mutually exclusive/,
    );
    expect(() => new ImagePullJob(chart, 'b', { image: 'x', parallelism: 2.5 })).toThrow(/parallelism must be a non-negative integer/);
    expect(() => new ImagePullJob(chart, 'c', { image: 'x', pullPolicy: { backoffLimit: -1 } })).toThrow(/backoffLimit/);
    expect(
      () =>
        new ImagePullJob(chart, 'd', {
          image: 'x',
          completionPolicy: ImagePullJobCompletionPolicy.always({ activeDeadline: Duration.minutes(5) }),
        }),
    ).toThrow(/activeDeadline \(300s\) must be at least pullPolicy.timeout \(600s\)/);
    expect(
      () =>
        new ImagePullJob(chart, 'e', {
          image: 'x',
          pullPolicy: { timeout: Duration.minutes(1) },
          completionPolicy: ImagePullJobCompletionPolicy.always({ activeDeadline: Duration.minutes(1) }),
        }),
    ).not.toThrow();
    expect(() => ImagePullJobNodeSelector.names()).toThrow(/at least one node/);
    expect(() => ImagePullJobNodeSelector.labels(kplus.LabelSelector.of())).toThrow(/selector is empty/);
  });
});

describe('ContainerRecreateRequest', () => {
  it('renders every field', () => {
    const chart = Testing.chart();
    new ContainerRecreateRequest(chart, 'crr', {
      metadata: { name: 'restart', namespace: 'web' },
      podName: 'web-0',
      containers: ['app', 'envoy'],
      strategy: {
        failurePolicy: ContainerRecreateFailurePolicy.IGNORE,
        orderedRecreate: true,
        forceRecreate: true,
        terminationGracePeriod: Duration.seconds(20),
        unreadyGracePeriod: Duration.seconds(5),
        minStarted: Duration.seconds(3),
      },
      activeDeadline: Duration.minutes(1),
      ttlAfterFinished: Duration.minutes(10),
    });
    expect(Testing.synth(chart)[0]).toEqual({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name: 'restart', namespace: 'web' },
      spec: {
        podName: 'web-0',
        containers: [{ name: 'app' }, { name: 'envoy' }],
        strategy: {
          failurePolicy: 'Ignore',
          orderedRecreate: true,
          forceRecreate: true,
          terminationGracePeriodSeconds: 20,
          unreadyGracePeriodSeconds: 5,
          minStartedSeconds: 3,
        },
        activeDeadlineSeconds: 60,
        ttlSecondsAfterFinished: 600,
      },
    });
  });

  it('rejects bad pod names, empty/duplicate/invalid containers and a deadline under 3s', () => {
    const chart = Testing.chart();
    expect(() => new ContainerRecreateRequest(chart, 'a', { podName: 'Web_0', containers: ['x'] })).toThrow(/\[test\/a\] podName "Web_0"/);
    expect(() => new ContainerRecreateRequest(chart, 'b', { podName: 'p', containers: [] })).toThrow(/at least one container/);
    expect(() => new ContainerRecreateRequest(chart, 'c', { podName: 'p', containers: ['x', 'x'] })).toThrow(/"x" is listed twice/);
    expect(() => new ContainerRecreateRequest(chart, 'd', { podName: 'p', containers: ['X'] })).toThrow(/not a valid container name/);
    expect(
      () => new ContainerRecreateRequest(chart, 'e', { podName: 'p', containers: ['x'], activeDeadline: Duration.seconds(2) }),
    ).toThrow(/activeDeadline must be at least 3 seconds/);
  });
});

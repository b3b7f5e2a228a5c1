// The chart-like values of KruiseRuntime (the upstream Helm chart's manager/daemon values), their eager checks, and
// the JSON-patch escape hatch to the rendered objects.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiObject, Chart, Duration, JsonPatch, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import {
  DaemonPlacement,
  KruiseRuntime,
  RuntimeObject,
  RuntimeTarget,
  TaintEffect,
  TolerationOperator,
  type KruiseRuntimeProps,
} from '../../../constructs/kruise-runtime.js';
import { NAMES, MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION } from '../../../src/contracts/index.js';

type Obj = Record<string, any>;

function synth(props: KruiseRuntimeProps = {}, build: (c: Chart) => void = () => {}) {
  const app = Testing.app();
  const runtime = new KruiseRuntime(app, 'kruise', props);
  build(new Chart(app, 'app'));
  return { app, runtime, docs: () => Testing.synth(runtime) as Obj[] };
}
const withDaemon = (props: KruiseRuntimeProps = {}) => synth({ ...props, daemon: { placement: DaemonPlacement.ALWAYS, ...props.daemon } });
const managerPod = (docs: Obj[]) => docs.find((d) => d.kind === 'Deployment')!.spec.template.spec;
const daemonPod = (docs: Obj[]) => docs.find((d) => d.kind === 'DaemonSet')!.spec.template.spec;

describe('manager values', () => {
  it('nodeSelector adds to the Linux selector', () => {
    const pod = managerPod(synth({ nodeSelector: { 'node-role.kubernetes.io/control-plane': '' } }).docs());
    expect(pod.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux', 'node-role.kubernetes.io/control-plane': '' });
  });

  it('tolerations are rendered as Kubernetes tolerations', () => {
    const pod = managerPod(
      synth({
        tolerations: [
          { key: 'node-role.kubernetes.io/control-plane', operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE },
          { key: 'dedicated', value: 'platform', effect: TaintEffect.NO_EXECUTE, tolerationSeconds: 30 },
        ],
      }).docs(),
    );
    expect(pod.tolerations).toEqual([
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'dedicated', operator: 'Equal', value: 'platform', effect: 'NoExecute', tolerationSeconds: 30 },
    ]);
  });

  it('affinity replaces the default part it names and keeps the others', () => {
    const nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In' as const, values: ['system'] }] }],
      },
    };
    const pod = managerPod(synth({ affinity: { nodeAffinity } }).docs());
    expect(pod.affinity.nodeAffinity).toEqual(nodeAffinity);
    expect(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey).toBe(
      'kubernetes.io/hostname',
    );
    const replaced = managerPod(synth({ affinity: { podAntiAffinity: {} } }).docs());
    expect(replaced.affinity.podAntiAffinity).toEqual({});
  });

  it('hostNetwork runs the manager in the host network with the matching DNS policy', () => {
    const pod = managerPod(synth({ hostNetwork: true }).docs());
    expect(pod).toMatchObject({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' });
    expect(managerPod(synth().docs()).hostNetwork).toBeUndefined();
  });

  it('extraEnv appends cdk8s-plus EnvValues after the install env', () => {
    const env = managerPod(
      synth({
        extraEnv: {
          HTTPS_PROXY: kplus.EnvValue.fromValue('http://proxy:3128'),
          NODE_IP: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.NODE_IP),
        },
      }).docs(),
    ).containers[0].env;
    expect(env.slice(-2)).toEqual([
      { name: 'HTTPS_PROXY', value: 'http://proxy:3128' },
      { name: 'NODE_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
    ]);
    expect(env[0].name).toBe('POD_NAMESPACE');
  });

  it('ports move the container ports and the flags together; the Service still targets the webhook port by name', () => {
    const docs = synth({ ports: { webhook: 10250, metrics: 9090 } }).docs();
    const c = managerPod(docs).containers[0];
    expect(c.ports).toEqual([
      { name: 'webhook-server', containerPort: 10250, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
      { name: 'health', containerPort: 8000, protocol: 'TCP' },
    ]);
    expect(c.args).toEqual(expect.arrayContaining(['--webhook-port=10250', '--metrics-addr=:9090', '--health-probe-addr=:8000']));
    expect(docs.find((d) => d.kind === 'Service')!.spec.ports[0].targetPort).toBe('webhook-server');
  });

  it('serviceAccountAnnotations go on both ServiceAccounts', () => {
    const docs = withDaemon({ serviceAccountAnnotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/kruise' } }).docs();
    const sas = docs.filter((d) => d.kind === 'ServiceAccount');
    expect(sas.map((s) => s.metadata.name).sort()).toEqual([NAMES.daemonServiceAccount, NAMES.managerServiceAccount].sort());
    for (const sa of sas) expect(sa.metadata.annotations).toEqual({ 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/kruise' });
  });

  it('installCrds: false emits no CRD chart; createNamespace: false no Namespace', () => {
    const { app, runtime, docs } = withDaemon({ installCrds: false, createNamespace: false });
    expect(runtime.crds).toBeUndefined();
    expect(app.charts.map((c) => c.node.id)).toEqual(['kruise', 'app']);
    expect(docs().filter((d) => d.kind === 'Namespace')).toEqual([]);
    expect(docs().some((d) => d.kind === 'Deployment')).toBe(true);
    expect(runtime.capabilities()!.servedKinds).toContain('apps.kruise.io/v1alpha1/CloneSet');
    expect(
      withDaemon()
        .docs()
        .filter((d) => d.kind === 'Namespace')
        .map((d) => d.metadata.name),
    ).toEqual(['kruise-system', 'kruise-daemon-config']);
  });
});

describe('daemon values', () => {
  it('nodeSelector, tolerations, extraEnv and port', () => {
    const pod = daemonPod(
      withDaemon({
        daemon: {
          nodeSelector: { 'kruise.io/daemon': 'yes' },
          tolerations: [{ key: 'gpu', operator: TolerationOperator.EXISTS }],
          extraEnv: { HTTP_PROXY: kplus.EnvValue.fromValue('http://proxy:3128') },
          port: 10300,
        },
      }).docs(),
    );
    expect(pod.nodeSelector).toEqual({ 'kruise.io/daemon': 'yes' });
    expect(pod.tolerations).toEqual([{ key: 'gpu', operator: 'Exists' }]);
    expect(pod.containers[0].env.at(-1)).toEqual({ name: 'HTTP_PROXY', value: 'http://proxy:3128' });
    expect(pod.containers[0].ports).toEqual([{ name: 'health', containerPort: 10300, protocol: 'TCP' }]);
    expect(pod.containers[0].args).toContain('--health-probe-addr=:10300');
  });

  it('keeps tolerating every taint and avoiding virtual-kubelet nodes by default', () => {
    const pod = daemonPod(withDaemon().docs());
    expect(pod.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      {
        matchExpressions: [
          { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
          { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
        ],
      },
    ]);
  });

  it("affinity: each required node term keeps the install's exclusions; pod affinity passes through", () => {
    const pod = daemonPod(
      withDaemon({
        daemon: {
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] },
                  { matchExpressions: [{ key: 'pool', operator: 'In', values: ['b'] }] },
                ],
              },
            },
          },
        },
      }).docs(),
    );
    const terms = pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
    expect(terms).toHaveLength(2);
    for (const t of terms) expect(t.matchExpressions.slice(0, 2).map((e: Obj) => e.key)).toEqual(['type', 'kubernetes.io/os']);
    expect(terms[1].matchExpressions[2]).toEqual({ key: 'pool', operator: 'In', values: ['b'] });
  });

  it('hostNetwork: true runs the daemon in the host network; false is refused when exit priority needs it', () => {
    expect(daemonPod(withDaemon({ daemon: { hostNetwork: true } }).docs())).toMatchObject({
      hostNetwork: true,
      dnsPolicy: 'ClusterFirstWithHostNet',
    });
    const { app } = synth({ daemon: { hostNetwork: false } }, (c) => {
      new ApiObject(c, 'pod', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', annotations: { 'kruise.io/container-exit-priority': '{"envoy":1}' } },
        spec: {
          containers: [
            { name: 'app', image: 'nginx' },
            { name: 'envoy', image: 'envoy' },
          ],
        },
      });
    });
    expect(() => app.synthYaml()).toThrow(/daemon\.hostNetwork is false, but Pod p \(app\/pod\) uses container exit priority/);
  });
});

describe('eager checks', () => {
  it.each<[string, KruiseRuntimeProps, RegExp]>([
    ['a bad nodeSelector label', { nodeSelector: { 'bad key!': 'x' } }, /kruise: nodeSelector: label "bad key!"/],
    ['a bad nodeSelector value', { nodeSelector: { pool: 'a b' } }, /kruise: nodeSelector\.pool: "a b"/],
    [
      'a toleration without key and operator',
      { tolerations: [{ value: 'x' }] },
      /tolerations\[0\]: a toleration without a key must use TolerationOperator\.EXISTS/,
    ],
    [
      'an unknown operator',
      { tolerations: [{ key: 'a', operator: 'In' as TolerationOperator }] },
      /tolerations\[0\]\.operator must be TolerationOperator/,
    ],
    [
      'an unknown effect',
      { tolerations: [{ key: 'a', effect: 'Never' as TaintEffect }] },
      /tolerations\[0\]\.effect must be a TaintEffect/,
    ],
    [
      'tolerationSeconds without NoExecute',
      { tolerations: [{ key: 'a', tolerationSeconds: 5 }] },
      /tolerationSeconds applies only to TaintEffect\.NO_EXECUTE/,
    ],
    ['an unknown affinity field', { affinity: { nodeAfinity: {} } as never }, /kruise: affinity: unknown field "nodeAfinity"/],
    [
      'an affinity the Kubernetes schema refuses',
      {
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a' }] }] } },
        } as never,
      },
      /kruise: the Deployment kruise-controller-manager would be invalid at \/spec\/template\/spec\/affinity\/nodeAffinity\/requiredDuringSchedulingIgnoredDuringExecution\/nodeSelectorTerms\/0\/matchExpressions\/0/,
    ],
    [
      'an env name the install sets',
      { extraEnv: { NODE_OPTIONS: kplus.EnvValue.fromValue('x') } },
      /extraEnv: NODE_OPTIONS is set by the install itself/,
    ],
    [
      'an invalid env name',
      { extraEnv: { 'A=B': kplus.EnvValue.fromValue('x') } },
      /extraEnv: "A=B" is not a valid environment variable name/,
    ],
    [
      'a daemon env name the install sets',
      { daemon: { extraEnv: { NODE_NAME: kplus.EnvValue.fromValue('x') } } },
      /daemon\.extraEnv: NODE_NAME is set by the install itself/,
    ],
    ['a port out of range', { ports: { webhook: 70000 } }, /kruise: ports\.webhook must be a port number \(1-65535\), got 70000/],
    ['two equal ports', { ports: { metrics: 8000 } }, /webhook 9876, metrics 8000 and health 8000 must be three different ports/],
    [
      'a daemon port on the exit-priority endpoint',
      { daemon: { port: 10222 } },
      /daemon\.port 10222 is the daemon's exit-priority endpoint|daemon\.port/,
    ],
    ['a bad ServiceAccount annotation', { serviceAccountAnnotations: { 'a b': 'x' } }, /serviceAccountAnnotations: annotation "a b"/],
    [
      'a bad priority class',
      { priorityClassName: 'System Critical' },
      /kruise: priorityClassName "System Critical" is not a valid PriorityClass name/,
    ],
    ['a non-boolean installCrds', { installCrds: 'no' as never }, /installCrds must be true or false/],
  ])('refuses %s with the construct path', (_what, props, message) => {
    expect(() => new KruiseRuntime(Testing.app(), 'kruise', props)).toThrow(message);
  });
});

describe('addJsonPatch', () => {
  it('patches the Deployment, the webhook configurations and the Service', () => {
    const { runtime, docs } = synth();
    runtime.addJsonPatch(
      RuntimeObject.MANAGER_DEPLOYMENT,
      JsonPatch.add('/spec/template/metadata/annotations', { 'prometheus.io/scrape': 'true' }),
    );
    runtime.addJsonPatch(RuntimeObject.MUTATING_WEBHOOK_CONFIGURATION, JsonPatch.add('/metadata/annotations', { team: 'platform' }));
    runtime.addJsonPatch(RuntimeObject.VALIDATING_WEBHOOK_CONFIGURATION, JsonPatch.replace('/webhooks/0/timeoutSeconds', 5));
    runtime.addJsonPatch(RuntimeObject.WEBHOOK_SERVICE, JsonPatch.add('/metadata/labels/team', 'platform'));
    const out = docs();
    expect(out.find((d) => d.kind === 'Deployment')!.spec.template.metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true' });
    expect(out.find((d) => d.kind === 'MutatingWebhookConfiguration')!.metadata.annotations).toEqual({ team: 'platform' });
    expect(out.find((d) => d.kind === 'ValidatingWebhookConfiguration')!.webhooks[0].timeoutSeconds).toBe(5);
    expect(out.find((d) => d.kind === 'Service')!.metadata.labels.team).toBe('platform');
  });

  it('reaches the DaemonSet the synth decides to deploy, even when patched before the app used the daemon', () => {
    const { app, runtime } = synth({}, (c) => {
      new ApiObject(c, 'crr', {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ContainerRecreateRequest',
        metadata: { name: 'r', namespace: 'default' },
        spec: { podName: 'p', containers: [{ name: 'c' }] },
      });
    });
    runtime.addJsonPatch(RuntimeObject.DAEMON_SET, JsonPatch.add('/spec/template/spec/containers/0/args/-', '--v=5'));
    const ds = app.synthYaml();
    expect(ds).toContain('--v=5');
    expect((Testing.synth(runtime) as Obj[]).find((d) => d.kind === 'DaemonSet')!.spec.template.spec.containers[0].args.at(-1)).toBe(
      '--v=5',
    );
  });

  it('fails the synth for a DaemonSet patch when no daemon is deployed, saying how to deploy one', () => {
    const { app, runtime } = synth();
    runtime.addJsonPatch(RuntimeObject.DAEMON_SET, JsonPatch.add('/metadata/labels/x', 'y'));
    expect(() => app.synthYaml()).toThrow(
      /addJsonPatch\(RuntimeObject\.DAEMON_SET\): the install renders no DaemonSet\/kruise-daemon \(nothing in the app needs the node daemon; set daemon\.placement to DaemonPlacement\.ALWAYS\)/,
    );
  });

  it('fails the synth for a patch that does not apply, or that makes the workload invalid', () => {
    const a = synth();
    a.runtime.addJsonPatch(RuntimeObject.MANAGER_DEPLOYMENT, JsonPatch.replace('/spec/nope/deeper', 1));
    expect(() => a.app.synthYaml()).toThrow(/addJsonPatch\(RuntimeObject\.MANAGER_DEPLOYMENT\): the 1 patch operation\(s\) do not apply/);
    const b = synth();
    b.runtime.addJsonPatch(RuntimeObject.MANAGER_DEPLOYMENT, JsonPatch.replace('/spec/replicas', 'two'));
    expect(() => b.app.synthYaml()).toThrow(
      /addJsonPatch\(RuntimeObject\.MANAGER_DEPLOYMENT\): the Deployment kruise-controller-manager would be invalid at \/spec\/replicas/,
    );
  });

  it('refuses patches outside target BUNDLED and non-patch arguments', () => {
    const rt = new KruiseRuntime(Testing.app(), 'kruise', { target: RuntimeTarget.OPENKRUISE });
    expect(() => rt.addJsonPatch(RuntimeObject.MANAGER_DEPLOYMENT, JsonPatch.add('/a', 1))).toThrow(
      /target openkruise renders no install objects/,
    );
    const { runtime } = synth();
    expect(() => runtime.addJsonPatch(RuntimeObject.MANAGER_DEPLOYMENT)).toThrow(/give one or more cdk8s JsonPatch operations/);
    expect(() => runtime.addJsonPatch('Pod/x' as RuntimeObject, JsonPatch.add('/a', 1))).toThrow(/"Pod\/x" is not a RuntimeObject/);
  });

  it('names objects the install renders', () => {
    expect(RuntimeObject.MANAGER_DEPLOYMENT).toBe(`Deployment/${NAMES.managerDeployment}`);
    expect(RuntimeObject.DAEMON_SET).toBe(`DaemonSet/${NAMES.daemonSet}`);
    expect(RuntimeObject.WEBHOOK_SERVICE).toBe(`Service/${NAMES.webhookService}`);
    expect(RuntimeObject.MUTATING_WEBHOOK_CONFIGURATION).toBe(`MutatingWebhookConfiguration/${MUTATING_WEBHOOK_CONFIGURATION}`);
    expect(RuntimeObject.VALIDATING_WEBHOOK_CONFIGURATION).toBe(`ValidatingWebhookConfiguration/${VALIDATING_WEBHOOK_CONFIGURATION}`);
  });
});

describe('two KruiseRuntimes', () => {
  it('refuses a second one in the same app, naming both', () => {
    const app = Testing.app();
    new KruiseRuntime(app, 'kruise');
    const nested = new Chart(app, 'team');
    expect(() => new KruiseRuntime(nested, 'runtime')).toThrow(/team\/runtime: the app already has a KruiseRuntime at kruise/);
  });

  it('fails the synth of another App writing the same output with different cluster-scoped objects, naming both paths', () => {
    const outdir = mkdtempSync(path.join(tmpdir(), 'kruise-two-apps-'));
    try {
      const platform = Testing.app({ outdir });
      new KruiseRuntime(platform, 'platform-kruise');
      platform.synth();
      const same = Testing.app({ outdir });
      new KruiseRuntime(same, 'same-kruise');
      expect(() => same.synth()).not.toThrow();
      const team = Testing.app({ outdir });
      new KruiseRuntime(team, 'team-kruise', { webhookTimeout: Duration.seconds(20) });
      expect(() => team.synth()).toThrow(
        /team-kruise and platform-kruise \(another App writing .*\) would both write MutatingWebhookConfiguration\/kruise-mutating-webhook-configuration and 1 other cluster-scoped object\(s\), differently\. One runtime serves a cluster/,
      );
      const elsewhere = Testing.app();
      new KruiseRuntime(elsewhere, 'elsewhere', { webhookTimeout: Duration.seconds(20) });
      expect(() => elsewhere.synth()).not.toThrow();
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});

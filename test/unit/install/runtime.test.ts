import { execFileSync } from 'node:child_process';
import { ApiObject, App, Chart, Duration, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import {
  CriSocket,
  DaemonPlacement,
  IssuerKind,
  KruiseRuntime,
  RuntimeImage,
  RuntimeTarget,
  WebhookCertificates,
  type KruiseRuntimeProps,
} from '../../../constructs/kruise-runtime.js';
import { servedKinds } from '../../../src/install/crds.js';
import { bundledServesPods } from '../../../src/install/runtime-support.js';
import type { InstallSpec } from '../../../src/install/spec.js';
import { mutatingWebhookConfiguration } from '../../../src/install/webhooks.js';
import { MANAGER_NODE_OPTIONS } from '../../../src/runtime/manager/manager.js';
import { MANAGER_MALLOC_ARENA_MAX } from '../../../src/contracts/index.js';
import { PERMISSIONS, toPolicyRules } from '../../../src/contracts/index.js';
import { packageVersion } from '../../../src/version.js';

type Obj = Record<string, any>;

/** JSON with sorted keys: cdk8s sorts keys, the declared lists keep theirs. */
const canonical = (o: Obj) => JSON.stringify(o, Object.keys(o).sort());

function appWith(props: KruiseRuntimeProps = {}, build: (chart: Chart) => void = () => {}) {
  const app = Testing.app();
  const runtime = new KruiseRuntime(app, 'kruise', props);
  const chart = new Chart(app, 'app');
  build(chart);
  return { app, runtime, chart };
}

const synthRuntime = (runtime: KruiseRuntime): Obj[] => Testing.synth(runtime) as Obj[];
const find = (docs: Obj[], kind: string, name?: string) =>
  docs.find((d) => d.kind === kind && (name === undefined || d.metadata.name === name));

function sidecarJob(chart: Chart, id = 'job', marker = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value = 'true') {
  const job = new kplus.Job(chart, id, { containers: [{ name: 'main', image: 'busybox' }] });
  job.addContainer({ name: 'sidecar', image: 'envoy', envVariables: { [marker]: kplus.EnvValue.fromValue(value) } });
  return job;
}

function kruiseObject(chart: Chart, kind: string, spec: Obj = {}, id = kind) {
  return new ApiObject(chart, id, {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind,
    metadata: { name: id.toLowerCase(), namespace: 'default' },
    spec,
  });
}

describe('controller-manager Deployment', () => {
  const docs = synthRuntime(appWith().runtime);
  const deploy = find(docs, 'Deployment')!;
  const pod = deploy.spec.template.spec;
  const manager = pod.containers[0];

  it('is hardened: non-root, read-only root FS, no capabilities, RuntimeDefault seccomp', () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    expect(manager.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.hostNetwork).toBeUndefined();
    expect(pod.volumes).toContainEqual(expect.objectContaining({ name: 'tmp', emptyDir: expect.any(Object) }));
  });

  it('runs 2 leader-elected replicas spread over hosts and zones', () => {
    expect(deploy.metadata.namespace).toBe('kruise-system');
    expect(deploy.spec.replicas).toBe(2);
    expect(deploy.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    expect(manager.args).toEqual(
      expect.arrayContaining([
        'controller',
        '--leader-elect=true',
        '--leader-election-namespace=kruise-system',
        '--leader-election-id=kruise-manager',
      ]),
    );
    expect(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey).toBe(
      'kubernetes.io/hostname',
    );
    expect(pod.topologySpreadConstraints[0].topologyKey).toBe('topology.kubernetes.io/zone');
    expect(find(docs, 'PodDisruptionBudget')!.spec.minAvailable).toBe(1);
  });

  it('exposes webhook/metrics/health ports with probes, resources and POD_NAMESPACE', () => {
    expect(manager.command).toEqual(['cdk8s-kruise']);
    expect(manager.ports.map((p: Obj) => [p.name, p.containerPort])).toEqual([
      ['webhook-server', 9876],
      ['metrics', 8080],
      ['health', 8000],
    ]);
    expect(manager.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(manager.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(manager.resources.requests).toEqual({ cpu: '100m', memory: '256Mi' });
    // 1Gi, not upstream's 512Mi: the 640 MiB heap it gives holds 100,000 cached pods (bench:memory-peer).
    expect(manager.resources.limits).toEqual({ cpu: '500m', memory: '1Gi' });
    expect(manager.env).toContainEqual({
      name: 'POD_NAMESPACE',
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
    });
    expect(pod.serviceAccountName).toBe('kruise-manager');
  });

  it('passes the manager its V8 limits in NODE_OPTIONS (the value the runtime recommends)', () => {
    expect(manager.env).toContainEqual({ name: 'NODE_OPTIONS', value: MANAGER_NODE_OPTIONS });
    expect(manager.env).toContainEqual({ name: 'MALLOC_ARENA_MAX', value: MANAGER_MALLOC_ARENA_MAX });
    // Node accepts the value and the heap limit it yields is under the manager's in-cluster warning threshold.
    const limit = Number(
      execFileSync(process.execPath, ['-e', "process.stdout.write(String(require('node:v8').getHeapStatistics().heap_size_limit))"], {
        env: { ...process.env, NODE_OPTIONS: MANAGER_NODE_OPTIONS },
      }).toString(),
    );
    expect(limit).toBeGreaterThan(64 * 2 ** 20);
    expect(limit).toBeLessThanOrEqual(2 ** 30);
  });

  it('takes replicas and resources from props', () => {
    const d = find(
      synthRuntime(
        appWith({
          replicas: 3,
          managerResources: { cpu: { limit: kplus.Cpu.millis(900) }, memory: { request: Size.mebibytes(300) } },
        }).runtime,
      ),
      'Deployment',
    )!;
    expect(d.spec.replicas).toBe(3);
    expect(d.spec.template.spec.containers[0].resources).toEqual({
      requests: { cpu: '100m', memory: '300Mi' },
      limits: { cpu: '900m', memory: '1Gi' },
    });
  });

  it("sizes the manager's V8 old space from its memory limit: the limit less 384 MiB, at least 128 MiB", () => {
    const nodeOptions = (memoryLimit: Size) =>
      find(
        synthRuntime(appWith({ managerResources: { memory: { limit: memoryLimit } } }).runtime),
        'Deployment',
      )!.spec.template.spec.containers[0].env.find((e: Obj) => e.name === 'NODE_OPTIONS').value;
    expect(nodeOptions(Size.gibibytes(1))).toBe('--max-semi-space-size=32 --max-old-space-size=640');
    expect(nodeOptions(Size.gibibytes(4))).toBe('--max-semi-space-size=32 --max-old-space-size=3712');
    expect(nodeOptions(Size.mebibytes(256))).toBe('--max-semi-space-size=32 --max-old-space-size=128');
    expect(MANAGER_NODE_OPTIONS).toBe('--max-semi-space-size=32 --max-old-space-size=640');
  });

  it('creates the namespace labelled control-plane: openkruise and no empty certificate Secret', () => {
    expect(find(docs, 'Namespace', 'kruise-system')!.metadata.labels['control-plane']).toBe('openkruise');
    expect(find(docs, 'Secret')).toBeUndefined();
  });

  it('rejects bad props eagerly with the construct path', () => {
    expect(() => appWith({ replicas: 0 })).toThrow(/kruise: replicas must be an integer >= 1/);
    expect(() => appWith({ webhookTimeout: Duration.seconds(31) })).toThrow(/webhookTimeout must be between 1 and 30/);
    expect(() => appWith({ namespace: 'Kruise_System' })).toThrow(/namespace "Kruise_System" is not a valid namespace name/);
    expect(() => appWith({ featureGates: { SidecarTerminater: true } })).toThrow(/unknown feature gate "SidecarTerminater"/);
    expect(() => CriSocket.fromPath('containerd.sock')).toThrow(/"containerd.sock" must be an absolute path/);
  });
});

describe('RBAC', () => {
  const { runtime } = appWith({}, (c) => kruiseObject(c, 'ContainerRecreateRequest', { podName: 'p', containers: [{ name: 'a' }] }));
  const docs = synthRuntime(runtime);
  const roles = docs.filter((d) => d.kind === 'Role' || d.kind === 'ClusterRole');

  it('has no wildcard anywhere', () => {
    for (const r of roles) {
      for (const rule of r.rules) {
        for (const field of ['apiGroups', 'resources', 'verbs', 'resourceNames']) {
          expect(rule[field] ?? [], `${r.kind} ${r.metadata.name} ${field}`).not.toContain('*');
        }
      }
    }
    expect(JSON.stringify(roles)).not.toContain('"*"');
  });

  it('renders exactly the declared permission lists (every rule traceable)', () => {
    expect(find(docs, 'ClusterRole', 'kruise-manager-role')!.rules).toEqual(toPolicyRules(PERMISSIONS.MANAGER));
    expect(find(docs, 'Role', 'kruise-manager-role')!.rules).toEqual(toPolicyRules(PERMISSIONS.MANAGER_NAMESPACED));
    const declared = new Set(
      Object.values(PERMISSIONS)
        .flatMap((l) => toPolicyRules(l))
        .map(canonical),
    );
    for (const r of roles) for (const rule of r.rules) expect(declared.has(canonical(rule)), canonical(rule)).toBe(true);
    if (PERMISSIONS.DAEMON.length)
      expect(find(docs, 'ClusterRole', 'kruise-daemon-role')!.rules).toEqual(toPolicyRules(PERMISSIONS.DAEMON));
  });

  it('lets the manager write Secrets only in the daemon-config namespace (pull-secret copies), reading and watching them anywhere', () => {
    const secretRules = (o: Obj) => o.rules.filter((r: Obj) => r.resources.includes('secrets'));
    expect(secretRules(find(docs, 'ClusterRole', 'kruise-manager-role')!)).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
    ]);
    const role = find(docs, 'Role', 'kruise-manager-secret-role')!;
    expect(role.metadata.namespace).toBe('kruise-daemon-config');
    expect(role.rules).toEqual(toPolicyRules(PERMISSIONS.MANAGER_DAEMON_CONFIG));
    expect(secretRules(role)).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'create', 'update', 'delete'] }]);
    const rb = find(docs, 'RoleBinding', 'kruise-manager-secret-role')!;
    expect(rb.metadata.namespace).toBe('kruise-daemon-config');
    expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kruise-manager-secret-role' });
    expect(rb.subjects).toEqual([{ kind: 'ServiceAccount', name: 'kruise-manager', namespace: 'kruise-system' }]);
    // The manager is told the same namespace its Role is bound in.
    expect(find(docs, 'Deployment')!.spec.template.spec.containers[0].env).toContainEqual({
      name: 'KRUISE_DAEMON_CONFIG_NS',
      value: 'kruise-daemon-config',
    });
  });

  it('binds the secret Role in a custom daemon-config namespace, and renders none without a daemon', () => {
    const moved = synthRuntime(appWith({ daemonConfigNamespace: 'pull-secrets', daemon: { placement: DaemonPlacement.ALWAYS } }).runtime);
    expect(find(moved, 'Role', 'kruise-manager-secret-role')!.metadata.namespace).toBe('pull-secrets');
    expect(find(moved, 'RoleBinding', 'kruise-manager-secret-role')!.metadata.namespace).toBe('pull-secrets');
    expect(find(moved, 'Deployment')!.spec.template.spec.containers[0].env).toContainEqual({
      name: 'KRUISE_DAEMON_CONFIG_NS',
      value: 'pull-secrets',
    });
    const none = synthRuntime(appWith({}, (c) => kruiseObject(c, 'SidecarSet', { selector: {} })).runtime);
    expect(find(none, 'Role', 'kruise-manager-secret-role')).toBeUndefined();
    expect(find(none, 'RoleBinding', 'kruise-manager-secret-role')).toBeUndefined();
  });

  it('binds each role to its own ServiceAccount in the runtime namespace', () => {
    for (const b of docs.filter((d) => d.kind === 'RoleBinding' || d.kind === 'ClusterRoleBinding')) {
      expect(b.subjects).toHaveLength(1);
      expect(b.subjects[0].namespace).toBe('kruise-system');
      expect(b.roleRef.name).toBe(b.metadata.name);
      expect(b.subjects[0].name).toBe(b.metadata.name.startsWith('kruise-manager') ? 'kruise-manager' : 'kruise-daemon');
    }
    expect(
      docs
        .filter((d) => d.kind === 'ServiceAccount')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['kruise-daemon', 'kruise-manager']);
  });
});

describe('admission policies narrowing RBAC', () => {
  // An app with a CRR: the install has a daemon and serves CRRs.
  const docs = synthRuntime(
    appWith({}, (c) => kruiseObject(c, 'ContainerRecreateRequest', { podName: 'p', containers: [{ name: 'a' }] })).runtime,
  );

  it("binds the daemon's CRR and pod-status writes to its node, the manager's ConfigMap writes to barriers; the daemon's only with a daemon", () => {
    const policies = docs.filter((d) => d.kind === 'ValidatingAdmissionPolicy').map((d) => d.metadata.name);
    expect(policies.sort()).toEqual(['kruise-daemon-node-scope', 'kruise-manager-configmap-scope']);
    for (const name of policies) {
      expect(find(docs, 'ValidatingAdmissionPolicyBinding', name)!.spec).toEqual({ policyName: name, validationActions: ['Deny'] });
    }
    const daemon = find(docs, 'ValidatingAdmissionPolicy', 'kruise-daemon-node-scope')!;
    expect(daemon.spec.matchConditions).toEqual([
      { name: 'kruise-daemon', expression: "request.userInfo.username == 'system:serviceaccount:kruise-system:kruise-daemon'" },
    ]);
    const none = synthRuntime(appWith({}, (c) => kruiseObject(c, 'SidecarSet', { selector: {} })).runtime);
    expect(none.filter((d) => d.kind === 'ValidatingAdmissionPolicy').map((d) => d.metadata.name)).toEqual([
      'kruise-manager-configmap-scope',
    ]);
  });

  it("the CRR webhook leaves the daemon's updates to the policy, and reviews its creates", () => {
    const m = find(docs, 'MutatingWebhookConfiguration')!;
    const crr = m.webhooks.find((w: { name: string }) => w.name === 'mcontainerrecreaterequest.kb.io');
    expect(crr.matchConditions).toEqual([
      {
        name: 'not-a-kruise-daemon-update',
        expression: "request.operation != 'UPDATE' || request.userInfo.username != 'system:serviceaccount:kruise-system:kruise-daemon'",
      },
    ]);
    expect(crr.rules[0].operations).toEqual(['CREATE', 'UPDATE']);
  });
});

describe('API priority and fairness', () => {
  it("puts the manager's Lease calls and the runtime's other requests into levels of their own; the daemon's only with a daemon", () => {
    const docs = synthRuntime(
      appWith({}, (c) => kruiseObject(c, 'ContainerRecreateRequest', { podName: 'p', containers: [{ name: 'a' }] })).runtime,
    );
    const lease = find(docs, 'FlowSchema', 'kruise-leader-election')!;
    expect(lease.spec.priorityLevelConfiguration).toEqual({ name: 'kruise-leader-election' });
    expect(lease.spec.rules[0].resourceRules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'], namespaces: ['kruise-system'] },
    ]);
    const runtime = find(docs, 'FlowSchema', 'kruise-runtime')!;
    // After the lease schema, before the built-in service-accounts schema (9000) that feeds workload-low.
    expect(lease.spec.matchingPrecedence).toBeLessThan(runtime.spec.matchingPrecedence);
    expect(runtime.spec.matchingPrecedence).toBeLessThan(9000);
    const names = (fs: Obj) => fs.spec.rules[0].subjects.map((s: Obj) => s.serviceAccount.name);
    expect(names(runtime)).toEqual(['kruise-manager', 'kruise-daemon']);
    expect(find(docs, 'PriorityLevelConfiguration', 'kruise-leader-election')!.spec.limited.lendablePercent).toBe(0);
    const noDaemon = synthRuntime(appWith({}, (c) => kruiseObject(c, 'SidecarSet', { selector: {} })).runtime);
    expect(names(find(noDaemon, 'FlowSchema', 'kruise-runtime')!)).toEqual(['kruise-manager']);
  });
});

describe('webhooks', () => {
  it('registers the pod webhook only when a feature of the app needs it (or when asked to)', () => {
    const without = find(synthRuntime(appWith().runtime), 'MutatingWebhookConfiguration')!;
    expect(without.webhooks.map((w: Obj) => w.name)).toEqual([
      'mcloneset.kb.io',
      'mcontainerrecreaterequest.kb.io',
      'mstatefulset.kb.io',
      'mdaemonset.kb.io',
    ]);
    expect(bundledServesPods()).toBe(true);
    const { runtime } = appWith({}, (c) => kruiseObject(c, 'SidecarSet', { selector: { matchLabels: { app: 'web' } } }));
    expect(find(synthRuntime(runtime), 'MutatingWebhookConfiguration')!.webhooks.map((w: Obj) => w.name)).toEqual([
      'mpod.kb.io',
      'mpod-best-effort.kb.io',
      'mcloneset.kb.io',
      'mcontainerrecreaterequest.kb.io',
      'mstatefulset.kb.io',
      'mdaemonset.kb.io',
    ]);
    const always = find(synthRuntime(appWith({ alwaysRegisterPodWebhook: true }).runtime), 'MutatingWebhookConfiguration')!;
    expect(always.webhooks.map((w: Obj) => w.name)).toContain('mpod.kb.io');
  });

  it('builds the pod webhook with Fail, CREATE only, and never for kube-system or its own namespace', () => {
    const spec: InstallSpec = {
      namespace: 'platform-kruise',
      daemonConfigNamespace: 'cfg',
      image: 'x',
      imagePullPolicy: 'IfNotPresent',
      imagePullSecrets: [],
      manager: { replicas: 2, resources: {}, logLevel: 'info' },
      webhook: { timeoutSeconds: 10, pods: true, certificates: { mode: 'self' } },
      featureGates: '',
      kinds: servedKinds(),
    };
    const pod = (mutatingWebhookConfiguration(spec).webhooks as Obj[]).find((w) => w.name === 'mpod.kb.io')!;
    expect(pod.rules).toEqual([{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'], scope: 'Namespaced' }]);
    expect(pod.failurePolicy).toBe('Fail');
    expect(pod.timeoutSeconds).toBe(10);
    expect(pod.namespaceSelector).toEqual({
      matchExpressions: [
        { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'platform-kruise'] },
        { key: 'kruise.cdk8s.io/pod-webhook', operator: 'NotIn', values: ['disabled'] },
      ],
    });
    expect(pod.clientConfig).toEqual({
      service: { name: 'kruise-webhook-service', namespace: 'platform-kruise', path: '/mutate-pod', port: 443 },
    });
  });

  it('validates every served kind with bounded timeouts and the same namespace exclusion', () => {
    const docs = synthRuntime(appWith({ webhookTimeout: Duration.seconds(5) }).runtime);
    const validating = find(docs, 'ValidatingWebhookConfiguration')!;
    const kinds = validating.webhooks.map((w: Obj) => w.rules[0].resources[0]).sort();
    const crdPlurals = (Testing.synth(appWith().runtime.crds!) as Obj[]).map((c) => c.spec.names.plural).sort();
    // CRRs are validated by their mutating webhook, on CREATE and UPDATE (one review per write, as upstream).
    expect(kinds).toEqual(crdPlurals.filter((p: string) => p !== 'containerrecreaterequests'));
    const crr = find(docs, 'MutatingWebhookConfiguration')!.webhooks.find((w: Obj) => w.name === 'mcontainerrecreaterequest.kb.io');
    expect(crr.rules[0].operations).toEqual(['CREATE', 'UPDATE']);
    expect(crr.failurePolicy).toBe('Fail');
    for (const w of [...validating.webhooks, ...find(docs, 'MutatingWebhookConfiguration')!.webhooks]) {
      expect(w.timeoutSeconds).toBe(5);
      expect(w.sideEffects).toBe('None');
      expect(w.namespaceSelector.matchExpressions[0].values).toEqual(['kruise-system', 'kube-system']);
      expect(w.clientConfig.caBundle).toBeUndefined();
    }
    const sidecarset = validating.webhooks.find((w: Obj) => w.name === 'vsidecarset.kb.io');
    expect(sidecarset.rules[0].scope).toBe('Cluster');
    expect(sidecarset.clientConfig.service.path).toBe('/validate-apps-kruise-io-v1alpha1-sidecarset');
  });

  it('routes the Service to the manager webhook port', () => {
    const svc = find(synthRuntime(appWith().runtime), 'Service')!;
    expect(svc.spec.selector).toEqual({ 'control-plane': 'controller-manager' });
    expect(svc.spec.ports).toEqual([{ name: 'https', port: 443, protocol: 'TCP', targetPort: 'webhook-server' }]);
  });

  it('takes certificates from a cert-manager issuer when asked', () => {
    const docs = synthRuntime(
      appWith({ certificates: WebhookCertificates.fromCertManager('ca-issuer', IssuerKind.CLUSTER_ISSUER) }).runtime,
    );
    const cert = find(docs, 'Certificate')!;
    expect(cert.spec).toMatchObject({
      secretName: 'kruise-webhook-certs',
      dnsNames: ['kruise-webhook-service.kruise-system.svc', 'kruise-webhook-service.kruise-system.svc.cluster.local'],
      issuerRef: { kind: 'ClusterIssuer', name: 'ca-issuer', group: 'cert-manager.io' },
    });
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      expect(find(docs, kind)!.metadata.annotations['cert-manager.io/inject-ca-from']).toBe('kruise-system/kruise-webhook-cert');
    }
    expect(find(docs, 'Deployment')!.spec.template.spec.containers[0].args).toContain('--webhook-cert-mode=cert-manager');
    expect(find(synthRuntime(appWith().runtime), 'Deployment')!.spec.template.spec.containers[0].args).toContain(
      '--webhook-cert-mode=self',
    );
    expect(() => WebhookCertificates.fromCertManager('Bad Name')).toThrow(/not a valid object name/);
  });

  it('puts the webhook configurations after everything they call', () => {
    const kinds = synthRuntime(appWith({}, (c) => sidecarJob(c)).runtime).map((d) => d.kind);
    const firstHook = kinds.findIndex((k) => k.endsWith('WebhookConfiguration'));
    expect(kinds.slice(firstHook).every((k) => k.endsWith('WebhookConfiguration'))).toBe(true);
    expect(kinds.indexOf('DaemonSet')).toBeLessThan(firstHook);
  });
});

describe('feature-gate inference', () => {
  const managerArgs = (docs: Obj[]) => find(docs, 'Deployment')!.spec.template.spec.containers[0].args as string[];

  it('turns SidecarTerminator on for a sidecar added after the runtime was constructed', () => {
    const { runtime } = appWith({}, (c) => sidecarJob(c));
    expect(managerArgs(synthRuntime(runtime))).toContain('--feature-gates=KruiseDaemon=true,SidecarTerminator=true');
    expect(runtime.report().gates.required.get('SidecarTerminator')!.use.resource.path).toBe('app/job/Resource');
  });

  it('turns ImagePullJobGate on for an ImagePullJob', () => {
    const { runtime } = appWith({}, (c) => kruiseObject(c, 'ImagePullJob', { image: 'nginx:1.9.1' }));
    expect(managerArgs(synthRuntime(runtime))).toContain('--feature-gates=ImagePullJobGate=true,KruiseDaemon=true');
  });

  it('passes no gate when the app needs none', () => {
    expect(managerArgs(synthRuntime(appWith().runtime)).some((a) => a.startsWith('--feature-gates'))).toBe(false);
  });

  it('passes a forced-on gate', () => {
    const { runtime } = appWith({ featureGates: { SidecarTerminator: true } });
    expect(managerArgs(synthRuntime(runtime))).toContain('--feature-gates=SidecarTerminator=true');
  });

  it('fails the synth when a needed gate is forced off, naming both', () => {
    const { app } = appWith({ featureGates: { SidecarTerminator: false } }, (c) => sidecarJob(c));
    expect(() => app.synthYaml()).toThrow(
      /\[kruise\] feature gate SidecarTerminator is forced off, but Job .* \(app\/job\/Resource\) uses job sidecar termination \(kill\) at \/spec\/template\/spec\/containers\/1\/env\/0/,
    );
  });

  it('fails the synth for setFeatureGate(..., false) too', () => {
    const { app, runtime } = appWith({}, (c) => kruiseObject(c, 'ImagePullJob', { image: 'nginx' }));
    runtime.setFeatureGate('KruiseDaemon', false);
    expect(() => app.synthYaml()).toThrow(/feature gate KruiseDaemon is forced off.*ImagePullJob default\/imagepulljob/);
  });
});

describe('node daemon', () => {
  it('is omitted when nothing needs it', () => {
    const docs = synthRuntime(appWith({}, (c) => kruiseObject(c, 'SidecarSet', { selector: {} })).runtime);
    expect(find(docs, 'DaemonSet')).toBeUndefined();
    expect(find(docs, 'ServiceAccount', 'kruise-daemon')).toBeUndefined();
    expect(find(docs, 'Namespace', 'kruise-daemon-config')).toBeUndefined();
  });

  it('appears for a CRR, hardened and kept off virtual-kubelet nodes', () => {
    const docs = synthRuntime(
      appWith({}, (c) => kruiseObject(c, 'ContainerRecreateRequest', { podName: 'p', containers: [{ name: 'a' }] })).runtime,
    );
    const ds = find(docs, 'DaemonSet')!;
    const pod = ds.spec.template.spec;
    const c = pod.containers[0];
    expect(c.image).toBe(find(docs, 'Deployment')!.spec.template.spec.containers[0].image);
    expect(c.args).toEqual([
      'daemon',
      '--health-probe-addr=:10221',
      '--cri-socket=/hostvarrun/containerd/containerd.sock',
      '--daemon-config-namespace=kruise-daemon-config',
      '--feature-gates=KruiseDaemon=true',
      '--log-level=info',
    ]);
    expect(c.env).toContainEqual({ name: 'NODE_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } });
    expect(pod.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions).toContainEqual({
      key: 'type',
      operator: 'NotIn',
      values: ['virtual-kubelet'],
    });
    expect(pod.volumes).toContainEqual({ name: 'host-run', hostPath: { path: '/var/run', type: 'Directory' } });
    expect(c.volumeMounts).toContainEqual({ name: 'host-run', mountPath: '/hostvarrun', readOnly: true });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      privileged: false,
    });
    expect(pod.hostNetwork).toBeUndefined();
    expect(find(docs, 'Namespace', 'kruise-daemon-config')).toBeDefined();
  });

  it('reaches well-known sockets through /var/run and others through their directory', () => {
    const daemonPod = (criSocket: CriSocket) =>
      find(synthRuntime(appWith({ daemon: { placement: DaemonPlacement.ALWAYS, criSocket } }).runtime), 'DaemonSet')!.spec.template.spec;
    expect(daemonPod(CriSocket.CRIO).containers[0].args).toContain('--cri-socket=/hostvarrun/crio/crio.sock');
    expect(daemonPod(CriSocket.K3S).containers[0].args).toContain('--cri-socket=/hostvarrun/k3s/containerd/containerd.sock');
    const custom = daemonPod(CriSocket.fromPath('/opt/runtime/cri.sock'));
    expect(custom.volumes).toContainEqual({ name: 'cri-socket-dir', hostPath: { path: '/opt/runtime', type: 'Directory' } });
    expect(custom.containers[0].volumeMounts).toContainEqual({ name: 'cri-socket-dir', mountPath: '/host-cri', readOnly: true });
    expect(custom.containers[0].args).toContain('--cri-socket=/host-cri/cri.sock');
  });

  it('runs non-root with the socket group when given', () => {
    const docs = synthRuntime(appWith({ daemon: { placement: DaemonPlacement.ALWAYS, criSocketGroup: 2000 } }).runtime);
    const pod = find(docs, 'DaemonSet')!.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, supplementalGroups: [2000] });
    expect(pod.containers[0].securityContext.runAsNonRoot).toBe(true);
  });

  it('is a synth error when placement NEVER meets a resource that needs it', () => {
    const { app } = appWith({ daemon: { placement: DaemonPlacement.NEVER } }, (c) => sidecarJob(c));
    expect(() => app.synthYaml()).toThrow(/daemon.placement is NEVER, but Job .* uses job sidecar termination \(kill\)/);
  });

  it('is not needed for quick-exit-image sidecars (virtual nodes have no daemon)', () => {
    const { runtime } = appWith({}, (c) =>
      sidecarJob(c, 'vk', 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE', 'registry.example.com/exit:0'),
    );
    const docs = synthRuntime(runtime);
    expect(find(docs, 'DaemonSet')).toBeUndefined();
    expect(find(docs, 'Deployment')!.spec.template.spec.containers[0].args).toContain(
      '--feature-gates=KruiseDaemon=true,SidecarTerminator=true',
    );
  });
});

describe('image', () => {
  const image = (props: KruiseRuntimeProps) => find(synthRuntime(appWith(props).runtime), 'Deployment')!.spec.template.spec;

  it('defaults to the bundled image pinned to the package version', () => {
    const pod = image({});
    expect(pod.containers[0].image).toBe(`ghcr.io/cdk8s-kruise/cdk8s-kruise:${packageVersion()}`);
    expect(pod.containers[0].imagePullPolicy).toBe('IfNotPresent');
    expect(pod.imagePullSecrets).toBeUndefined();
  });

  it('overrides registry, tag and digest, and adds pull secrets', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const pod = image({
      image: RuntimeImage.bundled({ registry: 'registry.example.com:5000/platform/', tag: 'v9', digest }),
      imagePullPolicy: kplus.ImagePullPolicy.ALWAYS,
      imagePullSecrets: ['regcred'],
    });
    expect(pod.containers[0].image).toBe(`registry.example.com:5000/platform/cdk8s-kruise:v9@${digest}`);
    expect(pod.containers[0].imagePullPolicy).toBe('Always');
    expect(image({ imagePullPolicy: kplus.ImagePullPolicy.NEVER }).containers[0].imagePullPolicy).toBe('Never');
    expect(pod.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(image({ image: RuntimeImage.fromReference(`mirror.local/kruise@${digest}`) }).containers[0].image).toBe(
      `mirror.local/kruise@${digest}`,
    );
  });

  it('rejects malformed references', () => {
    expect(() => RuntimeImage.bundled({ digest: 'sha256:abc' })).toThrow(/image.digest "sha256:abc" is not a sha256 digest/);
    expect(() => RuntimeImage.bundled({ tag: 'v 1' })).toThrow(/image.tag "v 1" is not a valid tag/);
    expect(() => RuntimeImage.bundled({ registry: 'https://x' })).toThrow(/image.registry/);
    expect(() => RuntimeImage.fromReference('registry.example.com/UPPER')).toThrow(/is not valid/);
    expect(RuntimeImage.bundled({ digest: `sha256:${'0'.repeat(64)}` }).pinned).toBe(true);
  });
});

describe('target openkruise', () => {
  it('emits no runtime and no CRDs, and reports the gates to turn on', () => {
    const { app, runtime } = appWith({ target: RuntimeTarget.OPENKRUISE }, (c) => {
      sidecarJob(c);
      kruiseObject(c, 'ImagePullJob', { image: 'nginx', completionPolicy: { type: 'Always' } });
    });
    expect(runtime.crds).toBeUndefined();
    expect(synthRuntime(runtime)).toEqual([]);
    expect(app.charts.map((c) => c.node.id)).toEqual(['kruise', 'app']);
    const report = runtime.report();
    expect([...report.gates.required.keys()]).toEqual(['ImagePullJobGate', 'KruiseDaemon', 'SidecarTerminator']);
    expect(report.gatesTable).toContain('| SidecarTerminator | false | Alpha | Job');
  });

  it('refuses features upstream never shipped', () => {
    const { app } = appWith({ target: RuntimeTarget.OPENKRUISE }, (c) => {
      new ApiObject(c, 'pod', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', annotations: { 'kruise.io/container-exit-priority': '{"envoy":1}' } },
        spec: {
          containers: [
            { name: 'a', image: 'a' },
            { name: 'envoy', image: 'envoy' },
          ],
        },
      });
    });
    expect(() => app.synthYaml()).toThrow(
      /Pod p \(app\/pod\) uses container exit priority at \/metadata\/annotations\/kruise.io~1container-exit-priority, which upstream OpenKruise does not carry out\. Use target bundled \(the cdk8s-kruise runtime carries it out\)\..*native sidecars/,
    );
  });
});

describe('output', () => {
  const build = () => {
    const app = new App({ outdir: '/nonexistent' });
    new KruiseRuntime(app, 'kruise', { syncWaves: true });
    const c = new Chart(app, 'app');
    sidecarJob(c);
    kruiseObject(c, 'ImagePullJob', { image: 'nginx' });
    return app;
  };

  it('is deterministic', () => {
    expect(build().synthYaml()).toBe(build().synthYaml());
  });

  it('orders CRDs, then the runtime, then the app, with sync waves on request', () => {
    const app = build();
    const yaml = app.synthYaml();
    expect(app.charts.map((c) => c.node.id)).toEqual(['kruise-crds', 'kruise', 'app']);
    const crds = Testing.synth(app.node.findChild('kruise-crds') as Chart) as Obj[];
    expect(crds.length).toBeGreaterThan(0);
    for (const crd of crds) expect(crd.metadata.annotations['argocd.argoproj.io/sync-wave']).toBe('-2');
    for (const o of synthRuntime(app.node.findChild('kruise') as KruiseRuntime)) {
      expect(o.metadata.annotations['argocd.argoproj.io/sync-wave'], `${o.kind}`).toBe('-1');
      expect(o.metadata.labels['app.kubernetes.io/part-of']).toBe('cdk8s-kruise');
    }
    expect(yaml.indexOf('kind: CustomResourceDefinition')).toBeLessThan(yaml.indexOf('kind: Deployment'));
    expect(yaml.indexOf('kind: Deployment')).toBeLessThan(yaml.lastIndexOf('kind: ImagePullJob'));
    expect(yaml.lastIndexOf('kind: CustomResourceDefinition')).toBeLessThan(yaml.indexOf('kind: Namespace'));
  });
});

describe('target openkruise schema check', () => {
  it('reports Kruise objects upstream would reject, with resource, pointer and hint', () => {
    const { app } = appWith({ target: RuntimeTarget.OPENKRUISE }, (c) =>
      kruiseObject(c, 'ImagePullJob', { image: 'nginx', completionPolicy: { type: 'Always' }, parallelizm: 2 }),
    );
    expect(() => app.synthYaml()).toThrow(/ImagePullJob default\/imagepulljob \(app\/ImagePullJob\) at \/spec\/parallelizm: .*parallelism/);
  });

  it('passes valid objects and kinds it does not model', () => {
    const { app } = appWith({ target: RuntimeTarget.OPENKRUISE }, (c) => {
      kruiseObject(c, 'ImagePullJob', { image: 'nginx', completionPolicy: { type: 'Always' } });
      kruiseObject(c, 'WorkloadSpread', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'x' } });
    });
    expect(() => app.synthYaml()).not.toThrow();
  });
});

describe('analysis shortcuts', () => {
  it('still sees the deletion-protection label on objects it does not render', () => {
    // Under target openkruise, which carries deletion protection out (so its gate is required).
    const { runtime } = appWith({ target: RuntimeTarget.OPENKRUISE }, (c) => {
      const cm = new kplus.ConfigMap(c, 'cm', { data: { a: 'b' } });
      cm.metadata.addLabel('policy.kruise.io/delete-protection', 'Always');
    });
    synthRuntime(runtime);
    expect(runtime.report().gates.required.get('ResourcesDeletionProtection')!.use.resource.kind).toBe('ConfigMap');
  });
});

describe('one runtime per app', () => {
  it('refuses a second KruiseRuntime in the same app', () => {
    const app = Testing.app();
    new KruiseRuntime(app, 'kruise');
    expect(() => new KruiseRuntime(app, 'again')).toThrow(/again: the app already has a KruiseRuntime at kruise/);
  });
});

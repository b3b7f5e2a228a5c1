// The RBAC that dist/ installs lets the manager's and the daemon's ServiceAccounts do exactly what
// the runtime declares it needs (src/contracts/permissions.ts) and nothing else in the checked
// universe: every (resource, verb, scope) is asked by impersonation (SelfSubjectAccessReview as the
// ServiceAccount) and compared with the declared rules.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig, type KubernetesObject, type V1Deployment, type V1PolicyRule, type V1RoleBinding } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findCoveringRule,
  MUTATING_WEBHOOK_CONFIGURATION,
  PERMISSIONS,
  VALIDATING_WEBHOOK_CONFIGURATION,
  type ApiAccess,
  type PermissionRule,
  type PermissionScope,
  type Verb,
} from '../../src/contracts/index.js';
import { ContainerRecreateRequestDefinition } from '../../src/api/registry.js';
import { kindWebhookPath } from '../../src/install/webhooks.js';
import {
  adminKubeConfig,
  bindPod,
  canI,
  createNamespace,
  createNode,
  describeCheck,
  kubectl,
  rawRequest,
  serverSideApply,
  serviceAccountUser,
  setPodStatus,
  type AccessCheck,
  type RawResponse,
} from '../harness/index.js';
import { eventually, freePort, loopbackWebhookArgs, startController, type ControllerProcess } from './runtime/support.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const distDir = path.join(repoRoot, 'dist');
// The admission policies that narrow what RBAC grants are applied with it (their test is at the end).
const RBAC_KINDS = new Set([
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);
const ALL_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;

function distObjects(): KubernetesObject[] {
  return readdirSync(distDir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .flatMap((e) => parseAllDocuments(readFileSync(path.join(e.parentPath, e.name), 'utf8')).map((d) => d.toJS() as KubernetesObject))
    .filter((o): o is KubernetesObject => o !== null && typeof o === 'object');
}

const objects = distObjects();
const rbacObjects = objects.filter((o) => RBAC_KINDS.has(o.kind!));
const rank = (o: KubernetesObject) => ['Namespace', 'ServiceAccount', 'ClusterRole', 'Role'].indexOf(o.kind!) >>> 0;
rbacObjects.sort((a, b) => rank(a) - rank(b));

// The control plane is shared by every e2e file: take the RBAC objects applied here away again, so a later
// file applying the same install (under its own field manager) starts from a clean cluster. Namespaces stay:
// without a namespace controller they would hang in Terminating.
afterAll(async () => {
  const applied = rbacObjects.filter((o) => o.kind !== 'Namespace');
  await kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], {
    input: applied.map((o) => `---\n${stringify(o)}`).join(''),
  });
});

/** The runtime components whose ServiceAccount we check, found by the workload that runs them. */
interface Component {
  readonly name: string;
  readonly workloadKind: 'Deployment' | 'DaemonSet';
  readonly cluster: readonly PermissionRule[];
  /** Namespaced lists, each with the Role in dist/ that must carry it (its RoleBinding says where it applies). */
  readonly namespaced: readonly { readonly role: string; readonly rules: readonly PermissionRule[] }[];
}
const COMPONENTS: readonly Component[] = [
  {
    name: 'manager',
    workloadKind: 'Deployment',
    cluster: PERMISSIONS.MANAGER,
    namespaced: [
      { role: 'kruise-manager-role', rules: PERMISSIONS.MANAGER_NAMESPACED },
      { role: 'kruise-manager-secret-role', rules: PERMISSIONS.MANAGER_DAEMON_CONFIG },
    ],
  },
  {
    name: 'daemon',
    workloadKind: 'DaemonSet',
    cluster: PERMISSIONS.DAEMON,
    namespaced: [{ role: 'kruise-daemon-secret-role', rules: PERMISSIONS.DAEMON_NAMESPACED }],
  },
];

function serviceAccountOf(component: Component): { namespace: string; name: string } {
  // The runtime's own workloads: the examples in dist/ have Deployments of their own.
  const workloads = objects.filter(
    (o) =>
      o.kind === component.workloadKind &&
      o.apiVersion === 'apps/v1' &&
      o.metadata?.labels?.['app.kubernetes.io/part-of'] === 'cdk8s-kruise',
  ) as V1Deployment[];
  if (workloads.length !== 1) {
    throw new Error(`expected one cdk8s-kruise ${component.workloadKind} (the ${component.name}) in dist/, found ${workloads.length}`);
  }
  const w = workloads[0]!;
  const name = w.spec?.template.spec?.serviceAccountName;
  if (!name) throw new Error(`${component.workloadKind}/${w.metadata?.name} in dist/ sets no serviceAccountName`);
  return { namespace: w.metadata?.namespace ?? 'default', name };
}

/** RoleBindings in dist/ of this ServiceAccount. */
function roleBindingsOf(sa: { namespace: string; name: string }): V1RoleBinding[] {
  return objects
    .filter((o): o is V1RoleBinding => o.kind === 'RoleBinding')
    .filter((b) =>
      b.subjects?.some((s) => s.kind === 'ServiceAccount' && s.name === sa.name && (s.namespace ?? b.metadata?.namespace) === sa.namespace),
    );
}

/**
 * The component's declared lists with the namespace dist/ binds each in: a namespaced list applies where
 * the RoleBinding of its Role is, so a Role bound in the wrong namespace shows up as a mismatch.
 */
function scopesOf(component: Component, sa: { namespace: string; name: string }): PermissionScope[] {
  const bindings = roleBindingsOf(sa);
  const scopes: PermissionScope[] = [{ rules: component.cluster }];
  for (const { role, rules } of component.namespaced) {
    const where = bindings.filter((b) => b.roleRef.kind === 'Role' && b.roleRef.name === role).map((b) => b.metadata!.namespace!);
    if (rules.length > 0 && where.length === 0) throw new Error(`dist/ binds no Role ${role} to ${sa.namespace}/${sa.name}`);
    for (const namespace of where) scopes.push({ rules, namespace });
  }
  return scopes;
}

const SENSITIVE: readonly (readonly [string, string])[] = [
  ['', 'secrets'],
  ['', 'nodes'],
  ['', 'pods'],
  ['', 'pods/exec'],
  ['', 'configmaps'],
  ['', 'namespaces'],
  ['', 'serviceaccounts/token'],
  ['apps', 'deployments'],
  ['rbac.authorization.k8s.io', 'clusterroles'],
  ['rbac.authorization.k8s.io', 'clusterrolebindings'],
  ['apiextensions.k8s.io', 'customresourcedefinitions'],
  ['admissionregistration.k8s.io', 'mutatingwebhookconfigurations'],
];

function toCheck(access: ApiAccess): AccessCheck {
  const [resource, subresource] = access.resource.split('/');
  return { verb: access.verb, group: access.apiGroup, resource: resource!, subresource, namespace: access.namespace, name: access.name };
}

describe.each(COMPONENTS.map((c) => [c.name, c] as const))('RBAC of the %s ServiceAccount from dist/', (_n, component) => {
  let otherNamespace: string;

  beforeAll(async () => {
    otherNamespace = await createNamespace('rbac-other');
    for (const o of rbacObjects) await serverSideApply(o, { fieldManager: 'cdk8s-kruise-e2e-rbac' });
  });

  it('grants exactly the declared permissions (checked by impersonation)', async () => {
    const sa = serviceAccountOf(component);
    const user = serviceAccountUser(sa.namespace, sa.name);
    const scopes = scopesOf(component, sa);
    const ownNamespaces = scopes.flatMap((s) => (s.namespace === undefined ? [] : [s.namespace]));
    const declared = scopes.flatMap((s) => s.rules);
    const pairs = new Map<string, [string, string]>();
    for (const r of declared) for (const g of r.apiGroups) for (const res of r.resources) pairs.set(`${g}/${res}`, [g, res]);
    for (const [g, res] of SENSITIVE) pairs.set(`${g}/${res}`, [g, res]);
    const names = new Set(declared.flatMap((r) => r.resourceNames ?? []));

    const accesses: ApiAccess[] = [];
    for (const [apiGroup, resource] of pairs.values()) {
      for (const verb of ALL_VERBS) {
        for (const namespace of new Set([undefined, sa.namespace, otherNamespace, ...ownNamespaces])) {
          const byName = ['get', 'update', 'patch', 'delete'].includes(verb);
          for (const name of byName ? [undefined, 'some-object', ...names] : [undefined]) {
            accesses.push({ apiGroup, resource, verb: verb as Verb, namespace, name });
          }
        }
      }
    }
    const mismatches: string[] = [];
    const check = async (access: ApiAccess) => {
      const expected = findCoveringRule(access, scopes) !== undefined;
      const { allowed } = await canI(user, toCheck(access));
      if (allowed !== expected)
        mismatches.push(
          `${allowed ? 'allowed' : 'denied'} but declared ${expected ? 'needed' : 'not needed'}: ${describeCheck(toCheck(access))}`,
        );
    };
    // A few reviews in flight at a time: each is one small request.
    for (let i = 0; i < accesses.length; i += 8) await Promise.all(accesses.slice(i, i + 8).map(check));
    mismatches.sort();
    console.log(`[rbac] ${component.name}: ${accesses.length} access reviews as ${user}`);
    expect(mismatches).toEqual([]);
  });

  it('uses no wildcards', () => {
    const sa = serviceAccountOf(component);
    const roleNames = objects
      .filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')
      .filter((b) => (b as V1RoleBinding).subjects?.some((s) => s.kind === 'ServiceAccount' && s.name === sa.name))
      .map((b) => `${(b as V1RoleBinding).roleRef.kind}/${(b as V1RoleBinding).roleRef.name}`);
    const rules = objects
      .filter((o) => roleNames.includes(`${o.kind}/${o.metadata?.name}`))
      .flatMap((o) => ((o as { rules?: V1PolicyRule[] }).rules ?? []).map((r) => ({ role: `${o.kind}/${o.metadata?.name}`, r })));
    expect(rules.length, `no roles bound to ${sa.namespace}/${sa.name}`).toBeGreaterThan(0);
    const wild = rules.filter(({ r }) => [...(r.apiGroups ?? []), ...(r.resources ?? []), ...r.verbs].includes('*'));
    expect(wild.map(({ role }) => role)).toEqual([]);
  });
});

describe('manager ServiceAccount, spelled out', () => {
  // Secrets *get, list, watch* are declared cluster-wide (ImagePullJob pull secrets live in any namespace, and the
  // controller watches registry-credential Secrets so a rotated source reaches its copy at once, as upstream's
  // does); writing Secrets only in its own namespace (webhook certificate) and in kruise-daemon-config (the copies,
  // which it also deletes there).
  it('may not write or delete secrets outside its namespaces, delete nodes, exec into pods, or escalate/bind/impersonate', async () => {
    const sa = serviceAccountOf(COMPONENTS[0]!);
    const user = serviceAccountUser(sa.namespace, sa.name);
    for (const o of rbacObjects) await serverSideApply(o, { fieldManager: 'cdk8s-kruise-e2e-rbac' });
    const denied: AccessCheck[] = [
      { verb: 'create', resource: 'secrets', namespace: 'default' },
      { verb: 'update', resource: 'secrets', namespace: 'default', name: 'regcred' },
      { verb: 'create', resource: 'secrets', namespace: 'kube-system' },
      { verb: 'update', resource: 'secrets', namespace: 'kube-system', name: 'any' },
      { verb: 'create', resource: 'secrets' },
      { verb: 'delete', resource: 'secrets', namespace: 'default', name: 'any' },
      { verb: 'delete', resource: 'secrets', namespace: 'kube-system', name: 'any' },
      { verb: 'delete', resource: 'nodes', name: 'node-a' },
      { verb: 'create', resource: 'pods', subresource: 'exec', namespace: 'default', name: 'any' },
      { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
      { verb: 'bind', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
      { verb: 'impersonate', resource: 'serviceaccounts', namespace: 'kube-system' },
      { verb: 'impersonate', resource: 'users' },
    ];
    const allowed = [];
    for (const check of denied) if ((await canI(user, check)).allowed) allowed.push(describeCheck(check));
    expect(allowed).toEqual([]);
    expect((await canI(user, { verb: 'watch', resource: 'pods' })).allowed).toBe(true);
    const granted: AccessCheck[] = [
      // The CloneSet controller creates its pods.
      { verb: 'create', resource: 'pods', namespace: 'default' },
      { verb: 'get', resource: 'secrets', namespace: 'default', name: 'regcred' },
      { verb: 'list', resource: 'secrets' },
      { verb: 'watch', resource: 'secrets' },
      { verb: 'create', resource: 'secrets', namespace: 'kruise-daemon-config' },
      { verb: 'update', resource: 'secrets', namespace: 'kruise-daemon-config', name: 'default.regcred' },
      { verb: 'get', resource: 'secrets', namespace: 'kruise-daemon-config', name: 'default.regcred' },
      // A finished or deleted ImagePullJob lets go of its copies: listed, and deleted when no job uses them.
      { verb: 'list', resource: 'secrets', namespace: 'kruise-daemon-config' },
      { verb: 'delete', resource: 'secrets', namespace: 'kruise-daemon-config', name: 'default.regcred' },
    ];
    const refused = [];
    for (const check of granted) if (!(await canI(user, check)).allowed) refused.push(describeCheck(check));
    expect(refused).toEqual([]);
  });
});

/**
 * RBAC grants the daemon CRR writes and pod-status patches cluster-wide and the manager ConfigMap writes
 * cluster-wide (it cannot narrow a create by name or any write by a field of the object); the install's
 * ValidatingAdmissionPolicies narrow them. Proved with real requests as the two ServiceAccounts (impersonated, the
 * daemon with the node-name extra a pod-bound token carries), the CRR webhook of dist/ served by the real runtime.
 */
describe('admission policies from dist/ confine the daemon to its node and the manager to launch barriers', () => {
  const id = `${process.pid}`;
  const nodeA = `lp-node-a-${id}`;
  const nodeB = `lp-node-b-${id}`;
  // The runtime's RBAC names its two configurations (resourceNames), so the test uses the real names.
  const mutatingName = MUTATING_WEBHOOK_CONFIGURATION;
  const validatingName = VALIDATING_WEBHOOK_CONFIGURATION;
  let ns: string;
  let ctl: ControllerProcess | undefined;
  let daemonUser: string;
  let managerUser: string;

  /** A request as `user`; `node` adds the node-name extra of a pod-bound ServiceAccount token. */
  const as = (user: string, method: string, path: string, body?: unknown, node?: string): Promise<RawResponse> =>
    rawRequest(method, path, {
      body: body === undefined ? undefined : JSON.stringify(body),
      contentType: method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
      headers: {
        'Impersonate-User': user,
        ...(node ? { 'Impersonate-Extra-authentication.kubernetes.io%2fnode-name': node } : {}),
      },
    });
  const crrs = () => `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/containerrecreaterequests`;
  const crrBody = (name: string, podName: string) => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: { name },
    spec: { podName, containers: [{ name: 'envoy' }] },
  });

  async function runningPod(name: string, node: string): Promise<string> {
    const res = await rawRequest('POST', `/api/v1/namespaces/${ns}/pods`, {
      body: JSON.stringify({
        metadata: { name },
        spec: {
          containers: [
            { name: 'app', image: 'a:1' },
            { name: 'envoy', image: 'e:1' },
          ],
        },
      }),
      contentType: 'application/json',
    });
    expect(res.status, res.body).toBe(201);
    const pod = JSON.parse(res.body) as { metadata: { name: string; namespace: string; uid: string } };
    await bindPod(pod, node);
    await setPodStatus(pod, {
      phase: 'Running',
      containerStatuses: [
        { name: 'app', state: { running: {} } },
        { name: 'envoy', state: { running: {} } },
      ],
    });
    // The harness's fake kubelet reports no containerIDs; a real kubelet does (the CRR webhook needs them).
    const ids = await rawRequest('PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, {
      body: JSON.stringify([
        { op: 'add', path: '/status/containerStatuses/0/containerID', value: `containerd://${name}-app` },
        { op: 'add', path: '/status/containerStatuses/1/containerID', value: `containerd://${name}-envoy` },
      ]),
      contentType: 'application/json-patch+json',
    });
    expect(ids.status, ids.body).toBe(200);
    return pod.metadata.uid;
  }

  beforeAll(async () => {
    for (const o of rbacObjects) await serverSideApply(o, { fieldManager: 'cdk8s-kruise-e2e-rbac' });
    daemonUser = serviceAccountUser(serviceAccountOf(COMPONENTS[1]!).namespace, serviceAccountOf(COMPONENTS[1]!).name);
    managerUser = serviceAccountUser(serviceAccountOf(COMPONENTS[0]!).namespace, serviceAccountOf(COMPONENTS[0]!).name);
    ns = await createNamespace('least-privilege');
    await createNode(nodeA);
    await createNode(nodeB);
    await runningPod('on-a', nodeA);
    await runningPod('on-b', nodeB);

    // dist/'s CRR webhook entry as it is (rules, failurePolicy, matchConditions), pointed at the runtime on loopback
    // and confined to this test's namespace.
    const mutating = objects.find((o) => o.kind === 'MutatingWebhookConfiguration') as { webhooks: Record<string, unknown>[] };
    const crrHook = mutating.webhooks.find((w) => w.name === 'mcontainerrecreaterequest.kb.io');
    if (!crrHook) throw new Error('dist/ registers no CRR webhook');
    const port = await freePort();
    const runtimeNs = await createNamespace('lp-runtime');
    // Configurations another file left behind would be merged into, not replaced by, an apply.
    await kubectl(['delete', '--ignore-not-found', 'mutatingwebhookconfiguration', mutatingName]);
    await kubectl(['delete', '--ignore-not-found', 'validatingwebhookconfiguration', validatingName]);
    await serverSideApply(
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: mutatingName },
        webhooks: [
          {
            ...crrHook,
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
            clientConfig: { url: `https://127.0.0.1:${port}${kindWebhookPath('mutate', ContainerRecreateRequestDefinition)}` },
          },
        ],
      } as KubernetesObject,
      { fieldManager: 'cdk8s-kruise-e2e-rbac' },
    );
    await serverSideApply(
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: validatingName } },
      { fieldManager: 'cdk8s-kruise-e2e-rbac' },
    );
    ctl = await startController(runtimeNs, loopbackWebhookArgs(port, mutatingName, validatingName));
    await ctl.waitReady();
  });

  afterAll(async () => {
    await ctl?.stop('SIGTERM');
    await kubectl(['delete', '--ignore-not-found', '--wait=false', 'mutatingwebhookconfiguration', mutatingName]);
    await kubectl(['delete', '--ignore-not-found', '--wait=false', 'validatingwebhookconfiguration', validatingName]);
  });

  it('the daemon creates and carries out CRRs of pods on its own node only; with the runtime down its metadata writes still pass', async () => {
    // The policies and the webhook are picked up asynchronously: wait until a CRR on the daemon's own node passes.
    let last: RawResponse | undefined;
    const own = await eventually(
      async () => {
        last = await as(daemonUser, 'POST', crrs(), crrBody('restart-on-a', 'on-a'), nodeA);
        return last.status === 201 ? (JSON.parse(last.body) as { metadata: { labels: Record<string, string> } }) : undefined;
      },
      30_000,
      "the daemon's CRR on its own node",
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last answer: HTTP ${last?.status} ${last?.body}`);
    });
    expect(own.metadata.labels['crr.apps.kruise.io/node-name']).toBe(nodeA);

    // A pod on another node: the webhook labels the CRR with the pod's node, the policy refuses it. A label the
    // daemon sets itself is overwritten from the pod.
    const other = await as(daemonUser, 'POST', crrs(), crrBody('restart-on-b', 'on-b'), nodeA);
    expect(other.status, other.body).toBe(403);
    expect(other.body).toContain(`the kruise daemon of node ${nodeA} may only write ContainerRecreateRequests of pods on its node`);
    const forged = crrBody('forged-on-b', 'on-b') as ReturnType<typeof crrBody> & { metadata: { labels?: Record<string, string> } };
    forged.metadata.labels = { 'crr.apps.kruise.io/node-name': nodeA };
    expect((await as(daemonUser, 'POST', crrs(), forged, nodeA)).status).toBe(403);
    // No node in the token (a legacy or unbound token): nothing.
    const unbound = await as(daemonUser, 'POST', crrs(), crrBody('restart-unbound', 'on-a'));
    expect(unbound.status, unbound.body).toBe(403);
    expect(unbound.body).toContain('must use a token bound to its pod');

    // The daemon of node B may neither advance, annotate nor delete node A's CRR.
    const ownPath = `${crrs()}/restart-on-a`;
    expect((await as(daemonUser, 'PATCH', `${ownPath}/status`, { status: { phase: 'Completed' } }, nodeB)).status).toBe(403);
    expect((await as(daemonUser, 'PATCH', ownPath, { metadata: { annotations: { x: 'y' } } }, nodeB)).status).toBe(403);
    expect((await as(daemonUser, 'DELETE', ownPath, undefined, nodeB)).status).toBe(403);

    // The manager goes away (scaled to 0): its Fail webhook now refuses every CRR update but the daemon's own.
    await ctl!.stop('SIGTERM');
    ctl = undefined;
    const admin = await rawRequest('PATCH', ownPath, {
      body: JSON.stringify({ metadata: { annotations: { by: 'admin' } } }),
      contentType: 'application/merge-patch+json',
    });
    expect(admin.status, 'the webhook is down and Fail: an admin update is refused').toBeGreaterThanOrEqual(500);
    const meta = await as(
      daemonUser,
      'PATCH',
      ownPath,
      { metadata: { annotations: { 'crr.apps.kruise.io/unready-acquired': 'true' } } },
      nodeA,
    );
    expect(meta.status, meta.body).toBe(200);
    const status = await as(daemonUser, 'PATCH', `${ownPath}/status`, { status: { phase: 'Completed' } }, nodeA);
    expect(status.status, status.body).toBe(200);
    // What the webhook would have refused on that path, the policy refuses: the spec and the node/pod labels stay.
    const spec = await as(daemonUser, 'PATCH', ownPath, { spec: { podName: 'on-b' } }, nodeA);
    expect(spec.status, spec.body).toBe(403);
    const relabel = await as(daemonUser, 'PATCH', ownPath, { metadata: { labels: { 'crr.apps.kruise.io/node-name': nodeB } } }, nodeA);
    expect(relabel.status, relabel.body).toBe(403);
    expect((await as(daemonUser, 'DELETE', ownPath, undefined, nodeA)).status).toBe(200);
  });

  it("the daemon writes probe results to its own node's NodePodProbe only", async () => {
    const npps = '/apis/apps.kruise.io/v1alpha1/nodepodprobes';
    for (const n of [nodeA, nodeB]) {
      const res = await rawRequest('POST', npps, {
        body: JSON.stringify({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'NodePodProbe', metadata: { name: n }, spec: {} }),
        contentType: 'application/json',
      });
      expect([201, 409], res.body).toContain(res.status);
    }
    const results = {
      status: { podProbeStatuses: [{ name: 'on-a', namespace: ns, uid: 'u', probeStates: [{ name: 'm#p', state: 'Succeeded' }] }] },
    };
    const own = await eventually(
      async () => {
        const r = await as(daemonUser, 'PATCH', `${npps}/${nodeA}/status`, results, nodeA);
        return r.status === 200 ? r : undefined;
      },
      30_000,
      "the daemon's write to its own NodePodProbe",
    );
    expect(own.status).toBe(200);
    const other = await as(daemonUser, 'PATCH', `${npps}/${nodeB}/status`, results, nodeA);
    expect(other.status, other.body).toBe(403);
    expect(other.body).toContain(
      `the kruise daemon of node ${nodeA} may only write the probe results of its own NodePodProbe, not ${nodeB}`,
    );
    // The spec is the manager's: RBAC gives the daemon no write to it.
    expect((await as(daemonUser, 'PATCH', `${npps}/${nodeA}`, { spec: { podProbes: [] } }, nodeA)).status).toBe(403);
  });

  it("a pod's bound ServiceAccount token names the pod's node: the claim the daemon's policy reads", async () => {
    // What the kubelet mounts into the daemon's pod: a token bound to the pod. Asked who it is, the API server
    // answers with the node-name extra the policy binds the daemon's writes to.
    const sa = await rawRequest('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: JSON.stringify({ metadata: { name: 'node-bound' } }),
      contentType: 'application/json',
    });
    expect(sa.status, sa.body).toBe(201);
    const created = await rawRequest('POST', `/api/v1/namespaces/${ns}/pods`, {
      body: JSON.stringify({
        metadata: { name: 'token-holder' },
        spec: { serviceAccountName: 'node-bound', containers: [{ name: 'app', image: 'a:1' }] },
      }),
      contentType: 'application/json',
    });
    expect(created.status, created.body).toBe(201);
    const pod = JSON.parse(created.body) as { metadata: { name: string; namespace: string; uid: string } };
    await bindPod(pod, nodeA);
    const issued = await rawRequest('POST', `/api/v1/namespaces/${ns}/serviceaccounts/node-bound/token`, {
      body: JSON.stringify({
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'token-holder', uid: pod.metadata.uid } },
      }),
      contentType: 'application/json',
    });
    expect(issued.status, issued.body).toBe(201);
    const token = (JSON.parse(issued.body) as { status: { token: string } }).status.token;
    const admin = adminKubeConfig();
    const bearer = new KubeConfig();
    bearer.loadFromOptions({
      clusters: admin.clusters,
      users: [{ name: 'bound', token }],
      contexts: [{ name: 'bound', cluster: admin.getCurrentCluster()!.name, user: 'bound' }],
      currentContext: 'bound',
    });
    const review = await rawRequest('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      contentType: 'application/json',
      kubeConfig: bearer,
    });
    expect(review.status, review.body).toBe(201);
    const user = (JSON.parse(review.body) as { status: { userInfo: { username: string; extra?: Record<string, string[]> } } }).status
      .userInfo;
    expect(user.username).toBe(serviceAccountUser(ns, 'node-bound'));
    expect(user.extra?.['authentication.kubernetes.io/node-name']).toEqual([nodeA]);
  });

  it('the daemon writes the status of pods on its own node only', async () => {
    const patch = { status: { conditions: [{ type: 'KruisePodReady', status: 'False' }] } };
    const onA = `/api/v1/namespaces/${ns}/pods/on-a/status`;
    const onB = `/api/v1/namespaces/${ns}/pods/on-b/status`;
    await eventually(async () => (await as(daemonUser, 'PATCH', onB, patch, nodeA)).status === 403, 30_000, 'pod-status policy live');
    const own = await as(daemonUser, 'PATCH', onA, patch, nodeA);
    expect(own.status, own.body).toBe(200);
  });

  it('the manager writes launch-priority barriers only: not kube-system/coredns, nor any other ConfigMap', async () => {
    const coredns = await rawRequest('POST', '/api/v1/namespaces/kube-system/configmaps', {
      body: JSON.stringify({ metadata: { name: 'coredns' }, data: { Corefile: '.:53 {}' } }),
      contentType: 'application/json',
    });
    expect([201, 409]).toContain(coredns.status);
    const corednsPath = '/api/v1/namespaces/kube-system/configmaps/coredns';
    const refused = await eventually(
      async () => {
        const res = await as(managerUser, 'PATCH', corednsPath, { data: { Corefile: '. { forward . 6.6.6.6 }' } });
        return res.status === 403 ? res : undefined;
      },
      30_000,
      'the ConfigMap policy refusing the manager',
    );
    expect(refused.body).toContain('the kruise manager writes only launch-priority barriers');
    // RBAC alone would have let it through: the refusal is the policy's.
    expect((await canI(managerUser, { verb: 'patch', resource: 'configmaps', namespace: 'kube-system', name: 'coredns' })).allowed).toBe(
      true,
    );
    const cms = `/api/v1/namespaces/${ns}/configmaps`;
    expect((await as(managerUser, 'POST', '/api/v1/namespaces/kube-system/configmaps', { metadata: { name: 'x' } })).status).toBe(403);
    expect((await as(managerUser, 'POST', cms, { metadata: { name: 'settings' }, data: { a: 'b' } })).status).toBe(403);

    // A barrier: <pod>-barrier, owned by that pod, p_<priority> keys. A barrier named for another pod is refused.
    const pod = JSON.parse((await rawRequest('GET', `/api/v1/namespaces/${ns}/pods/on-a`)).body) as { metadata: { uid: string } };
    const owner = [{ apiVersion: 'v1', kind: 'Pod', name: 'on-a', uid: pod.metadata.uid }];
    expect((await as(managerUser, 'POST', cms, { metadata: { name: 'on-b-barrier', ownerReferences: owner } })).status).toBe(403);
    const created = await as(managerUser, 'POST', cms, { metadata: { name: 'on-a-barrier', ownerReferences: owner } });
    expect(created.status, created.body).toBe(201);
    const release = await as(managerUser, 'PATCH', `${cms}/on-a-barrier`, { data: { 'p_-100': 'true' } });
    expect(release.status, release.body).toBe(200);
    expect((await as(managerUser, 'PATCH', `${cms}/on-a-barrier`, { data: { Corefile: 'x' } })).status).toBe(403);
    expect((await as(managerUser, 'PATCH', `${cms}/on-a-barrier`, { metadata: { ownerReferences: null } })).status).toBe(403);
  });
});

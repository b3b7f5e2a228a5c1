// The RBAC that dist/ installs lets the manager's and the daemon's ServiceAccounts do exactly what
// the runtime declares it needs (src/contracts/permissions.ts) and nothing else in the checked
// universe: every (resource, verb, scope) is asked by impersonation (SelfSubjectAccessReview as the
// ServiceAccount) and compared with the declared rules.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubernetesObject, V1Deployment, V1PolicyRule, V1RoleBinding } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findCoveringRule,
  PERMISSIONS,
  type ApiAccess,
  type PermissionRule,
  type PermissionScope,
  type Verb,
} from '../../src/contracts/index.js';
import { canI, createNamespace, describeCheck, kubectl, serverSideApply, serviceAccountUser, type AccessCheck } from '../harness/index.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const distDir = path.join(repoRoot, 'dist');
const RBAC_KINDS = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
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
  // Secrets *get* is declared cluster-wide (ImagePullJob pull secrets live in any namespace); writing
  // Secrets only in its own namespace (webhook certificate) and in kruise-daemon-config (the copies, which it
  // also lists and deletes there).
  it('may not write, list or delete secrets outside its namespaces, delete nodes, exec into pods, or escalate/bind/impersonate', async () => {
    const sa = serviceAccountOf(COMPONENTS[0]!);
    const user = serviceAccountUser(sa.namespace, sa.name);
    for (const o of rbacObjects) await serverSideApply(o, { fieldManager: 'cdk8s-kruise-e2e-rbac' });
    const denied: AccessCheck[] = [
      { verb: 'create', resource: 'secrets', namespace: 'default' },
      { verb: 'update', resource: 'secrets', namespace: 'default', name: 'regcred' },
      { verb: 'create', resource: 'secrets', namespace: 'kube-system' },
      { verb: 'update', resource: 'secrets', namespace: 'kube-system', name: 'any' },
      { verb: 'create', resource: 'secrets' },
      { verb: 'list', resource: 'secrets' },
      { verb: 'list', resource: 'secrets', namespace: 'default' },
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

import { PERMISSIONS, toPolicyRules, type PermissionRule } from '../contracts/index.js';
import type { KubeObject } from './types.js';
import { NAMES, meta, type InstallSpec } from './spec.js';

/**
 * ServiceAccounts and RBAC, generated only from the runtime's declared API calls
 * (src/contracts/permissions.ts): nothing here adds a rule of its own, so RBAC cannot drift from the code.
 */

const RBAC = 'rbac.authorization.k8s.io/v1';

function role(
  kind: 'Role' | 'ClusterRole',
  name: string,
  rules: readonly PermissionRule[],
  spec: InstallSpec,
  namespace?: string,
): KubeObject {
  const m = meta(spec, name, kind === 'Role');
  if (namespace) m.namespace = namespace;
  return { apiVersion: RBAC, kind, metadata: m as KubeObject['metadata'], rules: toPolicyRules(rules) };
}

function binding(
  kind: 'RoleBinding' | 'ClusterRoleBinding',
  name: string,
  roleKind: 'Role' | 'ClusterRole',
  sa: string,
  spec: InstallSpec,
  namespace?: string,
): KubeObject {
  const m = meta(spec, name, kind === 'RoleBinding');
  if (namespace) m.namespace = namespace;
  return {
    apiVersion: RBAC,
    kind,
    metadata: m as KubeObject['metadata'],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: spec.namespace }],
  };
}

function serviceAccount(name: string, spec: InstallSpec): KubeObject {
  const m = meta(spec, name, true) as NonNullable<KubeObject['metadata']>;
  if (spec.serviceAccountAnnotations && Object.keys(spec.serviceAccountAnnotations).length > 0) {
    m.annotations = { ...spec.serviceAccountAnnotations, ...(m.annotations ?? {}) };
  }
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: m };
}

/**
 * Manager ServiceAccount + ClusterRole/Binding (cluster rules) + Role/Binding in the runtime namespace, and,
 * when the install has a daemon (so a daemon-config namespace), a Role/Binding there for the pull-secret
 * copies: the manager can write Secrets nowhere else.
 */
export function managerRbac(spec: InstallSpec): KubeObject[] {
  const out = [serviceAccount(NAMES.managerServiceAccount, spec)];
  if (PERMISSIONS.MANAGER.length > 0) {
    out.push(role('ClusterRole', NAMES.managerClusterRole, PERMISSIONS.MANAGER, spec));
    out.push(binding('ClusterRoleBinding', NAMES.managerClusterRole, 'ClusterRole', NAMES.managerServiceAccount, spec));
  }
  if (PERMISSIONS.MANAGER_NAMESPACED.length > 0) {
    out.push(role('Role', NAMES.managerRole, PERMISSIONS.MANAGER_NAMESPACED, spec));
    out.push(binding('RoleBinding', NAMES.managerRole, 'Role', NAMES.managerServiceAccount, spec));
  }
  if (spec.daemon && PERMISSIONS.MANAGER_DAEMON_CONFIG.length > 0) {
    const ns = spec.daemonConfigNamespace;
    out.push(role('Role', NAMES.managerDaemonConfigRole, PERMISSIONS.MANAGER_DAEMON_CONFIG, spec, ns));
    out.push(binding('RoleBinding', NAMES.managerDaemonConfigRole, 'Role', NAMES.managerServiceAccount, spec, ns));
  }
  return out;
}

/** Daemon ServiceAccount + ClusterRole/Binding + Role/Binding in the daemon-config namespace. */
export function daemonRbac(spec: InstallSpec): KubeObject[] {
  const out = [serviceAccount(NAMES.daemonServiceAccount, spec)];
  if (PERMISSIONS.DAEMON.length > 0) {
    out.push(role('ClusterRole', NAMES.daemonClusterRole, PERMISSIONS.DAEMON, spec));
    out.push(binding('ClusterRoleBinding', NAMES.daemonClusterRole, 'ClusterRole', NAMES.daemonServiceAccount, spec));
  }
  if (PERMISSIONS.DAEMON_NAMESPACED.length > 0) {
    out.push(role('Role', NAMES.daemonRole, PERMISSIONS.DAEMON_NAMESPACED, spec, spec.daemonConfigNamespace));
    out.push(binding('RoleBinding', NAMES.daemonRole, 'Role', NAMES.daemonServiceAccount, spec, spec.daemonConfigNamespace));
  }
  return out;
}

// RBAC checks by impersonation: a SelfSubjectAccessReview sent *as* the subject (admin credentials
// plus an Impersonate-User header), i.e. what `kubectl auth can-i --as=<user>` does.
import { AuthorizationV1Api, KubeConfig } from '@kubernetes/client-node';
import { adminKubeConfig } from './cluster.js';

/** The user name Kubernetes gives a ServiceAccount's tokens. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/**
 * A KubeConfig that impersonates `username` (for ServiceAccount users the apiserver adds the
 * system:serviceaccounts groups itself). Use it to make real requests as that subject.
 */
export function impersonatingKubeConfig(username: string): KubeConfig {
  const admin = adminKubeConfig();
  const user = admin.getCurrentUser();
  if (!user) throw new Error('admin kubeconfig has no user');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: admin.clusters,
    users: [{ ...user, impersonateUser: username }],
    contexts: admin.contexts,
    currentContext: admin.currentContext,
  });
  return kc;
}

export interface AccessCheck {
  /** API verb: get, list, watch, create, update, patch, delete, deletecollection, ... */
  readonly verb: string;
  /** API group; '' (default) for core. */
  readonly group?: string;
  /** Plural resource, e.g. 'pods'. */
  readonly resource: string;
  /** Subresource, e.g. 'status'. */
  readonly subresource?: string;
  /** Namespace; omit for cluster scope / all namespaces. */
  readonly namespace?: string;
  /** A specific object name. */
  readonly name?: string;
}

/** Whether `username` may perform `check`, asked as that user. */
export async function canI(username: string, check: AccessCheck): Promise<{ allowed: boolean; reason: string }> {
  const api = impersonatingKubeConfig(username).makeApiClient(AuthorizationV1Api);
  const review = await api.createSelfSubjectAccessReview({
    body: {
      spec: {
        resourceAttributes: {
          verb: check.verb,
          group: check.group ?? '',
          resource: check.resource,
          subresource: check.subresource,
          namespace: check.namespace,
          name: check.name,
        },
      },
    },
  });
  return { allowed: review.status?.allowed === true, reason: review.status?.reason ?? '' };
}

/** Formats a check like `kubectl auth can-i` arguments, for assertion messages. */
export function describeCheck(check: AccessCheck): string {
  const resource = `${check.resource}${check.subresource ? `/${check.subresource}` : ''}${check.group ? `.${check.group}` : ''}`;
  return `${check.verb} ${resource}${check.name ? `/${check.name}` : ''}${check.namespace ? ` -n ${check.namespace}` : ' (cluster-wide)'}`;
}

// YAML documents several unit tests start from.

/** A minimal valid CloneSet (default namespace, 2 replicas, one nginx container); append spec fields to vary it. */
export const CLONESET_YAML = `apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.25"}]
`;

/**
 * An Advanced StatefulSet that resizes its claims on rollout (volumeClaimUpdateStrategy): a part upstream's runtime
 * carries out and the bundled one does not, so tests use it to stand for "a feature the bundled runtime lacks".
 */
export function claimResizingStatefulSet(namespace?: string): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: Record<string, unknown>;
} {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name: 'db', ...(namespace ? { namespace } : {}) },
    spec: {
      replicas: 1,
      serviceName: 'db',
      selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'db:1' }] } },
      volumeClaimUpdateStrategy: { type: 'OnPodRollingUpdate' },
    },
  };
}

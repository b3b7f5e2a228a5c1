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
 * An AdvancedCronJob: a kind upstream OpenKruise serves and the bundled runtime does not, so tests use it to stand for
 * "a feature the bundled runtime does not carry out". cdk8s-kruise does not model the kind either, so the policy also
 * warns that its fields are not validated (KRUISE-SCHEMA-003).
 */
export function advancedCronJob(namespace?: string): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: Record<string, unknown>;
} {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'AdvancedCronJob',
    metadata: { name: 'nightly', ...(namespace ? { namespace } : {}) },
    spec: {
      schedule: '0 2 * * *',
      template: {
        jobTemplate: {
          spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'report', image: 'busybox:1.36' }] } } },
        },
      },
    },
  };
}

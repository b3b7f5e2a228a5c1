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

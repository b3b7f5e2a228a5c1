/**
 * The core Kubernetes kinds `validate` checks against their schema, by `apiVersion` and `kind`, with the
 * client-node model each is generated from (`core/k8s-core-kinds.schema.json`, by `core/generate.ts`).
 * One place: the generator's roots and the validator's lookup both read this table.
 *
 * @module
 */

/** `apiVersion kind` → definition name. */
export const CORE_KINDS: Readonly<Record<string, string>> = {
  'v1 Pod': 'V1Pod',
  'v1 Service': 'V1Service',
  'v1 ConfigMap': 'V1ConfigMap',
  'v1 Secret': 'V1Secret',
  'v1 ServiceAccount': 'V1ServiceAccount',
  'v1 Namespace': 'V1Namespace',
  'v1 PersistentVolumeClaim': 'V1PersistentVolumeClaim',
  'apps/v1 Deployment': 'V1Deployment',
  'apps/v1 StatefulSet': 'V1StatefulSet',
  'apps/v1 DaemonSet': 'V1DaemonSet',
  'apps/v1 ReplicaSet': 'V1ReplicaSet',
  'batch/v1 Job': 'V1Job',
  'batch/v1 CronJob': 'V1CronJob',
};

/** The definition name of a core kind we schema-check, or undefined. */
export function coreKindDefinition(apiVersion: unknown, kind: unknown): string | undefined {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  return CORE_KINDS[`${apiVersion} ${kind}`];
}

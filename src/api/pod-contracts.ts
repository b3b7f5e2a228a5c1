/**
 * Pod-level contracts: the env vars, labels, annotations and names by which users, webhooks,
 * controllers and the daemon talk about pods. Every other module imports these constants instead
 * of spelling the strings.
 *
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import type { V1Container, V1EnvVar } from './core/k8s-core-types.js';

// ---------------------------------------------------------------------------------------------
// Job sidecar terminator
// ---------------------------------------------------------------------------------------------

/** Env marker: `"true"` (case-insensitive) marks a sidecar that is killed once all main containers exited. */
export const ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT';
/**
 * Env marker whose value is a quick-exit image: on virtual-kubelet nodes the sidecar's image is
 * replaced by it in place, so the container restarts into something that exits at once.
 */
export const ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE';
/**
 * Env marker (`"true"`), honoured only with {@link ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT}: the pod phase
 * is decided from the main containers alone (condition SidecarTerminated + phase patch).
 */
export const ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE = 'KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE';

/** Pod condition set when the terminator decided the phase itself. */
export const CONDITION_SIDECAR_TERMINATED = 'SidecarTerminated';
/** Message of the SidecarTerminated condition. */
export const CONDITION_SIDECAR_TERMINATED_MESSAGE = 'Terminated by Sidecar Terminator';
/** Event reason of the sidecar terminator. */
export const EVENT_REASON_SIDECAR_TERMINATOR = 'SidecarTerminator';

/** Node label key/value of virtual-kubelet nodes (also copied onto CRRs for such nodes). */
export const LABEL_NODE_TYPE = 'type';
/** Value of {@link LABEL_NODE_TYPE} on virtual-kubelet nodes. */
export const NODE_TYPE_VIRTUAL_KUBELET = 'virtual-kubelet';

/** Name of the CRR the sidecar terminator creates for a pod. */
export function sidecarTerminationCrrName(podUid: string): string {
  return `sidecar-termination-${podUid}`;
}

function envValue(container: Pick<V1Container, 'env'>, name: string): string | undefined {
  const env: V1EnvVar[] | undefined = container.env;
  if (!env) return undefined;
  for (const e of env) if (e.name === name) return e.value;
  return undefined;
}

/** True when the container carries WHEN_JOB_EXIT=true (kill mode). */
export function isKillSidecar(container: Pick<V1Container, 'env'>): boolean {
  return envValue(container, ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT)?.toLowerCase() === 'true';
}

/** The quick-exit image when the container carries WHEN_JOB_EXIT_WITH_IMAGE, else undefined. */
export function quickExitImage(container: Pick<V1Container, 'env'>): string | undefined {
  const v = envValue(container, ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE);
  return v ? v : undefined;
}

/** True when the container carries IGNORE_EXIT_CODE=true (only meaningful with kill mode). */
export function ignoresExitCode(container: Pick<V1Container, 'env'>): boolean {
  return envValue(container, ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE)?.toLowerCase() === 'true';
}

/** A sidecar, as upstream defines it: either marker is set; every other container is a main one. */
export function isSidecar(container: Pick<V1Container, 'env'>): boolean {
  return isKillSidecar(container) || quickExitImage(container) !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Container exit priority (proposal semantics; not shipped upstream, implemented by our runtime)
// ---------------------------------------------------------------------------------------------

/** Pod annotation: JSON map container name → non-negative integer; larger exits later; default 0. */
export const ANNOTATION_CONTAINER_EXIT_PRIORITY = 'kruise.io/container-exit-priority';

/** Schema of the exit-priority annotation value (after JSON.parse). */
export const ContainerExitPrioritySchema = Type.Record(
  Type.String({ minLength: 1 }),
  Type.Integer({ minimum: 0, maximum: 2147483647 }),
  {
    description:
      'Container name → exit priority. Main containers (priority 0 by default) exit first; larger values exit later.',
  },
);
/** Parsed value of {@link ANNOTATION_CONTAINER_EXIT_PRIORITY}. */
export type ContainerExitPriority = Static<typeof ContainerExitPrioritySchema>;

/** A problem found in a pod-level contract value. `jsonPointer` is relative to the value. */
export interface ContractIssue {
  /** JSON pointer into the parsed value ('' = the whole value). */
  readonly jsonPointer: string;
  readonly message: string;
  readonly hint?: string;
}

/** Result of parsing a contract value: what could be parsed, and what is wrong. */
export interface ParseResult<T> {
  /** The parsed value; undefined when the value could not be parsed at all. */
  readonly value?: T;
  readonly issues: readonly ContractIssue[];
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Parses a `kruise.io/container-exit-priority` value. Entries that are not non-negative integers
 * are reported and left out of `value`. Pass `containerNames` to also report names that are not
 * containers of the pod.
 */
export function parseExitPriority(raw: string, containerNames?: readonly string[]): ParseResult<ContainerExitPriority> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    return {
      issues: [
        {
          jsonPointer: '',
          message: `not valid JSON: ${(e as Error).message}`,
          hint: 'write a JSON object such as {"log-agent":1,"envoy":2}',
        },
      ],
    };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return {
      issues: [{ jsonPointer: '', message: 'must be a JSON object mapping container names to integers', hint: 'e.g. {"log-agent":1,"envoy":2}' }],
    };
  }
  const issues: ContractIssue[] = [];
  const value: Record<string, number> = {};
  const known = containerNames ? new Set(containerNames) : undefined;
  for (const [name, prio] of Object.entries(parsed as Record<string, unknown>)) {
    const ptr = '/' + escapePointer(name);
    if (typeof prio !== 'number' || !Number.isInteger(prio) || prio < 0 || prio > 2147483647) {
      issues.push({
        jsonPointer: ptr,
        message: `priority of "${name}" must be a non-negative integer, got ${JSON.stringify(prio)}`,
        hint: 'use 0 for main containers and larger numbers for containers that must exit later',
      });
      continue;
    }
    if (known && !known.has(name)) {
      issues.push({
        jsonPointer: ptr,
        message: `"${name}" is not a container of this pod`,
        hint: `containers are: ${[...known].join(', ') || '(none)'}`,
      });
      continue;
    }
    value[name] = prio;
  }
  return { value, issues };
}

/** Serializes priorities deterministically (sorted by priority, then name). */
export function formatExitPriority(priorities: Readonly<Record<string, number>>): string {
  const entries = Object.entries(priorities).sort(([an, ap], [bn, bp]) => ap - bp || (an < bn ? -1 : an > bn ? 1 : 0));
  return JSON.stringify(Object.fromEntries(entries));
}

// ---------------------------------------------------------------------------------------------
// Container launch priority (shipped upstream; needs the PodWebhook gate)
// ---------------------------------------------------------------------------------------------

/** Pod annotation asking for ordered container start (needs the PodWebhook gate). */
export const ANNOTATION_CONTAINER_LAUNCH_PRIORITY = 'apps.kruise.io/container-launch-priority';
/** Value of {@link ANNOTATION_CONTAINER_LAUNCH_PRIORITY}: start containers in spec order. */
export const LAUNCH_PRIORITY_ORDERED = 'Ordered';
/** Per-container env: integer in ±2147483647 (default 0); higher starts first. */
export const ENV_CONTAINER_PRIORITY = 'KRUISE_CONTAINER_PRIORITY';
/** Env the webhook adds to each container; valueFrom configMapKeyRef `<pod>-barrier` / `p_<prio>`. */
export const ENV_CONTAINER_BARRIER = 'KRUISE_CONTAINER_BARRIER';
/** Pod annotation set once every container was released. */
export const ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED = 'apps.kruise.io/container-launch-priority-completed';
/** Name of the barrier ConfigMap of a pod. */
export function launchBarrierConfigMapName(podName: string): string {
  return `${podName}-barrier`;
}
/** Key in the barrier ConfigMap that releases containers of `priority`. */
export function launchBarrierKey(priority: number): string {
  return `p_${priority}`;
}

/** Parses KRUISE_CONTAINER_PRIORITY; undefined when absent; issues for out-of-range/non-integer values. */
export function parseLaunchPriority(raw: string | undefined): ParseResult<number> {
  if (raw === undefined) return { issues: [] };
  if (!/^[+-]?\d+$/.test(raw.trim())) {
    return { issues: [{ jsonPointer: '', message: `${ENV_CONTAINER_PRIORITY} must be an integer, got "${raw}"` }] };
  }
  const n = Number(raw.trim());
  if (n < -2147483647 || n > 2147483647) {
    return { issues: [{ jsonPointer: '', message: `${ENV_CONTAINER_PRIORITY} must be within ±2147483647, got ${raw}` }] };
  }
  return { value: n, issues: [] };
}

// ---------------------------------------------------------------------------------------------
// ContainerRecreateRequest labels
// ---------------------------------------------------------------------------------------------

/** CRR label: UID of the target pod (set by the CRR webhook). */
export const LABEL_CRR_POD_UID = 'crr.apps.kruise.io/pod-uid';
/** CRR label: node of the target pod (immutable; the daemon watches by it). */
export const LABEL_CRR_NODE_NAME = 'crr.apps.kruise.io/node-name';
/** `"true"` while the CRR is not completed. */
export const LABEL_CRR_ACTIVE = 'crr.apps.kruise.io/active';

// ---------------------------------------------------------------------------------------------
// Lifecycle hooks (CloneSet)
// ---------------------------------------------------------------------------------------------

/** Pod label holding the lifecycle state (changed only by the workload controller). */
export const LABEL_LIFECYCLE_STATE = 'lifecycle.apps.kruise.io/state';
/** Pod annotation: RFC 3339 time of the last lifecycle state change. */
export const ANNOTATION_LIFECYCLE_TIMESTAMP = 'lifecycle.apps.kruise.io/timestamp';
/** Values of {@link LABEL_LIFECYCLE_STATE}. */
export const LifecycleStateValues = ['PreparingNormal', 'Normal', 'PreparingUpdate', 'Updating', 'Updated', 'PreparingDelete'] as const;
/** One of {@link LifecycleStateValues}. */
export type LifecycleState = (typeof LifecycleStateValues)[number];
/** Readiness gate / condition type that markPodNotReady sets to False. */
export const CONDITION_KRUISE_POD_READY = 'KruisePodReady';
/** CloneSet PVC/pod label binding a PVC to its pod slot. */
export const LABEL_CLONESET_INSTANCE_ID = 'apps.kruise.io/cloneset-instance-id';

// ---------------------------------------------------------------------------------------------
// SidecarSet injection
// ---------------------------------------------------------------------------------------------

/** Pod/SidecarSet annotation: JSON map set name → {@link SidecarSetHashEntry} (hash of the sidecar spec). */
export const ANNOTATION_SIDECARSET_HASH = 'kruise.io/sidecarset-hash';
/** Like {@link ANNOTATION_SIDECARSET_HASH} with images blanked: equal values mean only images changed. */
export const ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE = 'kruise.io/sidecarset-hash-without-image';
/** Pod annotation: comma-separated names of the SidecarSets injected. */
export const ANNOTATION_SIDECARSET_INJECTED_LIST = 'kruise.io/sidecarset-injected-list';
/** Pod annotation: state of an in-place sidecar upgrade. */
export const ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE = 'kruise.io/sidecarset-inplace-update-state';
/** Pod annotation: JSON map sidecar → working hot-upgrade container (e.g. `{"X":"X-1"}`). */
export const ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER = 'kruise.io/sidecarset-working-hotupgrade-container';
/** Label on a SidecarSet that becomes spec.customVersion in v1beta1. */
export const LABEL_SIDECARSET_CUSTOM_VERSION = 'apps.kruise.io/sidecarset-custom-version';
/** Env set to "true" on every injected container. */
export const ENV_IS_INJECTED = 'IS_INJECTED';
/** Env exposing the hot-upgrade version of the container. */
export const ENV_SIDECARSET_VERSION = 'SIDECARSET_VERSION';
/** Env exposing the alternate hot-upgrade version. */
export const ENV_SIDECARSET_VERSION_ALT = 'SIDECARSET_VERSION_ALT';
/** Pod condition set by the SidecarSet in-place upgrade. */
export const CONDITION_SIDECARSET_UPGRADABLE = 'SidecarSetUpgradable';

/** Value of the sidecarset-hash annotations on a pod, keyed by SidecarSet name. */
export const SidecarSetHashEntrySchema = Type.Object({
  updateTimestamp: Type.String(),
  hash: Type.String(),
  sidecarSetName: Type.String(),
  sidecarList: Type.Array(Type.String()),
  controllerRevision: Type.Optional(Type.String()),
});
/** One entry of the sidecarset-hash annotations. */
export type SidecarSetHashEntry = Static<typeof SidecarSetHashEntrySchema>;

// ---------------------------------------------------------------------------------------------
// ImagePullJob / daemon
// ---------------------------------------------------------------------------------------------

/** Finalizer the ImagePullJob controller adds. */
export const FINALIZER_DELETION_PROTECTION = 'apps.kruise.io/deletion-protection';
/** Namespace pull secrets are copied into for kruise-daemon. */
export const DAEMON_CONFIG_NAMESPACE = 'kruise-daemon-config';
/** NodeImage label that keeps it when its Node is gone. */
export const LABEL_FAKE_NODEIMAGE = 'apps.kruise.io/fake-nodeimage';

/**
 * Pod-level contracts: the env vars, labels, annotations and names by which users, webhooks,
 * controllers and the daemon talk about pods. Every other module imports these constants instead
 * of spelling the strings.
 *
 * @module
 */
import type { ContainerExitPriority } from './pod-contract-schemas.js';
import type { V1Container, V1EnvVar, V1LifecycleHandler } from './core/k8s-core-types.js';
import { DAEMON_EXIT_PRIORITY_PORT, EXIT_PRIORITY_HOOK_PATH } from '../contracts/names.js';
import { listNames, quoteValue } from './quote.js';
import {
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
  ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
  ENV_CONTAINER_PRIORITY,
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  HEADER_EXIT_PRIORITY_PRESTOP,
} from '../contracts/keys.js';

// The keys are declared once in the contract layer; the API model re-exports them beside their parsers.
export * from '../contracts/keys.js';
export type { ContainerExitPriority, SidecarSetHashEntry } from './pod-contract-schemas.js';
export { DAEMON_CONFIG_NAMESPACE, sidecarTerminationCrrName } from '../contracts/names.js';

// ---------------------------------------------------------------------------------------------
// Job sidecar terminator
// ---------------------------------------------------------------------------------------------

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
 * The one message for an exit priority that is not an integer within 0..2147483647, else undefined: the construct
 * (`ContainerExitPriority.set`), `validate` and the pod webhook all say it in these words.
 */
export function exitPriorityValueMessage(container: string, priority: unknown): string | undefined {
  if (typeof priority === 'number' && Number.isInteger(priority) && priority >= 0 && priority <= 2147483647) return undefined;
  return `priority of ${quoteValue(container)} must be a non-negative integer, got ${quoteValue(priority)}`;
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
      issues: [
        { jsonPointer: '', message: 'must be a JSON object mapping container names to integers', hint: 'e.g. {"log-agent":1,"envoy":2}' },
      ],
    };
  }
  const issues: ContractIssue[] = [];
  const value: Record<string, number> = {};
  const known = containerNames ? new Set(containerNames) : undefined;
  for (const [name, prio] of Object.entries(parsed as Record<string, unknown>)) {
    const ptr = '/' + escapePointer(name);
    const bad = exitPriorityValueMessage(name, prio);
    if (bad) {
      issues.push({
        jsonPointer: ptr,
        message: bad,
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
    value[name] = prio as number;
  }
  return { value, issues };
}

/** Serializes priorities deterministically (sorted by priority, then name). */
export function formatExitPriority(priorities: Readonly<Record<string, number>>): string {
  const entries = Object.entries(priorities).sort(([an, ap], [bn, bp]) => ap - bp || (an < bn ? -1 : an > bn ? 1 : 0));
  return JSON.stringify(Object.fromEntries(entries));
}

/** Minimum share of the grace period per exit level: the kubelet never gives a container less than 2 s after its preStop. */
export const EXIT_LEVEL_MIN_SECONDS = 2;
/** The kubelet's default grace period when a pod sets none. */
export const DEFAULT_TERMINATION_GRACE_SECONDS = 30;

/** One exit level: the containers that start stopping together. Level 0 holds every container without a priority. */
export interface ExitLevel {
  readonly priority: number;
  readonly containers: readonly string[];
}

/**
 * The exit levels of a pod, ascending: containers without a priority (or 0) first, then each distinct
 * priority. Names in `priorities` that are not in `containers` are ignored (reported elsewhere).
 */
export function exitLevels(containers: readonly string[], priorities: Readonly<Record<string, number>>): ExitLevel[] {
  const byPriority = new Map<number, string[]>();
  for (const name of containers) {
    const p = Object.prototype.hasOwnProperty.call(priorities, name) ? priorities[name]! : 0;
    const list = byPriority.get(p) ?? [];
    list.push(name);
    byPriority.set(p, list);
  }
  return [...byPriority.entries()].sort(([a], [b]) => a - b).map(([priority, names]) => ({ priority, containers: names }));
}

/**
 * When level `index` of `levelCount` stops waiting for the lower levels, in ms after its stop began: level i
 * gets i shares of `graceSeconds / levelCount`, and no level waits past the point where the kubelet's 2-second
 * minimum would extend the pod beyond its grace period.
 */
export function exitLevelDeadlineMs(index: number, levelCount: number, graceSeconds: number): number {
  if (index <= 0 || levelCount <= 1) return 0;
  const graceMs = Math.max(0, graceSeconds) * 1000;
  const share = (graceMs * index) / levelCount;
  return Math.max(0, Math.min(share, graceMs - EXIT_LEVEL_MIN_SECONDS * 1000));
}

/** The smallest terminationGracePeriodSeconds that fits `levelCount` exit levels. */
export function minGraceForExitLevels(levelCount: number): number {
  return levelCount <= 1 ? 0 : EXIT_LEVEL_MIN_SECONDS * levelCount;
}

/** The part of a pod template the exit-priority checks read. */
export interface ExitPriorityPod {
  readonly metadata?: { readonly annotations?: Readonly<Record<string, unknown>> } | undefined;
  readonly spec?:
    | {
        readonly containers?: ReadonlyArray<{ readonly name?: unknown }>;
        readonly initContainers?: ReadonlyArray<{ readonly name?: unknown }>;
        readonly terminationGracePeriodSeconds?: unknown;
      }
    | undefined;
}

/** One problem with a pod's exit priorities; the pointer is relative to the pod (template) object. */
export interface ExitPriorityFinding {
  /** Which check found it (the policy engine has one rule per kind). */
  readonly kind: 'json' | 'unknown-container' | 'value' | 'grace';
  readonly jsonPointer: string;
  readonly message: string;
  readonly hint: string;
}

const EXIT_EXAMPLE = '{"log-agent":1,"envoy":2}';
const EXIT_POINTER = `/metadata/annotations/${escapePointer(ANNOTATION_CONTAINER_EXIT_PRIORITY)}`;

/**
 * Every problem with a pod's `kruise.io/container-exit-priority`: the one source of the messages that
 * `validate`/`synth` report and the pod webhook refuses with. Empty when the pod has no annotation.
 */
export function checkExitPriority(pod: ExitPriorityPod): ExitPriorityFinding[] {
  const annotations = pod.metadata?.annotations ?? {};
  if (!Object.prototype.hasOwnProperty.call(annotations, ANNOTATION_CONTAINER_EXIT_PRIORITY)) return [];
  const raw = annotations[ANNOTATION_CONTAINER_EXIT_PRIORITY];
  const result = typeof raw === 'string' ? parseExitPriority(raw) : undefined;
  if (!result?.value) {
    const why = result ? result.issues.map((i) => i.message).join('; ') : 'it is not a string';
    return [
      {
        kind: 'json',
        jsonPointer: EXIT_POINTER,
        message: `annotation ${ANNOTATION_CONTAINER_EXIT_PRIORITY} = ${quoteValue(raw)} is unusable: ${why}`,
        hint: `Write a JSON object of container name → non-negative integer, e.g. '${EXIT_EXAMPLE}'.`,
      },
    ];
  }
  const out: ExitPriorityFinding[] = [];
  for (const issue of result.issues) {
    out.push({
      kind: 'value',
      jsonPointer: EXIT_POINTER,
      message: `annotation ${ANNOTATION_CONTAINER_EXIT_PRIORITY}: ${issue.message}`,
      hint: `Write plain integers ≥ 0 without quotes (${issue.hint ?? 'e.g. {"envoy":1}'}).`,
    });
  }
  const names = (pod.spec?.containers ?? []).map((c) => c.name).filter((n): n is string => typeof n === 'string');
  for (const key of Object.keys(result.value)) {
    if (names.includes(key)) continue;
    out.push({
      kind: 'unknown-container',
      jsonPointer: EXIT_POINTER,
      message: `annotation ${ANNOTATION_CONTAINER_EXIT_PRIORITY} names container ${quoteValue(key)}, which is not in the pod (containers: ${listNames(names) || 'none'})`,
      hint: `Use one of the pod's container names, or remove ${quoteValue(key)} from the annotation.`,
    });
  }
  const levels = exitLevels(names, result.value).length;
  const rawGrace = pod.spec?.terminationGracePeriodSeconds;
  const grace = typeof rawGrace === 'number' && Number.isFinite(rawGrace) ? rawGrace : DEFAULT_TERMINATION_GRACE_SECONDS;
  const needed = minGraceForExitLevels(levels);
  if (grace < needed) {
    out.push({
      kind: 'grace',
      jsonPointer: rawGrace === undefined ? '/spec' : '/spec/terminationGracePeriodSeconds',
      message:
        `terminationGracePeriodSeconds ${grace}${rawGrace === undefined ? ' (the default)' : ''} cannot fit the ${levels} exit levels of ` +
        `annotation ${ANNOTATION_CONTAINER_EXIT_PRIORITY}: each level needs at least ${EXIT_LEVEL_MIN_SECONDS} s, so at least ${needed} s`,
      hint: `Set terminationGracePeriodSeconds to ${needed} or more, or use fewer distinct priorities.`,
    });
  }
  return out;
}

// The preStop hook that carries exit priority out: the pod webhook gives every container above level 0 a
// preStop httpGet to the node daemon on the node's loopback. The kubelet performs that GET itself, from the
// node, and sends SIGTERM only once it is answered; the daemon answers when the lower levels have exited or
// the level's share of the grace period is spent, after running the container's own preStop, which the hook
// carries in a header. The container spec is immutable, so neither the hook nor the carried handler can be
// changed after creation.

/** Longest carried preStop handler (JSON characters) a pod may declare with exit priority. */
export const MAX_CARRIED_PRESTOP_CHARS = 8192;

/** Where one hook points: the pod's namespace, a random token naming the pod, and the container. */
export interface ExitPriorityHookTarget {
  readonly namespace: string;
  readonly token: string;
  readonly container: string;
}

const HOOK_PATH_RE = new RegExp(
  `^${EXIT_PRIORITY_HOOK_PATH.replace(/\//g, '\\/')}\\/([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\\/([a-z0-9]{8,32})\\/([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$`,
);

/** The hook path of one container. */
export function exitPriorityHookPath(t: ExitPriorityHookTarget): string {
  return `${EXIT_PRIORITY_HOOK_PATH}/${t.namespace}/${t.token}/${t.container}`;
}

/** Parses a hook path strictly (DNS labels, a lower-case alphanumeric token); undefined for anything else. */
export function parseExitPriorityHookPath(path: string): ExitPriorityHookTarget | undefined {
  if (path.length > 256) return undefined;
  const m = HOOK_PATH_RE.exec(path);
  return m ? { namespace: m[1]!, token: m[3]!, container: m[4]! } : undefined;
}

/** JSON with every non-ASCII character escaped, so the value is a safe HTTP header on every client. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The preStop handler that replaces a prioritised container's own (which it carries, when there is one). */
export function exitPriorityPreStop(t: ExitPriorityHookTarget, own?: V1LifecycleHandler): V1LifecycleHandler {
  return {
    httpGet: {
      host: '127.0.0.1',
      port: DAEMON_EXIT_PRIORITY_PORT,
      path: exitPriorityHookPath(t),
      scheme: 'HTTP',
      ...(own ? { httpHeaders: [{ name: HEADER_EXIT_PRIORITY_PRESTOP, value: asciiJson(own) }] } : {}),
    },
  };
}

/** The hook as found in a container's spec: where it points and the container's own preStop it carries. */
export interface ExitPriorityHook extends ExitPriorityHookTarget {
  readonly own?: V1LifecycleHandler;
}

/** Reads the exit-priority hook back from a preStop handler; undefined when it is not ours. */
export function readExitPriorityHook(preStop: unknown): ExitPriorityHook | undefined {
  const get = (preStop as { httpGet?: { host?: unknown; port?: unknown; path?: unknown; httpHeaders?: unknown } } | undefined)?.httpGet;
  if (!get || get.host !== '127.0.0.1' || get.port !== DAEMON_EXIT_PRIORITY_PORT || typeof get.path !== 'string') return undefined;
  const target = parseExitPriorityHookPath(get.path);
  if (!target) return undefined;
  const headers = Array.isArray(get.httpHeaders) ? (get.httpHeaders as Array<{ name?: unknown; value?: unknown }>) : [];
  const carried = headers.find((h) => h.name === HEADER_EXIT_PRIORITY_PRESTOP)?.value;
  if (typeof carried !== 'string' || carried.length > MAX_CARRIED_PRESTOP_CHARS) return target;
  try {
    const own = JSON.parse(carried) as unknown;
    return own && typeof own === 'object' && !Array.isArray(own) ? { ...target, own: own as V1LifecycleHandler } : target;
  } catch {
    return target;
  }
}

// ---------------------------------------------------------------------------------------------
// Container launch priority (shipped upstream; needs the PodWebhook gate)
// ---------------------------------------------------------------------------------------------

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
    return { issues: [{ jsonPointer: '', message: `${ENV_CONTAINER_PRIORITY} must be an integer, got ${quoteValue(raw)}` }] };
  }
  const n = Number(raw.trim());
  if (n < -2147483647 || n > 2147483647) {
    return { issues: [{ jsonPointer: '', message: `${ENV_CONTAINER_PRIORITY} must be within ±2147483647, got ${quoteValue(raw)}` }] };
  }
  return { value: n, issues: [] };
}

// ---------------------------------------------------------------------------------------------
// ContainerRecreateRequest labels
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Lifecycle hooks (CloneSet)
// ---------------------------------------------------------------------------------------------

/** Values of {@link LABEL_LIFECYCLE_STATE}. */
export const LifecycleStateValues = ['PreparingNormal', 'Normal', 'PreparingUpdate', 'Updating', 'Updated', 'PreparingDelete'] as const;
/** One of {@link LifecycleStateValues}. */
export type LifecycleState = (typeof LifecycleStateValues)[number];

// ---------------------------------------------------------------------------------------------
// SidecarSet injection
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// ImagePullJob / daemon
// ---------------------------------------------------------------------------------------------

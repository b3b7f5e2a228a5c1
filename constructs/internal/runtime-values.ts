/**
 * The chart-like values of `KruiseRuntime` (placement, env, ports, ServiceAccount annotations), checked when the
 * construct is created, so a typo fails at the line that made it instead of at apply time.
 */
import { quoteValue } from '../../src/api/quote.js';
import { validateCoreKind } from '../../src/api/validate.js';
import { dns1123SubdomainError, labelValueError, qualifiedNameError } from '../../src/contracts/validators.js';
import type { ManagerPorts, PodPlacement } from '../../src/install/spec.js';
import type { KubeObject } from '../../src/install/types.js';

/** What an `EnvValue` of cdk8s-plus carries (its public fields). */
interface EnvValueLike {
  readonly value?: unknown;
  readonly valueFrom?: unknown;
}

interface TolerationLike {
  readonly key?: string;
  readonly operator?: string;
  readonly value?: string;
  readonly effect?: string;
  readonly tolerationSeconds?: number;
}

/** The pod options as the construct takes them (structurally `RuntimePodOptions`). */
export interface PodOptionsLike {
  readonly nodeSelector?: { readonly [label: string]: string };
  readonly tolerations?: readonly TolerationLike[];
  readonly affinity?: object;
  readonly hostNetwork?: boolean;
  readonly extraEnv?: { readonly [name: string]: EnvValueLike };
}

const OPERATORS = ['Exists', 'Equal'];
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const AFFINITY_KEYS = ['nodeAffinity', 'podAffinity', 'podAntiAffinity'];
/** Kubernetes env var names: printable, no `=` (the API server's rule). */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** `where.field`, or `where field` when `where` is a construct path ending in a colon. */
function at(where: string, field: string): string {
  return where.endsWith(':') ? `${where} ${field}` : `${where}.${field}`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Checks the pod options and turns them into the install's plain placement. `reservedEnv`: names the install sets. */
export function checkPlacement(options: PodOptionsLike, where: string, reservedEnv: readonly string[]): PodPlacement {
  const out: { -readonly [K in keyof PodPlacement]: PodPlacement[K] } = {};
  if (options.nodeSelector !== undefined) {
    if (!isPlainObject(options.nodeSelector)) throw new Error(`${at(where, 'nodeSelector')} must be an object of label to value`);
    for (const [k, v] of Object.entries(options.nodeSelector)) {
      const keyError = qualifiedNameError(k);
      if (keyError) throw new Error(`${at(where, 'nodeSelector')}: label ${quoteValue(k)} ${keyError}`);
      if (typeof v !== 'string') throw new Error(`${at(where, 'nodeSelector')}.${k} must be a string, got ${quoteValue(v)}`);
      const valueError = labelValueError(v);
      if (valueError) throw new Error(`${at(where, 'nodeSelector')}.${k}: ${quoteValue(v)} ${valueError}`);
    }
    out.nodeSelector = { ...options.nodeSelector };
  }
  if (options.tolerations !== undefined) {
    if (!Array.isArray(options.tolerations)) throw new Error(`${at(where, 'tolerations')} must be an array`);
    out.tolerations = options.tolerations.map((t: TolerationLike, i) => toleration(t, `${at(where, 'tolerations')}[${i}]`));
  }
  if (options.affinity !== undefined) {
    if (!isPlainObject(options.affinity)) throw new Error(`${at(where, 'affinity')} must be a Kubernetes Affinity object`);
    const unknown = Object.keys(options.affinity).filter((k) => !AFFINITY_KEYS.includes(k));
    if (unknown.length > 0) {
      throw new Error(`${at(where, 'affinity')}: unknown field ${quoteValue(unknown[0])} (expected ${AFFINITY_KEYS.join(', ')})`);
    }
    // Deep-checked against the Kubernetes schema once rendered (checkRenderedWorkloads).
    out.affinity = JSON.parse(JSON.stringify(options.affinity)) as Record<string, unknown>;
  }
  if (options.hostNetwork !== undefined) {
    if (typeof options.hostNetwork !== 'boolean') throw new Error(`${at(where, 'hostNetwork')} must be true or false`);
    out.hostNetwork = options.hostNetwork;
  }
  if (options.extraEnv !== undefined) out.extraEnv = envVars(options.extraEnv, `${at(where, 'extraEnv')}`, reservedEnv);
  return out;
}

function toleration(t: TolerationLike, where: string): Record<string, unknown> {
  if (!isPlainObject(t as unknown)) throw new Error(`${where} must be a toleration object`);
  const operator = t.operator ?? 'Equal';
  if (!OPERATORS.includes(operator))
    throw new Error(`${where}.operator must be TolerationOperator.EXISTS or EQUAL, got ${quoteValue(operator)}`);
  if (t.effect !== undefined && !EFFECTS.includes(t.effect)) {
    throw new Error(`${where}.effect must be a TaintEffect (NoSchedule, PreferNoSchedule, NoExecute), got ${quoteValue(t.effect)}`);
  }
  if (t.key !== undefined && t.key !== '') {
    const e = qualifiedNameError(t.key);
    if (e) throw new Error(`${where}.key ${quoteValue(t.key)} ${e}`);
  } else if (operator !== 'Exists') {
    throw new Error(`${where}: a toleration without a key must use TolerationOperator.EXISTS (it then tolerates every taint)`);
  }
  if (operator === 'Exists' && t.value !== undefined && t.value !== '') {
    throw new Error(`${where}: value must be empty with TolerationOperator.EXISTS`);
  }
  if (t.value !== undefined && (typeof t.value !== 'string' || labelValueError(t.value))) {
    throw new Error(`${where}.value ${quoteValue(t.value)} is not a valid taint value`);
  }
  if (t.tolerationSeconds !== undefined) {
    if (!Number.isInteger(t.tolerationSeconds)) throw new Error(`${where}.tolerationSeconds must be a whole number of seconds`);
    if (t.effect !== 'NoExecute') throw new Error(`${where}.tolerationSeconds applies only to TaintEffect.NO_EXECUTE`);
  }
  const out: Record<string, unknown> = { operator };
  if (t.key) out.key = t.key;
  if (t.value) out.value = t.value;
  if (t.effect) out.effect = t.effect;
  if (t.tolerationSeconds !== undefined) out.tolerationSeconds = t.tolerationSeconds;
  return out;
}

/** cdk8s-plus EnvValues as Kubernetes EnvVars, in name order. */
export function envVars(
  env: { readonly [name: string]: EnvValueLike },
  where: string,
  reserved: readonly string[],
): Record<string, unknown>[] {
  if (!isPlainObject(env)) throw new Error(`${where} must be an object of name to EnvValue`);
  return Object.keys(env)
    .sort()
    .map((name) => {
      if (!ENV_NAME.test(name)) throw new Error(`${where}: ${quoteValue(name)} is not a valid environment variable name`);
      if (reserved.includes(name)) {
        throw new Error(`${where}: ${name} is set by the install itself (${reserved.join(', ')}); use addJsonPatch to change it`);
      }
      const v = env[name];
      if (!isPlainObject(v))
        throw new Error(`${where}.${name} must be a cdk8s-plus EnvValue (EnvValue.fromValue(...), fromSecretValue(...), ...)`);
      if (v.valueFrom !== undefined) return { name, valueFrom: JSON.parse(JSON.stringify(v.valueFrom)) as unknown };
      if (v.value === undefined || v.value === null) return { name, value: '' };
      if (typeof v.value !== 'string' && typeof v.value !== 'number' && typeof v.value !== 'boolean') {
        throw new Error(`${where}.${name}: the value must be a string, got ${quoteValue(v.value)}`);
      }
      return { name, value: String(v.value) };
    });
}

/** The manager's ports, checked: whole numbers 1-65535, all different. Undefined keeps the defaults. */
export function checkPorts(
  ports: { readonly webhook?: number; readonly metrics?: number; readonly health?: number } | undefined,
  defaults: ManagerPorts,
  where: string,
): ManagerPorts | undefined {
  if (ports === undefined) return undefined;
  const out: ManagerPorts = {
    webhook: ports.webhook ?? defaults.webhook,
    metrics: ports.metrics ?? defaults.metrics,
    health: ports.health ?? defaults.health,
  };
  for (const [k, v] of Object.entries(out)) checkPort(v, `${where}.${k}`);
  if (new Set(Object.values(out)).size !== 3) {
    throw new Error(`${where}: webhook ${out.webhook}, metrics ${out.metrics} and health ${out.health} must be three different ports`);
  }
  return out;
}

export function checkPort(v: unknown, where: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) {
    throw new Error(`${where} must be a port number (1-65535), got ${quoteValue(v)}`);
  }
  return v;
}

export function checkServiceAccountAnnotations(
  a: { readonly [key: string]: string } | undefined,
  where: string,
): Record<string, string> | undefined {
  if (a === undefined) return undefined;
  if (!isPlainObject(a)) throw new Error(`${where} must be an object of annotation to value`);
  for (const [k, v] of Object.entries(a)) {
    const e = qualifiedNameError(k);
    if (e) throw new Error(`${where}: annotation ${quoteValue(k)} ${e}`);
    if (typeof v !== 'string') throw new Error(`${where}.${k} must be a string, got ${quoteValue(v)}`);
  }
  return { ...a };
}

export function checkPriorityClassName(name: string | undefined, where: string): void {
  if (name !== undefined && (typeof name !== 'string' || dns1123SubdomainError(name) !== undefined)) {
    throw new Error(`${where} ${quoteValue(name)} is not a valid PriorityClass name (lowercase DNS subdomain)`);
  }
}

/**
 * The rendered Deployment and DaemonSet against the Kubernetes schema (unknown fields, types, enums, required
 * fields): what the user's affinity, env or patches put there is refused with the field's pointer.
 */
export function checkRenderedWorkloads(objects: readonly KubeObject[], where: string): void {
  for (const o of objects) {
    const definition = o.kind === 'Deployment' ? 'V1Deployment' : o.kind === 'DaemonSet' ? 'V1DaemonSet' : undefined;
    if (!definition) continue;
    const [issue] = validateCoreKind(definition, o);
    if (issue) {
      throw new Error(
        `${where}: the ${o.kind} ${o.metadata?.name} would be invalid at ${issue.jsonPointer || '/'}: ${issue.message}${issue.hint ? ` (${issue.hint})` : ''}`,
      );
    }
  }
}

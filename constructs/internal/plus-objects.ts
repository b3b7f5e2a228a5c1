import type { IConstruct } from 'constructs';

/**
 * Structural checks for cdk8s-plus objects. Apps may use any cdk8s-plus-NN (cdk8s init installs the newest),
 * and two copies of one package make `instanceof` fail too, so constructs look at what an object can do,
 * not which package's class made it.
 */

/** A container as any cdk8s-plus version (or a plain object) names it. */
export interface NamedContainer {
  readonly name: string;
}

/** What the constructs use of a cdk8s-plus Pod, Job, CronJob or workload (cdk8s-plus `AbstractPod`). */
export interface PlusPodOwner extends IConstruct {
  readonly restartPolicy?: string;
  readonly containers: readonly NamedContainer[];
  addContainer(props: object): NamedContainer;
}

/** True for a cdk8s-plus pod owner of any version: it has `addContainer` and a `containers` list. */
export function isPlusPodOwner(c: IConstruct): c is PlusPodOwner {
  const o = c as unknown as Partial<Record<'addContainer' | 'containers', unknown>>;
  return typeof o.addContainer === 'function' && Array.isArray(o.containers);
}

/** "a cdk8s-plus-27 Service at app/web" style description of what was given, for error messages. */
export function describeConstruct(c: unknown): string {
  if (c === null || c === undefined) return String(c);
  if (typeof c !== 'object') return `a ${typeof c} (${JSON.stringify(c)})`;
  const name = (c as { constructor?: { name?: string } }).constructor?.name ?? 'Object';
  const path = (c as { node?: { path?: string } }).node?.path;
  return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}${path !== undefined ? ` at "${path}"` : ''}`;
}

/** A value as a person would write it in an error message: JSON for data, the class name for objects. */
export function describeValue(v: unknown): string {
  if (v === undefined || typeof v === 'function') return String(v);
  if (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) !== Object.prototype && !Array.isArray(v))
    return describeConstruct(v);
  try {
    return JSON.stringify(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

/**
 * The manifest value of a percent-or-absolute setting: a cdk8s-plus `PercentOrAbsolute` of any version (its
 * `value`: `"50%"` or `1`), or from plain JavaScript a non-negative integer or a `"50%"` string.
 */
export function percentOrAbsoluteValue(v: unknown, where: string): number | string | undefined {
  if (v === undefined) return undefined;
  const raw = v !== null && typeof v === 'object' && 'value' in v ? (v as { value: unknown }).value : v;
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0) return raw;
  if (typeof raw === 'string' && /^\d+%$/.test(raw)) return raw;
  throw new Error(
    `${where}: expected PercentOrAbsolute.percent(N) or PercentOrAbsolute.absolute(N) (or, from JavaScript, ` +
      `a non-negative integer or a string like "50%"), but got ${describeValue(v)}.`,
  );
}

/**
 * A Secret the constructs refer to by name (image pull secrets): a cdk8s-plus `ISecret` of any version
 * (`Secret.fromSecretName(...)`, a `DockerConfigSecret`, …) or the Secret's name. Every construct takes the same.
 */
export type SecretReference = string | { readonly name: string };

/** The names of `secrets`, each checked: a non-empty string or an object with a string `name`. */
export function secretNames(secrets: readonly SecretReference[] | undefined, where: string): string[] | undefined {
  if (secrets === undefined) return undefined;
  if (!Array.isArray(secrets))
    throw new Error(`${where}: expected a list of Secrets (cdk8s-plus ISecret or Secret names), but got ${describeValue(secrets)}.`);
  return secrets.map((s: unknown, i) => {
    const name = typeof s === 'string' ? s : s !== null && typeof s === 'object' ? (s as { name?: unknown }).name : undefined;
    if (typeof name !== 'string' || name === '') {
      throw new Error(`${where}[${i}]: expected a cdk8s-plus ISecret or a Secret name, but got ${describeValue(s)}.`);
    }
    return name;
  });
}

/**
 * Validators of Kubernetes and registry names, shared by the constructs (eager errors), the policy rules
 * (findings) and the runtime's webhooks (admission answers), so the three can never disagree.
 * Each returns why a value is invalid, or undefined when it is valid.
 *
 * @module
 */

// Kubernetes validation (k8s.io/apimachinery/pkg/util/validation), which the API server applies.
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Why `name` is not a DNS-1123 label (container, port and Service names, namespaces), or undefined. */
export function dns1123LabelError(name: string): string | undefined {
  if (name.length === 0) return 'it is empty';
  if (name.length > 63) return 'it is longer than 63 characters';
  if (!DNS1123_LABEL.test(name)) return 'it must be lowercase alphanumerics or "-", starting and ending with an alphanumeric';
  return undefined;
}

/** Why `name` is not a DNS-1123 subdomain (most object names), or undefined. */
export function dns1123SubdomainError(name: string): string | undefined {
  if (name.length === 0) return 'it is empty';
  if (name.length > 253) return 'it is longer than 253 characters';
  if (!DNS1123_SUBDOMAIN.test(name)) return 'it must be lowercase alphanumerics, "-" or ".", starting and ending with an alphanumeric';
  return undefined;
}

/** Why `key` is not a Kubernetes qualified name (label key / finalizer), or undefined when it is one. */
export function qualifiedNameError(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return 'a qualified name has at most one "/"';
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) return 'the prefix before "/" is empty';
    if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) return `the prefix "${prefix}" is not a lowercase DNS subdomain`;
  }
  if (name.length === 0) return 'the name part is empty';
  if (name.length > 63) return 'the name part is longer than 63 characters';
  if (!QUALIFIED_NAME_PART.test(name))
    return `the name part "${name}" must be alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric`;
  return undefined;
}

/** Why `value` is not a label value, or undefined. */
export function labelValueError(value: string): string | undefined {
  if (value.length > 63) return 'a label value is at most 63 characters';
  if (!LABEL_VALUE.test(value))
    return 'a label value must be empty or alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric';
  return undefined;
}

// The reference grammar of the container registry ecosystem (distribution/reference), which kubelet and
// containerd apply when pulling. An IPv6 registry is written in brackets (`[::1]:5000/app:1`).
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const NAME = `(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@(${DIGEST}))?$`);

/** Why `ref` is not a valid image reference, or undefined when it is one. */
export function imageReferenceError(ref: unknown): string | undefined {
  if (typeof ref !== 'string' || ref.length === 0) return 'the image reference is empty';
  if (ref !== ref.trim()) return 'the image reference has leading or trailing whitespace';
  const m = REFERENCE.exec(ref);
  if (!m) {
    if (/[A-Z]/.test(ref.split('/').slice(-1)[0]!.split(':')[0]!)) return 'repository names must be lowercase';
    return 'it does not match [registry/]repository[:tag][@digest]';
  }
  if (m[1]!.length > 255) return 'the repository name is longer than 255 characters';
  return undefined;
}

/** A label selector as the API writes it (metav1.LabelSelector), loosely typed for untrusted input. */
export interface LabelSelectorLike {
  readonly matchLabels?: unknown;
  readonly matchExpressions?: unknown;
}

function record(x: unknown): Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
}

function list(x: unknown): unknown[] {
  return Array.isArray(x) ? x : [];
}

/** Kubernetes label-selector semantics (matchLabels AND matchExpressions); unknown operators match nothing. */
export function selectorMatches(selector: LabelSelectorLike, labels: Readonly<Record<string, unknown>>): boolean {
  for (const [k, v] of Object.entries(record(selector.matchLabels))) if (labels[k] !== v) return false;
  for (const raw of list(selector.matchExpressions)) {
    const e = record(raw);
    const key = String(e.key);
    const values = list(e.values).map(String);
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(String(labels[key]))) return false;
        break;
      case 'NotIn':
        if (has && values.includes(String(labels[key]))) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** True when the selector has neither matchLabels nor matchExpressions (Kruise: matches nothing). */
export function isEmptySelector(selector: LabelSelectorLike): boolean {
  return Object.keys(record(selector.matchLabels)).length === 0 && list(selector.matchExpressions).length === 0;
}

/** Joins a NodeImage image name and tag into a reference (digests join with `@`). */
export function imageRef(image: string, tag: string): string {
  return tag.startsWith('sha256:') ? `${image}@${tag}` : `${image}:${tag}`;
}

/**
 * Splits a reference into NodeImage's (name, tag): the tag after the last `:` that follows the last
 * `/` (a registry port is not a tag), a digest after `@`, else `latest`.
 */
export function splitImageRef(ref: string): { image: string; tag: string } {
  const at = ref.indexOf('@');
  if (at >= 0) return { image: ref.slice(0, at), tag: ref.slice(at + 1) };
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  if (colon > slash) return { image: ref.slice(0, colon), tag: ref.slice(colon + 1) };
  return { image: ref, tag: 'latest' };
}

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
// containerd apply when pulling. An IPv6 registry is written in brackets (`[::1]:5000/app:1`). Only the
// repository path must be lower case: a registry host is case-insensitive and a tag may hold upper case.
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const NAME = `(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const TAG = '[\\w][\\w.-]{0,127}';
// go-digest, which the reference parser calls: a registered algorithm and its exact length of lower-case hex.
const DIGEST = 'sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128}';
const REFERENCE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@(${DIGEST}))?$`);
/** A bare image ID, which the kubelet's parser refuses as a reference. */
const IMAGE_ID = /^[a-f0-9]{64}$/;
/** Longest user text quoted in a reason (this layer has no quoting helper of its own). */
const MAX_QUOTED = 80;

function quoted(text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text);
}

/** Why a reference without surrounding whitespace breaks the grammar, or undefined when it is one. */
function grammarError(ref: string): string | undefined {
  if (IMAGE_ID.test(ref)) return 'a bare 64-character hex string is an image ID, not a reference';
  const m = REFERENCE.exec(ref);
  if (!m) return 'it does not match [registry/]repository[:tag][@digest]';
  if (m[1]!.length > 255) return 'the repository name is longer than 255 characters';
  return undefined;
}

/**
 * A reference cut into registry (with its `/`), repository path and the `:tag`/`@digest` rest. The first
 * component is the registry only when it looks like a host (a `.`, a `:` port, brackets or `localhost`), so in
 * `MyOrg/App` the whole `MyOrg/App` is the repository meant (Docker Hub's `myorg/app`).
 */
function splitReference(ref: string): { registry: string; path: string; tag: string; digest: string } {
  const at = ref.indexOf('@');
  const nameTag = at >= 0 ? ref.slice(0, at) : ref;
  const digest = at >= 0 ? ref.slice(at) : '';
  const slash = nameTag.lastIndexOf('/');
  const colon = nameTag.lastIndexOf(':');
  const name = colon > slash ? nameTag.slice(0, colon) : nameTag;
  const tag = colon > slash ? nameTag.slice(colon) : '';
  const first = name.indexOf('/');
  const head = first >= 0 ? name.slice(0, first) : '';
  const isRegistry = first >= 0 && (/[.:[]/.test(head) || head === 'localhost');
  return { registry: isRegistry ? `${head}/` : '', path: isRegistry ? name.slice(first + 1) : name, tag, digest };
}

/** What is wrong with an image reference, and the corrected reference when the mistake is a mechanical one. */
export interface ImageReferenceProblem {
  /** Why the reference is invalid, as a clause (`it has leading or trailing whitespace`). */
  readonly reason: string;
  /** True when the reference has leading or trailing whitespace, which the API server refuses in a Pod. */
  readonly whitespace: boolean;
  /** The repository path when it has upper case, which the kubelet refuses (InvalidImageName). */
  readonly upperCaseRepository?: string;
  /**
   * The reference trimmed, with the repository path (and a digest's hex) in lower case, when that makes it valid:
   * what the author meant, as far as it can be told.
   */
  readonly fix?: string;
}

/**
 * What is wrong with `ref` as an image reference, or undefined when it is one. Leading or trailing whitespace,
 * upper case in the repository path (tags may hold upper case; registry hosts are case-insensitive) and a
 * digest's upper-case hex are named, with the corrected reference as `fix`.
 */
export function imageReferenceProblem(ref: unknown): ImageReferenceProblem | undefined {
  if (typeof ref !== 'string' || ref.length === 0) return { reason: 'the image reference is empty', whitespace: false };
  const trimmed = ref.trim();
  const whitespace = trimmed !== ref;
  if (trimmed === '') return { reason: 'the image reference is only whitespace', whitespace };
  const grammar = grammarError(trimmed);
  if (!whitespace && grammar === undefined) return undefined;
  if (grammar === undefined) return { reason: 'it has leading or trailing whitespace', whitespace, fix: trimmed };
  const parts = splitReference(trimmed);
  const upperPath = /[A-Z]/.test(parts.path);
  const upperDigest = /[A-F]/.test(parts.digest.slice(parts.digest.indexOf(':') + 1));
  const lowered = `${parts.registry}${parts.path.toLowerCase()}${parts.tag}${parts.digest.toLowerCase()}`;
  const remaining = upperPath || upperDigest ? grammarError(lowered) : grammar;
  const reasons: string[] = [];
  if (whitespace) reasons.push('it has leading or trailing whitespace');
  if (upperPath) reasons.push(`the repository name ${quoted(parts.path)} has upper case (repository names are lower case)`);
  if (upperDigest) reasons.push('the digest has upper-case hex digits');
  if (remaining !== undefined) reasons.push(remaining);
  return {
    reason: reasons.join(', and '),
    whitespace,
    ...(upperPath ? { upperCaseRepository: parts.path } : {}),
    ...(remaining === undefined ? { fix: lowered } : {}),
  };
}

/** Why `ref` is not a valid image reference, or undefined when it is one. */
export function imageReferenceError(ref: unknown): string | undefined {
  return imageReferenceProblem(ref)?.reason;
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

/** Why `v` is not a budget value: a non-negative integer, or a percentage from 0% to 100%; undefined when it is one. */
export function budgetValueProblem(v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? undefined : `${v} is not a non-negative integer`;
  if (typeof v === 'string') {
    const m = /^(\d+)%$/.exec(v);
    if (m) return Number(m[1]) <= 100 ? undefined : `${v} is above 100%`;
    return /^\d+$/.test(v) ? undefined : `${JSON.stringify(v)} is neither an integer nor a percentage such as "25%"`;
  }
  return `${JSON.stringify(v)} is neither an integer nor a percentage such as "25%"`;
}

/**
 * Conversion of SidecarSet objects between apps.kruise.io/v1alpha1 and v1beta1, with upstream v1.9's semantics
 * (upstream stores v1beta1 and converts in kruise-manager's webhook). Pure and total: any input yields either the
 * converted object or a refusal naming the field; nothing here throws. The manager's `/convert` endpoint and the
 * constructs (emitting v1beta1) both use it.
 *
 * The two versions differ in two places; every other field, the status included, is carried as it is:
 * - v1alpha1's `spec.namespace` becomes, at v1beta1, a namespaceSelector on the label `kubernetes.io/metadata.name`
 *   (it takes the place of any namespaceSelector the v1alpha1 object also had, as upstream: the namespace is the
 *   narrower of the two); back at v1alpha1 the selector stays a selector.
 * - v1alpha1's label `apps.kruise.io/sidecarset-custom-version` becomes v1beta1's `spec.customVersion` (the label is
 *   removed), and back.
 * So v1beta1 → v1alpha1 → v1beta1 gives the same object, and v1alpha1 → v1beta1 → v1alpha1 too, except that a
 * `spec.namespace` comes back as the equivalent namespaceSelector.
 *
 * @module
 */
import { KRUISE_GROUP } from '../contracts/groups.js';
import { LABEL_NAMESPACE_NAME, LABEL_SIDECARSET_CUSTOM_VERSION } from '../contracts/keys.js';
import { quoteValue as quote } from './quote.js';

/** The versions of SidecarSet served, as apiVersion strings. */
export const SIDECARSET_V1ALPHA1 = `${KRUISE_GROUP}/v1alpha1`;
export const SIDECARSET_V1BETA1 = `${KRUISE_GROUP}/v1beta1`;
const VERSIONS: readonly string[] = [SIDECARSET_V1ALPHA1, SIDECARSET_V1BETA1];

/** A converted object, or why the input cannot be converted. */
export type ConversionResult =
  { readonly ok: true; readonly object: Record<string, unknown> } | { readonly ok: false; readonly message: string };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first reason `obj` is not a SidecarSet this module can convert, or undefined. */
function shapeProblem(obj: unknown, at: string): string | undefined {
  if (!isObject(obj)) return `${at}: must be a JSON object, got ${quote(obj)}`;
  if (obj.kind !== 'SidecarSet') return `${at}.kind: ${quote(obj.kind)}: only SidecarSet objects are converted here`;
  if (typeof obj.apiVersion !== 'string' || !VERSIONS.includes(obj.apiVersion))
    return `${at}.apiVersion: ${quote(obj.apiVersion)}: must be one of ${VERSIONS.join(', ')}`;
  const md = obj.metadata;
  if (md !== undefined && !isObject(md)) return `${at}.metadata: must be a JSON object, got ${quote(md)}`;
  const labels = isObject(md) ? md.labels : undefined;
  if (labels !== undefined && labels !== null) {
    if (!isObject(labels)) return `${at}.metadata.labels: must be a map of strings, got ${quote(labels)}`;
    for (const [k, v] of Object.entries(labels)) {
      if (typeof v !== 'string') return `${at}.metadata.labels[${quote(k)}]: must be a string, got ${quote(v)}`;
    }
  }
  const spec = obj.spec;
  if (spec !== undefined && spec !== null) {
    if (!isObject(spec)) return `${at}.spec: must be a JSON object, got ${quote(spec)}`;
    for (const k of ['namespace', 'customVersion'] as const) {
      if (spec[k] !== undefined && spec[k] !== null && typeof spec[k] !== 'string')
        return `${at}.spec.${k}: must be a string, got ${quote(spec[k])}`;
    }
    if (spec.namespaceSelector !== undefined && spec.namespaceSelector !== null && !isObject(spec.namespaceSelector))
      return `${at}.spec.namespaceSelector: must be a JSON object, got ${quote(spec.namespaceSelector)}`;
  }
  return undefined;
}

function toV1beta1(obj: Json): Json {
  const md = isObject(obj.metadata) ? { ...obj.metadata } : undefined;
  const spec = isObject(obj.spec) ? { ...obj.spec } : undefined;
  const out: Json = { ...obj, apiVersion: SIDECARSET_V1BETA1 };
  if (spec) {
    const ns = spec.namespace;
    delete spec.namespace;
    if (typeof ns === 'string' && ns !== '') spec.namespaceSelector = { matchLabels: { [LABEL_NAMESPACE_NAME]: ns } };
  }
  const labels = isObject(md?.labels) ? { ...md.labels } : undefined;
  if (labels && LABEL_SIDECARSET_CUSTOM_VERSION in labels) {
    const custom = labels[LABEL_SIDECARSET_CUSTOM_VERSION] as string;
    delete labels[LABEL_SIDECARSET_CUSTOM_VERSION];
    if (Object.keys(labels).length > 0) md!.labels = labels;
    else delete md!.labels;
    if (custom !== '') {
      if (spec) spec.customVersion = custom;
      else out.spec = { customVersion: custom };
    }
  }
  if (md) out.metadata = md;
  if (spec) out.spec = spec;
  return out;
}

function toV1alpha1(obj: Json): Json {
  const md = isObject(obj.metadata) ? { ...obj.metadata } : undefined;
  const spec = isObject(obj.spec) ? { ...obj.spec } : undefined;
  const out: Json = { ...obj, apiVersion: SIDECARSET_V1ALPHA1 };
  if (spec) {
    const custom = spec.customVersion;
    delete spec.customVersion;
    if (typeof custom === 'string' && custom !== '') {
      const meta = md ?? {};
      meta.labels = { ...(isObject(meta.labels) ? meta.labels : {}), [LABEL_SIDECARSET_CUSTOM_VERSION]: custom };
      out.metadata = meta;
    }
    out.spec = spec;
  }
  if (md && !out.metadata) out.metadata = md;
  return out;
}

/**
 * `obj` (a SidecarSet at either version) at `desiredAPIVersion`. An object already at that version is returned
 * as it is, as the API server expects of a converter.
 */
export function convertSidecarSet(obj: unknown, desiredAPIVersion: string, at = 'object'): ConversionResult {
  if (!VERSIONS.includes(desiredAPIVersion))
    return { ok: false, message: `desiredAPIVersion ${quote(desiredAPIVersion)}: SidecarSet is served at ${VERSIONS.join(', ')} only` };
  const problem = shapeProblem(obj, at);
  if (problem) return { ok: false, message: problem };
  const o = obj as Json;
  if (o.apiVersion === desiredAPIVersion) return { ok: true, object: o };
  return { ok: true, object: desiredAPIVersion === SIDECARSET_V1BETA1 ? toV1beta1(o) : toV1alpha1(o) };
}

/**
 * What an installed runtime can carry out, as one versioned JSON document. The platform's install writes it (the
 * ConfigMap `kruise-runtime-capabilities` in the runtime namespace, key `capabilities.json`); an app whose
 * `KruiseRuntime` targets the platform reads it (from the platform's synthesized manifests, a JSON file the platform
 * team commits, or the cluster) and checks its features against it instead of emitting an install of its own.
 *
 * The document is input from another team or from a cluster, so parsing is hostile-input safe: bounded size, no
 * prototype keys, every field type-checked, unknown fields refused, user values quoted with a budget.
 */

import { MAX_LISTED, quoteValue } from '../api/quote.js';
import {
  AppFeature,
  BUNDLED_RUNTIME_GATES,
  carriesOut,
  FEATURES,
  isFeatureGateName,
  needsOf,
  parseFeatureGates,
  prerequisitesOf,
  type RuntimeName,
} from '../contracts/features.js';
import { isKruiseApiVersion } from '../contracts/groups.js';
import { packageVersion } from '../version.js';
import type { FeatureUse } from './app-features.js';
import type { InstallSpec, ServedKind } from './spec.js';
import { COMMON_LABELS, meta } from './spec.js';
import type { KubeObject, SourcedObject } from './types.js';
import { describeRef } from './types.js';

/** `apiVersion` of the capabilities document (bumped when a field changes meaning). */
export const CAPABILITIES_API_VERSION = 'kruise.cdk8s.io/v1alpha1';
export const CAPABILITIES_KIND = 'RuntimeCapabilities';
/** The ConfigMap the install writes in the runtime namespace, and the key holding the document. */
export const CAPABILITIES_CONFIGMAP = 'kruise-runtime-capabilities';
export const CAPABILITIES_KEY = 'capabilities.json';
/** Environment variable through which `cdk8s-kruise synth --capabilities-from-cluster` hands the app the capabilities file. */
export const CAPABILITIES_ENV = 'CDK8S_KRUISE_CAPABILITIES';
/** Name the offline file usually has when a platform team commits it beside its manifests. */
export const CAPABILITIES_FILE = 'kruise-runtime.capabilities.json';
/** Largest document accepted (the bundled runtime's is about 3 KiB). */
export const MAX_CAPABILITIES_BYTES = 256 * 1024;

/** The capabilities of one installed runtime. */
export interface RuntimeCapabilities {
  readonly apiVersion: typeof CAPABILITIES_API_VERSION;
  readonly kind: typeof CAPABILITIES_KIND;
  /** Which runtime is installed: the one bundled with cdk8s-kruise, or upstream OpenKruise. */
  readonly runtime: RuntimeName;
  /** Version of the installed runtime (the cdk8s-kruise package version for the bundled one). */
  readonly version: string;
  /** Namespace the runtime runs in. */
  readonly namespace: string;
  /** Every gate the runtime knows, with its effective value (after cascades). */
  readonly featureGates: Readonly<Record<string, boolean>>;
  /** Whether the node daemon runs. */
  readonly daemon: boolean;
  /** Whether the pod mutating webhook is registered. */
  readonly podWebhook: boolean;
  /** Kinds whose CRDs are installed and which the runtime serves, as `group/version/Kind`. */
  readonly servedKinds: readonly string[];
  /** The features the install carries out as configured (informative: checks use the gates, daemon and webhook). */
  readonly features: readonly string[];
}

const FIELDS = ['apiVersion', 'kind', 'runtime', 'version', 'namespace', 'featureGates', 'daemon', 'podWebhook', 'servedKinds', 'features'];
const GATE_NAME = /^[A-Za-z0-9]{1,64}$/;
const KIND_ID = /^[a-z0-9.-]{1,253}\/v[0-9a-z]{1,20}\/[A-Za-z0-9]{1,63}$/;
const VERSION = /^[0-9A-Za-z.+_-]{1,64}$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const MAX_ENTRIES = 512;

export function kindId(k: Pick<ServedKind, 'group' | 'version' | 'kind'>): string {
  return `${k.group}/${k.version}/${k.kind}`;
}

/** The features whose needs (gates, daemon, pod webhook) `caps` meets, in the feature table's order. */
export function featuresCarriedOut(caps: Omit<RuntimeCapabilities, 'features'>): AppFeature[] {
  return (Object.keys(FEATURES) as AppFeature[]).filter((f) => {
    if (f === AppFeature.OTHER_KRUISE_KIND || !carriesOut(caps.runtime, f)) return false;
    return missingNeeds(f, caps).length === 0;
  });
}

/** The capabilities of a bundled install as rendered from `spec`. */
export function capabilitiesOf(spec: InstallSpec): RuntimeCapabilities {
  const gates = parseFeatureGates(spec.featureGates, BUNDLED_RUNTIME_GATES);
  const base: Omit<RuntimeCapabilities, 'features'> = {
    apiVersion: CAPABILITIES_API_VERSION,
    kind: CAPABILITIES_KIND,
    runtime: 'bundled',
    version: packageVersion(),
    namespace: spec.namespace,
    featureGates: Object.fromEntries([...gates].sort(([a], [b]) => a.localeCompare(b))),
    daemon: spec.daemon !== undefined,
    podWebhook: spec.webhook.pods,
    servedKinds: spec.kinds.map(kindId),
  };
  return { ...base, features: featuresCarriedOut(base) };
}

/** The document as the install writes it (stable key order, two-space indent, trailing newline). */
export function capabilitiesJson(caps: RuntimeCapabilities): string {
  const ordered = Object.fromEntries(FIELDS.map((f) => [f, caps[f as keyof RuntimeCapabilities]]));
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** The ConfigMap that publishes the capabilities in the cluster (read by apps' synth and by operators). */
export function capabilitiesConfigMap(spec: InstallSpec): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(spec, CAPABILITIES_CONFIGMAP, true, { ...COMMON_LABELS }) as KubeObject['metadata'],
    data: { [CAPABILITIES_KEY]: capabilitiesJson(capabilitiesOf(spec)) },
  };
}

/** A capabilities document that failed its checks; `message` names the source and the field. */
export class CapabilitiesError extends Error {}

/**
 * Parses and checks a capabilities document. `source` names where it came from in every message (a file path, a
 * ConfigMap). Refuses an oversized text, invalid JSON, another `apiVersion`/`kind`, unknown or missing fields and
 * values of the wrong type or form.
 */
export function parseCapabilities(text: string, source: string): RuntimeCapabilities {
  if (text.length > MAX_CAPABILITIES_BYTES) {
    throw new CapabilitiesError(
      `${source}: the capabilities document is ${text.length} bytes, more than the ${MAX_CAPABILITIES_BYTES} accepted`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new CapabilitiesError(`${source}: not valid JSON (${(e as Error).message.slice(0, 200)})`);
  }
  return checkCapabilities(value, source);
}

/** Checks an already parsed document (see parseCapabilities). */
export function checkCapabilities(value: unknown, source: string): RuntimeCapabilities {
  const fail = (what: string): never => {
    throw new CapabilitiesError(`${source}: ${what}`);
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('the capabilities document must be a JSON object');
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v);
  const unknown = keys.filter((k) => !FIELDS.includes(k));
  if (unknown.length > 0)
    fail(
      `unknown field(s) ${unknown
        .slice(0, MAX_LISTED)
        .map((k) => quoteValue(k, 60))
        .join(', ')}`,
    );
  if (v.apiVersion !== CAPABILITIES_API_VERSION || v.kind !== CAPABILITIES_KIND) {
    fail(
      `apiVersion/kind must be ${CAPABILITIES_API_VERSION}/${CAPABILITIES_KIND}, got ${quoteValue(v.apiVersion, 60)}/${quoteValue(v.kind, 60)}` +
        ' (a document from another cdk8s-kruise version: synth the platform with this version, or upgrade this app)',
    );
  }
  for (const f of FIELDS) if (!(f in v)) fail(`missing field "${f}"`);
  if (v.runtime !== 'bundled' && v.runtime !== 'upstream') fail(`runtime must be "bundled" or "upstream", got ${quoteValue(v.runtime)}`);
  if (typeof v.version !== 'string' || !VERSION.test(v.version)) fail(`version must be a version string, got ${quoteValue(v.version)}`);
  if (typeof v.namespace !== 'string' || !NAMESPACE.test(v.namespace))
    fail(`namespace must be a namespace name, got ${quoteValue(v.namespace)}`);
  for (const f of ['daemon', 'podWebhook'] as const)
    if (typeof v[f] !== 'boolean') fail(`${f} must be true or false, got ${quoteValue(v[f])}`);
  const gates = v.featureGates;
  if (gates === null || typeof gates !== 'object' || Array.isArray(gates))
    fail('featureGates must be an object of gate name to true/false');
  const gateEntries = Object.entries(gates as Record<string, unknown>);
  if (gateEntries.length > MAX_ENTRIES) fail(`featureGates has ${gateEntries.length} entries, more than ${MAX_ENTRIES}`);
  const featureGates: Record<string, boolean> = Object.create(null) as Record<string, boolean>;
  for (const [name, on] of gateEntries) {
    if (!GATE_NAME.test(name)) fail(`featureGates: ${quoteValue(name, 60)} is not a gate name`);
    if (typeof on !== 'boolean') fail(`featureGates.${name} must be true or false, got ${quoteValue(on)}`);
    featureGates[name] = on as boolean;
  }
  const list = (field: 'servedKinds' | 'features', form: (s: string) => boolean, what: string): string[] => {
    const a = v[field];
    if (!Array.isArray(a)) return fail(`${field} must be an array of strings`);
    if (a.length > MAX_ENTRIES) fail(`${field} has ${a.length} entries, more than ${MAX_ENTRIES}`);
    for (const s of a) if (typeof s !== 'string' || !form(s)) fail(`${field}: ${quoteValue(s, 80)} is not ${what}`);
    return [...(a as string[])];
  };
  const servedKinds = list('servedKinds', (s) => KIND_ID.test(s), 'a kind as group/version/Kind');
  // Features unknown to this version (a newer platform) are kept: they are informative only.
  const features = list('features', (s) => s.length > 0 && s.length <= 120, 'a feature name');
  return {
    apiVersion: CAPABILITIES_API_VERSION,
    kind: CAPABILITIES_KIND,
    runtime: v.runtime as RuntimeName,
    version: v.version as string,
    namespace: v.namespace as string,
    featureGates: { ...featureGates },
    daemon: v.daemon as boolean,
    podWebhook: v.podWebhook as boolean,
    servedKinds,
    features,
  };
}

/**
 * The capabilities ConfigMap among manifests (e.g. the platform's `dist/`), parsed; undefined when none is there.
 * Two different ones are an error: the manifests would install two runtimes.
 */
export function capabilitiesInManifests(objects: readonly KubeObject[], source: string): RuntimeCapabilities | undefined {
  const found = objects.filter(
    (o) =>
      o !== null && typeof o === 'object' && o.apiVersion === 'v1' && o.kind === 'ConfigMap' && o.metadata?.name === CAPABILITIES_CONFIGMAP,
  );
  if (found.length === 0) return undefined;
  const texts = [...new Set(found.map((o) => (o.data as Record<string, unknown> | undefined)?.[CAPABILITIES_KEY]))];
  if (texts.length > 1)
    throw new CapabilitiesError(`${source}: ${found.length} different ${CAPABILITIES_CONFIGMAP} ConfigMaps; expected one install`);
  const text = texts[0];
  if (typeof text !== 'string')
    throw new CapabilitiesError(`${source}: ConfigMap ${CAPABILITIES_CONFIGMAP} has no string data.${CAPABILITIES_KEY}`);
  return parseCapabilities(text, `${source} (ConfigMap ${CAPABILITIES_CONFIGMAP})`);
}

/** What a feature needs that `caps` lacks, as phrases (`feature gate X is off`, `no node daemon runs`). */
function missingNeeds(f: AppFeature, caps: Pick<RuntimeCapabilities, 'runtime' | 'featureGates' | 'daemon' | 'podWebhook'>): string[] {
  const needs = needsOf(f, caps.runtime);
  const out: string[] = [];
  for (const g of [...new Set(needs.gates.flatMap((g) => [g, ...prerequisitesOf(g)]))]) {
    if (caps.featureGates[g] !== true) out.push(`feature gate ${g} is off`);
  }
  if (needs.daemon && !caps.daemon) out.push('no node daemon runs');
  if (needs.podWebhook && !caps.podWebhook) out.push('the pod webhook is not registered');
  return out;
}

/** The `AppFeature.NAME` a user writes for a feature. */
export function featureConstant(f: AppFeature): string {
  const key = (Object.keys(AppFeature) as (keyof typeof AppFeature)[]).find((k) => AppFeature[k] === f);
  return `AppFeature.${key}`;
}

/** The gates that turn `f` on for `runtime`, with their prerequisites (the fix a platform applies). */
export function gatesToEnable(f: AppFeature, runtime: RuntimeName): string[] {
  return [...new Set(needsOf(f, runtime).gates.flatMap((g) => [g, ...prerequisitesOf(g)]))].filter(isFeatureGateName);
}

/**
 * The app's feature uses and Kruise objects the installed runtime cannot carry out, as synth errors. Each names the
 * resource, the feature, what is missing and how the platform enables it.
 */
export function capabilityErrors(
  uses: readonly FeatureUse[],
  objects: readonly SourcedObject[],
  caps: RuntimeCapabilities,
  source: string,
  /** How the app gets the platform's new capabilities once the platform has them, e.g. `refresh <file>`. */
  refresh = `refresh ${source}`,
): string[] {
  const errors: string[] = [];
  const platform = `the platform's runtime (${caps.runtime} ${caps.version}, from ${source})`;
  for (const use of uses) {
    if (!carriesOut(caps.runtime, use.feature)) continue; // said by the runtime-support check, with its advice
    const missing = missingNeeds(use.feature, caps);
    if (missing.length === 0) continue;
    const gates = gatesToEnable(use.feature, caps.runtime);
    const fix =
      `Add ${featureConstant(use.feature)} to the platform KruiseRuntime's \`features\`` +
      (gates.length > 0 ? ` (or featureGates { ${gates.map((g) => `${g}: true`).join(', ')} })` : '') +
      `, synth the platform and ${refresh}.`;
    errors.push(
      `${describeRef(use.resource)} uses ${use.feature}${use.pointer ? ` at ${use.pointer}` : ''}, but in ${platform} ${missing.join(' and ')}. ${fix}`,
    );
  }
  const served = new Set(caps.servedKinds);
  for (const src of objects) {
    const o = src.object;
    if (!isKruiseApiVersion(o.apiVersion)) continue;
    const [group, version] = o.apiVersion.split('/');
    const id = `${group}/${version}/${o.kind}`;
    if (served.has(id)) continue;
    errors.push(
      `${describeRef({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata?.name, namespace: o.metadata?.namespace, path: src.path })} ` +
        `is a ${id}, which ${platform} does not serve (no CRD). Upgrade the platform's runtime or use a kind it serves.`,
    );
  }
  return [...new Set(errors)];
}

/**
 * Kubernetes core types (Container, Volume, PodTemplateSpec, PersistentVolumeClaim) used inside our
 * kinds.
 *
 * We do not hand-write them. A kind schema only places a marker node
 * `{ "x-kruise-core": "<definition name>" }`; each output resolves it from the generated core
 * definitions (`core/k8s-core.schema.json`, produced by `core/generate.ts` from the model metadata
 * that `@kubernetes/client-node` ships):
 * - the ajv validator replaces it by a `$ref` into those definitions (closed objects, so unknown
 *   container fields are reported);
 * - the CRD generator emits `x-kubernetes-preserve-unknown-fields` where upstream does (pod
 *   templates, volumeClaimTemplates, SidecarSet volumes and containers) and inlines the structural
 *   schema elsewhere;
 * - the JSON-schema exporter copies the definitions it needs.
 * TypeScript types come from `core/k8s-core-types.ts`, generated from the same definitions.
 *
 * @module
 */
import { Type, type Static, type TObject, type TProperties, type TUnsafe } from '@sinclair/typebox';
import type {
  V1Container,
  V1LocalObjectReference,
  V1ObjectFieldSelector,
  V1PersistentVolumeClaim,
  V1PodTemplateSpec,
  V1Volume,
} from './core/k8s-core-types.js';

/** Marker key naming a core definition (client-node model name, e.g. `V1Container`). */
export const CORE_REF = 'x-kruise-core';

/**
 * How the CRD generator renders a core node: `preserve` = `x-kubernetes-preserve-unknown-fields`
 * (what upstream does for pod templates, volumeClaimTemplates, SidecarSet volumes and the core part
 * of SidecarSet containers); `inline` = the full structural schema (used for small core types such
 * as LocalObjectReference).
 */
export const CORE_CRD_MODE = 'x-kruise-crd';
/** See {@link CORE_CRD_MODE}. */
export type CoreCrdMode = 'inline' | 'preserve';

/** Definition names (in `core/k8s-core.schema.json`) of the core types we reference, by alias. */
export const CORE_DEFINITIONS = {
  Container: 'V1Container',
  Volume: 'V1Volume',
  PodTemplateSpec: 'V1PodTemplateSpec',
  PersistentVolumeClaim: 'V1PersistentVolumeClaim',
  LocalObjectReference: 'V1LocalObjectReference',
  ObjectFieldSelector: 'V1ObjectFieldSelector',
  Probe: 'V1Probe',
} as const;
/** Short name of a referenced core type. */
export type CoreAlias = keyof typeof CORE_DEFINITIONS;

interface CoreOptions {
  description?: string;
  crd?: CoreCrdMode;
}

/** A node that stands for the core type `T` (resolved by each generator, see the module doc). */
export function CoreRef<T>(alias: CoreAlias, options: CoreOptions = {}): TUnsafe<T> {
  const { crd = 'inline', description } = options;
  return Type.Unsafe<T>({
    type: 'object',
    [CORE_REF]: CORE_DEFINITIONS[alias],
    [CORE_CRD_MODE]: crd,
    ...(description ? { description } : {}),
  });
}

/**
 * A core type extended with extra fields (SidecarSet containers are core Containers plus Kruise
 * fields). Generators merge the core properties with `extra` into one closed object.
 */
export function CoreExtend<T, P extends TProperties>(
  alias: CoreAlias,
  extra: P,
  options: CoreOptions = {},
): TUnsafe<T & Static<TObject<P>>> {
  const { crd = 'inline', description } = options;
  const base = Type.Object(extra);
  return Type.Unsafe<T & Static<TObject<P>>>({
    type: 'object',
    [CORE_REF]: CORE_DEFINITIONS[alias],
    [CORE_CRD_MODE]: crd,
    properties: base.properties,
    ...(description ? { description } : {}),
  });
}

/** corev1.Container (full core schema). */
export const ContainerSchema = (options: CoreOptions = {}) => CoreRef<V1Container>('Container', options);
/** corev1.Volume. */
export const VolumeSchema = (options: CoreOptions = {}) => CoreRef<V1Volume>('Volume', options);
/** corev1.PodTemplateSpec: metadata + PodSpec. */
export const PodTemplateSpecSchema = (options: CoreOptions = {}) => CoreRef<V1PodTemplateSpec>('PodTemplateSpec', options);
/** corev1.PersistentVolumeClaim, as used in volumeClaimTemplates. */
export const PersistentVolumeClaimSchema = (options: CoreOptions = {}) =>
  CoreRef<V1PersistentVolumeClaim>('PersistentVolumeClaim', options);
/** corev1.LocalObjectReference (`{name}`), e.g. imagePullSecrets. */
export const LocalObjectReferenceSchema = (options: CoreOptions = {}) => CoreRef<V1LocalObjectReference>('LocalObjectReference', options);
/** corev1.ObjectFieldSelector (`{fieldPath, apiVersion}`). */
export const ObjectFieldSelectorSchema = (options: CoreOptions = {}) => CoreRef<V1ObjectFieldSelector>('ObjectFieldSelector', options);

/** Core types as the core definitions declare them (JSON field names). */
export type { V1Container, V1Volume, V1PodTemplateSpec, V1PersistentVolumeClaim, V1LocalObjectReference };

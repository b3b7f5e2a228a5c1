/**
 * Building blocks shared by every kind's schema.
 *
 * Conventions (they matter for the three outputs generated from one schema):
 * - Every object is closed (`additionalProperties: false`) so our validator reports typos that the
 *   API server would silently prune. The CRD generator strips it again (structural schemas forbid it
 *   next to `properties`).
 * - IntOrString fields carry `x-kubernetes-int-or-string` plus a plain `type: [integer, string]`, which
 *   ajv checks cheaply; the CRD generator rewrites them to the canonical `anyOf` form.
 * - Keys starting with `x-kruise-` are validator-only hints; the CRD generator drops them.
 *
 * @module
 */
import { Type, type TSchema, type TProperties, type ObjectOptions, type SchemaOptions } from '@sinclair/typebox';
import type * as G from './types/generated.js';
import { KRUISE_API_VERSION, KRUISE_GROUP, KRUISE_VERSION } from '../contracts/groups.js';

/** A closed object: unknown fields are validation errors. */
export function Struct<T extends TProperties>(properties: T, options: ObjectOptions = {}) {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** An int32 field, as the Go types declare it. */
export function Int32(options: SchemaOptions & { minimum?: number; maximum?: number } = {}) {
  return Type.Integer({ format: 'int32', ...options });
}

/** An int64 field, as the Go types declare it. */
export function Int64(options: SchemaOptions & { minimum?: number; maximum?: number } = {}) {
  return Type.Integer({ format: 'int64', ...options });
}

/** An RFC 3339 timestamp (metav1.Time). */
export function DateTime(options: SchemaOptions = {}) {
  return Type.String({ format: 'date-time', ...options });
}

/** A string → string map (labels, annotations, matchLabels). */
export function StringMap(options: SchemaOptions = {}) {
  return Type.Record(Type.String(), Type.String(), options);
}

/** Marker key for IntOrString fields, understood by the API server and by our generators. */
export const INT_OR_STRING = 'x-kubernetes-int-or-string';

/** A Kubernetes IntOrString (`intstr.IntOrString`): an integer or a string. */
export function IntOrString(options: SchemaOptions = {}) {
  return Type.Unsafe<number | string>({ [INT_OR_STRING]: true, type: ['integer', 'string'], ...options });
}

/**
 * An IntOrString that must be a non-negative integer or a percentage such as `"25%"`
 * (maxUnavailable, maxSurge, partition). JSON Schema applies `pattern` only to strings and
 * `minimum` only to numbers, so one node checks both shapes.
 */
export function IntOrPercent(options: SchemaOptions = {}) {
  return Type.Unsafe<number | string>({
    [INT_OR_STRING]: true,
    type: ['integer', 'string'],
    minimum: 0,
    pattern: '^(0|[1-9][0-9]*)%$',
    'x-kruise-format': 'int-or-percent',
    ...options,
  });
}

/**
 * Key of {@link servedIn}: the versions (of the kind's group) whose schema has the field. The CRD generator leaves the
 * field out of every other version's schema, and `validate` refuses it in an object of another version.
 */
export const SERVED_IN = 'x-kruise-served-in';

/**
 * A field only some served versions of the kind have (upstream renamed or moved it between versions): the one
 * TypeBox schema holds every version's fields, and this marks which versions carry this one. `elsewhere` says what
 * the other versions use instead (the hint `validate` gives).
 */
export function servedIn<T extends TSchema>(versions: readonly string[], schema: T, elsewhere?: string): T {
  return { ...schema, [SERVED_IN]: [...versions], ...(elsewhere ? { [SERVED_IN_ELSEWHERE]: elsewhere } : {}) } as T;
}

/** Key of {@link servedIn}'s `elsewhere`: what the other versions have instead (shown as the hint). */
export const SERVED_IN_ELSEWHERE = 'x-kruise-served-in-elsewhere';

/** A string restricted to one of `values` (Go string enums). */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** metav1.LabelSelectorRequirement. */
export const LabelSelectorRequirementSchema = Struct(
  {
    key: Type.String({ description: 'The label key that the selector applies to.' }),
    operator: StringEnum(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const, {
      description: 'How the key relates to the values: In, NotIn, Exists or DoesNotExist.',
    }),
    values: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Values for In/NotIn (must be non-empty); must be empty for Exists/DoesNotExist.',
      }),
    ),
  },
  { description: 'A selector requirement: a key, an operator and values.' },
);

/** metav1.LabelSelector. An empty selector means different things per kind; see each field. */
export const LabelSelectorSchema = Struct(
  {
    matchLabels: Type.Optional(StringMap({ description: 'Labels that must all match exactly.' })),
    matchExpressions: Type.Optional(Type.Array(LabelSelectorRequirementSchema, { description: 'Requirements that must all be met.' })),
  },
  { description: 'A label query over a set of resources (metav1.LabelSelector).' },
);
/** A label query over a set of resources (metav1.LabelSelector). Every field is documented (generated from the schema descriptions). */
export type LabelSelector = G.LabelSelector;

/** A LabelSelector field with its own description. */
export function LabelSelector(description: string) {
  return Struct(LabelSelectorSchema.properties, { description });
}

/** metav1.OwnerReference (NodeImage tags record the ImagePullJob that asked for them). */
export const OwnerReferenceSchema = Struct(
  {
    apiVersion: Type.String({ description: 'API version of the referent.' }),
    kind: Type.String({ description: 'Kind of the referent.' }),
    name: Type.String({ description: 'Name of the referent.' }),
    uid: Type.String({ description: 'UID of the referent.' }),
    controller: Type.Optional(Type.Boolean({ description: 'True if the referent is the managing controller.' })),
    blockOwnerDeletion: Type.Optional(
      Type.Boolean({ description: 'If true, the owner cannot be deleted from storage until this reference is removed.' }),
    ),
  },
  { description: 'A reference to an owning object (metav1.OwnerReference).' },
);
/** A reference to an owning object (metav1.OwnerReference). Every field is documented (generated from the schema descriptions). */
export type OwnerReference = G.OwnerReference;

/** corev1.ObjectReference, as NodeImage tags use it for their owners. */
export const ObjectReferenceSchema = Struct(
  {
    apiVersion: Type.Optional(Type.String({ description: 'API version of the referent.' })),
    kind: Type.Optional(Type.String({ description: 'Kind of the referent.' })),
    name: Type.Optional(Type.String({ description: 'Name of the referent.' })),
    namespace: Type.Optional(Type.String({ description: 'Namespace of the referent.' })),
    uid: Type.Optional(Type.String({ description: 'UID of the referent.' })),
    resourceVersion: Type.Optional(Type.String({ description: 'Specific resourceVersion of the referent.' })),
    fieldPath: Type.Optional(Type.String({ description: 'A field of the referent, when the reference is to part of it.' })),
  },
  { description: 'A reference to an object (corev1.ObjectReference).' },
);
/** A reference to an object (corev1.ObjectReference). Every field is documented (generated from the schema descriptions). */
export type ObjectReference = G.ObjectReference;

/** metav1.ManagedFieldsEntry (present on objects read back from a cluster). */
const ManagedFieldsEntrySchema = Struct(
  {
    apiVersion: Type.Optional(Type.String({ description: 'Version of the fields described.' })),
    fieldsType: Type.Optional(Type.String({ description: 'Format of fieldsV1 (FieldsV1).' })),
    fieldsV1: Type.Optional(
      Type.Unsafe<Record<string, unknown>>({
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        description: 'The set of fields owned by the manager.',
      }),
    ),
    manager: Type.Optional(Type.String({ description: 'Name of the field manager.' })),
    operation: Type.Optional(Type.String({ description: 'Apply or Update.' })),
    subresource: Type.Optional(Type.String({ description: 'Subresource the fields were written through.' })),
    time: Type.Optional(DateTime({ description: 'When the fields were last written.' })),
  },
  { description: 'Server-side-apply ownership of a set of fields.' },
);

/** RFC 1123 subdomain: object names. */
export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** RFC 1123 label: namespace names. */
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** Label/annotation key: optional DNS-subdomain prefix and a name of at most 63 characters. */
export const QUALIFIED_NAME_PATTERN =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';
/** Label value: empty, or at most 63 alphanumerics, '-', '_' and '.', starting and ending alphanumeric. */
export const LABEL_VALUE_PATTERN = '^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$';

/**
 * metav1.ObjectMeta of a top-level object. Closed, so `metadata.lables` is reported; names, label
 * keys/values and annotation keys are checked as the API server would. Server-set fields are
 * accepted so objects read back from a cluster validate too.
 */
export const ObjectMetaSchema = Struct(
  {
    name: Type.Optional(
      Type.String({
        maxLength: 253,
        pattern: DNS_SUBDOMAIN_PATTERN,
        'x-kruise-format': 'dns-subdomain',
        description: 'Name, unique within the namespace (or the cluster for cluster-scoped kinds).',
      }),
    ),
    generateName: Type.Optional(
      Type.String({
        maxLength: 248,
        pattern: '^[a-z0-9]([-a-z0-9.]*)?$',
        'x-kruise-format': 'generate-name',
        description: 'Prefix for a server-generated name, used when name is empty.',
      }),
    ),
    namespace: Type.Optional(
      Type.String({
        maxLength: 63,
        pattern: DNS_LABEL_PATTERN,
        'x-kruise-format': 'dns-label',
        description: 'Namespace of a namespaced object. Ignored by the API server for cluster-scoped kinds.',
      }),
    ),
    labels: Type.Optional(
      Type.Unsafe<Record<string, string>>({
        type: 'object',
        propertyNames: { pattern: QUALIFIED_NAME_PATTERN, maxLength: 317, 'x-kruise-format': 'qualified-name' },
        additionalProperties: { type: 'string', pattern: LABEL_VALUE_PATTERN, 'x-kruise-format': 'label-value' },
        description: 'Labels: identifying key/value pairs used by selectors.',
      }),
    ),
    annotations: Type.Optional(
      Type.Unsafe<Record<string, string>>({
        type: 'object',
        propertyNames: { pattern: QUALIFIED_NAME_PATTERN, maxLength: 317, 'x-kruise-format': 'qualified-name' },
        additionalProperties: { type: 'string' },
        description: 'Annotations: non-identifying metadata.',
      }),
    ),
    finalizers: Type.Optional(Type.Array(Type.String(), { description: 'Finalizers that must be removed before the object is deleted.' })),
    ownerReferences: Type.Optional(
      Type.Array(OwnerReferenceSchema, { description: 'Objects this object depends on (garbage collection).' }),
    ),
    uid: Type.Optional(Type.String({ description: 'Server-set unique id.' })),
    resourceVersion: Type.Optional(Type.String({ description: 'Server-set version for optimistic concurrency.' })),
    generation: Type.Optional(Int64({ description: 'Server-set sequence number of spec changes.' })),
    creationTimestamp: Type.Optional(
      // kubectl and client libraries write `null` when unset.
      Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', description: 'Server-set creation time.' }),
    ),
    deletionTimestamp: Type.Optional(DateTime({ description: 'Server-set deletion request time.' })),
    deletionGracePeriodSeconds: Type.Optional(Int64({ description: 'Server-set grace period for deletion.' })),
    managedFields: Type.Optional(Type.Array(ManagedFieldsEntrySchema, { description: 'Server-side-apply field ownership.' })),
    selfLink: Type.Optional(Type.String({ description: 'Deprecated, server-set.' })),
  },
  { description: 'Standard object metadata (metav1.ObjectMeta).' },
);
/** Standard object metadata (metav1.ObjectMeta). Every field is documented (generated from the schema descriptions). */
export type ObjectMeta = G.ObjectMeta;

/** The API group every kind here belongs to (declared in the contract layer). */
export const GROUP = KRUISE_GROUP;
/** The one version we serve and emit (API-compatible with upstream v1alpha1). */
export const VERSION = KRUISE_VERSION;
/** `apiVersion` of every kind here. */
export const API_VERSION = KRUISE_API_VERSION;

/**
 * Envelope of a top-level object: apiVersion, kind, metadata, spec and (optional) status.
 * Pass `Type.Optional(spec)` for kinds whose spec may be omitted.
 */
export function KindObject<K extends string, S extends TSchema, St extends TSchema>(kind: K, spec: S, status: St, description: string) {
  return Struct(
    {
      apiVersion: Type.Literal(API_VERSION, { description: `Always \`${API_VERSION}\`.` }),
      kind: Type.Literal(kind, { description: `Always \`${kind}\`.` }),
      metadata: ObjectMetaSchema,
      spec,
      status: Type.Optional(status),
    },
    { description },
  );
}

/**
 * {@link KindObject} of a kind also served at other versions of its group (its `alsoServed`): those apiVersions are
 * accepted too, as the API server accepts them. The versions share this one schema; a field only some of them have is
 * marked with {@link servedIn}.
 */
export function ServedKindObject<K extends string, S extends TSchema, St extends TSchema>(
  kind: K,
  spec: S,
  status: St,
  description: string,
  alsoServed: readonly string[],
) {
  const versions = alsoServed.map((v) => `${GROUP}/${v}`);
  return Struct(
    {
      apiVersion: StringEnum([API_VERSION, ...versions], {
        description: `\`${API_VERSION}\`, or ${versions.map((v) => `\`${v}\``).join(', ')} (also served).`,
      }),
      kind: Type.Literal(kind, { description: `Always \`${kind}\`.` }),
      metadata: ObjectMetaSchema,
      spec,
      status: Type.Optional(status),
    },
    { description },
  );
}
/** See the generated interface for field docs. */
export type LabelSelectorRequirement = G.LabelSelectorRequirement;

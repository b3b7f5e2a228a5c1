/**
 * PodUnavailableBudget (policy.kruise.io/v1alpha1, namespaced): how many of the pods a selector or a workload
 * selects may be unavailable at once. The pod webhook refuses a deletion, an eviction or an in-place update of a
 * selected pod that would take the available pods below the budget; the manager keeps the status counts.
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type * as G from '../types/generated.js';
import { KRUISE_POLICY_GROUP, KRUISE_VERSION } from '../../contracts/groups.js';
import { DateTime, Int32, Int64, IntOrPercent, LabelSelector, ObjectMetaSchema, Struct } from '../common.js';

/** `apiVersion` of a PodUnavailableBudget. */
export const POLICY_API_VERSION = `${KRUISE_POLICY_GROUP}/${KRUISE_VERSION}` as const;

/** TypeBox schema of {@link PubTargetReference}: The workload whose pods a budget covers. */
export const PubTargetReferenceSchema = Struct(
  {
    apiVersion: Type.Optional(Type.String({ description: 'API version of the referent.' })),
    kind: Type.Optional(Type.String({ description: 'Kind of the referent.' })),
    name: Type.Optional(Type.String({ description: 'Name of the referent.' })),
  },
  { description: 'The workload (in the budget namespace) whose pods the budget covers.' },
);
/** The workload whose pods a budget covers. Every field is documented (generated from the schema descriptions). */
export type PubTargetReference = G.PubTargetReference;

/** TypeBox schema of {@link PodUnavailableBudgetSpec}: Desired state of a PodUnavailableBudget. */
export const PodUnavailableBudgetSpecSchema = Struct(
  {
    selector: Type.Optional(LabelSelector('Pods (in the budget namespace) the budget covers; targetRef wins when both are set.')),
    targetRef: Type.Optional(PubTargetReferenceSchema),
    maxUnavailable: Type.Optional(
      IntOrPercent({
        description:
          'At most this many selected pods (or percent of the expected replicas, rounded up) may be unavailable after a ' +
          'deletion, eviction or in-place update; wins over minAvailable.',
      }),
    ),
    minAvailable: Type.Optional(
      IntOrPercent({
        description:
          'At least this many selected pods (or percent of the expected replicas, rounded up) stay available after a ' +
          'deletion, eviction or in-place update.',
      }),
    ),
  },
  { description: 'Desired state of a PodUnavailableBudget: the pods it covers and how many may be unavailable.' },
);
/** Desired state of a PodUnavailableBudget. Every field is documented (generated from the schema descriptions). */
export type PodUnavailableBudgetSpec = G.PodUnavailableBudgetSpec;

const PodTimes = (description: string) => Type.Record(Type.String(), DateTime(), { description });

/** TypeBox schema of {@link PodUnavailableBudgetStatus}: Observed state of a PodUnavailableBudget. */
export const PodUnavailableBudgetStatusSchema = Struct(
  {
    observedGeneration: Type.Optional(Int64({ description: 'The generation the counts were computed for.' })),
    disruptedPods: Type.Optional(
      PodTimes('Pods whose deletion or eviction the webhook admitted, not yet seen gone by the manager (name to admission time).'),
    ),
    unavailablePods: Type.Optional(
      PodTimes('Pods whose in-place update the webhook admitted, until they are seen updated and ready (name to admission time).'),
    ),
    unavailableAllowed: Int32({ description: 'How many more selected pods may become unavailable now.' }),
    currentAvailable: Int32({ description: 'Selected pods running, ready and with their spec carried out.' }),
    desiredAvailable: Int32({ description: 'Selected pods that must stay available.' }),
    totalReplicas: Int32({ description: 'Pods the budget counts: the replicas its workloads expect.' }),
  },
  { description: 'Observed state of a PodUnavailableBudget.' },
);
/** Observed state of a PodUnavailableBudget. Every field is documented (generated from the schema descriptions). */
export type PodUnavailableBudgetStatus = G.PodUnavailableBudgetStatus;

/** TypeBox schema of {@link PodUnavailableBudget}: PodUnavailableBudget bounds how many selected pods may be unavailable. */
export const PodUnavailableBudgetSchema = Struct(
  {
    apiVersion: Type.Literal(POLICY_API_VERSION, { description: `Always \`${POLICY_API_VERSION}\`.` }),
    kind: Type.Literal('PodUnavailableBudget', { description: 'Always `PodUnavailableBudget`.' }),
    metadata: ObjectMetaSchema,
    spec: PodUnavailableBudgetSpecSchema,
    status: Type.Optional(PodUnavailableBudgetStatusSchema),
  },
  {
    description:
      'PodUnavailableBudget bounds how many of the pods it selects may be unavailable: deletions, evictions and in-place ' +
      'updates beyond it are refused.',
  },
);
/** A PodUnavailableBudget object. */
export type PodUnavailableBudget = G.PodUnavailableBudget;

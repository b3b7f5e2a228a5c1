/**
 * PodProbeMarker (apps.kruise.io/v1alpha1, namespaced) and NodePodProbe (cluster-scoped, name = Node name).
 * A PodProbeMarker declares custom probes for the pods its selector matches; the manager lists them per node in
 * that node's NodePodProbe, kruise-daemon runs them there and writes each result to the NodePodProbe's status,
 * and the manager turns the results into pod conditions, labels and annotations.
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type * as G from '../types/generated.js';
import type { V1Probe } from '../core/k8s-core-types.js';
import { CoreRef } from '../core.js';
import { DateTime, Int64, KindObject, LabelSelector, StringEnum, StringMap, Struct } from '../common.js';

/** A probe result: Succeeded, Failed, or Unknown (before the first result past the thresholds). */
export const ProbeStateValues = ['Succeeded', 'Failed', 'Unknown'] as const;
/** One of {@link ProbeStateValues}. */
export type ProbeState = (typeof ProbeStateValues)[number];
/** The states a marker policy can name. */
export const MarkerPolicyStateValues = ['Succeeded', 'Failed'] as const;
/** One of {@link MarkerPolicyStateValues}. */
export type MarkerPolicyState = (typeof MarkerPolicyStateValues)[number];

/** The core Probe (exec, httpGet, tcpSocket and the thresholds), as upstream inlines it. */
const ProbeSpec = (description: string) => CoreRef<V1Probe>('Probe', { description });

/** TypeBox schema of {@link ProbeMarkerPolicy}: Labels and annotations a pod gets while its probe is in one state. */
export const ProbeMarkerPolicySchema = Struct(
  {
    state: StringEnum(MarkerPolicyStateValues, { description: 'Succeeded or Failed: the probe state this policy applies in.' }),
    labels: Type.Optional(StringMap({ description: 'Labels set on the pod in this state (removed in the other state).' })),
    annotations: Type.Optional(StringMap({ description: 'Annotations set on the pod in this state (removed in the other state).' })),
  },
  { description: 'Labels and annotations a pod gets while its probe is in one state.' },
);
/** Labels and annotations a pod gets while its probe is in one state. Every field is documented (generated from the schema descriptions). */
export type ProbeMarkerPolicy = G.ProbeMarkerPolicy;

/** TypeBox schema of {@link PodContainerProbe}: One custom probe of a container and what its result marks on the pod. */
export const PodContainerProbeSchema = Struct(
  {
    name: Type.String({ description: 'Probe name, unique within the pod (across containers and PodProbeMarkers).' }),
    containerName: Type.String({ description: 'Container the probe runs against (exec runs in it; http/tcp use its named ports).' }),
    probe: ProbeSpec('The probe: exec, httpGet or tcpSocket, with initialDelaySeconds, periodSeconds, timeoutSeconds and thresholds.'),
    markerPolicy: Type.Optional(
      Type.Array(ProbeMarkerPolicySchema, {
        description: 'Labels and annotations per probe state (markerPolicy or podConditionType is required).',
      }),
    ),
    podConditionType: Type.Optional(
      Type.String({ description: 'Pod condition type the result is written to (True when Succeeded, False otherwise).' }),
    ),
  },
  { description: 'One custom probe of a container and what its result marks on the pod.' },
);
/** One custom probe of a container and what its result marks on the pod. Every field is documented (generated from the schema descriptions). */
export type PodContainerProbe = G.PodContainerProbe;

/** TypeBox schema of {@link PodProbeMarkerSpec}: Desired state of a PodProbeMarker. */
export const PodProbeMarkerSpecSchema = Struct(
  {
    selector: LabelSelector('Pods (in the PodProbeMarker namespace) whose containers are probed.'),
    probes: Type.Array(PodContainerProbeSchema, { description: 'Probes run on each selected pod.' }),
  },
  { description: 'Desired state of a PodProbeMarker: the pods and the probes run on them.' },
);
/** Desired state of a PodProbeMarker. Every field is documented (generated from the schema descriptions). */
export type PodProbeMarkerSpec = G.PodProbeMarkerSpec;

/** TypeBox schema of {@link PodProbeMarkerStatus}: Observed state of a PodProbeMarker. */
export const PodProbeMarkerStatusSchema = Struct(
  {
    observedGeneration: Int64({ description: 'The generation the manager last acted on.' }),
    matchedPods: Type.Optional(Int64({ description: 'Running, initialized pods the selector matches.' })),
  },
  { description: 'Observed state of a PodProbeMarker.' },
);
/** Observed state of a PodProbeMarker. Every field is documented (generated from the schema descriptions). */
export type PodProbeMarkerStatus = G.PodProbeMarkerStatus;

/** TypeBox schema of {@link PodProbeMarker}: PodProbeMarker runs custom probes on selected pods and marks the results on them. */
export const PodProbeMarkerSchema = KindObject(
  'PodProbeMarker',
  PodProbeMarkerSpecSchema,
  PodProbeMarkerStatusSchema,
  'PodProbeMarker runs custom probes on selected pods and marks the results on them (conditions, labels, annotations).',
);
/** A PodProbeMarker object. */
export type PodProbeMarker = G.PodProbeMarker;

/** TypeBox schema of {@link ContainerProbe}: One probe to run on a node: `<PodProbeMarker>#<probe>`, its container and spec. */
export const ContainerProbeSchema = Struct(
  {
    name: Type.String({ description: 'The PodProbeMarker name and the probe name, joined by `#`.' }),
    containerName: Type.String({ description: 'Container the probe runs against.' }),
    probe: ProbeSpec('The probe, with named ports resolved to numbers.'),
  },
  { description: 'One probe to run on a node.' },
);
/** One probe to run on a node. Every field is documented (generated from the schema descriptions). */
export type ContainerProbe = G.ContainerProbe;

/** TypeBox schema of {@link PodProbe}: The probes of one pod on the node. */
export const PodProbeSchema = Struct(
  {
    name: Type.String({ description: 'Pod name.' }),
    namespace: Type.String({ description: 'Pod namespace.' }),
    uid: Type.String({ description: 'Pod UID (a recreated pod of the same name is another pod).' }),
    IP: Type.String({ description: 'Pod IP, the host of http and tcp probes.' }),
    probes: Type.Optional(Type.Array(ContainerProbeSchema, { description: 'Probes of this pod.' })),
  },
  { description: 'The probes of one pod on the node.' },
);
/** The probes of one pod on the node. Every field is documented (generated from the schema descriptions). */
export type PodProbe = G.PodProbe;

/** TypeBox schema of {@link NodePodProbeSpec}: Desired state of a NodePodProbe. */
export const NodePodProbeSpecSchema = Struct(
  { podProbes: Type.Optional(Type.Array(PodProbeSchema, { description: 'Pods on this node and their probes.' })) },
  { description: 'Desired state of a NodePodProbe: the probes kruise-daemon runs on this node.' },
);
/** Desired state of a NodePodProbe. Every field is documented (generated from the schema descriptions). */
export type NodePodProbeSpec = G.NodePodProbeSpec;

/** TypeBox schema of {@link ContainerProbeState}: The latest result of one probe. */
export const ContainerProbeStateSchema = Struct(
  {
    name: Type.String({ description: 'The PodProbeMarker name and the probe name, joined by `#`.' }),
    state: StringEnum(ProbeStateValues, { description: 'Succeeded, Failed or Unknown.' }),
    lastProbeTime: Type.Optional(DateTime({ description: 'When the probe last ran.' })),
    lastTransitionTime: Type.Optional(DateTime({ description: 'When the state last changed.' })),
    message: Type.Optional(Type.String({ description: "The probe's output when it succeeded, its error when it failed (at most 1 KiB)." })),
  },
  { description: 'The latest result of one probe.' },
);
/** The latest result of one probe. Every field is documented (generated from the schema descriptions). */
export type ContainerProbeState = G.ContainerProbeState;

/** TypeBox schema of {@link PodProbeStatus}: Probe results of one pod. */
export const PodProbeStatusSchema = Struct(
  {
    name: Type.String({ description: 'Pod name.' }),
    namespace: Type.String({ description: 'Pod namespace.' }),
    uid: Type.String({ description: 'Pod UID.' }),
    probeStates: Type.Optional(Type.Array(ContainerProbeStateSchema, { description: 'Result per probe.' })),
  },
  { description: 'Probe results of one pod.' },
);
/** Probe results of one pod. Every field is documented (generated from the schema descriptions). */
export type PodProbeStatus = G.PodProbeStatus;

/** TypeBox schema of {@link NodePodProbeStatus}: Observed state of a NodePodProbe (written by kruise-daemon). */
export const NodePodProbeStatusSchema = Struct(
  { podProbeStatuses: Type.Optional(Type.Array(PodProbeStatusSchema, { description: 'Results per pod.' })) },
  { description: 'Observed state of a NodePodProbe (written by kruise-daemon).' },
);
/** Observed state of a NodePodProbe. Every field is documented (generated from the schema descriptions). */
export type NodePodProbeStatus = G.NodePodProbeStatus;

/** TypeBox schema of {@link NodePodProbe}: NodePodProbe lists the custom probes of one node and their results. */
export const NodePodProbeSchema = KindObject(
  'NodePodProbe',
  Type.Optional(NodePodProbeSpecSchema),
  NodePodProbeStatusSchema,
  'NodePodProbe lists the custom probes kruise-daemon runs on one node and their results (cluster-scoped; name = node name).',
);
/** A NodePodProbe object. */
export type NodePodProbe = G.NodePodProbe;

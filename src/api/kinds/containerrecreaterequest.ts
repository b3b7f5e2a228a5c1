/**
 * ContainerRecreateRequest (apps.kruise.io/v1alpha1, namespaced, short name `crr`): asks
 * kruise-daemon to recreate (kill and let kubelet restart) some containers of a running pod.
 * The spec is immutable once created.
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type * as G from '../types/generated.js';
import { DateTime, Int32, Int64, IntOrString, KindObject, StringEnum, Struct } from '../common.js';

/** What happens to the CRR when recreating a container fails. */
export const CRRFailurePolicyValues = ['Fail', 'Ignore'] as const;
/** One of {@link CRRFailurePolicyValues}. */
export type CRRFailurePolicy = (typeof CRRFailurePolicyValues)[number];

/** Phase of the whole request (it ends Completed) and of each container (Succeeded/Failed). */
export const CRRPhaseValues = ['Pending', 'Recreating', 'Succeeded', 'Failed', 'Completed'] as const;
/** One of {@link CRRPhaseValues}. */
export type CRRPhase = (typeof CRRPhaseValues)[number];

const HttpHeaderSchema = Struct({
  name: Type.String({ description: 'Header name.' }),
  value: Type.String({ description: 'Header value.' }),
});

/** The container's preStop handler, copied from the pod by the webhook (read-only). */
export const ProbeHandlerSchema = Struct(
  {
    exec: Type.Optional(
      Struct({ command: Type.Optional(Type.Array(Type.String(), { description: 'Command line.' })) }, { description: 'Run a command.' }),
    ),
    httpGet: Type.Optional(
      Struct(
        {
          path: Type.Optional(Type.String({ description: 'Path to request.' })),
          port: IntOrString({ description: 'Port number or name.' }),
          host: Type.Optional(Type.String({ description: 'Host to connect to (default: the pod IP).' })),
          scheme: Type.Optional(Type.String({ description: 'HTTP or HTTPS.' })),
          httpHeaders: Type.Optional(Type.Array(HttpHeaderSchema, { description: 'Extra request headers.' })),
        },
        { description: 'HTTP GET.' },
      ),
    ),
    tcpSocket: Type.Optional(
      Struct(
        {
          port: IntOrString({ description: 'Port number or name.' }),
          host: Type.Optional(Type.String({ description: 'Host to connect to (default: the pod IP).' })),
        },
        { description: 'TCP connect.' },
      ),
    ),
  },
  { description: 'A handler (exec, httpGet or tcpSocket).' },
);

const ContainerPortSchema = Struct({
  containerPort: Int32({ minimum: 1, maximum: 65535, description: 'Port number.' }),
  name: Type.Optional(Type.String({ description: 'Port name.' })),
  hostIP: Type.Optional(Type.String({ description: 'Host IP to bind to.' })),
  hostPort: Type.Optional(Int32({ description: 'Port on the host.' })),
  protocol: Type.Optional(Type.String({ description: 'TCP (default), UDP or SCTP.', default: 'TCP' })),
});

/** TypeBox schema of {@link ContainerRecreateRequestContainer}: A container to recreate. */
export const ContainerRecreateRequestContainerSchema = Struct(
  {
    name: Type.String({ minLength: 1, description: 'Name of the container to recreate.' }),
    preStop: Type.Optional(Struct(ProbeHandlerSchema.properties, { description: 'Copied from the pod by the webhook; do not set.' })),
    ports: Type.Optional(Type.Array(ContainerPortSchema, { description: 'Copied from the pod by the webhook; do not set.' })),
    statusContext: Type.Optional(
      Struct(
        {
          containerID: Type.String({ description: 'Container ID at request time.' }),
          restartCount: Int32({ description: 'Restart count at request time.' }),
        },
        { description: 'Set by the webhook; do not set.' },
      ),
    ),
  },
  { description: 'A container to recreate.' },
);
/** A container to recreate. Every field is documented (generated from the schema descriptions). */
export type ContainerRecreateRequestContainer = G.ContainerRecreateRequestContainer;

/** TypeBox schema of {@link ContainerRecreateRequestStrategy}: How the containers are recreated. */
export const ContainerRecreateRequestStrategySchema = Struct(
  {
    failurePolicy: Type.Optional(
      StringEnum(CRRFailurePolicyValues, {
        description: 'Fail (default): stop at the first failure; Ignore: go on with the next container.',
      }),
    ),
    orderedRecreate: Type.Optional(Type.Boolean({ description: 'Recreate one by one, waiting until the previous one is running.' })),
    forceRecreate: Type.Optional(Type.Boolean({ description: 'Recreate even if the container is not running or was restarted since.' })),
    terminationGracePeriodSeconds: Type.Optional(Int64({ minimum: 0, description: "Grace period for the kill (default: the pod's)." })),
    unreadyGracePeriodSeconds: Type.Optional(
      Int64({ minimum: 0, description: 'Mark the pod not-ready, wait this long, then preStop and kill.' }),
    ),
    minStartedSeconds: Type.Optional(Int32({ minimum: 0, description: 'Seconds the new container must run to count as succeeded.' })),
  },
  { description: 'How the containers are recreated.' },
);
/** How the containers are recreated. Every field is documented (generated from the schema descriptions). */
export type ContainerRecreateRequestStrategy = G.ContainerRecreateRequestStrategy;

/** TypeBox schema of {@link ContainerRecreateRequestSpec}: Desired state of a ContainerRecreateRequest (immutable). */
export const ContainerRecreateRequestSpecSchema = Struct(
  {
    podName: Type.String({ minLength: 1, description: 'Name of the pod (same namespace).' }),
    containers: Type.Array(ContainerRecreateRequestContainerSchema, { minItems: 1, description: 'Containers to recreate.' }),
    strategy: Type.Optional(ContainerRecreateRequestStrategySchema),
    activeDeadlineSeconds: Type.Optional(Int64({ minimum: 3, description: 'Give up after this many seconds (≥ 3).' })),
    ttlSecondsAfterFinished: Type.Optional(Int32({ minimum: 0, description: 'Delete the request this many seconds after it completed.' })),
  },
  { description: 'Desired state of a ContainerRecreateRequest (immutable).' },
);
/** Desired state of a ContainerRecreateRequest (immutable). Every field is documented (generated from the schema descriptions). */
export type ContainerRecreateRequestSpec = G.ContainerRecreateRequestSpec;

/** TypeBox schema of {@link ContainerRecreateRequestContainerState}: Recreate state of one container. */
export const ContainerRecreateRequestContainerStateSchema = Struct(
  {
    name: Type.String({ description: 'Container name.' }),
    phase: StringEnum(CRRPhaseValues, { description: 'Phase of this container.' }),
    message: Type.Optional(Type.String({ description: 'Details, e.g. why recreating failed.' })),
    isKilled: Type.Optional(Type.Boolean({ description: 'Whether the daemon has killed it.' })),
  },
  { description: 'Recreate state of one container.' },
);

/** TypeBox schema of {@link ContainerRecreateRequestStatus}: Observed state of a ContainerRecreateRequest. */
export const ContainerRecreateRequestStatusSchema = Struct(
  {
    phase: StringEnum(CRRPhaseValues, { description: 'Phase of the request; it ends Completed.' }),
    completionTime: Type.Optional(DateTime({ description: 'When the request completed.' })),
    message: Type.Optional(Type.String({ description: 'Details.' })),
    containerRecreateStates: Type.Optional(
      Type.Array(ContainerRecreateRequestContainerStateSchema, { description: 'Per-container states.' }),
    ),
  },
  { description: 'Observed state of a ContainerRecreateRequest.' },
);
/** Observed state of a ContainerRecreateRequest. Every field is documented (generated from the schema descriptions). */
export type ContainerRecreateRequestStatus = G.ContainerRecreateRequestStatus;

/** TypeBox schema of {@link ContainerRecreateRequest}: ContainerRecreateRequest recreates containers of a running pod in place. */
export const ContainerRecreateRequestSchema = KindObject(
  'ContainerRecreateRequest',
  ContainerRecreateRequestSpecSchema,
  ContainerRecreateRequestStatusSchema,
  'ContainerRecreateRequest recreates containers of a running pod in place.',
);
/** A ContainerRecreateRequest object. */
export type ContainerRecreateRequest = G.ContainerRecreateRequest;
/** See the generated interface for field docs. */
export type ContainerRecreateRequestContainerState = G.ContainerRecreateRequestContainerState;
/** See the generated interface for field docs. */
export type ProbeHandler = G.ProbeHandler;

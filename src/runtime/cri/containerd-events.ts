/**
 * containerd's own event stream (`containerd.services.events.v1.Events/Subscribe`), served on the same socket as
 * CRI when the runtime is containerd. We read one topic of it: `/tasks/exit`, which containerd publishes the moment
 * the shim reaps a container's process. That is earlier than anything CRI says: containerd's CRI plugin reports
 * CONTAINER_EXITED (in ListContainers, ContainerStatus and its own GetContainerEvents) only after it has handled that
 * same event and deleted the task (a `runc delete`), tens to hundreds of milliseconds later on a loaded node. A
 * latency-critical listener (the node-local sidecar terminator, exit priority) acts on the exit as soon as it is
 * published, with the exit code and time containerd recorded, which are the ones CRI reports later.
 *
 * Only the fields we read are declared (protobuf ignores the rest); field numbers are those of containerd's
 * `api/services/events/v1/events.proto`, `api/types/event.proto` (Envelope, moved there in 1.7 with the same wire
 * form) and `api/events/task.proto` (TaskExit). Any and Timestamp are declared locally with the well-known types'
 * field numbers, so the payload stays bytes we decode ourselves. Runtimes that are not containerd (CRI-O) answer the
 * call UNIMPLEMENTED; callers then use CRI.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

const CONTAINERD_EVENTS_SUBSET = /* proto */ `
syntax = "proto3";
package containerd.services.events.v1;

service Events {
  rpc Subscribe(SubscribeRequest) returns (stream Envelope) {}
}
message SubscribeRequest { repeated string filters = 1; }
message Timestamp { int64 seconds = 1; int32 nanos = 2; }
message Any { string type_url = 1; bytes value = 2; }
message Envelope {
  Timestamp timestamp = 1;
  string namespace = 2;
  string topic = 3;
  Any event = 4;
}
message TaskExit {
  string container_id = 1;
  string id = 2;
  uint32 pid = 3;
  uint32 exit_status = 4;
  Timestamp exited_at = 5;
}
`;

/** The containerd namespace of every CRI container. */
export const CRI_CONTAINERD_NAMESPACE = 'k8s.io';
export const TASK_EXIT_TOPIC = '/tasks/exit';

interface Timestamp {
  readonly seconds?: string | number;
  readonly nanos?: number;
}

export interface ContainerdEnvelope {
  readonly timestamp?: Timestamp;
  readonly namespace: string;
  readonly topic: string;
  readonly event?: { readonly typeUrl: string; readonly value: Uint8Array };
}

/** A container's main process exited (containerd's TaskExit of the init process). */
export interface TaskExit {
  readonly containerId: string;
  readonly exitCode: number;
  /** Epoch ms, as containerd records it (CRI's `finishedAt` later says the same). */
  readonly exitedAtMs: number;
}

type StreamCtor = new (
  address: string,
  creds: grpc.ChannelCredentials,
  options: grpc.ChannelOptions,
) => grpc.Client & { Subscribe(req: unknown): grpc.ClientReadableStream<ContainerdEnvelope> };

let loaded: { ctor: StreamCtor; taskExit: protobuf.Type } | undefined;

function load(): { ctor: StreamCtor; taskExit: protobuf.Type } {
  if (loaded) return loaded;
  const root = protobuf.parse(CONTAINERD_EVENTS_SUBSET, { keepCase: false }).root;
  const def = protoLoader.fromJSON(root.toJSON(), { keepCase: false, longs: String, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { containerd: { services: { events: { v1: { Events: StreamCtor } } } } };
  loaded = { ctor: pkg.containerd.services.events.v1.Events, taskExit: root.lookupType('containerd.services.events.v1.TaskExit') };
  return loaded;
}

const tsToMs = (t: Timestamp | undefined): number => (t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0);

/**
 * The exit of a container's own process from one envelope, else undefined (another topic or namespace, an exec's
 * exit, a payload that does not decode). Pure.
 */
export function taskExitOf(envelope: ContainerdEnvelope): TaskExit | undefined {
  if (envelope.topic !== TASK_EXIT_TOPIC || envelope.namespace !== CRI_CONTAINERD_NAMESPACE || !envelope.event?.value) return undefined;
  let e: { containerId?: string; id?: string; exitStatus?: number; exitedAt?: Timestamp };
  try {
    e = load().taskExit.toObject(load().taskExit.decode(envelope.event.value), { longs: String, defaults: true }) as typeof e;
  } catch {
    return undefined;
  }
  // An exec inside the container (a preStop exec hook) exits with its own id; only the init process ends the container.
  if (!e.containerId || (e.id && e.id !== e.containerId)) return undefined;
  return { containerId: e.containerId, exitCode: e.exitStatus ?? 0, exitedAtMs: tsToMs(e.exitedAt) || tsToMs(envelope.timestamp) };
}

/** Encodes a TaskExit envelope as containerd sends it (for table tests and in-process fakes). */
export function taskExitEnvelope(exit: { containerId: string; id?: string; exitCode: number; exitedAtMs: number }): ContainerdEnvelope {
  const t = load().taskExit;
  const ts = { seconds: String(Math.floor(exit.exitedAtMs / 1000)), nanos: (exit.exitedAtMs % 1000) * 1e6 };
  const value = t
    .encode(t.fromObject({ containerId: exit.containerId, id: exit.id ?? exit.containerId, exitStatus: exit.exitCode, exitedAt: ts }))
    .finish();
  return {
    timestamp: ts,
    namespace: CRI_CONTAINERD_NAMESPACE,
    topic: TASK_EXIT_TOPIC,
    event: { typeUrl: 'containerd.events.TaskExit', value },
  };
}

/** A client of containerd's event service on a CRI socket. */
export class ContainerdEvents {
  private readonly client: InstanceType<StreamCtor>;

  /** `target` is the CRI client's gRPC target (`unix:///…`): the same channel options give the same socket. */
  constructor(target: string, options: grpc.ChannelOptions = {}) {
    this.client = new (load().ctor)(target, grpc.credentials.createInsecure(), options);
  }

  /** CRI containers' task exits as containerd publishes them; lasts until `cancel()` or the runtime ends it. */
  taskExits(): grpc.ClientReadableStream<ContainerdEnvelope> {
    return this.client.Subscribe({ filters: [`namespace=="${CRI_CONTAINERD_NAMESPACE}",topic=="${TASK_EXIT_TOPIC}"`] });
  }

  close(): void {
    this.client.close();
  }
}

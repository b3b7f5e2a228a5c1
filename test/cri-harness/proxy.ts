import * as grpc from '@grpc/grpc-js';
import { join } from 'node:path';
import { criServiceDefinitions, criTarget } from '../../src/runtime/cri/client.js';

export interface RecordedCall {
  readonly service: 'runtime' | 'image';
  readonly method: string;
  /** The request as decoded by the proxy (camelCase fields, like CriClient's types). */
  readonly request: Record<string, unknown>;
}

/**
 * A recording CRI proxy on its own socket: forwards every call of our subset to the real runtime
 * and keeps each request. Used where the runtime keeps no trace of a field (PullImage's
 * sandbox_config), so a test can still prove the daemon sent it. Only unary calls exist in the
 * subset, so forwarding is a plain call-and-relay; a client's cancellation is relayed too.
 */
export class RecordingCriProxy {
  readonly calls: RecordedCall[] = [];
  private readonly active = new Map<string, number>();
  private readonly peaks = new Map<string, number>();
  private readonly server = new grpc.Server();
  private readonly upstream: { runtime: grpc.Client; image: grpc.Client };
  readonly socket: string;

  private constructor(dir: string, upstreamSocket: string) {
    this.socket = join(dir, 'cri-proxy.sock');
    const defs = criServiceDefinitions();
    const creds = grpc.credentials.createInsecure();
    const makeClient = grpc.makeGenericClientConstructor({}, 'proxy');
    this.upstream = {
      runtime: new makeClient(criTarget(upstreamSocket), creds),
      image: new makeClient(criTarget(upstreamSocket), creds),
    };
    for (const service of ['runtime', 'image'] as const) {
      const def = defs[service];
      const impl: grpc.UntypedServiceImplementation = {};
      for (const [method, md] of Object.entries(def)) {
        impl[method] = (call: grpc.ServerUnaryCall<Record<string, unknown>, unknown>, callback: grpc.sendUnaryData<unknown>) => {
          this.calls.push({ service, method, request: call.request });
          const now = (this.active.get(method) ?? 0) + 1;
          this.active.set(method, now);
          this.peaks.set(method, Math.max(now, this.peaks.get(method) ?? 0));
          // A call is in flight until the runtime answers or the client gives up, whichever is
          // first: counting it until the proxy's own copy of the deadline fired would charge the
          // client for a call it had already cancelled (that copy is re-based on when the proxy read
          // the headers, so it runs late by however long the event loop took to get to them).
          let ended = false;
          const end = () => {
            if (ended) return;
            ended = true;
            this.active.set(method, (this.active.get(method) ?? 1) - 1);
          };
          const deadline = call.getDeadline();
          const upstreamCall = this.upstream[service].makeUnaryRequest(
            md.path,
            md.requestSerialize,
            md.responseDeserialize,
            call.request,
            new grpc.Metadata(),
            { deadline: deadline === Infinity ? Date.now() + 600_000 : deadline },
            (err, res) => {
              end();
              if (err) callback(err);
              else callback(null, res);
            },
          );
          // Relay the client's cancellation (a deadline it hit, or an explicit cancel) so the
          // runtime stops the call, as it would with the client connected directly. grpc-js also
          // emits this after a normal finish; then the cancel is a no-op.
          const relayCancel = () => {
            end();
            upstreamCall.cancel();
          };
          call.on('cancelled', relayCancel);
          if (call.cancelled) relayCancel();
        };
      }
      this.server.addService(def, impl);
    }
  }

  static async start(dir: string, upstreamSocket: string): Promise<RecordingCriProxy> {
    const proxy = new RecordingCriProxy(dir, upstreamSocket);
    await new Promise<void>((resolve, reject) =>
      proxy.server.bindAsync(criTarget(proxy.socket), grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    return proxy;
  }

  /** Most calls of `method` in flight at once since the last reset (concurrency bounds). */
  peakConcurrency(method: string): number {
    return this.peaks.get(method) ?? 0;
  }

  /** Calls of `method` in flight now (started, neither answered nor cancelled by the client). */
  inFlight(method: string): number {
    return this.active.get(method) ?? 0;
  }

  resetPeaks(): void {
    this.peaks.clear();
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
    this.upstream.runtime.close();
    this.upstream.image.close();
  }
}

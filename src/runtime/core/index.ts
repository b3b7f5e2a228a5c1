/**
 * Runtime core, shared by the controller-manager (`cdk8s-kruise controller`) and the node daemon
 * (`cdk8s-kruise daemon`). Everything a controller or webhook needs is exported here.
 *
 * - KubeClient: the only path to the API server; records (group, resource, verb) of every call and checks
 *   it against src/contracts/permissions.ts; explicit patch types (PatchStrategy).
 * - Informer / InformerFactory: shared list+watch caches with transforms, resync, 410 relist, backoff;
 *   watches on dead connections noticed by their server deadline (watch-liveness.ts).
 * - WorkQueue / runWorkers: keyed, de-duplicating, rate-limited queue; ControllerRunner adds metrics.
 * - LeaderElector: coordination.k8s.io/v1 Lease election.
 * - HealthServer (/healthz, /readyz, /metrics), RuntimeMetrics (prom-client), createLogger (pino).
 * - AdmissionServer + CertManager: HTTPS AdmissionReview v1 with self-managed, rotating certificates.
 * - installShutdown: SIGTERM/SIGINT handling.
 * - meta: RFC 3339 times, owner references and owner lookups (`rfc3339`, `kruiseOwnerReference`, `controllerOf`).
 */
export * from './client.js';
export * from '../../contracts/resources.js';
export * from './types.js';
export * from './meta.js';
export * from './backoff.js';
export * from './informer.js';
export * from './watch-liveness.js';
export * from './queue.js';
export * from './controller.js';
export * from './leader.js';
export * from './health.js';
export * from './metrics.js';
export * from './log.js';
export * from './events.js';
export { parseFeatureGates, BUNDLED_RUNTIME_GATES } from '../../contracts/features.js';
export * from './shutdown.js';
export * from './webhook/server.js';
export * from './webhook/certs.js';
export * from './webhook/certmanager.js';
export * from './cache-plan.js';
export * from './options.js';

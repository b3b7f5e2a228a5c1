import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeClient } from './client.js';
import { EVENTS, apiVersionOf, type ResourceType } from './resources.js';
import type { KubeObject } from './types.js';

/** Writes core/v1 Events about the objects the runtime acts on (fire and forget; failures are logged). */
export class EventRecorder {
  constructor(
    private readonly client: KubeClient,
    private readonly component: string,
    private readonly logger: Logger,
  ) {}

  emit(type: ResourceType, obj: KubeObject, eventType: 'Normal' | 'Warning', reason: string, message: string): void {
    const md = obj.metadata;
    const namespace = md.namespace ?? 'default';
    const now = new Date().toISOString();
    const ev: KubeObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${md.name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: {
        apiVersion: apiVersionOf(type),
        kind: type.kind,
        name: md.name,
        namespace: md.namespace,
        uid: md.uid,
        resourceVersion: md.resourceVersion,
      },
      reason,
      message,
      type: eventType,
      source: { component: this.component },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: this.component,
      reportingInstance: process.env.POD_NAME ?? 'local',
    };
    this.client.create(EVENTS, ev, namespace).catch((err: unknown) => {
      this.logger.warn({ reason, object: `${namespace}/${md.name}`, err: (err as Error).message }, 'event not recorded');
    });
  }
}

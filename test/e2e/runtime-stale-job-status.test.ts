// A stale cache must not rewrite a finished job's status, on the real kube-apiserver. The fault: the controller's
// informer has not yet seen the job's final status (a watch that lags, a relist in progress), so its reconcile
// computes the job again from an older copy. Here that older copy is handed to the real reconciler of ImagePullJob
// (its informer replaced by the stale object, everything else real): without a precondition it would complete the
// job a second time, moving completionTime (restarting its TTL) and emitting a second event. Written over the
// resourceVersion it was computed from, the write gets 409 Conflict and the final status stays as it was; the next
// reconcile, from a cache that has the write, leaves it as it is.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { KINDS } from '../../src/api/registry.js';
import { FINALIZER_DELETION_PROTECTION, IMAGE_PULL_JOBS } from '../../src/contracts/index.js';
import { isConflict, KubeClient, PatchStrategy } from '../../src/runtime/core/client.js';
import type { ControllerContext } from '../../src/runtime/core/controller.js';
import { EventRecorder } from '../../src/runtime/core/events.js';
import type { Informer } from '../../src/runtime/core/informer.js';
import { createLogger } from '../../src/runtime/core/log.js';
import { ImagePullJobReconciler, type ImagePullJobObject } from '../../src/runtime/controllers/imagepulljob/reconcile.js';
import { adminKubeConfig, createNamespace } from '../harness/index.js';
import { installCrds } from './runtime/support.js';

const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

beforeAll(async () => {
  await installCrds(KINDS.filter((k) => k.kind === 'ImagePullJob' || k.kind === 'NodeImage'));
});

describe('a finished ImagePullJob and a stale cache', () => {
  it('the reconcile from the stale copy is refused (409) and the final status stays; the next one keeps it', async () => {
    const client = new KubeClient(adminKubeConfig());
    const ns = await createNamespace(`stale-status-${randomBytes(2).toString('hex')}`);
    const name = 'warm';
    await client.create(
      IMAGE_PULL_JOBS,
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ImagePullJob',
        metadata: { name, namespace: ns, finalizers: [FINALIZER_DELETION_PROTECTION] },
        spec: {
          image: 'nginx:1.27',
          selector: { names: ['no-such-node'] },
          completionPolicy: { type: 'Always', activeDeadlineSeconds: 1 },
        },
      },
      ns,
    );
    const status = (s: Record<string, unknown>) =>
      client.patch(IMAGE_PULL_JOBS, name, ns, { status: s }, PatchStrategy.MergePatch, { subresource: 'status' });
    // What the informer still holds: the job started, not finished.
    const stale = (await status({ startTime: ago(120), desired: 0, active: 0, succeeded: 0, failed: 0 })) as ImagePullJobObject;
    // The final status, written since (by this controller's earlier reconcile).
    const final = { completionTime: ago(60), message: 'job exceeds activeDeadlineSeconds (1s); 0/0 node(s) pulled' };
    await status(final);

    const logger = createLogger({ level: 'silent' });
    const ctx = { client, logger, events: new EventRecorder(client, 'e2e', logger) } as unknown as ControllerContext;
    let cached: ImagePullJobObject = stale;
    const jobs = { get: () => cached } as unknown as Informer<ImagePullJobObject>;
    const nodeImages = { list: () => [] } as unknown as Informer<never>;
    const reconciler = new ImagePullJobReconciler(ctx, jobs, nodeImages, 'kruise-daemon-config');

    const refused = await reconciler.reconcile(`${ns}/${name}`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConflict(refused), String(refused)).toBe(true);
    const after = (await client.get<ImagePullJobObject>(IMAGE_PULL_JOBS, name, ns)).status!;
    expect(after).toMatchObject(final);

    cached = await client.get<ImagePullJobObject>(IMAGE_PULL_JOBS, name, ns);
    await reconciler.reconcile(`${ns}/${name}`);
    expect((await client.get<ImagePullJobObject>(IMAGE_PULL_JOBS, name, ns)).status).toMatchObject(final);
    await client.patch(IMAGE_PULL_JOBS, name, ns, { metadata: { finalizers: null } }, PatchStrategy.MergePatch);
    await client.delete(IMAGE_PULL_JOBS, name, ns);
  });
});

// Cache plans: every field a registered controller declares it reads survives its resource's cache
// transform; what nobody declared is dropped; undeclared resources are refused.
import { describe, expect, it } from 'vitest';
import { LEASES, NODES, PODS, SECRETS } from '../../../../src/contracts/index.js';
import { CachePlan, type CacheRead } from '../../../../src/runtime/core/cache-plan.js';
import { cachePlanOf } from '../../../../src/runtime/core/controller.js';
import type { KubeObject } from '../../../../src/runtime/core/types.js';
import { DAEMON_CONTROLLERS } from '../../../../src/runtime/daemon/registry.js';
import { CONTROLLERS, WEBHOOKS } from '../../../../src/runtime/manager/registry.js';

/** Every value a field path (with element selectors) reaches in `obj`. */
function valuesAt(obj: unknown, path: string): unknown[] {
  let current: unknown[] = [obj];
  for (const segment of path.split('.')) {
    const m = /^([^[]+)(?:\[(?:(\w+)(\^=|=)([^\]]*))?\])?$/.exec(segment)!;
    const [, name, key, op, value] = m;
    const next: unknown[] = [];
    for (const c of current) {
      const v = (c as Record<string, unknown> | undefined)?.[name!];
      if (v === undefined) continue;
      if (!segment.includes('[')) {
        next.push(v);
        continue;
      }
      for (const el of v as unknown[]) {
        const field = (el as Record<string, unknown>)[key ?? ''];
        if (!key || (op === '=' ? field === value : typeof field === 'string' && field.startsWith(value!))) next.push(el);
      }
    }
    current = next;
  }
  return current;
}

/** A pod with far more than any controller reads, including secrets-bearing env and managedFields. */
function fullPod(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      namespace: 'ns',
      uid: 'u',
      resourceVersion: '7',
      labels: { app: 'web' },
      annotations: { note: 'x'.repeat(1000) },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'ju' }],
      managedFields: [{ manager: 'kubectl' }],
      deletionTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: {
      nodeName: 'n1',
      restartPolicy: 'Never',
      serviceAccountName: 'sa',
      containers: [
        { name: 'main', image: 'busybox', env: [{ name: 'PASSWORD', value: 'hunter2' }], resources: { limits: { cpu: '1' } } },
        {
          name: 'sidecar',
          image: 'envoy',
          env: [
            { name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' },
            { name: 'OTHER', value: 'y' },
          ],
        },
      ],
    },
    status: {
      phase: 'Running',
      podIP: '10.0.0.1',
      hostIP: '192.168.0.1',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: 't' }],
      containerStatuses: [
        { name: 'main', containerID: 'containerd://a', restartCount: 0, state: { running: {} }, image: 'busybox', ready: true },
      ],
    },
  } as unknown as KubeObject;
}

function fullNode(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', uid: 'nu', resourceVersion: '3', labels: { type: 'virtual-kubelet' }, annotations: { big: 'y'.repeat(1000) } },
    status: {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'MemoryPressure', status: 'False' },
      ],
      images: [{ names: ['a'] }],
    },
  } as unknown as KubeObject;
}

const SAMPLES: Record<string, () => KubeObject> = { '/pods': fullPod, '/nodes': fullNode };

function checkPlanKeepsDeclaredFields(reads: readonly CacheRead[]): void {
  const plan = new CachePlan(reads);
  for (const read of reads) {
    const sample = SAMPLES[`${read.resource.group}/${read.resource.resource}`];
    if (!sample) continue;
    const original = sample();
    const cached = plan.for(read.resource).transform(original);
    for (const field of read.fields) {
      if (field === '*') continue;
      expect(valuesAt(cached, field), `${read.resource.resource}: ${field}`).toEqual(valuesAt(original, field));
    }
  }
}

describe('cache plans of the registered controllers', () => {
  it('the manager: pods and nodes keep every field a controller or webhook declared it reads', () => {
    const reads = [...CONTROLLERS, ...WEBHOOKS].flatMap((d) => d.reads);
    expect(reads.some((r) => r.resource === PODS)).toBe(true);
    checkPlanKeepsDeclaredFields(reads);
  });

  it('the daemon: every declared read has a cache', () => {
    const plan = cachePlanOf(DAEMON_CONTROLLERS);
    for (const d of DAEMON_CONTROLLERS) for (const r of d.reads) expect(plan.for(r.resource).fields.length).toBeGreaterThan(0);
  });

  it('the manager pod cache drops what no controller reads (memory budget), including other env values', () => {
    const cached = cachePlanOf([...CONTROLLERS, ...WEBHOOKS])
      .for(PODS)
      .transform(fullPod()) as unknown as Record<string, any>;
    expect(cached.metadata.managedFields).toBeUndefined();
    // Pod labels and annotations are read by the SidecarSet controller (selector, injected-list, hashes), the
    // CloneSet controller (lifecycle and in-place state) and the sidecar terminator (exit priorities of a CRR's sidecars).
    expect(cached.metadata.annotations).toEqual(fullPod().metadata!.annotations);
    expect(cached.spec.serviceAccountName).toBeUndefined();
    // Env names stay (the CloneSet controller hashes env from metadata by name), values never do.
    expect(cached.spec.containers[0]).toEqual({ name: 'main', image: 'busybox', env: [{ name: 'PASSWORD' }] });
    expect(cached.spec.containers[1].env).toEqual([{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }, { name: 'OTHER' }]);
    expect(cached.status.hostIP).toBeUndefined();
    expect(cached.status.conditions).toEqual([{ type: 'Ready', status: 'True', lastTransitionTime: 't' }]);
    expect(cached.metadata).toMatchObject({
      name: 'p',
      namespace: 'ns',
      uid: 'u',
      resourceVersion: '7',
      deletionTimestamp: '2026-01-01T00:00:00Z',
    });
  });

  it('a new reader of pod fields gets them, and the existing readers keep their fields: the union', () => {
    const base = [...CONTROLLERS, ...WEBHOOKS].flatMap((d) => d.reads);
    const without = new CachePlan(base).for(PODS).transform(fullPod()) as unknown as Record<string, any>;
    expect(without.spec.serviceAccountName).toBeUndefined();
    expect(without.status.hostIP).toBeUndefined();
    const withMore = [...base, { resource: PODS, fields: ['spec.serviceAccountName', 'status.hostIP'] }];
    const cached = new CachePlan(withMore).for(PODS).transform(fullPod()) as unknown as Record<string, any>;
    expect(cached.spec.serviceAccountName).toBe('sa');
    expect(cached.status.hostIP).toBe('192.168.0.1');
    expect(cached.metadata.labels).toEqual({ app: 'web' });
    expect(cached.metadata.ownerReferences).toHaveLength(1);
    checkPlanKeepsDeclaredFields(withMore);
  });

  it('a reader that needs the whole object wins over slimmer readers (less managedFields)', () => {
    const cached = new CachePlan([
      { resource: NODES, fields: ['metadata.labels'] },
      { resource: NODES, fields: ['*'] },
    ])
      .for(NODES)
      .transform(fullNode());
    expect(cached).toEqual(fullNode());
  });

  it('keeps no credential of the Secrets the manager watches (ImagePullJob source pull secrets): identity and type only', () => {
    const plan = cachePlanOf([...CONTROLLERS, ...WEBHOOKS]);
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'pull', namespace: 'team', uid: 'u1', resourceVersion: '7', annotations: { note: 'x' } },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from('{"auths":{}}').toString('base64') },
    } as unknown as KubeObject;
    expect(plan.for(SECRETS).transform(secret)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'pull', namespace: 'team', uid: 'u1', resourceVersion: '7' },
      type: 'kubernetes.io/dockerconfigjson',
    });
  });

  it('refuses loudly: an undeclared resource, an invalid path, two versions of one resource', () => {
    const plan = cachePlanOf([...CONTROLLERS, ...WEBHOOKS]);
    expect(() => plan.for(LEASES)).toThrow(/nothing declared that it reads coordination.k8s.io\/leases; add a CacheRead/);
    expect(() => new CachePlan([{ resource: PODS, fields: ['spec.containers[name'] }])).toThrow(/invalid field path segment/);
    expect(
      () =>
        new CachePlan([
          { resource: PODS, fields: ['*'] },
          { resource: { ...PODS, version: 'v2' }, fields: ['*'] },
        ]),
    ).toThrow(/versions v1 and v2/);
  });
});

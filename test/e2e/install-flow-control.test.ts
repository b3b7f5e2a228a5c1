// The API Priority and Fairness objects dist/ installs: the real kube-apiserver accepts them, and classifies the
// manager's Lease calls into their own level and the rest of the runtime's traffic into another, both out of the
// built-in workload-low level every other ServiceAccount's requests fall into. The classification is read from the
// response headers the API server sets on every request (X-Kubernetes-PF-FlowSchema-UID / -PriorityLevel-UID).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, rawRequest, serverSideApply, serviceAccountUser, type RawResponse } from '../harness/index.js';
import { eventually } from './runtime/support.js';

const distDir = fileURLToPath(new URL('../../dist/', import.meta.url));
const objects = readdirSync(distDir, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
  .flatMap((e) => parseAllDocuments(readFileSync(path.join(e.parentPath, e.name), 'utf8')).map((d) => d.toJS() as KubernetesObject))
  .filter((o): o is KubernetesObject => o !== null && typeof o === 'object');
const flowObjects = objects.filter((o) => o.apiVersion === 'flowcontrol.apiserver.k8s.io/v1');
// What the requests need: the runtime namespace, its ServiceAccounts and their RBAC.
const setup = objects.filter((o) =>
  ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind!),
);
const FLOW = '/apis/flowcontrol.apiserver.k8s.io/v1';
const lease = `apf-probe-${process.pid}`;
const runtimeNs = 'kruise-system';
const manager = serviceAccountUser(runtimeNs, 'kruise-manager');
const daemon = serviceAccountUser(runtimeNs, 'kruise-daemon');

async function uidOf(kind: 'flowschemas' | 'prioritylevelconfigurations', name: string): Promise<string> {
  const res = await rawRequest('GET', `${FLOW}/${kind}/${name}`);
  expect(res.status, res.body).toBe(200);
  return (JSON.parse(res.body) as { metadata: { uid: string } }).metadata.uid;
}

function as(user: string, method: string, p: string, body?: unknown): Promise<RawResponse> {
  return rawRequest(method, p, {
    body: body === undefined ? undefined : JSON.stringify(body),
    contentType: 'application/json',
    headers: { 'Impersonate-User': user },
  });
}

const classified = (res: RawResponse) => ({
  flowSchema: res.headers['x-kubernetes-pf-flowschema-uid'],
  priorityLevel: res.headers['x-kubernetes-pf-prioritylevel-uid'],
});

beforeAll(async () => {
  for (const o of [...setup, ...flowObjects]) await serverSideApply(o, { fieldManager: 'cdk8s-kruise-e2e-apf' });
});

afterAll(async () => {
  await kubectl(['delete', 'lease', '-n', runtimeNs, lease, '--ignore-not-found', '--wait=false']);
  await kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], {
    input: flowObjects.map((o) => `---\n${stringify(o)}`).join(''),
  });
});

describe('API Priority and Fairness from dist/', () => {
  it('ships two priority levels and two flow schemas, accepted by the API server and not dangling', async () => {
    expect(flowObjects.map((o) => `${o.kind}/${o.metadata!.name}`).sort()).toEqual([
      'FlowSchema/kruise-leader-election',
      'FlowSchema/kruise-runtime',
      'PriorityLevelConfiguration/kruise-leader-election',
      'PriorityLevelConfiguration/kruise-runtime',
    ]);
    for (const name of ['kruise-leader-election', 'kruise-runtime']) {
      await eventually(
        async () => {
          const fs = JSON.parse((await rawRequest('GET', `${FLOW}/flowschemas/${name}`)).body) as {
            status?: { conditions?: { type: string; status: string }[] };
          };
          return fs.status?.conditions?.some((c) => c.type === 'Dangling' && c.status === 'False');
        },
        20_000,
        `FlowSchema ${name} bound to its priority level`,
      );
    }
  });

  it("classifies the manager's Lease calls as kruise-leader-election, the rest of the runtime's requests as kruise-runtime, others elsewhere", async () => {
    const leaderFlow = await uidOf('flowschemas', 'kruise-leader-election');
    const leaderLevel = await uidOf('prioritylevelconfigurations', 'kruise-leader-election');
    const runtimeFlow = await uidOf('flowschemas', 'kruise-runtime');
    const runtimeLevel = await uidOf('prioritylevelconfigurations', 'kruise-runtime');
    const workloadLow = await uidOf('prioritylevelconfigurations', 'workload-low');

    const leases = `/apis/coordination.k8s.io/v1/namespaces/${runtimeNs}/leases`;
    // The API server picks new schemas up asynchronously: wait for the first classification.
    const created = await eventually(
      async () => {
        const res = await as(manager, 'POST', leases, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: lease },
          spec: { holderIdentity: 'probe', leaseDurationSeconds: 15 },
        });
        return classified(res).flowSchema === leaderFlow ? res : undefined;
      },
      20_000,
      "the manager's Lease create classified as kruise-leader-election",
    );
    expect(created.status, created.body).toBe(201);
    expect(classified(created).priorityLevel).toBe(leaderLevel);
    const got = await as(manager, 'GET', `${leases}/${lease}`);
    expect(got.status).toBe(200);
    const renewed = await as(manager, 'PUT', `${leases}/${lease}`, {
      ...(JSON.parse(got.body) as object),
      spec: { holderIdentity: 'probe', leaseDurationSeconds: 15, renewTime: new Date().toISOString().replace('Z', '000Z') },
    });
    expect(renewed.status, renewed.body).toBe(200);
    for (const res of [got, renewed]) expect(classified(res)).toEqual({ flowSchema: leaderFlow, priorityLevel: leaderLevel });

    // Controller traffic of the manager and the daemon: its own level, never workload-low.
    for (const [user, p] of [
      [manager, '/api/v1/pods?limit=1'],
      [manager, '/apis/apps.kruise.io/v1alpha1/clonesets?limit=1'],
      [daemon, '/api/v1/pods?limit=1'],
    ] as const) {
      const res = await as(user, 'GET', p);
      expect(classified(res), `${user} GET ${p}`).toEqual({ flowSchema: runtimeFlow, priorityLevel: runtimeLevel });
    }
    // Another ServiceAccount stays where the built-in schemas put it.
    const other = await as(serviceAccountUser('default', 'default'), 'GET', '/api/v1/namespaces/default/pods?limit=1');
    expect(classified(other).priorityLevel).toBe(workloadLow);
  });
});

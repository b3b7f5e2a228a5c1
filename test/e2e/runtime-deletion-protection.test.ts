// Deletion protection on the real kube-apiserver: the install's own deletion-protection entries (object selector,
// rules, failurePolicy) registered and dialled at a running manager with gate ResourcesDeletionProtection on. Each
// protected kind is refused or let through per mode as upstream does; with the manager stopped, unlabelled objects
// are still deleted at once while labelled ones stay.
import { AdmissionregistrationV1Api, type V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELETION_PROTECTION_PATH, VALIDATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { validatingWebhookConfiguration } from '../../src/install/webhooks.js';
import { adminKubeConfig, createNamespace, kubectl } from '../harness/index.js';
import {
  eventually,
  freePort,
  loopbackWebhookArgs,
  podWebhookInstallSpec,
  startController,
  type ControllerProcess,
} from './runtime/support.js';

type Obj = Record<string, any>;

const LABEL = 'policy.kruise.io/delete-protection';
const REFUSED = /forbidden by ResourcesProtectionDeletion/;

let adm: AdmissionregistrationV1Api;
let runtimeNs: string;
let ns: string;
let ctl: ControllerProcess;

async function apply(o: Obj): Promise<void> {
  await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=dp-e2e', '-f', '-'], { input: JSON.stringify(o) });
}

/** `kubectl delete` of one object: undefined when deleted, else the API server's refusal. */
async function del(resource: string, name: string, namespace?: string, extra: string[] = []): Promise<string | undefined> {
  try {
    await kubectl(['delete', resource, name, '--wait=false', ...(namespace ? ['-n', namespace] : []), ...extra]);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

async function label(resource: string, name: string, value: string | null, namespace?: string): Promise<void> {
  await kubectl([
    'label',
    '--overwrite',
    resource,
    name,
    value === null ? `${LABEL}-` : `${LABEL}=${value}`,
    ...(namespace ? ['-n', namespace] : []),
  ]);
}

async function scale(resource: string, name: string, replicas: number): Promise<void> {
  await kubectl(['patch', resource, name, '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { replicas } })]);
}

const podTemplate = (app: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
});

function workload(kind: string, name: string, value: string, replicas: number): Obj {
  const apiVersion = kind === 'CloneSet' ? 'apps.kruise.io/v1alpha1' : 'apps/v1';
  return {
    apiVersion,
    kind,
    metadata: { name, namespace: ns, labels: { [LABEL]: value } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: podTemplate(name),
      ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
    },
  };
}

beforeAll(async () => {
  adm = adminKubeConfig().makeApiClient(AdmissionregistrationV1Api);
  runtimeNs = await createNamespace('kruise-dp');
  ns = await createNamespace('dp');
  const port = await freePort();
  // The install's entries, as KruiseRuntime renders them for an app that protects an object, dialled at this process.
  const rendered = validatingWebhookConfiguration({
    ...podWebhookInstallSpec(runtimeNs),
    webhook: { timeoutSeconds: 10, pods: false, deletionProtection: true, certificates: { mode: 'self' } },
  }) as unknown as V1ValidatingWebhookConfiguration;
  const hooks = rendered.webhooks!.filter((w) => w.clientConfig.service?.path === DELETION_PROTECTION_PATH);
  expect(hooks).toHaveLength(8);
  for (const w of hooks) w.clientConfig = { url: `https://127.0.0.1:${port}${DELETION_PROTECTION_PATH}` };
  await adm.deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await adm.createValidatingWebhookConfiguration({ body: { metadata: { name: VALIDATING_WEBHOOK_CONFIGURATION }, webhooks: hooks } });
  ctl = await startController(runtimeNs, [
    ...loopbackWebhookArgs(port),
    '--feature-gates=ResourcesDeletionProtection=true,DeletionProtectionForCRDCascadingGate=true',
  ]);
  await ctl.waitReady();
  // The manager fills the caBundle: until then the API server cannot call it.
  await eventually(async () => {
    const live = await adm.readValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION });
    return (live.webhooks ?? []).every((w) => w.clientConfig.caBundle) || undefined;
  });
}, 120_000);

afterAll(async () => {
  await ctl?.stop();
  await adm?.deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
});

describe('deletion protection, manager serving', () => {
  it.each(['Deployment', 'ReplicaSet', 'StatefulSet', 'CloneSet'])(
    '%s: Always refused; Cascading refused while replicas > 0 and let through at 0',
    async (kind) => {
      const name = `w-${kind.toLowerCase()}`;
      const resource = kind === 'CloneSet' ? 'clonesets.apps.kruise.io' : `${kind.toLowerCase()}s.apps`;
      await apply(workload(kind, name, 'Always', 0));
      expect(await del(resource, name, ns)).toMatch(
        /forbidden by ResourcesProtectionDeletion for policy.kruise.io\/delete-protection=Always/,
      );
      await label(resource, name, 'Cascading', ns);
      await scale(resource, name, 2);
      expect(await del(resource, name, ns)).toMatch(/delete-protection=Cascading and replicas 2>0/);
      await scale(resource, name, 0);
      expect(await del(resource, name, ns)).toBeUndefined();
    },
    60_000,
  );

  it.each([
    ['Service', 'services', { spec: { ports: [{ port: 80 }], selector: { app: 'x' } } }, 'v1'],
    [
      'Ingress',
      'ingresses.networking.k8s.io',
      { spec: { defaultBackend: { service: { name: 'x', port: { number: 80 } } } } },
      'networking.k8s.io/v1',
    ],
  ] as const)('%s: Always refused until the label is removed; Cascading is not honoured', async (kind, resource, body, apiVersion) => {
    const name = `o-${kind.toLowerCase()}`;
    await apply({ apiVersion, kind, metadata: { name, namespace: ns, labels: { [LABEL]: 'Always' } }, ...body });
    expect(await del(resource, name, ns)).toMatch(REFUSED);
    await label(resource, name, null, ns);
    expect(await del(resource, name, ns)).toBeUndefined();
    // Cascading on a kind that takes only Always: the object is not even sent to the runtime.
    await apply({ apiVersion, kind, metadata: { name: `${name}-c`, namespace: ns, labels: { [LABEL]: 'Cascading' } }, ...body });
    expect(await del(resource, `${name}-c`, ns)).toBeUndefined();
  });

  it('Namespace: Always refused; Cascading refused while a pod is active or a claim Bound, let through once empty', async () => {
    const target = await createNamespace('dp-ns', { [LABEL]: 'Always' });
    expect(await del('namespace', target)).toMatch(/delete-protection=Always/);
    await label('namespace', target, 'Cascading');
    // No kubelet here: the pod stays Pending, which is active.
    await apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: target }, spec: podTemplate('p').spec });
    expect(await del('namespace', target)).toMatch(/delete-protection=Cascading and active pods 1>0/);
    await kubectl(['delete', 'pod', 'p', '-n', target, '--grace-period=0', '--force']);
    await apply({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: target },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } }, storageClassName: 'none' },
    });
    // No volume controller here: the claim is marked Bound through its status, as the controller would.
    await kubectl(['patch', 'pvc', 'data', '-n', target, '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Bound"}}']);
    expect(await del('namespace', target)).toMatch(/delete-protection=Cascading and "Bound" status pvc 1>0/);
    await kubectl(['patch', 'pvc', 'data', '-n', target, '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Pending"}}']);
    expect(await del('namespace', target)).toBeUndefined();
  });

  it('CRD: Always refused; Cascading counts the custom resources of a kind the manager lists', async () => {
    const crd = 'broadcastjobs.apps.kruise.io';
    // The shared CRD of our kind: every delete below is a server-side dry run, reviewed by the webhook but never done.
    const dry = ['--dry-run=server'];
    await apply({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'BroadcastJob',
      metadata: { name: 'held', namespace: ns },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'app', image: 'busybox:1.36' }] } }, paused: true },
    });
    try {
      await label('crd', crd, 'Always');
      expect(await del('crd', crd, undefined, dry)).toMatch(/delete-protection=Always/);
      await label('crd', crd, 'Cascading');
      expect(await del('crd', crd, undefined, dry)).toMatch(/delete-protection=Cascading and active CRs \d+>0/);
    } finally {
      await label('crd', crd, null);
      await kubectl(['delete', 'broadcastjob', 'held', '-n', ns, '--wait=false']);
    }
  });

  it('CRD of a kind the manager may not list: Cascading refuses every deletion, saying why', async () => {
    const name = `widgets${process.pid}.dp.example.com`;
    await apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name, labels: { [LABEL]: 'Cascading' } },
      spec: {
        group: 'dp.example.com',
        scope: 'Namespaced',
        names: { plural: `widgets${process.pid}`, kind: `Widget${process.pid}` },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    });
    expect(await del('crd', name)).toMatch(/forbidden by ResourcesProtectionDeletion: cannot count the widgets\d+.dp.example.com objects/);
    await label('crd', name, null);
    expect(await del('crd', name)).toBeUndefined();
  });
});

describe('deletion protection, manager stopped', () => {
  it('unlabelled objects are deleted at once; labelled ones stay', async () => {
    await apply(workload('Deployment', 'kept', 'Always', 0));
    const plain = workload('Deployment', 'plain', 'Always', 0);
    delete plain.metadata.labels;
    await apply(plain);
    await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'plain', namespace: ns }, spec: { ports: [{ port: 80 }] } });
    const loose = await createNamespace('dp-loose');
    await ctl.stop();
    // Every entry is Fail: these deletions succeed only because the object selector never sends them.
    expect(await del('deployment', 'plain', ns)).toBeUndefined();
    expect(await del('service', 'plain', ns)).toBeUndefined();
    expect(await del('namespace', loose)).toBeUndefined();
    expect(await del('deployment', 'kept', ns)).toMatch(/failed calling webhook/);
  }, 60_000);
});

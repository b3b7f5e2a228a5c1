// SidecarSet resourcesPolicy on the real kube-apiserver: the install's pod webhook and SidecarSet validating webhook
// entries registered and dialled at a running manager. Pods of two and
// three containers get the injected sidecar's requests and limits computed by sum and by max, with a container
// without a limit making the limit unlimited; a pod no container of which matches the regex is refused, and so are
// SidecarSets whose policy upstream's webhook refuses (invalid expression, policy beside resources, bad regex).
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type V1MutatingWebhookConfiguration,
  type V1Pod,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SidecarSetDefinition } from '../../src/api/registry.js';
import {
  MUTATING_WEBHOOK_CONFIGURATION,
  POD_MUTATING_PATH,
  VALIDATING_WEBHOOK_CONFIGURATION,
  kindWebhookPath,
} from '../../src/contracts/index.js';
import { mutatingWebhookConfiguration, validatingWebhookConfiguration } from '../../src/install/webhooks.js';
import { adminKubeConfig, createNamespace } from '../harness/index.js';
import {
  eventually,
  freePort,
  loopbackWebhookArgs,
  podWebhookInstallSpec,
  startController,
  type ControllerProcess,
} from './runtime/support.js';

type Obj = Record<string, any>;

// The install's configuration names: the manager's permissions name them (as other e2e files, registered anew here).
const MUTATING = MUTATING_WEBHOOK_CONFIGURATION;
const VALIDATING = VALIDATING_WEBHOOK_CONFIGURATION;
const sidecarsets = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets' };

let core: CoreV1Api;
let custom: CustomObjectsApi;
let adm: AdmissionregistrationV1Api;
let ctl: ControllerProcess;
let ns: string;

const res = (cpu: string | undefined, memory: string) => ({
  limits: { ...(cpu ? { cpu } : {}), memory },
  requests: { cpu: cpu ?? '100m', memory },
});

function set(name: string, app: string, policy: Obj, extra: Obj = {}): Obj {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: `${name}-${process.pid}` },
    spec: {
      namespace: ns,
      selector: { matchLabels: { app } },
      containers: [{ name: 'envoy', image: 'envoy:1', resourcesPolicy: policy, ...extra }],
    },
  };
}

async function createPod(app: string, containers: Obj[]): Promise<V1Pod> {
  return core.createNamespacedPod({
    namespace: ns,
    body: { metadata: { generateName: `${app}-`, labels: { app } }, spec: { containers } } as unknown as V1Pod,
  });
}

const envoy = (p: V1Pod) => p.spec!.containers.find((c) => c.name === 'envoy');

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return String((err as { body?: string }).body ?? err);
  }
  throw new Error('expected a refusal');
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  adm = kc.makeApiClient(AdmissionregistrationV1Api);
  const runtimeNs = await createNamespace('kruise-scres');
  ns = await createNamespace('scres');
  const port = await freePort();
  const spec = podWebhookInstallSpec(runtimeNs);
  const mutating = mutatingWebhookConfiguration(spec) as unknown as V1MutatingWebhookConfiguration;
  const podHook = mutating.webhooks!.find((w) => w.clientConfig.service?.path === POD_MUTATING_PATH)!;
  podHook.clientConfig = { url: `https://127.0.0.1:${port}${POD_MUTATING_PATH}` };
  // Only this file's namespace: other files' pods never wait on this manager.
  podHook.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': ns } };
  const path = kindWebhookPath('validate', SidecarSetDefinition);
  const validating = validatingWebhookConfiguration(spec) as unknown as V1ValidatingWebhookConfiguration;
  const setHook = validating.webhooks!.find((w) => w.clientConfig.service?.path === path)!;
  setHook.clientConfig = { url: `https://127.0.0.1:${port}${path}` };
  await adm.deleteMutatingWebhookConfiguration({ name: MUTATING }).catch(() => undefined);
  await adm.deleteValidatingWebhookConfiguration({ name: VALIDATING }).catch(() => undefined);
  await adm.createMutatingWebhookConfiguration({ body: { metadata: { name: MUTATING }, webhooks: [podHook] } });
  await adm.createValidatingWebhookConfiguration({ body: { metadata: { name: VALIDATING }, webhooks: [setHook] } });
  ctl = await startController(runtimeNs, loopbackWebhookArgs(port, MUTATING, VALIDATING));
  await ctl.waitReady();
  await eventually(async () => {
    const m = await adm.readMutatingWebhookConfiguration({ name: MUTATING });
    const v = await adm.readValidatingWebhookConfiguration({ name: VALIDATING });
    return (m.webhooks?.[0]?.clientConfig.caBundle && v.webhooks?.[0]?.clientConfig.caBundle) || undefined;
  });
  const exprs = { limits: { cpu: 'cpu*50%', memory: 'max(memory*25%, 64Mi)' }, requests: { cpu: 'cpu/4', memory: '32Mi' } };
  await custom.createClusterCustomObject({
    ...sidecarsets,
    body: set('sum', 'sum', { targetContainersMode: 'sum', resourcesExpr: exprs }),
  });
  await custom.createClusterCustomObject({
    ...sidecarsets,
    body: set('max', 'max', { targetContainersMode: 'max', targetContainersNameRegex: '^app', resourcesExpr: exprs }),
  });
  // The manager's cache sees both sets before a pod is created.
  await eventually(async () => {
    const p = await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { generateName: 'probe-', labels: { app: 'max' } }, spec: { containers: [{ name: 'app', image: 'x' }] } },
      dryRun: 'All',
    });
    return envoy(p) || undefined;
  });
}, 120_000);

afterAll(async () => {
  await ctl?.stop();
  await adm?.deleteMutatingWebhookConfiguration({ name: MUTATING }).catch(() => undefined);
  await adm?.deleteValidatingWebhookConfiguration({ name: VALIDATING }).catch(() => undefined);
  for (const name of ['sum', 'max']) {
    await custom?.deleteClusterCustomObject({ ...sidecarsets, name: `${name}-${process.pid}` }).catch(() => undefined);
  }
});

describe('SidecarSet resourcesPolicy, manager serving', () => {
  it('sum: three containers add up; the sidecar gets the computed requests and limits', async () => {
    const p = await createPod('sum', [
      { name: 'app', image: 'app:1', resources: res('1', '512Mi') },
      { name: 'worker', image: 'app:1', resources: res('500m', '256Mi') },
      { name: 'cache', image: 'app:1', resources: res('250m', '256Mi') },
    ]);
    expect(envoy(p)!.resources).toEqual({ limits: { cpu: '875m', memory: '256Mi' }, requests: { cpu: '437m', memory: '32Mi' } });
  });

  it('max: the largest of the containers the regex matches; a target without a CPU limit leaves the CPU limit unset', async () => {
    const p = await createPod('max', [
      { name: 'app-main', image: 'app:1', resources: res('2', '1Gi') },
      { name: 'app-helper', image: 'app:1', resources: res('500m', '128Mi') },
      { name: 'metrics', image: 'app:1', resources: res('8', '8Gi') },
    ]);
    expect(envoy(p)!.resources).toEqual({ limits: { cpu: '1', memory: '256Mi' }, requests: { cpu: '500m', memory: '32Mi' } });
    const unlimited = await createPod('max', [
      { name: 'app-main', image: 'app:1', resources: res(undefined, '128Mi') },
      { name: 'app-helper', image: 'app:1', resources: res('500m', '128Mi') },
    ]);
    expect(envoy(unlimited)!.resources).toEqual({ limits: { memory: '64Mi' }, requests: { cpu: '125m', memory: '32Mi' } });
  });

  it('a pod no container of which matches the regex is refused', async () => {
    const message = await refusal(createPod('max', [{ name: 'web', image: 'app:1', resources: res('1', '1Gi') }]));
    expect(message).toContain('resourcesPolicy of container envoy: no containers match the regex pattern \\"^app\\"');
  });

  it.each([
    [
      'an invalid expression',
      { targetContainersMode: 'sum', resourcesExpr: { limits: { cpu: 'max(cpu*50%)' } } },
      {},
      /resourcesExpr.limits.cpu: invalid expression: max\(\) takes exactly 2 arguments, got 1/,
    ],
    [
      'resources beside the policy',
      { targetContainersMode: 'sum', resourcesExpr: { limits: { cpu: 'cpu' } } },
      { resources: { limits: { cpu: '1' } } },
      /resourcesPolicy and resources cannot be configured together/,
    ],
    [
      'an invalid regex',
      { targetContainersMode: 'sum', targetContainersNameRegex: '(', resourcesExpr: { requests: { cpu: 'cpu' } } },
      {},
      /targetContainersNameRegex: invalid regex pattern/,
    ],
    ['no expressions', { targetContainersMode: 'sum', resourcesExpr: {} }, {}, /at least one of limits or requests must be configured/],
  ])('a SidecarSet with %s is refused', async (_what, policy, extra, message) => {
    const body = set('bad', 'bad', policy, extra);
    expect(await refusal(custom.createClusterCustomObject({ ...sidecarsets, body }))).toMatch(message);
  });
});

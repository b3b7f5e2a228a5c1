// The runtime's admission webhooks registered with the real kube-apiserver: self-managed certificates
// (Secret + caBundle patched by the runtime), CRR defaulting, kind validation with the policy engine,
// and certificate rotation under continuous admission traffic.
import { X509Certificate } from 'node:crypto';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type V1MutatingWebhookConfiguration,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerRecreateRequestDefinition, SidecarSetDefinition } from '../../src/api/registry.js';
import { kindWebhookPath } from '../../src/install/webhooks.js';
import { MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { pemCertificates } from '../../src/runtime/core/webhook/certs.js';
import { adminKubeConfig, bindPod, createNamespace, createNode, kubectl, setPodStatus } from '../harness/index.js';
import {
  accessCoverage,
  accessLogs,
  startController,
  type ControllerProcess,
  eventually,
  freePort,
  installCrds,
} from './runtime/support.js';

let core: CoreV1Api;
let adm: AdmissionregistrationV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
let port: number;
let ctl: ControllerProcess;
const id = `${process.pid}`;
// The runtime's RBAC names these two configurations (resourceNames), so the test uses the real names.
const mutatingName = MUTATING_WEBHOOK_CONFIGURATION;
const validatingName = VALIDATING_WEBHOOK_CONFIGURATION;
const E2E_LABEL = 'cdk8s-kruise.test/runtime-webhook';
const node = `node-webhook-${id}`;
// Short-lived serving certificates so the runtime rotates them during the test.
const CERT_VALIDITY_S = 24;
const RENEW_BEFORE_S = 16;

function url(path: string): string {
  return `https://127.0.0.1:${port}${path}`;
}

async function registerConfigs(): Promise<void> {
  const nsSelector = { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [ns] }] };
  const crrRule = {
    apiGroups: ['apps.kruise.io'],
    apiVersions: ['v1alpha1'],
    resources: ['containerrecreaterequests'],
    scope: 'Namespaced',
  };
  const mutating: V1MutatingWebhookConfiguration = {
    metadata: { name: mutatingName },
    webhooks: [
      {
        name: 'mcontainerrecreaterequest.kb.io',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
        namespaceSelector: nsSelector,
        // CREATE and UPDATE, as the install registers it: this one webhook also validates CRRs (no validating one).
        rules: [{ ...crrRule, operations: ['CREATE', 'UPDATE'] }],
        // No caBundle: the runtime fills it.
        clientConfig: { url: url(kindWebhookPath('mutate', ContainerRecreateRequestDefinition)) },
      },
    ],
  };
  const validating: V1ValidatingWebhookConfiguration = {
    metadata: { name: validatingName },
    webhooks: [
      {
        name: 'vsidecarset.kb.io',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
        // Cluster-scoped kind: only objects labelled for this test reach the webhook.
        objectSelector: { matchLabels: { [E2E_LABEL]: id } },
        rules: [
          {
            apiGroups: ['apps.kruise.io'],
            apiVersions: ['v1alpha1'],
            resources: ['sidecarsets'],
            operations: ['CREATE', 'UPDATE'],
            scope: 'Cluster',
          },
        ],
        clientConfig: { url: url(kindWebhookPath('validate', SidecarSetDefinition)) },
      },
    ],
  };
  // Another e2e file may have applied the install manifests' configurations: replace them.
  await adm.deleteMutatingWebhookConfiguration({ name: mutatingName }).catch(() => undefined);
  await adm.deleteValidatingWebhookConfiguration({ name: validatingName }).catch(() => undefined);
  await adm.createMutatingWebhookConfiguration({ body: mutating });
  await adm.createValidatingWebhookConfiguration({ body: validating });
}

function crrBody(name: string, podName: string, containers = [{ name: 'envoy' }]) {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: { name },
    spec: { podName, containers },
  };
}

async function createCrr(body: object, dryRun = false): Promise<Record<string, any>> {
  return (await custom.createNamespacedCustomObject({
    group: 'apps.kruise.io',
    version: 'v1alpha1',
    namespace: ns,
    plural: 'containerrecreaterequests',
    body,
    ...(dryRun ? { dryRun: 'All' } : {}),
  })) as Record<string, any>;
}

async function secretCerts(): Promise<{ ca: string; cert: string }> {
  const s = await core.readNamespacedSecret({ name: 'kruise-webhook-certs', namespace: runtimeNs });
  const dec = (k: string) => Buffer.from(s.data![k]!, 'base64').toString();
  return { ca: dec('ca-cert.pem'), cert: dec('cert.pem') };
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  adm = kc.makeApiClient(AdmissionregistrationV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  await installCrds([ContainerRecreateRequestDefinition, SidecarSetDefinition]);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('crr');
  await createNode(node);
  port = await freePort();
  await registerConfigs();
  ctl = await startController(runtimeNs, [
    '--webhook-port',
    String(port),
    '--webhook-host',
    '127.0.0.1',
    '--webhook-cert-host',
    '127.0.0.1',
    '--mutating-webhook-configuration',
    mutatingName,
    '--validating-webhook-configuration',
    validatingName,
    '--webhook-cert-validity',
    `${CERT_VALIDITY_S}s`,
    '--webhook-cert-renew-before',
    `${RENEW_BEFORE_S}s`,
    '--webhook-cert-check-interval',
    '2s',
  ]);
  await ctl.waitReady();
});

afterAll(async () => {
  await adm.deleteMutatingWebhookConfiguration({ name: mutatingName }).catch(() => undefined);
  await adm.deleteValidatingWebhookConfiguration({ name: validatingName }).catch(() => undefined);
  await ctl?.stop('SIGTERM');
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  console.log(`[runtime permissions] ${report.calls} API calls recorded; declared but unused here: ${report.unused.join(', ') || 'none'}`);
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('runtime webhooks on the real API server', () => {
  it('issues its certificates into the Secret and patches the CA into both configurations', async () => {
    const { ca, cert } = await secretCerts();
    expect(new X509Certificate(cert).checkIssued(new X509Certificate(ca))).toBe(true);
    expect(new X509Certificate(cert).checkIP('127.0.0.1')).toBeDefined();
    const m = await adm.readMutatingWebhookConfiguration({ name: mutatingName });
    const v = await adm.readValidatingWebhookConfiguration({ name: validatingName });
    for (const w of [...m.webhooks!, ...v.webhooks!]) {
      expect(pemCertificates(Buffer.from(w.clientConfig.caBundle!, 'base64').toString())).toEqual(pemCertificates(ca));
    }
  });

  it("a CRR created with kubectl gets the pod-uid / node-name / active labels, the containers' statusContext and the pod's grace period", async () => {
    const pod = await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          terminationGracePeriodSeconds: 45,
          containers: [
            { name: 'app', image: 'a:1' },
            { name: 'envoy', image: 'e:1' },
          ],
        },
      },
    });
    await bindPod(pod, node);
    await setPodStatus(pod, {
      phase: 'Running',
      containerStatuses: [
        { name: 'app', state: { running: {} } },
        { name: 'envoy', state: { running: {} }, restartCount: 3 },
      ],
    });
    // The harness's fake kubelet reports no containerIDs; a real kubelet does.
    await core.patchNamespacedPodStatus({
      name: 'web',
      namespace: ns,
      body: [
        { op: 'add', path: '/status/containerStatuses/0/containerID', value: 'containerd://app-1' },
        { op: 'add', path: '/status/containerStatuses/1/containerID', value: 'containerd://envoy-1' },
      ],
    });
    // The webhook may be picked up asynchronously by the apiserver: retry until our labels appear.
    await eventually(
      async () => (await createCrr(crrBody('probe', 'web'), true)).metadata?.labels?.['crr.apps.kruise.io/active'] === 'true',
      20_000,
      'mutating webhook live',
    );
    await kubectl(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(crrBody('restart-envoy', 'web')) });
    const crr = (await custom.getNamespacedCustomObject({
      group: 'apps.kruise.io',
      version: 'v1alpha1',
      namespace: ns,
      plural: 'containerrecreaterequests',
      name: 'restart-envoy',
    })) as Record<string, any>;
    expect(crr.metadata.labels).toMatchObject({
      'crr.apps.kruise.io/pod-uid': pod.metadata!.uid,
      'crr.apps.kruise.io/node-name': node,
      'crr.apps.kruise.io/active': 'true',
    });
    expect(crr.spec.containers).toEqual([{ name: 'envoy', statusContext: { containerID: 'containerd://envoy-1', restartCount: 3 } }]);
    expect(crr.spec.strategy).toEqual({ failurePolicy: 'Fail', terminationGracePeriodSeconds: 45 });

    // UPDATE goes through the same (mutating) webhook: the spec and the node-name label are immutable, other
    // labels are not.
    await expect(
      kubectl(['patch', 'crr', 'restart-envoy', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { podName: 'other' } })]),
    ).rejects.toThrow(/spec: Forbidden: the spec of a ContainerRecreateRequest is immutable/);
    await expect(
      kubectl([
        'patch',
        'crr',
        'restart-envoy',
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ metadata: { labels: { 'crr.apps.kruise.io/node-name': 'elsewhere' } } }),
      ]),
    ).rejects.toThrow(/metadata.labels\[crr.apps.kruise.io\/node-name\]: Forbidden: immutable/);
    await kubectl(['label', 'crr', 'restart-envoy', '-n', ns, 'team=edge']);
  });

  it('refuses a CRR for a pod that is not active, and for unknown containers, with a clear message', async () => {
    const done = await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'done' }, spec: { containers: [{ name: 'envoy', image: 'e:1' }] } },
    });
    await bindPod(done, node);
    await setPodStatus(done, { phase: 'Succeeded', containerStatuses: [{ name: 'envoy', state: { terminated: { exitCode: 0 } } }] });
    await expect(kubectl(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(crrBody('for-done', 'done')) })).rejects.toThrow(
      /pod done is not active \(phase Succeeded\)/,
    );
    await expect(
      kubectl(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(crrBody('bad-container', 'web', [{ name: 'nope' }])) }),
    ).rejects.toThrow(/spec.containers\[0\].name: Not found: pod web has no container "nope"/);
  });

  it("an invalid SidecarSet is refused with the policy validator's message", async () => {
    const bad = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: `bad-${id}`, labels: { [E2E_LABEL]: id } },
      spec: { containers: [{ name: 'logtail', image: 'busybox' }] },
    };
    const err = await kubectl(['create', '-f', '-'], { input: JSON.stringify(bad) }).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(err).toMatch(/admission webhook "vsidecarset.kb.io" denied the request/);
    expect(err).toMatch(/SidecarSet bad-\d+ is invalid: KRUISE-[A-Z]+-\d+ \/spec/);
    expect(err).toMatch(/\(fix: /);
  });

  it('rotates its serving certificate under continuous admission traffic without a failed request', async () => {
    const first = (await secretCerts()).cert;
    const pod = 'web';
    let stop = false;
    let sent = 0;
    const failures: string[] = [];
    const load = (async () => {
      while (!stop) {
        try {
          const r = await createCrr(crrBody(`rot-${sent}`, pod), true);
          if (r.metadata?.labels?.['crr.apps.kruise.io/active'] !== 'true') failures.push(`request ${sent}: not mutated`);
        } catch (err) {
          failures.push(`request ${sent}: ${(err as Error).message.slice(0, 200)}`);
        }
        sent++;
      }
    })();
    // Serving certs live 24 s and are renewed 16 s before expiry: two rotations within ~20 s.
    const rotationsBefore = ctl.logs.filter((l) => l.msg === 'webhook serving certificate installed').length;
    await eventually(
      async () => ctl.logs.filter((l) => l.msg === 'webhook serving certificate installed').length >= rotationsBefore + 2,
      40_000,
      'two certificate rotations',
    );
    await new Promise((r) => setTimeout(r, 1_000));
    stop = true;
    await load;
    const last = await secretCerts();
    expect(last.cert).not.toBe(first);
    console.log(`[webhook rotation] ${sent} admission requests across 2 rotations, ${failures.length} failed`);
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(50);
    expect(await ctl.metric('webhook_requests_total', { webhook: 'mcontainerrecreaterequest' })).toBeGreaterThan(sent - 1);
  });
});

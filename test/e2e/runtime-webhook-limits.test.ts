// A tenant's object refused by our webhook for its size or its field count gets a clear 4xx from the API server
// (413 RequestEntityTooLarge, naming the limit), not an opaque `500 InternalError: failed calling webhook`: the
// runtime answers every review it can identify with an AdmissionReview denial, even one whose body it will not
// parse. Real kube-apiserver, the runtime's SidecarSet validating webhook registered with failurePolicy Fail.
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SidecarSetDefinition } from '../../src/api/registry.js';
import { MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { kindWebhookPath } from '../../src/install/webhooks.js';
import { adminKubeConfig, createNamespace, rawRequest } from '../harness/index.js';
import { eventually, freePort, loopbackWebhookArgs, startController, type ControllerProcess } from './runtime/support.js';

const id = `${process.pid}`;
const LABEL = 'cdk8s-kruise.test/webhook-limits';
const SIDECARSETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
let ctl: ControllerProcess | undefined;
const adm = () => adminKubeConfig().makeApiClient(AdmissionregistrationV1Api);

function sidecarSet(name: string, env: { name: string; value: string }[]): object {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, labels: { [LABEL]: id } },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'proxy', image: 'envoy:1', env }],
    },
  };
}

const create = (body: object) =>
  rawRequest('POST', SIDECARSETS, { body: JSON.stringify(body), contentType: 'application/json' }).then((r) => ({
    status: r.status,
    json: JSON.parse(r.body) as { code?: number; reason?: string; message?: string },
  }));

beforeAll(async () => {
  const runtimeNs = await createNamespace('webhook-limits');
  const port = await freePort();
  // The runtime's RBAC names its two configurations; another e2e file may have left them: replace them.
  await adm()
    .deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION })
    .catch(() => undefined);
  await adm()
    .deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION })
    .catch(() => undefined);
  await adm().createMutatingWebhookConfiguration({ body: { metadata: { name: MUTATING_WEBHOOK_CONFIGURATION }, webhooks: [] } });
  await adm().createValidatingWebhookConfiguration({
    body: {
      metadata: { name: VALIDATING_WEBHOOK_CONFIGURATION },
      webhooks: [
        {
          name: 'vsidecarset.kb.io',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          objectSelector: { matchLabels: { [LABEL]: id } },
          rules: [
            { apiGroups: ['apps.kruise.io'], apiVersions: ['v1alpha1'], resources: ['sidecarsets'], operations: ['CREATE', 'UPDATE'] },
          ],
          clientConfig: { url: `https://127.0.0.1:${port}${kindWebhookPath('validate', SidecarSetDefinition)}` },
        },
      ],
    },
  });
  ctl = await startController(runtimeNs, loopbackWebhookArgs(port));
  await ctl.waitReady();
  // The API server picks the configuration up asynchronously; a small set passes once the webhook answers.
  await eventually(
    async () => (await create(sidecarSet(`probe-${id}`, [{ name: 'A', value: 'b' }]))).status === 201,
    30_000,
    'the webhook admits a small SidecarSet',
  );
});

afterAll(async () => {
  await ctl?.stop('SIGTERM');
  await adm()
    .deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION })
    .catch(() => undefined);
  await adm()
    .deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION })
    .catch(() => undefined);
});

describe("a tenant's oversized object gets a clear 4xx from our webhook", () => {
  it('more fields than a review may carry: 413 naming the field limit', async () => {
    const env = Array.from({ length: 6_000 }, (_, i) => ({ name: `V${i}`, value: 'x' }));
    const res = await create(sidecarSet(`fields-${id}`, env));
    console.log(`[webhook limits] fields: HTTP ${res.status} ${res.json.reason}: ${res.json.message?.slice(0, 200)}`);
    expect(res.status).toBe(413);
    expect(res.json.reason).toBe('RequestEntityTooLarge');
    expect(res.json.message).toMatch(/more than 10000 fields/);
  });

  it('a review larger than the webhook reads (3 MiB): 413 naming the byte limit', async () => {
    // 600 KiB of '<' is 600 KiB in the request and 3.5 MiB in the review (the API server writes it \u003c).
    const res = await create(sidecarSet(`bytes-${id}`, [{ name: 'BIG', value: '<'.repeat(600 * 1024) }]));
    console.log(`[webhook limits] bytes: HTTP ${res.status} ${res.json.reason}: ${res.json.message?.slice(0, 200)}`);
    expect(res.status).toBe(413);
    expect(res.json.reason).toBe('RequestEntityTooLarge');
    expect(res.json.message).toMatch(/larger than the 3145728-byte limit of this webhook/);
  });
});

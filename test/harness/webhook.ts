// Serves an admission webhook from the test process on https://127.0.0.1:<random> with its own CA,
// registers it with clientConfig.url + caBundle, and waits until the apiserver actually calls it.
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { AdmissionregistrationV1Api, CoreV1Api, type V1LabelSelector, type V1RuleWithOperations } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminKubeConfig } from './cluster.js';
import { createCertificateAuthority } from './pki.js';

/** The `request` of an admission.k8s.io/v1 AdmissionReview (fields tests usually need). */
export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: { group: string; version: string; kind: string };
  readonly resource: { group: string; version: string; resource: string };
  readonly subResource?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  readonly userInfo: { username?: string; groups?: string[] };
  readonly object?: Record<string, unknown>;
  readonly oldObject?: Record<string, unknown>;
  readonly dryRun?: boolean;
}

/** What the handler decides. */
export interface AdmissionDecision {
  /** Admit (true) or reject (false). */
  readonly allowed: boolean;
  /** Rejection message shown to the client. */
  readonly message?: string;
  /** HTTP-style status code of a rejection; defaults to 403. */
  readonly code?: number;
  /** RFC 6902 JSON Patch applied to the object (mutating webhooks only). */
  readonly patch?: readonly { op: string; path: string; value?: unknown; from?: string }[];
  /** Warnings returned to the client. */
  readonly warnings?: readonly string[];
}

export interface WebhookOptions {
  /** Mutating or validating admission. */
  readonly type: 'mutating' | 'validating';
  /** Which requests are sent to the webhook. */
  readonly rules: readonly V1RuleWithOperations[];
  /** Decides each request. Exceptions become a 500 (and so a failure per failurePolicy). */
  readonly handler: (request: AdmissionRequest) => AdmissionDecision | Promise<AdmissionDecision>;
  /** Limits the namespaces; defaults to all but kube-system. */
  readonly namespaceSelector?: V1LabelSelector;
  /** Limits the objects by label. */
  readonly objectSelector?: V1LabelSelector;
  /** What the apiserver does when the webhook fails; defaults to Fail. */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /** Per-call timeout; defaults to 10. */
  readonly timeoutSeconds?: number;
}

export interface RegisteredWebhook {
  /** Name of the Mutating/ValidatingWebhookConfiguration. */
  readonly configurationName: string;
  /** Every (non-canary) request the webhook received, in order. */
  readonly requests: readonly AdmissionRequest[];
  /** Deletes the configuration and stops the server. */
  close(): Promise<void>;
}

const CANARY_LABEL = 'cdk8s-kruise.test/webhook-canary';

/**
 * Registers a webhook and resolves once the apiserver calls it. Readiness is proven with a canary:
 * the same configuration carries a second webhook for dry-run ConfigMap creates labelled with a
 * random id; the apiserver loads configurations whole, so once the canary is called, so is ours.
 */
export async function registerWebhook(options: WebhookOptions): Promise<RegisteredWebhook> {
  const id = randomBytes(4).toString('hex');
  const configurationName = `test-webhook-${id}`;
  const requests: AdmissionRequest[] = [];
  let canaryCalled = false;

  const ca = await createCertificateAuthority('test-webhook-ca');
  const serving = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'], usage: 'server' });
  const server = https.createServer({ key: serving.key, cert: serving.cert }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      void (async () => {
        const review = JSON.parse(body) as { request: AdmissionRequest };
        const request = review.request;
        let decision: AdmissionDecision;
        if (req.url?.startsWith('/canary')) {
          canaryCalled = true;
          decision = { allowed: true };
        } else {
          requests.push(request);
          decision = await options.handler(request);
        }
        const response = {
          uid: request.uid,
          allowed: decision.allowed,
          ...(decision.allowed ? {} : { status: { code: decision.code ?? 403, message: decision.message ?? 'denied by test webhook' } }),
          ...(decision.patch ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(decision.patch)).toString('base64') } : {}),
          ...(decision.warnings ? { warnings: decision.warnings } : {}),
        };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      })().catch((error: Error) => {
        res.writeHead(500).end(error.message);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const caBundle = Buffer.from(ca.cert).toString('base64');

  const common = { admissionReviewVersions: ['v1'], sideEffects: 'None' };
  const webhooks = [
    {
      ...common,
      name: `main.${configurationName}.test`,
      clientConfig: { url: `https://127.0.0.1:${port}/webhook`, caBundle },
      rules: [...options.rules],
      failurePolicy: options.failurePolicy ?? 'Fail',
      timeoutSeconds: options.timeoutSeconds ?? 10,
      namespaceSelector: options.namespaceSelector ?? {
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }],
      },
      ...(options.objectSelector ? { objectSelector: options.objectSelector } : {}),
    },
    {
      ...common,
      name: `canary.${configurationName}.test`,
      clientConfig: { url: `https://127.0.0.1:${port}/canary`, caBundle },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'], scope: 'Namespaced' }],
      failurePolicy: 'Ignore',
      objectSelector: { matchLabels: { [CANARY_LABEL]: id } },
    },
  ];
  const kc = adminKubeConfig();
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const metadata = { name: configurationName };
  if (options.type === 'mutating') {
    await admission.createMutatingWebhookConfiguration({ body: { metadata, webhooks } });
  } else {
    await admission.createValidatingWebhookConfiguration({ body: { metadata, webhooks } });
  }

  const close = async () => {
    const name = configurationName;
    await (
      options.type === 'mutating'
        ? admission.deleteMutatingWebhookConfiguration({ name })
        : admission.deleteValidatingWebhookConfiguration({ name })
    ).catch(() => undefined);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  const core = kc.makeApiClient(CoreV1Api);
  const deadline = Date.now() + 30_000;
  while (!canaryCalled) {
    if (Date.now() > deadline) {
      await close();
      throw new Error(`webhook ${configurationName} was not called by the apiserver within 30s`);
    }
    await core.createNamespacedConfigMap({
      namespace: 'default',
      dryRun: 'All',
      body: { metadata: { generateName: 'webhook-canary-', labels: { [CANARY_LABEL]: id } } },
    });
    if (!canaryCalled) await sleep(100);
  }
  return { configurationName, requests, close };
}

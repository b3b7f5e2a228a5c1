import {
  BUNDLED_ADMISSION,
  DELETION_PROTECTED_KINDS,
  ANNOTATION_RELATED_PUB,
  DELETION_PROTECTION_PATH,
  LABEL_DELETE_PROTECTION,
  POD_VALIDATING_PATH,
  UNAVAILABLE_POD_LABEL_PREFIX,
  modesOf,
  kindWebhookPath,
  LABEL_NAMESPACE_NAME,
  LABEL_POD_WEBHOOK_OPT_OUT,
  MUTATING_WEBHOOK_CONFIGURATION,
  POD_WEBHOOK_OPT_OUT_VALUE,
  POD_MUTATING_PATH,
  VALIDATING_WEBHOOK_CONFIGURATION,
  WEBHOOK_CERT_SECRET,
} from '../contracts/index.js';
import type { KubeObject } from './types.js';
import { serviceAccountUsername } from './admission-policies.js';
import { bundledWebhookPaths } from './runtime-support.js';
import { podNeedsWebhookExpression } from './pod-webhook-needs.js';

export { kindWebhookPath, POD_MUTATING_PATH };
import { MANAGER_SELECTOR, NAMES, meta, type InstallSpec, type ServedKind } from './spec.js';

/** Annotation cert-manager's CA injector reads to fill caBundle from a Certificate. */
export const CERT_MANAGER_INJECT_ANNOTATION = 'cert-manager.io/inject-ca-from';

/** Namespaces no webhook of ours may ever block: the system and our own (else the runtime could not restart). */
export function protectedNamespaces(spec: InstallSpec): string[] {
  return [...new Set(['kube-system', spec.namespace])].sort();
}

function namespaceSelector(spec: InstallSpec): Record<string, unknown> {
  return { matchExpressions: [{ key: LABEL_NAMESPACE_NAME, operator: 'NotIn', values: protectedNamespaces(spec) }] };
}

/**
 * The pod webhook also skips namespaces labelled to opt out: pods there are created without any mutator and
 * without waiting for the runtime (NotIn matches namespaces without the label).
 */
function podNamespaceSelector(spec: InstallSpec): Record<string, unknown> {
  return {
    matchExpressions: [
      { key: LABEL_NAMESPACE_NAME, operator: 'NotIn', values: protectedNamespaces(spec) },
      { key: LABEL_POD_WEBHOOK_OPT_OUT, operator: 'NotIn', values: [POD_WEBHOOK_OPT_OUT_VALUE] },
    ],
  };
}

function clientConfig(spec: InstallSpec, path: string): Record<string, unknown> {
  // caBundle is intentionally absent: the runtime (self-managed certs) or cert-manager's CA injector
  // fills it, and GitOps tools must not fight over it (see ignoreDifferences in the README).
  return { service: { name: NAMES.webhookService, namespace: spec.namespace, path, port: 443 } };
}

function configMeta(spec: InstallSpec, name: string): KubeObject['metadata'] {
  const m = meta(spec, name, false) as NonNullable<KubeObject['metadata']>;
  if (spec.webhook.certificates.mode === 'cert-manager') {
    m.annotations = { ...(m.annotations ?? {}), [CERT_MANAGER_INJECT_ANNOTATION]: `${spec.namespace}/${NAMES.certificate}` };
  }
  return m;
}

/**
 * Every version the kind is served at: with only one listed, the API server relabels an object written at another
 * (conversion None keeps its fields), and a field of that other version looks misplaced to the schema check.
 */
function kindRule(k: ServedKind, operations: string[]): Record<string, unknown> {
  return {
    apiGroups: [k.group],
    apiVersions: [k.version, ...(k.alsoServed ?? [])],
    resources: [k.plural],
    operations,
    scope: k.namespaced ? 'Namespaced' : 'Cluster',
  };
}

/** `m<kind>.kb.io` style names, as upstream. */
function webhookName(prefix: string, kind: string): string {
  return `${prefix}${kind.toLowerCase()}.kb.io`;
}

/** Name of the pod webhook entry that admits, unmutated, the pods that need no runtime when the runtime does not answer. */
export const POD_WEBHOOK_BEST_EFFORT = 'mpod-best-effort.kb.io';

/**
 * The pod webhook entries. Strict (`podFailClosed` absent or `all`): one `Fail` entry for every pod. Otherwise two
 * entries on the same path, in this order: `mpod.kb.io` (`Fail`) for the pods that need the runtime and
 * `mpod-best-effort.kb.io` (`Ignore`) for the rest. Their match conditions are each other's negation and the first
 * one's only grows under the webhook's mutations, so each pod is reviewed once (see pod-webhook-needs.ts).
 */
function podWebhooks(spec: InstallSpec): Record<string, unknown>[] {
  const entry = (name: string, failurePolicy: 'Fail' | 'Ignore', matchConditions?: { name: string; expression: string }[]) => ({
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy,
    matchPolicy: 'Equivalent',
    // Called again when a webhook after ours (configurations run in name order; e.g. a mesh injector named after
    // kruise-mutating-webhook-configuration) changed the pod: the exit-priority step then wires the containers it
    // added (kruise.cdk8s.io/container-exit-priority-patterns). Every step of the chain is idempotent on its own output.
    reinvocationPolicy: 'IfNeeded',
    timeoutSeconds: spec.webhook.timeoutSeconds,
    namespaceSelector: podNamespaceSelector(spec),
    rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'], scope: 'Namespaced' }],
    ...(matchConditions ? { matchConditions } : {}),
    clientConfig: clientConfig(spec, POD_MUTATING_PATH),
  });
  const policy = spec.webhook.podFailClosed;
  // Fail: a pod created without its SidecarSet sidecars or exit-priority wiring is worse than a retried create; the
  // namespaceSelector keeps kube-system and the runtime itself out of reach.
  if (!policy || policy.mode === 'all') return [entry('mpod.kb.io', 'Fail')];
  const needs = podNeedsWebhookExpression(policy.sidecarSets);
  return [
    entry('mpod.kb.io', 'Fail', [{ name: 'needs-runtime', expression: needs }]),
    // Ignore: a pod that uses no feature of the app is admitted as it is when the runtime does not answer (a
    // SidecarSet applied outside the app still injects whenever the runtime answers).
    entry(POD_WEBHOOK_BEST_EFFORT, 'Ignore', [{ name: 'needs-no-runtime', expression: `!(${needs})` }]),
  ];
}

/**
 * The daemon's own metadata writes on a ContainerRecreateRequest it is carrying out skip the CRR webhook: with the
 * manager down (scaled to 0, crashing) a Fail webhook would otherwise stop every CRR in flight. What the webhook
 * checks on UPDATE (spec and node/pod labels immutable) the daemon's ValidatingAdmissionPolicy checks for these
 * writes in the API server itself (admission-policies.ts). The daemon's creates still pass the webhook, which sets
 * the node-name label that policy binds to the daemon's node.
 */
function daemonUpdatesSkipped(spec: InstallSpec, k: ServedKind): Record<string, unknown> {
  if (!spec.daemon || k.kind !== 'ContainerRecreateRequest') return {};
  const daemon = serviceAccountUsername(spec.namespace, NAMES.daemonServiceAccount);
  return {
    matchConditions: [
      { name: 'not-a-kruise-daemon-update', expression: `request.operation != 'UPDATE' || request.userInfo.username != '${daemon}'` },
    ],
  };
}

export function mutatingWebhookConfiguration(spec: InstallSpec): KubeObject {
  const webhooks: Record<string, unknown>[] = [];
  if (spec.webhook.pods) webhooks.push(...podWebhooks(spec));
  const served = bundledWebhookPaths(spec.kinds);
  for (const k of spec.kinds.filter((x) => served.mutating.includes(kindWebhookPath('mutate', x)))) {
    webhooks.push({
      name: webhookName('m', k.kind),
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      timeoutSeconds: spec.webhook.timeoutSeconds,
      namespaceSelector: namespaceSelector(spec),
      // A kind validated by its mutating webhook (no validating one) needs its UPDATEs reviewed here too.
      rules: [kindRule(k, BUNDLED_ADMISSION.validatedByMutatingKinds.includes(k.kind) ? ['CREATE', 'UPDATE'] : ['CREATE'])],
      ...daemonUpdatesSkipped(spec, k),
      clientConfig: clientConfig(spec, kindWebhookPath('mutate', k)),
    });
  }
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: configMeta(spec, MUTATING_WEBHOOK_CONFIGURATION),
    webhooks,
  };
}

/**
 * The deletion-protection entries (gate ResourcesDeletionProtection on), one per kind the bundled runtime protects, all
 * on one path. The object selector sends only objects labelled with a value their kind honours, so `Fail` holds the
 * protection while the runtime does not answer (a labelled object stays) and never makes an unlabelled object's
 * deletion wait on the runtime. kube-system and the runtime's own namespace stay out of reach, as for every webhook of ours.
 */
function deletionProtectionWebhooks(spec: InstallSpec): Record<string, unknown>[] {
  if (!spec.webhook.deletionProtection) return [];
  return DELETION_PROTECTED_KINDS.filter((p) => p.bundled).map((p) => ({
    name: webhookName('vdeletionprotection-', p.kind),
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    timeoutSeconds: spec.webhook.timeoutSeconds,
    namespaceSelector: namespaceSelector(spec),
    objectSelector: { matchExpressions: [{ key: LABEL_DELETE_PROTECTION, operator: 'In', values: [...modesOf(p)] }] },
    rules: [
      {
        apiGroups: [p.group],
        apiVersions: [...p.versions],
        resources: [p.resource],
        operations: ['DELETE'],
        scope: p.namespaced ? 'Namespaced' : 'Cluster',
      },
    ],
    clientConfig: clientConfig(spec, DELETION_PROTECTION_PATH),
  }));
}

/**
 * The PodUnavailableBudget entries on `/validate-pod` (upstream `vpod` and `vpodeviction`).
 *
 * - `vpod.kb.io` (DELETE, and UPDATE with PodUnavailableBudgetUpdateGate): `Fail`, but a match condition sends only
 *   pods the budget controller annotated `kruise.io/related-pub`, and only UPDATEs that change the spec or add an
 *   `unavailable-pod.kruise.io/` label. While the runtime does not answer, a covered pod stays; every other pod's
 *   deletion or update never waits on the runtime.
 * - `vpodeviction.kb.io` (CREATE pods/eviction): the API server shows a webhook only the Eviction, never the pod, so
 *   no selector can tell a covered pod's eviction from another's. `Ignore`: an eviction never waits on a runtime that
 *   does not answer (a drain goes on), and while it does not answer the budgets do not hold evictions back.
 */
function podUnavailableBudgetWebhooks(spec: InstallSpec): Record<string, unknown>[] {
  const pub = spec.webhook.podUnavailableBudget;
  if (!pub) return [];
  const covered = `has(oldObject.metadata.annotations) && '${ANNOTATION_RELATED_PUB}' in oldObject.metadata.annotations`;
  const mayDisrupt =
    `request.operation != 'UPDATE' || object.spec != oldObject.spec || ` +
    `(has(object.metadata.labels) && object.metadata.labels.exists(k, k.startsWith('${UNAVAILABLE_POD_LABEL_PREFIX}')))`;
  const base = {
    admissionReviewVersions: ['v1'],
    sideEffects: 'NoneOnDryRun',
    matchPolicy: 'Equivalent',
    timeoutSeconds: spec.webhook.timeoutSeconds,
    namespaceSelector: namespaceSelector(spec),
    clientConfig: clientConfig(spec, POD_VALIDATING_PATH),
  };
  return [
    {
      name: 'vpod.kb.io',
      ...base,
      failurePolicy: 'Fail',
      rules: [
        {
          apiGroups: [''],
          apiVersions: ['v1'],
          resources: ['pods'],
          operations: pub.update ? ['DELETE', 'UPDATE'] : ['DELETE'],
          scope: 'Namespaced',
        },
      ],
      matchConditions: [
        { name: 'covered-by-a-budget', expression: covered },
        ...(pub.update ? [{ name: 'may-disrupt', expression: mayDisrupt }] : []),
      ],
    },
    {
      name: 'vpodeviction.kb.io',
      ...base,
      failurePolicy: 'Ignore',
      rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], operations: ['CREATE'], scope: 'Namespaced' }],
    },
  ];
}

export function validatingWebhookConfiguration(spec: InstallSpec): KubeObject {
  const served = bundledWebhookPaths(spec.kinds);
  const kindWebhooks = spec.kinds
    .filter((k) => served.validating.includes(kindWebhookPath('validate', k)))
    .sort((a, b) => a.kind.localeCompare(b.kind))
    .map((k) => ({
      name: webhookName('v', k.kind),
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      timeoutSeconds: spec.webhook.timeoutSeconds,
      namespaceSelector: namespaceSelector(spec),
      rules: [kindRule(k, ['CREATE', 'UPDATE'])],
      clientConfig: clientConfig(spec, kindWebhookPath('validate', k)),
    }));
  const webhooks = [...kindWebhooks, ...deletionProtectionWebhooks(spec), ...podUnavailableBudgetWebhooks(spec)];
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: configMeta(spec, VALIDATING_WEBHOOK_CONFIGURATION),
    webhooks,
  };
}

export function webhookService(spec: InstallSpec): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(spec, NAMES.webhookService, true) as KubeObject['metadata'],
    spec: {
      type: 'ClusterIP',
      selector: { ...MANAGER_SELECTOR },
      ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 'webhook-server' }],
    },
  };
}

/** DNS names the serving certificate must cover (what the API server dials). */
export function webhookDnsNames(spec: InstallSpec): string[] {
  const svc = `${NAMES.webhookService}.${spec.namespace}.svc`;
  return [svc, `${svc}.cluster.local`];
}

/**
 * cert-manager mode: a Certificate from the user's Issuer writing the same Secret the runtime would
 * manage itself; cert-manager's CA injector fills caBundle (annotation on both configurations).
 */
export function webhookCertificate(spec: InstallSpec): KubeObject | undefined {
  const c = spec.webhook.certificates;
  if (c.mode !== 'cert-manager') return undefined;
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: meta(spec, NAMES.certificate, true) as KubeObject['metadata'],
    spec: {
      secretName: WEBHOOK_CERT_SECRET,
      dnsNames: webhookDnsNames(spec),
      issuerRef: { kind: c.issuerKind, name: c.issuerName, group: 'cert-manager.io' },
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      duration: '2160h',
      renewBefore: '360h',
    },
  };
}

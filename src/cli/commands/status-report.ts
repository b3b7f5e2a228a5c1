// What `cdk8s-kruise status` reports, decided from the objects kubectl returned: pure functions of those objects
// and the time, so each judgement (leader expired, caBundle stale, daemon missing on a node, a feature the app
// needs and the runtime lacks) has a table test. status-run.ts fetches the objects and prints the report.
import { X509Certificate } from 'node:crypto';
import {
  AppFeature,
  BUNDLED_RUNTIME_GATES,
  FEATURE_GATES,
  carriesOut,
  needsOf,
  parseFeatureGates,
  type FeatureGateName,
  type RuntimeName,
} from '../../contracts/features.js';
import { NAMES, POD_MUTATING_PATH } from '../../contracts/names.js';

/** A Kubernetes object as kubectl prints it; only the fields read here are typed. */
export interface Obj {
  metadata?: { name?: string; namespace?: string; creationTimestamp?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
  [key: string]: unknown;
}

/** One read: the object(s), absent (not found), or why it could not be read. */
export type Read<T> = { ok: true; value: T | undefined } | { ok: false; error: string };

/** Everything status reads from the cluster. */
export interface ClusterFacts {
  readonly namespace: string;
  readonly deployment: Read<Obj>;
  readonly lease: Read<Obj>;
  readonly mutating: Read<Obj>;
  readonly validating: Read<Obj>;
  readonly secret: Read<Obj>;
  readonly endpointSlices: Read<Obj[]>;
  readonly daemonSet: Read<Obj>;
  readonly daemonPods: Read<Obj[]>;
  readonly nodes: Read<Obj[]>;
  /**
   * Webhooks registered by URL: whether a TLS handshake with the URL's host succeeded, trusting only the entry's
   * caBundle (`true`), or why it failed. A Service-backed webhook is judged by the Service's ready endpoints.
   */
  readonly urlProbes?: Readonly<Record<string, true | string>>;
}

/** The features an app's manifests use: feature and the resource that uses it (`Kind ns/name`). */
export interface AppUse {
  readonly feature: AppFeature;
  readonly resource: string;
}

export interface WebhookStatus {
  readonly configuration: 'mutating' | 'validating';
  readonly name: string;
  /** `service ns/name:port/path`, or the URL. */
  readonly target: string;
  readonly path?: string;
  readonly failurePolicy: string;
  readonly caBundle: boolean;
  /** Whether the caBundle holds the CA of the serving Secret (undefined: the Secret could not be read). */
  readonly caMatchesSecret?: boolean;
  /** Whether something serves it: a ready endpoint of its Service, or a TLS handshake with its URL the caBundle verifies. */
  readonly served?: boolean;
  /** Why the URL's handshake failed. */
  readonly serveError?: string;
}

export interface CertificateStatus {
  readonly secret: string;
  readonly error?: string;
  readonly ca?: { readonly notAfter: string; readonly daysLeft: number };
  readonly serving?: { readonly notAfter: string; readonly daysLeft: number; readonly issuedByCa: boolean; readonly hosts: string[] };
}

export interface DaemonNode {
  readonly node: string;
  readonly ready: boolean;
  readonly version?: string;
  readonly pod?: string;
  readonly reason?: string;
}

export interface StatusReport {
  readonly namespace: string;
  readonly runtime: {
    readonly installed: boolean;
    readonly kind?: RuntimeName;
    readonly image?: string;
    readonly version?: string;
    readonly replicas?: { readonly desired: number; readonly ready: number };
    readonly error?: string;
  };
  readonly leader: {
    readonly holder?: string;
    readonly leadingSeconds?: number;
    readonly renewedSecondsAgo?: number;
    readonly expired?: boolean;
    readonly error?: string;
  };
  readonly webhooks: { readonly entries: WebhookStatus[]; readonly readyEndpoints?: number; readonly error?: string };
  readonly certificate: CertificateStatus;
  readonly daemon: { readonly installed: boolean; readonly nodes: DaemonNode[]; readonly error?: string };
  readonly featureGates: { readonly value: string; readonly enabled: string[]; readonly disabled: string[]; readonly error?: string };
  readonly app?: {
    readonly dir: string;
    readonly features: string[];
    readonly missing: Array<{ feature: string; resource: string; lacks: string }>;
  };
  /** What is wrong, one line each; the exit code is 1 when there is any. */
  readonly problems: string[];
}

/** Certificates expiring sooner than this are a problem (the runtime renews self-signed ones well before). */
const EXPIRY_WARNING_DAYS = 7;
const DAY_MS = 86_400_000;

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
function obj(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The version an image reference names: its tag, else its digest shortened, else `latest`. */
export function imageVersion(image: string): string {
  const at = image.indexOf('@');
  if (at >= 0) return image.slice(at + 1, at + 1 + 'sha256:'.length + 12);
  const lastSlash = image.lastIndexOf('/');
  const colon = image.lastIndexOf(':');
  return colon > lastSlash ? image.slice(colon + 1) : 'latest';
}

/** The `--feature-gates` value of a container's args (`--feature-gates=A=true` or `--feature-gates A=true`). */
export function featureGatesArg(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith('--feature-gates=')) return a.slice('--feature-gates='.length);
    if (a === '--feature-gates') return args[i + 1] ?? '';
  }
  return '';
}

function pemBlocks(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

function parseCerts(text: string): X509Certificate[] {
  return pemBlocks(text).flatMap((p) => {
    try {
      return [new X509Certificate(p)];
    } catch {
      return [];
    }
  });
}

function managerContainer(d: Obj): Record<string, unknown> | undefined {
  const containers = arr(obj(obj(obj(d.spec).template).spec).containers).map(obj);
  return containers.find((c) => c.name === 'manager') ?? containers[0];
}

/** Judges what the cluster holds; `now` in ms since the epoch. */
export function buildStatus(facts: ClusterFacts, now: number, app?: { dir: string; uses: readonly AppUse[] }): StatusReport {
  const problems: string[] = [];
  const ns = facts.namespace;

  // The runtime: the controller-manager Deployment.
  let runtime: StatusReport['runtime'];
  let gateValue = '';
  let runtimeKind: RuntimeName = 'bundled';
  if (!facts.deployment.ok) {
    runtime = { installed: false, error: facts.deployment.error };
    problems.push(`cannot read Deployment ${ns}/${NAMES.managerDeployment}: ${facts.deployment.error}`);
  } else if (!facts.deployment.value) {
    runtime = { installed: false };
    problems.push(
      `no runtime in namespace ${ns}: Deployment ${NAMES.managerDeployment} does not exist (pass --namespace if it runs elsewhere)`,
    );
  } else {
    const d = facts.deployment.value;
    const c = managerContainer(d) ?? {};
    const image = str(c.image) ?? '?';
    const command = arr(c.command).map(String);
    runtimeKind = command[0] === 'cdk8s-kruise' ? 'bundled' : 'upstream';
    gateValue = featureGatesArg(arr(c.args).map(String));
    const desired = typeof obj(d.spec).replicas === 'number' ? (obj(d.spec).replicas as number) : 1;
    const ready = typeof obj(d.status).readyReplicas === 'number' ? (obj(d.status).readyReplicas as number) : 0;
    runtime = { installed: true, kind: runtimeKind, image, version: imageVersion(image), replicas: { desired, ready } };
    if (ready === 0) problems.push(`controller-manager: 0 of ${desired} replica(s) ready`);
  }

  // Leader: the Lease the replicas elect through.
  let leader: StatusReport['leader'];
  if (!facts.lease.ok) {
    leader = { error: facts.lease.error };
    problems.push(`cannot read the leader Lease: ${facts.lease.error}`);
  } else if (!facts.lease.value || !str(obj(facts.lease.value.spec).holderIdentity)) {
    leader = {};
    if (runtime.installed) problems.push('no leader: nobody holds the Lease, so no controller acts');
  } else {
    const s = obj(facts.lease.value.spec);
    const renew = Date.parse(str(s.renewTime) ?? '');
    const acquire = Date.parse(str(s.acquireTime) ?? '');
    const duration = typeof s.leaseDurationSeconds === 'number' ? s.leaseDurationSeconds : 15;
    const renewedSecondsAgo = Number.isFinite(renew) ? Math.max(0, Math.round((now - renew) / 1000)) : undefined;
    const expired = renewedSecondsAgo === undefined || renewedSecondsAgo > duration;
    leader = {
      holder: str(s.holderIdentity),
      ...(Number.isFinite(acquire) ? { leadingSeconds: Math.max(0, Math.round((now - acquire) / 1000)) } : {}),
      ...(renewedSecondsAgo !== undefined ? { renewedSecondsAgo } : {}),
      expired,
    };
    if (expired)
      problems.push(
        `leader ${leader.holder} has not renewed its Lease for ${renewedSecondsAgo ?? '?'} s (lease ${duration} s): no replica leads`,
      );
  }

  // The serving certificate, from the Secret the manager keeps (or cert-manager fills).
  let certificate: CertificateStatus = { secret: `${ns}/${secretNameOf(facts)}` };
  let secretCas: X509Certificate[] | undefined;
  if (!facts.secret.ok) {
    certificate = { ...certificate, error: facts.secret.error };
    problems.push(`cannot read the webhook certificate Secret: ${facts.secret.error}`);
  } else if (!facts.secret.value) {
    certificate = { ...certificate, error: 'does not exist' };
    if (runtime.installed)
      problems.push(`webhook certificate Secret ${certificate.secret} does not exist (the manager writes it at start)`);
  } else {
    const data = facts.secret.value.data ?? {};
    const dec = (k: string) => (data[k] ? Buffer.from(data[k], 'base64').toString('utf8') : '');
    const cas = parseCerts(dec('ca-cert.pem') || dec('ca.crt'));
    const serving = parseCerts(dec('tls.crt') || dec('cert.pem'))[0];
    secretCas = cas;
    const days = (c: X509Certificate) => Math.floor((Date.parse(c.validTo) - now) / DAY_MS);
    const ca = cas[0];
    certificate = {
      ...certificate,
      ...(ca ? { ca: { notAfter: new Date(ca.validTo).toISOString(), daysLeft: days(ca) } } : {}),
      ...(serving
        ? {
            serving: {
              notAfter: new Date(serving.validTo).toISOString(),
              daysLeft: days(serving),
              issuedByCa: cas.some((c) => serving.checkIssued(c) && serving.verify(c.publicKey)),
              hosts: (serving.subjectAltName ?? '').split(/,\s*/).filter(Boolean),
            },
          }
        : {}),
    };
    if (!ca) problems.push(`webhook certificate Secret ${certificate.secret} holds no CA certificate`);
    if (!serving) problems.push(`webhook certificate Secret ${certificate.secret} holds no serving certificate`);
    for (const [what, c] of [
      ['CA', certificate.ca],
      ['serving certificate', certificate.serving],
    ] as const) {
      if (c && c.daysLeft < 0) problems.push(`the webhook ${what} expired on ${c.notAfter}`);
      else if (c && c.daysLeft < EXPIRY_WARNING_DAYS) problems.push(`the webhook ${what} expires in ${c.daysLeft} day(s) (${c.notAfter})`);
    }
    if (certificate.serving && !certificate.serving.issuedByCa)
      problems.push('the serving certificate is not signed by the CA of its Secret');
  }

  // Webhooks: every entry of the two configurations, its caBundle, and the Service's ready endpoints.
  const entries: WebhookStatus[] = [];
  let webhookError: string | undefined;
  for (const [configuration, read] of [
    ['mutating', facts.mutating],
    ['validating', facts.validating],
  ] as const) {
    if (!read.ok) {
      webhookError = read.error;
      problems.push(`cannot read the ${configuration} webhook configuration: ${read.error}`);
      continue;
    }
    for (const w of arr(read.value?.webhooks).map(obj)) {
      const cc = obj(w.clientConfig);
      const svc = obj(cc.service);
      const bundle = str(cc.caBundle) ? Buffer.from(str(cc.caBundle)!, 'base64').toString('utf8') : '';
      const bundleCerts = parseCerts(bundle);
      const path = str(svc.path);
      const entry: WebhookStatus = {
        configuration,
        name: str(w.name) ?? '?',
        target:
          str(cc.url) ?? `service ${str(svc.namespace)}/${str(svc.name)}:${typeof svc.port === 'number' ? svc.port : 443}${path ?? ''}`,
        ...(path ? { path } : {}),
        failurePolicy: str(w.failurePolicy) ?? 'Fail',
        caBundle: bundleCerts.length > 0,
        ...(secretCas
          ? {
              caMatchesSecret:
                secretCas.length > 0 && secretCas.every((c) => bundleCerts.some((b) => b.fingerprint256 === c.fingerprint256)),
            }
          : {}),
      };
      const url = str(cc.url);
      const probe = url !== undefined ? facts.urlProbes?.[url] : undefined;
      entries.push(probe === undefined ? entry : { ...entry, served: probe === true, ...(probe === true ? {} : { serveError: probe }) });
      if (probe !== undefined && probe !== true)
        problems.push(`webhook ${entry.name}: ${url} is not served with a certificate its caBundle trusts: ${probe}`);
      if (!entry.caBundle) problems.push(`webhook ${entry.name}: no caBundle, so the API server cannot trust the runtime's certificate`);
      else if (entry.caMatchesSecret === false)
        problems.push(`webhook ${entry.name}: its caBundle does not hold the CA of Secret ${certificate.secret}`);
    }
  }
  let readyEndpoints: number | undefined;
  if (!facts.endpointSlices.ok) problems.push(`cannot read the webhook Service's endpoints: ${facts.endpointSlices.error}`);
  else {
    readyEndpoints = facts.endpointSlices.value!.flatMap((s) =>
      arr(s.endpoints)
        .map(obj)
        .filter((e) => obj(e.conditions).ready !== false),
    ).length;
    if (entries.some((e) => e.target.startsWith('service ')) && readyEndpoints === 0)
      problems.push(`webhook Service ${ns}/${NAMES.webhookService} has no ready endpoint: no webhook is served`);
    for (const [i, e] of entries.entries()) if (e.target.startsWith('service ')) entries[i] = { ...e, served: readyEndpoints > 0 };
  }
  const webhooks = {
    entries,
    ...(readyEndpoints !== undefined ? { readyEndpoints } : {}),
    ...(webhookError ? { error: webhookError } : {}),
  };

  // Daemon: one pod per node, ready and of which image.
  let daemon: StatusReport['daemon'];
  if (!facts.daemonSet.ok) {
    daemon = { installed: false, nodes: [], error: facts.daemonSet.error };
    problems.push(`cannot read DaemonSet ${ns}/${NAMES.daemonSet}: ${facts.daemonSet.error}`);
  } else if (!facts.daemonSet.value) daemon = { installed: false, nodes: [] };
  else {
    const nodes: DaemonNode[] = [];
    const pods = facts.daemonPods.ok ? (facts.daemonPods.value ?? []) : [];
    const byNode = new Map<string, Obj>();
    for (const p of pods) {
      const n = str(obj(p.spec).nodeName);
      if (n) byNode.set(n, p);
    }
    // The nodes the DaemonSet places a pod on: those its nodeSelector matches (tolerations and affinity aside).
    const selector = Object.entries(obj(obj(obj(obj(facts.daemonSet.value.spec).template).spec).nodeSelector));
    const nodeNames = facts.nodes.ok
      ? (facts.nodes.value ?? [])
          .filter((n) => selector.every(([k, v]) => n.metadata?.labels?.[k] === v))
          .map((n) => n.metadata?.name ?? '?')
      : [...byNode.keys()];
    for (const name of [...new Set([...nodeNames, ...byNode.keys()])].sort()) {
      const p = byNode.get(name);
      if (!p) {
        nodes.push({ node: name, ready: false, reason: 'no daemon pod' });
        continue;
      }
      const ready = arr(obj(p.status).conditions)
        .map(obj)
        .some((c) => c.type === 'Ready' && c.status === 'True');
      const statuses = arr(obj(p.status).containerStatuses).map(obj);
      const waiting = statuses.map((s) => str(obj(obj(s.state).waiting).reason)).find(Boolean);
      const image = str(arr(obj(p.spec).containers).map(obj)[0]?.image);
      nodes.push({
        node: name,
        ready,
        ...(image ? { version: imageVersion(image) } : {}),
        pod: p.metadata?.name ?? '?',
        ...(ready ? {} : { reason: waiting ?? str(obj(p.status).phase) ?? 'not ready' }),
      });
    }
    daemon = { installed: true, nodes, ...(facts.daemonPods.ok ? {} : { error: facts.daemonPods.error }) };
    if (!facts.daemonPods.ok) problems.push(`cannot read the daemon pods: ${facts.daemonPods.error}`);
    if (!facts.nodes.ok) problems.push(`cannot list nodes (nodes without a daemon pod are not shown): ${facts.nodes.error}`);
    const down = nodes.filter((n) => !n.ready);
    if (down.length > 0)
      problems.push(`daemon not ready on ${down.length} node(s): ${down.map((n) => `${n.node} (${n.reason})`).join(', ')}`);
  }

  // Feature gates: the manager's flag over the runtime's defaults.
  let featureGates: StatusReport['featureGates'] = { value: gateValue, enabled: [], disabled: [] };
  let gates: Map<FeatureGateName, boolean> | undefined;
  if (runtime.installed) {
    const known =
      runtimeKind === 'bundled'
        ? BUNDLED_RUNTIME_GATES
        : (Object.fromEntries(FEATURE_GATES.filter((g) => g.upstream).map((g) => [g.name, g.default])) as Partial<
            Record<FeatureGateName, boolean>
          >);
    try {
      gates = parseFeatureGates(gateValue, known);
      featureGates = {
        value: gateValue,
        enabled: [...gates].filter(([, on]) => on).map(([g]) => g),
        disabled: [...gates].filter(([, on]) => !on).map(([g]) => g),
      };
    } catch (e) {
      featureGates = { ...featureGates, error: (e as Error).message };
      problems.push(`the manager's ${(e as Error).message}`);
    }
  }

  // The app: each feature it uses, and what of its needs the installed runtime lacks.
  let appReport: StatusReport['app'];
  if (app) {
    const podWebhook = entries.some((e) => e.path === POD_MUTATING_PATH || e.target.endsWith(POD_MUTATING_PATH));
    const missing: Array<{ feature: string; resource: string; lacks: string }> = [];
    for (const u of app.uses) {
      const lacks: string[] = [];
      if (!runtime.installed) lacks.push('a runtime');
      else if (!carriesOut(runtimeKind, u.feature)) lacks.push(`support (the ${runtimeKind} runtime does not carry it out)`);
      else {
        const needs = needsOf(u.feature, runtimeKind);
        const off = needs.gates.filter((g) => gates?.get(g) !== true);
        if (off.length > 0) lacks.push(`feature gate(s) ${off.join(', ')}`);
        if (needs.daemon && !daemon.installed) lacks.push('the node daemon');
        if (needs.podWebhook && !podWebhook) lacks.push('the pod webhook');
      }
      if (lacks.length > 0) missing.push({ feature: u.feature, resource: u.resource, lacks: lacks.join(', ') });
    }
    for (const m of missing) problems.push(`the app's ${m.resource} uses ${m.feature}, but the cluster's runtime lacks ${m.lacks}`);
    appReport = { dir: app.dir, features: [...new Set(app.uses.map((u) => u.feature))], missing };
  }

  return {
    namespace: ns,
    runtime,
    leader,
    webhooks,
    certificate,
    daemon,
    featureGates,
    ...(appReport ? { app: appReport } : {}),
    problems,
  };
}

function secretNameOf(facts: ClusterFacts): string {
  return (facts.secret.ok && facts.secret.value?.metadata?.name) || 'kruise-webhook-certs';
}

function ago(seconds: number | undefined): string {
  if (seconds === undefined) return '?';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}

/** The human table: one section per part, then the problems. */
export function formatStatus(r: StatusReport): string {
  const lines: string[] = [];
  const row = (k: string, v: string) => lines.push(`  ${k.padEnd(14)} ${v}`);
  lines.push(`Runtime (namespace ${r.namespace})`);
  if (r.runtime.installed)
    row(
      'version',
      `${r.runtime.version} (${r.runtime.kind === 'bundled' ? 'cdk8s-kruise' : 'OpenKruise'} image ${r.runtime.image}), ${r.runtime.replicas!.ready}/${r.runtime.replicas!.desired} ready`,
    );
  else row('version', r.runtime.error ? `unknown: ${r.runtime.error}` : 'not installed');
  if (r.leader.error) row('leader', `unknown: ${r.leader.error}`);
  else if (!r.leader.holder) row('leader', 'none');
  else
    row(
      'leader',
      `${r.leader.holder}, leading ${ago(r.leader.leadingSeconds)}, renewed ${ago(r.leader.renewedSecondsAgo)} ago${r.leader.expired ? ' (EXPIRED)' : ''}`,
    );
  row(
    'feature gates',
    r.featureGates.error
      ? `unreadable: ${r.featureGates.error}`
      : r.runtime.installed
        ? `${r.featureGates.enabled.join(', ') || 'none'} on${r.featureGates.disabled.length ? `; off: ${r.featureGates.disabled.join(', ')}` : ''}`
        : '-',
  );
  lines.push('Certificate');
  const c = r.certificate;
  if (c.error) row('secret', `${c.secret}: ${c.error}`);
  else {
    row('CA', c.ca ? `valid until ${c.ca.notAfter} (${c.ca.daysLeft} d)` : 'missing');
    row(
      'serving',
      c.serving
        ? `valid until ${c.serving.notAfter} (${c.serving.daysLeft} d), ${c.serving.issuedByCa ? 'signed by the CA' : 'NOT signed by the CA'}, for ${c.serving.hosts.join(' ') || '?'}`
        : 'missing',
    );
  }
  lines.push(`Webhooks${r.webhooks.readyEndpoints !== undefined ? ` (Service: ${r.webhooks.readyEndpoints} ready endpoint(s))` : ''}`);
  if (r.webhooks.entries.length === 0) lines.push(r.webhooks.error ? `  unknown: ${r.webhooks.error}` : '  none registered');
  for (const w of r.webhooks.entries)
    lines.push(
      `  ${w.name.padEnd(36)} ${w.configuration.padEnd(10)} ${w.failurePolicy.padEnd(6)} caBundle ${!w.caBundle ? 'MISSING' : w.caMatchesSecret === false ? 'STALE (not the Secret CA)' : w.caMatchesSecret ? 'ok' : 'present'}  ${w.served === undefined ? '' : w.served ? 'served  ' : 'NOT SERVED  '}${w.target}`,
    );
  lines.push('Daemon');
  if (r.daemon.error && r.daemon.nodes.length === 0) lines.push(`  unknown: ${r.daemon.error}`);
  else if (!r.daemon.installed) lines.push('  not installed (no feature of the install needs it)');
  else if (r.daemon.nodes.length === 0) lines.push('  no node');
  for (const n of r.daemon.nodes)
    lines.push(
      `  ${n.node.padEnd(30)} ${n.ready ? 'ready' : `NOT READY (${n.reason})`}${n.version ? `  ${n.version}` : ''}${n.pod ? `  ${n.pod}` : ''}`,
    );
  if (r.app) {
    lines.push(`App (${r.app.dir})`);
    row('uses', r.app.features.join(', ') || 'no runtime feature');
    for (const m of r.app.missing) lines.push(`  MISSING        ${m.feature} (${m.resource}): ${m.lacks}`);
    if (r.app.missing.length === 0) lines.push('  the runtime carries out every feature the app uses');
  }
  lines.push(r.problems.length === 0 ? 'OK' : `${r.problems.length} problem(s):`);
  for (const p of r.problems) lines.push(`  - ${p}`);
  return `${lines.join('\n')}\n`;
}

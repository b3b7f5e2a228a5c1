import type { Logger } from 'pino';
import { isAlreadyExists, isConflict, isNotFound, PatchStrategy, type KubeClient } from '../client.js';
import {
  CUSTOM_RESOURCE_DEFINITIONS,
  MUTATING_WEBHOOK_CONFIGURATIONS,
  SECRETS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
  type ResourceType,
} from '../../../contracts/index.js';
import type { CacheRead } from '../cache-plan.js';
import type { Informer, InformerFactory } from '../informer.js';
import type { KubeObject, Secret } from '../types.js';
import {
  bundleFromSecretData,
  bundleToSecretData,
  caBundleMatches,
  desiredCaBundle,
  nextBundle,
  pemCertificates,
  renewalReason,
  reusableCa,
  secretDataMismatch,
  serveAction,
  trustedCas,
  validity,
  type CertBundle,
  type CertIssuer,
} from './certs.js';

export interface CertManagerOptions {
  readonly namespace: string;
  readonly secretName: string;
  readonly hosts: readonly string[];
  readonly caValidityMs: number;
  readonly certValidityMs: number;
  /** Renew when a certificate has less than this left (upstream: 6 months of 10 years). */
  readonly renewBeforeMs: number;
  /**
   * Safety net: how often the decisions are taken again from the caches (no API read) although no event
   * came. Changes are acted on from the watches' events; this only bounds a missed timer.
   */
  readonly checkIntervalMs: number;
  readonly mutatingConfig: string;
  readonly validatingConfig: string;
  /**
   * CRDs converted by this webhook server (`spec.conversion.webhook`): their caBundle is kept like the
   * configurations' and counts for the trust of a new CA. One whose conversion calls another service (upstream's
   * manager installed beside ours) is left alone.
   */
  readonly conversionCrds?: readonly string[];
  /** The webhook Service (namespace `namespace`) whose conversion clientConfig is ours. */
  readonly serviceName?: string;
  /**
   * How long a new CA must have been in every webhook's caBundle before a certificate signed by it is
   * served: the API server learns the configurations through its own watch.
   */
  readonly caPropagationMs?: number;
  /**
   * How long CAs replaced by a rotation stay in the caBundle. Every replica reloads the Secret on its
   * watch event and serves the new certificate `caPropagationMs` after the new CA is in the caBundle, so
   * this must exceed that plus the time a replica may take to notice (a broken watch is relisted with
   * backoff); a replica that still serves a retired CA re-adds it (it never drops the CA it serves).
   */
  readonly previousCaGraceMs?: number;
  /**
   * Someone else (cert-manager) owns the Secret and the caBundle: only read the Secret and serve what is
   * in it, never write.
   */
  readonly readOnly?: boolean;
  readonly logger: Logger;
  /** Called with each new serving certificate (install it in the HTTPS server). */
  readonly onCertificate: (cert: string, key: string) => void;
  /**
   * Issues certificates when the Secret holds none that serve (default: in this process, loading the
   * X.509 builder then). The controller command issues in a child process instead (cert-issuer-process.ts).
   */
  readonly issuer?: CertIssuer;
  /** Clock (tests). */
  readonly now?: () => number;
}

/** Default time previous CAs stay in the caBundle after a CA rotation. */
export const DEFAULT_PREVIOUS_CA_GRACE_MS = 5 * 60_000;

/** The fields the certificate manager reads of its three watched objects (part of the manager's cache plan). */
export const CERT_MANAGER_READS: readonly CacheRead[] = [
  { resource: SECRETS, fields: ['type', 'data'] },
  { resource: MUTATING_WEBHOOK_CONFIGURATIONS, fields: ['webhooks[].name', 'webhooks[].clientConfig.caBundle'] },
  { resource: VALIDATING_WEBHOOK_CONFIGURATIONS, fields: ['webhooks[].name', 'webhooks[].clientConfig.caBundle'] },
  { resource: CUSTOM_RESOURCE_DEFINITIONS, fields: ['spec.conversion'] },
];

/** Issues in this process: the X.509 builder loads on the first issue and stays loaded. */
const issueInProcess: CertIssuer = async (old, o) => (await import('./cert-issuer.js')).renewBundle(old, o);

type WebhookConfig = KubeObject & { webhooks?: Array<{ name: string; clientConfig?: { caBundle?: string } }> };
type ConversionCrd = KubeObject & {
  spec?: {
    conversion?: {
      strategy?: string;
      webhook?: { clientConfig?: { caBundle?: string; url?: string; service?: { name?: string; namespace?: string } } };
    };
  };
};

const byName = (name: string) => `metadata.name=${name}`;

/**
 * Self-managed webhook certificates, as upstream kruise-manager does: a CA and a serving certificate in a
 * Secret of the runtime namespace, and the CA in the caBundle of our two webhook configurations. Every
 * replica watches the Secret and both configurations and, on each event, takes the pure decisions of
 * certs.ts from its caches:
 * - the Secret is missing, damaged (unreadable, a key that does not match, tls.crt differing from
 *   cert.pem) or near expiry: issue (keeping a good CA), write with optimistic concurrency (the loser adopts
 *   the winner's Secret from its watch); a new CA records every CA a replica may still serve as previous;
 * - the caBundle lacks a CA it must hold (stripped, corrupted, new CA): patch it, conditionally on the
 *   observed resourceVersion; it only grows, except for previous CAs whose grace has passed;
 * - the Secret's certificate differs from the one served: install it once its CA has been in every
 *   webhook's caBundle for `caPropagationMs`, so no replica ever serves a certificate the API server does
 *   not trust yet, and each replica keeps serving its old (still trusted) one until then.
 */
export class CertManager {
  private timer?: NodeJS.Timeout;
  private bundle?: CertBundle;
  private stopped = false;
  private running?: Promise<void>;
  private again = false;
  private trust = new Map<string, number>();
  private trustObserved = false;
  private failures = 0;
  /** Events before the three caches have synced are ignored: a decision on a partial view could rotate for nothing. */
  private ready = false;
  private readonly secretInformer: Informer<Secret>;
  private readonly configInformers: ReadonlyArray<{ type: ResourceType; name: string; informer: Informer<WebhookConfig> }>;
  private readonly crdInformers: ReadonlyArray<{ name: string; informer: Informer<ConversionCrd> }>;
  /** Names of configurations whose caBundle is current, or missing (not installed). */
  readonly caBundleState = new Map<string, 'current' | 'missing'>();
  rotations = 0;

  constructor(
    private readonly client: KubeClient,
    informers: InformerFactory,
    private readonly o: CertManagerOptions,
  ) {
    // Watched by name: RBAC grants list/watch on these names only.
    this.secretInformer = informers.for<Secret>(SECRETS, { namespace: o.namespace, fieldSelector: byName(o.secretName) });
    this.configInformers = [
      { type: MUTATING_WEBHOOK_CONFIGURATIONS, name: o.mutatingConfig },
      { type: VALIDATING_WEBHOOK_CONFIGURATIONS, name: o.validatingConfig },
    ].map((c) => ({ ...c, informer: informers.for<WebhookConfig>(c.type, { fieldSelector: byName(c.name) }) }));
    // One informer per CRD, each watched by name like the configurations (RBAC names them).
    this.crdInformers = (o.conversionCrds ?? []).map((name) => ({
      name,
      informer: informers.for<ConversionCrd>(CUSTOM_RESOURCE_DEFINITIONS, { fieldSelector: byName(name) }),
    }));
    const kick = { add: () => this.kick(), update: () => this.kick(), delete: () => this.kick() };
    this.secretInformer.addHandlers(kick);
    for (const c of [...this.configInformers, ...this.crdInformers]) c.informer.addHandlers(kick);
  }

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  current(): CertBundle | undefined {
    return this.bundle;
  }

  /** Waits for the three caches, then takes the decisions once; throws while no certificate is served. */
  async start(): Promise<void> {
    await Promise.all([
      this.secretInformer.waitForSync(),
      ...[...this.configInformers, ...this.crdInformers].map((c) => c.informer.waitForSync()),
    ]);
    this.ready = true;
    await this.sync();
    if (!this.bundle) throw new Error(`no webhook serving certificate yet (Secret ${this.o.namespace}/${this.o.secretName})`);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** An event came: take the decisions again (coalesced; one pass at a time). */
  private kick(): void {
    if (this.stopped || !this.ready) return;
    void this.sync().catch(() => undefined);
  }

  /** One pass from the caches; a pass requested while one runs runs right after it. */
  sync(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again && !this.stopped);
        this.failures = 0;
      } catch (err) {
        this.failures++;
        this.o.logger.warn({ err: (err as Error).message }, 'webhook certificate check failed');
        this.schedule(Math.min(30_000, 250 * 2 ** Math.min(this.failures, 7)));
        throw err;
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.kick(), Math.max(10, ms));
    this.timer.unref();
  }

  /** The decoded caBundle of every webhook of the configurations that exist. */
  private observedBundles(): { bundles: string[]; configs: WebhookConfig[] } {
    const configs: WebhookConfig[] = [];
    for (const c of this.configInformers) {
      const cfg = c.informer.get(c.name);
      if (cfg) configs.push(cfg);
      this.caBundleState.set(c.name, cfg ? 'current' : 'missing');
    }
    const bundles = configs.flatMap((cfg) =>
      (cfg.webhooks ?? []).map((w) => Buffer.from(w.clientConfig?.caBundle ?? '', 'base64').toString('utf8')),
    );
    for (const c of this.crdInformers) {
      const crd = this.ownConversion(c.informer.get(c.name));
      this.caBundleState.set(c.name, crd ? 'current' : 'missing');
      if (crd) bundles.push(Buffer.from(crd.spec!.conversion!.webhook!.clientConfig!.caBundle ?? '', 'base64').toString('utf8'));
    }
    return { bundles, configs };
  }

  /**
   * The CRD when its conversion webhook is ours: it calls our Service, or a URL (the CRD is named to this manager);
   * undefined when absent, not converting, or calling another namespace's or name's Service.
   */
  private ownConversion(crd: ConversionCrd | undefined): ConversionCrd | undefined {
    const conv = crd?.spec?.conversion;
    if (conv?.strategy !== 'Webhook' || !conv.webhook?.clientConfig) return undefined;
    const svc = conv.webhook.clientConfig.service;
    if (svc && (svc.namespace !== this.o.namespace || (this.o.serviceName !== undefined && svc.name !== this.o.serviceName)))
      return undefined;
    return crd;
  }

  private async pass(): Promise<void> {
    const now = this.now();
    const secret = this.secretInformer.get(`${this.o.namespace}/${this.o.secretName}`);
    let stored = bundleFromSecretData(secret?.data);
    const servingCa = this.bundle?.caCert;
    let observed = this.observedBundles();

    if (!this.o.readOnly) {
      const why = renewalReason(stored, this.o.hosts, this.o.renewBeforeMs, now) ?? (secret ? secretDataMismatch(secret.data) : undefined);
      if (why) {
        const written = await this.writeSecret(secret, stored, why, observed.bundles, now);
        // A lost race leaves the winner's Secret to come through the watch; this pass goes on with the cache.
        if (written) stored = written;
      }
      const desired = desiredCaBundle({ observed: observed.bundles, stored, servingCa, now });
      await Promise.all([
        ...this.configInformers.map((c) => this.patchCaBundle(c.type, c.name, c.informer.get(c.name), desired)),
        ...this.crdInformers.map((c) => this.patchCrdCaBundle(c.name, this.ownConversion(c.informer.get(c.name)), desired)),
      ]);
      observed = this.observedBundles();
    }

    this.trust = trustedCas(this.trust, observed.bundles, now, !this.trustObserved);
    this.trustObserved = true;
    const candidate = stored && !renewalReason(stored, this.o.hosts, 0, now) ? stored : undefined;
    const candidateCa = pemCertificates(candidate?.caCert)[0];
    const action = serveAction({
      candidateCert: candidate?.cert,
      servingCert: this.bundle?.cert,
      gate: !this.o.readOnly && observed.configs.length > 0,
      trustedSince: candidateCa === undefined ? undefined : this.trust.get(candidateCa),
      propagationMs: this.o.caPropagationMs ?? 0,
      now,
    });
    if (action.kind === 'install') this.install(candidate!);
    let next = this.o.checkIntervalMs;
    if (action.kind === 'wait') next = Math.min(next, action.ms);
    if (stored && !this.o.readOnly) {
      // Renewal before expiry and the end of the previous CAs' grace come from the clock, not an event.
      try {
        const due = Math.min(validity(stored.cert).notAfter, validity(stored.caCert).notAfter) - this.o.renewBeforeMs - now;
        next = Math.min(next, Math.max(100, due + 50));
      } catch {
        // unreadable: already repaired above, or the write failed and the retry is scheduled
      }
      if (stored.previousCaUntil !== undefined && stored.previousCaUntil > now) next = Math.min(next, stored.previousCaUntil - now + 50);
    }
    this.schedule(next);
  }

  private install(b: CertBundle): void {
    if (this.bundle) this.rotations++;
    this.bundle = b;
    const v = validity(b.cert);
    this.o.logger.info(
      { notAfter: new Date(v.notAfter).toISOString(), rotations: this.rotations },
      'webhook serving certificate installed',
    );
    this.o.onCertificate(b.cert, b.key);
  }

  /** Issues and writes a new bundle; undefined when another replica's write won (its Secret comes by watch). */
  private async writeSecret(
    secret: Secret | undefined,
    stored: CertBundle | undefined,
    why: string,
    observed: readonly string[],
    now: number,
  ): Promise<CertBundle | undefined> {
    const { namespace, secretName } = this.o;
    this.o.logger.info({ secret: `${namespace}/${secretName}`, why }, 'issuing webhook certificates');
    // The issuer only keeps the CA when it is sound; the previous CAs are decided here.
    const ca = reusableCa(stored, this.o.renewBeforeMs, now);
    const issued = await (this.o.issuer ?? issueInProcess)(ca ? { ...ca, cert: '', key: '' } : undefined, this.o);
    const bundle = nextBundle(issued, stored, {
      observed,
      servingCa: this.bundle?.caCert,
      now,
      graceMs: this.o.previousCaGraceMs ?? DEFAULT_PREVIOUS_CA_GRACE_MS,
    });
    const data = bundleToSecretData(bundle);
    try {
      if (!secret) {
        await this.client.create<Secret>(SECRETS, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: secretName, namespace },
          type: 'Opaque',
          data,
        });
      } else {
        // The cache keeps only the data: update the whole object as stored (labels, annotations, type), but
        // only the version this decision was taken on, so a stale cache never overwrites a newer Secret.
        const full = await this.client.get<Secret>(SECRETS, secretName, namespace);
        if (full.metadata.resourceVersion !== secret.metadata.resourceVersion) return undefined;
        await this.client.update<Secret>(SECRETS, { ...full, data });
      }
    } catch (err) {
      if (isConflict(err) || isAlreadyExists(err) || isNotFound(err)) {
        this.o.logger.info({ secret: `${namespace}/${secretName}` }, 'another replica wrote the certificate Secret first');
        return undefined;
      }
      throw err;
    }
    this.o.logger.info(
      { secret: `${namespace}/${secretName}`, newCa: !ca, previousCas: pemCertificates(bundle.previousCaCert).length },
      'webhook certificates written',
    );
    return bundle;
  }

  private async patchCrdCaBundle(name: string, crd: ConversionCrd | undefined, desired: readonly string[]): Promise<void> {
    if (!crd) return;
    const observed = Buffer.from(crd.spec!.conversion!.webhook!.clientConfig!.caBundle ?? '', 'base64').toString('utf8');
    if (caBundleMatches(observed, desired)) return;
    try {
      // A CRD takes no strategic merge: a JSON merge patch of the one field, conditional on the observed version.
      await this.client.patch(
        CUSTOM_RESOURCE_DEFINITIONS,
        name,
        undefined,
        {
          metadata: { resourceVersion: crd.metadata.resourceVersion },
          spec: { conversion: { webhook: { clientConfig: { caBundle: Buffer.from(desired.join('')).toString('base64') } } } },
        },
        PatchStrategy.MergePatch,
      );
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return;
      throw err;
    }
    this.o.logger.info({ crd: name, cas: desired.length }, 'conversion caBundle updated');
  }

  private async patchCaBundle(type: ResourceType, name: string, cfg: WebhookConfig | undefined, desired: readonly string[]): Promise<void> {
    if (!cfg) return;
    const stale = (cfg.webhooks ?? []).filter(
      (w) => !caBundleMatches(Buffer.from(w.clientConfig?.caBundle ?? '', 'base64').toString('utf8'), desired),
    );
    if (stale.length === 0) return;
    const b64 = Buffer.from(desired.join('')).toString('base64');
    try {
      // Strategic merge: `webhooks` merges by name, so only each caBundle changes. The resourceVersion makes
      // it conditional: a decision taken on a stale cache is refused, and taken again on the next event.
      await this.client.patch(
        type,
        name,
        undefined,
        {
          metadata: { resourceVersion: cfg.metadata.resourceVersion },
          webhooks: stale.map((w) => ({ name: w.name, clientConfig: { caBundle: b64 } })),
        },
        PatchStrategy.StrategicMergePatch,
      );
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return;
      throw err;
    }
    this.o.logger.info({ config: name, webhooks: stale.length, cas: desired.length }, 'caBundle updated');
  }
}

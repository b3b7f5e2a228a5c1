import type { Logger } from 'pino';
import { isAlreadyExists, isConflict, isNotFound, PatchStrategy, type KubeClient } from '../client.js';
import {
  MUTATING_WEBHOOK_CONFIGURATIONS,
  SECRETS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
  type ResourceType,
} from '../../../contracts/index.js';
import type { KubeObject, Secret } from '../types.js';
import {
  bundleFromSecretData,
  bundleToSecretData,
  caBundleOf,
  renewalReason,
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
  /** How often to re-read the Secret (picks up another replica's renewal) and re-check the caBundle. */
  readonly checkIntervalMs: number;
  readonly mutatingConfig: string;
  readonly validatingConfig: string;
  /** Pause between publishing a new CA in the caBundle and serving a certificate signed by it. */
  readonly caPropagationMs?: number;
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
}

/** Issues in this process: the X.509 builder loads on the first issue and stays loaded. */
const issueInProcess: CertIssuer = async (old, o) => (await import('./cert-issuer.js')).renewBundle(old, o);

/**
 * Self-managed webhook certificates, as upstream kruise-manager does: a CA and a serving certificate in a
 * Secret of the runtime namespace, created on first start, renewed before expiry by whichever replica sees
 * it first (optimistic concurrency: the others adopt the winner's Secret), and the CA kept in the caBundle
 * of our two webhook configurations. A new CA goes into the caBundle (next to the previous one) before any
 * replica serves a certificate signed by it, so rotations refuse no request.
 */
export class CertManager {
  private timer?: NodeJS.Timeout;
  private bundle?: CertBundle;
  private stopped = false;
  private syncing?: Promise<void>;
  /** Names of configurations whose caBundle is current; missing ones are retried on every check. */
  readonly caBundleState = new Map<string, 'current' | 'missing'>();
  rotations = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly o: CertManagerOptions,
  ) {}

  current(): CertBundle | undefined {
    return this.bundle;
  }

  async start(): Promise<void> {
    await this.sync();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    let next = this.o.checkIntervalMs;
    if (this.bundle && !this.o.readOnly) {
      const due = Math.min(validity(this.bundle.cert).notAfter, validity(this.bundle.caCert).notAfter) - this.o.renewBeforeMs - Date.now();
      next = Math.max(100, Math.min(next, due + 50));
    }
    this.timer = setTimeout(() => {
      this.sync()
        .catch((err: unknown) => this.o.logger.warn({ err: (err as Error).message }, 'webhook certificate check failed'))
        .finally(() => this.schedule());
    }, next);
    this.timer.unref();
  }

  /** One pass: read the Secret, renew if needed, publish the caBundle, install the serving cert. */
  sync(): Promise<void> {
    this.syncing ??= this.doSync().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async doSync(): Promise<void> {
    const { bundle, fresh } = this.o.readOnly ? await this.readSecret() : await this.ensureSecret();
    if (!this.o.readOnly) await this.ensureCaBundle(caBundleOf(bundle));
    const newCa = this.bundle !== undefined && this.bundle.caCert !== bundle.caCert;
    if (fresh && newCa && this.o.caPropagationMs) await new Promise((r) => setTimeout(r, this.o.caPropagationMs));
    if (this.bundle?.cert !== bundle.cert) {
      if (this.bundle) this.rotations++;
      this.bundle = bundle;
      const v = validity(bundle.cert);
      this.o.logger.info(
        { notAfter: new Date(v.notAfter).toISOString(), rotations: this.rotations },
        'webhook serving certificate installed',
      );
      this.o.onCertificate(bundle.cert, bundle.key);
    }
  }

  private async readSecret(): Promise<{ bundle: CertBundle; fresh: boolean }> {
    const secret = await this.client.get<Secret>(SECRETS, this.o.secretName, this.o.namespace);
    const bundle = bundleFromSecretData(secret.data);
    if (!bundle?.cert || !bundle.key) {
      throw new Error(`Secret ${this.o.namespace}/${this.o.secretName} has no tls.crt/tls.key yet (is cert-manager issuing it?)`);
    }
    return { bundle, fresh: false };
  }

  private async ensureSecret(): Promise<{ bundle: CertBundle; fresh: boolean }> {
    const { namespace, secretName } = this.o;
    for (let attempt = 0; attempt < 5; attempt++) {
      let secret: Secret | undefined;
      try {
        secret = await this.client.get<Secret>(SECRETS, secretName, namespace);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const stored = bundleFromSecretData(secret?.data);
      const why = renewalReason(stored, this.o.hosts, this.o.renewBeforeMs);
      if (!why) return { bundle: stored!, fresh: false };
      this.o.logger.info({ secret: `${namespace}/${secretName}`, why }, 'issuing webhook certificates');
      const bundle = await (this.o.issuer ?? issueInProcess)(stored, this.o);
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
          await this.client.update<Secret>(SECRETS, { ...secret, data });
        }
        return { bundle, fresh: true };
      } catch (err) {
        // Another replica wrote first: adopt its certificates on the next pass.
        if (!isConflict(err) && !isAlreadyExists(err)) throw err;
      }
    }
    throw new Error(`could not settle the webhook certificate Secret ${namespace}/${secretName} after 5 attempts`);
  }

  private async ensureCaBundle(caBundle: string): Promise<void> {
    const b64 = Buffer.from(caBundle).toString('base64');
    await Promise.all([
      this.patchConfig(MUTATING_WEBHOOK_CONFIGURATIONS, this.o.mutatingConfig, b64),
      this.patchConfig(VALIDATING_WEBHOOK_CONFIGURATIONS, this.o.validatingConfig, b64),
    ]);
  }

  private async patchConfig(type: ResourceType, name: string, b64: string): Promise<void> {
    let cfg: KubeObject & { webhooks?: Array<{ name: string; clientConfig?: { caBundle?: string } }> };
    try {
      cfg = await this.client.get(type, name);
    } catch (err) {
      if (isNotFound(err)) {
        this.caBundleState.set(name, 'missing');
        return;
      }
      throw err;
    }
    const stale = (cfg.webhooks ?? []).filter((w) => w.clientConfig?.caBundle !== b64);
    if (stale.length > 0) {
      // Strategic merge: `webhooks` merges by name, so only each caBundle changes.
      await this.client.patch(
        type,
        name,
        undefined,
        { webhooks: stale.map((w) => ({ name: w.name, clientConfig: { caBundle: b64 } })) },
        PatchStrategy.StrategicMergePatch,
      );
      this.o.logger.info({ config: name, webhooks: stale.length }, 'caBundle updated');
    }
    this.caBundleState.set(name, 'current');
  }
}

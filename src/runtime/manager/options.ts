// The controller-manager's options and defaults, apart from the Manager so the CLI can declare the
// `controller` flags without loading the runtime's libraries (they load only when the command runs).
import {
  DEFAULT_RUNTIME_NAMESPACE,
  LEADER_ELECTION_LEASE,
  MUTATING_WEBHOOK_CONFIGURATION,
  NAMES,
  RUNTIME_ENV,
  VALIDATING_WEBHOOK_CONFIGURATION,
  WEBHOOK_CERT_SECRET,
} from '../../contracts/index.js';
import type { ObjectValidator } from '../core/controller.js';
import type { CertIssuer } from '../core/webhook/certs.js';
import { uniqueOptions, type ControllerOption } from '../core/options.js';
import { MANAGER_CONTROLLER_PARTS } from './parts.js';

/** Every option the manager's controllers read, each once, from their parts (the CLI builds the flags from it). */
export const MANAGER_CONTROLLER_OPTIONS: readonly ControllerOption<unknown>[] = uniqueOptions(
  MANAGER_CONTROLLER_PARTS.flatMap((p) => p.options ?? []),
);

/** Everything `cdk8s-kruise controller` can be told (see src/cli/commands/controller.ts for the flags). */
export interface ManagerOptions {
  kubeconfig?: string;
  namespace: string;
  featureGates?: string;
  enableLeaderElection: boolean;
  leaderElectionNamespace?: string;
  leaderElectionId: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  metricsAddr: string;
  healthProbeAddr: string;
  /** 0 disables the webhook server. */
  webhookPort: number;
  webhookHost?: string;
  webhookServiceName: string;
  webhookCertHosts: string[];
  webhookSecretName: string;
  /** `self`: the runtime issues and rotates its certificates; `cert-manager`: it only reads the Secret. */
  webhookCertMode: 'self' | 'cert-manager';
  mutatingWebhookConfiguration: string;
  validatingWebhookConfiguration: string;
  webhookCaValidityMs: number;
  webhookCertValidityMs: number;
  webhookCertRenewBeforeMs: number;
  /** Safety-net period of the certificate decisions (taken from the watches' caches; events act at once). */
  webhookCertCheckIntervalMs: number;
  /**
   * How long CAs replaced by a rotation stay in the caBundle beside the new one: longer than any replica
   * takes to reload the Secret and serve the new certificate (see `CertManagerOptions.previousCaGraceMs`).
   */
  webhookPreviousCaGraceMs?: number;
  syncPeriodMs: number;
  workers: Record<string, number>;
  logLevel: string;
  /** Refuse API calls not declared in src/contracts/permissions.ts. */
  strictPermissions: boolean;
  /** Append every API call as a JSON line to this file (permission-coverage tests). */
  accessLogFile?: string;
  gracefulShutdownMs: number;
  /** Values of the options the controllers declared (`MANAGER_CONTROLLER_OPTIONS`), by key; defaults otherwise. */
  controllerOptions: Record<string, unknown>;
  /** Loads the validator of our kinds at admission (on the first request); the API model's schema check when unset. */
  objectValidator?: () => Promise<ObjectValidator>;
  /** Issues the webhook certificates when the Secret holds none that serve; in this process when unset. */
  webhookCertIssuer?: CertIssuer;
}

export const DEFAULT_MANAGER_OPTIONS: ManagerOptions = {
  namespace: process.env[RUNTIME_ENV.podNamespace] ?? DEFAULT_RUNTIME_NAMESPACE,
  enableLeaderElection: false,
  leaderElectionId: LEADER_ELECTION_LEASE,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  metricsAddr: ':8080',
  healthProbeAddr: ':8000',
  webhookPort: Number(process.env.WEBHOOK_PORT ?? 9876),
  webhookServiceName: NAMES.webhookService,
  webhookCertHosts: [],
  webhookSecretName: WEBHOOK_CERT_SECRET,
  webhookCertMode: 'self',
  mutatingWebhookConfiguration: MUTATING_WEBHOOK_CONFIGURATION,
  validatingWebhookConfiguration: VALIDATING_WEBHOOK_CONFIGURATION,
  webhookCaValidityMs: 10 * 365 * 24 * 3600_000,
  webhookCertValidityMs: 365 * 24 * 3600_000,
  webhookCertRenewBeforeMs: 30 * 24 * 3600_000,
  webhookCertCheckIntervalMs: 60_000,
  syncPeriodMs: 0,
  workers: {},
  logLevel: 'info',
  strictPermissions: false,
  gracefulShutdownMs: 8_000,
  controllerOptions: {},
};

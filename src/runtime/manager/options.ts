// The controller-manager's options and defaults, apart from the Manager so the CLI can declare the
// `controller` flags without loading the runtime's libraries (they load only when the command runs).
import {
  LEADER_ELECTION_LEASE,
  MUTATING_WEBHOOK_CONFIGURATION,
  VALIDATING_WEBHOOK_CONFIGURATION,
  WEBHOOK_CERT_SECRET,
} from '../permissions.js';

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
  webhookCertCheckIntervalMs: number;
  syncPeriodMs: number;
  workers: Record<string, number>;
  logLevel: string;
  /** Refuse API calls not declared in src/runtime/permissions.ts. */
  strictPermissions: boolean;
  /** Append every API call as a JSON line to this file (permission-coverage tests). */
  accessLogFile?: string;
  gracefulShutdownMs: number;
  /** Controller-specific options (e.g. the default quick-exit image). */
  controllerOptions: Record<string, unknown>;
}

export const DEFAULT_MANAGER_OPTIONS: ManagerOptions = {
  namespace: process.env.POD_NAMESPACE ?? 'kruise-system',
  enableLeaderElection: false,
  leaderElectionId: LEADER_ELECTION_LEASE,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  metricsAddr: ':8080',
  healthProbeAddr: ':8000',
  webhookPort: Number(process.env.WEBHOOK_PORT ?? 9876),
  webhookServiceName: 'kruise-webhook-service',
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

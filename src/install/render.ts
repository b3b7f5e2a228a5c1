import type { KubeObject } from './types.js';
import type { InstallSpec } from './spec.js';
import { withMetricsScrape } from './metrics.js';
import { namespaces } from './namespace.js';
import { admissionPolicies } from './admission-policies.js';
import { flowControl } from './flow-control.js';
import { daemonRbac, managerRbac } from './rbac.js';
import { controllerManagerDeployment, controllerManagerPdb } from './controller-manager.js';
import { daemonSet } from './daemon.js';
import { capabilitiesConfigMap } from './capabilities.js';
import { mutatingWebhookConfiguration, validatingWebhookConfiguration, webhookCertificate, webhookService } from './webhooks.js';

/**
 * The runtime part of an install (everything but the CRDs), in apply order: namespaces and identities
 * first, workloads next, admission webhooks last so they are registered only once their backend is on
 * its way (their caBundle is filled by the runtime or cert-manager afterwards).
 */
export function renderRuntime(spec: InstallSpec): KubeObject[] {
  const out: (KubeObject | undefined)[] = [
    ...namespaces(spec),
    // What this install carries out, for apps that target it instead of installing a runtime (capabilities.ts).
    capabilitiesConfigMap(spec),
    ...managerRbac(spec),
    ...(spec.daemon ? daemonRbac(spec) : []),
    // The policies narrowing RBAC come with it, before any workload can use the rights.
    ...admissionPolicies(spec),
    // The runtime's requests get their own API priority levels before it sends any.
    ...flowControl(spec),
    webhookService(spec),
    webhookCertificate(spec),
    controllerManagerPdb(spec),
    controllerManagerDeployment(spec),
    daemonSet(spec),
    mutatingWebhookConfiguration(spec),
    validatingWebhookConfiguration(spec),
  ];
  // Scrape annotations and monitors last: they read the ports the workloads were rendered with.
  return withMetricsScrape(
    out.filter((o): o is KubeObject => o !== undefined),
    spec,
  );
}

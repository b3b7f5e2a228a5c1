/**
 * The one place controllers and webhooks are registered. A new controller lives in
 * src/runtime/controllers/<name>/ (decision.ts pure, reconcile.ts I/O, index.ts definition) and a new
 * webhook in src/runtime/webhooks/<name>/; add one line to the matching list below.
 */
import type { ControllerDefinition, WebhookDefinition } from '../core/controller.js';
import { sidecarTerminator } from '../controllers/sidecarterminator/index.js';
import { imagePullJobController } from '../controllers/imagepulljob/index.js';
import { nodeImageController } from '../controllers/nodeimage/index.js';
import { cloneSetController } from '../controllers/cloneset/index.js';
import { advancedStatefulSetController } from '../controllers/advancedstatefulset/index.js';
import { broadcastJobController } from '../controllers/broadcastjob/index.js';
import { daemonSetController } from '../controllers/daemonset/index.js';
import { imageListPullJobController } from '../controllers/imagelistpulljob/index.js';
import { podProbeMarkerController } from '../controllers/podprobemarker/index.js';
import { nodePodProbeController } from '../controllers/nodepodprobe/index.js';
import { podUnavailableBudgetController } from '../controllers/podunavailablebudget/index.js';
import { enhancedLivenessController } from '../controllers/enhancedliveness/index.js';
import { enhancedLivenessWebhook } from '../webhooks/enhancedliveness/index.js';
import { cloneSetWebhook } from '../webhooks/cloneset/index.js';
import { advancedStatefulSetWebhook } from '../webhooks/advancedstatefulset/index.js';
import { daemonSetWebhook } from '../webhooks/daemonset/index.js';
import { containerRecreateRequestWebhook } from '../webhooks/containerrecreaterequest/index.js';
import { kruiseValidationWebhook } from '../webhooks/kruisevalidation/index.js';
import { deletionProtectionWebhook } from '../webhooks/deletionprotection/index.js';
import { podUnavailableBudgetWebhook } from '../webhooks/podunavailablebudget/index.js';
import { podReadinessController } from '../controllers/podreadiness/index.js';
import { podReadinessGatesWebhook } from '../webhooks/podreadinessgates/index.js';
import { sidecarSetController } from '../controllers/sidecarset/index.js';
import { exitPriorityWebhook } from '../webhooks/exitpriority/index.js';
import { launchPriorityWebhook } from '../webhooks/launchpriority/index.js';
import { launchPriorityController } from '../controllers/containerlaunchpriority/index.js';
import { sidecarSetInjectionWebhook, sidecarSetValidationWebhook } from '../webhooks/sidecarset/index.js';

export const CONTROLLERS: readonly ControllerDefinition[] = [
  sidecarTerminator,
  imagePullJobController,
  nodeImageController,
  launchPriorityController,
  podReadinessController,
  sidecarSetController,
  cloneSetController,
  advancedStatefulSetController,
  broadcastJobController,
  daemonSetController,
  imageListPullJobController,
  podProbeMarkerController,
  nodePodProbeController,
  podUnavailableBudgetController,
  enhancedLivenessController,
];

/**
 * The pod webhook's mutators (`/mutate-pod`, pod CREATE). Each handler's `order` (POD_MUTATOR_ORDER), not its
 * place in this list, fixes when it runs; add a new mutator here.
 */
export const POD_MUTATORS: readonly WebhookDefinition[] = [
  sidecarSetInjectionWebhook,
  podReadinessGatesWebhook,
  launchPriorityWebhook,
  exitPriorityWebhook,
  enhancedLivenessWebhook,
];

export const WEBHOOKS: readonly WebhookDefinition[] = [
  containerRecreateRequestWebhook,
  kruiseValidationWebhook,
  cloneSetWebhook,
  advancedStatefulSetWebhook,
  daemonSetWebhook,
  sidecarSetValidationWebhook,
  deletionProtectionWebhook,
  podUnavailableBudgetWebhook,
  ...POD_MUTATORS,
];

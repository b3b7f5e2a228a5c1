// Harness for e2e tests against a real etcd + kube-apiserver (built by test/prepare.d/10-controlplane.sh,
// started once per run by the "e2e" project's globalSetup, test/harness/global-setup.ts).
//
//   const ns = await createNamespace('my-test');          // one namespace per test
//   const kc = adminKubeConfig();                          // admin (system:masters) client config
//   await createNode('node-a', { virtual: true });         // Node objects (type=virtual-kubelet)
//   await bindPod(pod, 'node-a');                          // fake scheduler
//   await setPodStatus(pod, { phase: 'Running', containerStatuses: [{ name: 'app', state: { running: {} } }] });
//   await forceDelete(pod);                                // grace 0: no kubelet confirms deletion
//   const hook = await registerWebhook({ type: 'mutating', rules, handler }); ... await hook.close();
//   await restartApiServer();                              // etcd data survives
//   await canI(serviceAccountUser('kruise-system', 'kruise-manager'), { verb: 'list', resource: 'pods' });
export {
  adminKubeConfig,
  apiErrorMessage,
  bindPod,
  createNamespace,
  createNode,
  discoverResource,
  forceDelete,
  kubeconfigPath,
  kubectl,
  mergePatch,
  rawRequest,
  serverSideApply,
  setPodStatus,
} from './cluster.js';
export type { ContainerStatusInput, NodeOptions, PodStatusInput, RawResponse } from './cluster.js';
export { registerWebhook } from './webhook.js';
export type { AdmissionDecision, AdmissionRequest, RegisteredWebhook, WebhookOptions } from './webhook.js';
export { canI, describeCheck, impersonatingKubeConfig, serviceAccountUser } from './rbac.js';
export type { AccessCheck } from './rbac.js';
export { restartApiServer, startApiServer, stopApiServer } from './apiserver.js';
export { findAssets, pinnedKubernetesVersion } from './assets.js';
export { ControlPlane } from './controlplane.js';
export { createCertificateAuthority } from './pki.js';

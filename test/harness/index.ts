// Harness for e2e tests against a real etcd + kube-apiserver (built by test/prepare.d/10-controlplane.sh,
// started once per run by the "e2e" project's globalSetup, test/harness/global-setup.ts). Nothing else
// runs: no scheduler, kubelet, garbage collector or namespace controller; the helpers below play them.
//
//   const ns = await createNamespace('my-test');          // one namespace per test (never cleaned up)
//   const kc = adminKubeConfig();                          // admin (system:masters) client config
//   await serverSideApply(obj, { fieldManager: 'x', defaultNamespace: ns });  // raw SSA, see below
//   await createNode('node-a', { virtual: true });         // Ready Node (type=virtual-kubelet)
//   await bindPod(pod, 'node-a');                          // fake scheduler (pods/binding)
//   await setPodStatus(pod, { phase: 'Running', containerStatuses: [{ name: 'app', state: { running: {} } }] });
//   await forceDelete(pod);                                // grace 0: no kubelet confirms deletion
//   const hook = await registerWebhook({ type: 'mutating', rules, handler }); ... await hook.close();
//   await restartApiServer();                              // or stopApiServer()/startApiServer(); etcd keeps data
//   await canI(serviceAccountUser('kruise-system', 'kruise-manager'), { verb: 'list', resource: 'pods' });
//   await kubectl(['get', 'pods', '-n', ns, '-o', 'json']); // the control plane's own kubectl
//   const proxy = await FaultProxy.start(server);          // a client's loopback path to the apiserver that
//   proxy.stall(); proxy.heal(); proxy.reset();            // partitions, resets or goes half-open (fault-proxy.ts)
//
// Pitfall: client-node's KubernetesObjectApi re-serializes objects through its models and drops keys
// it does not model (a CRD's `x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`):
// apply manifests with serverSideApply()/rawRequest() or kubectl instead.
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
export { FaultProxy } from './fault-proxy.js';
export type { FaultProxyStats } from './fault-proxy.js';

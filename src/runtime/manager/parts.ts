// What the controller-manager runs, by registered name and in registry order, for `cdk8s-kruise controller`'s
// description and help, and the options each controller reads, declared once here: the command's flags and the
// manager's parsed values come from these (src/runtime/manager/registry.ts is the registry; a unit test holds
// these to it).
import { SIDECARSET_REVISION_NAMESPACE } from '../control/sidecarset-options.js';
import { SHARED_OPTIONS, type ControllerOption } from '../core/options.js';
import type { RuntimeControllerPart, RuntimePart } from '../core/parts.js';
import { EXCLUDE_PREPARING_DELETE_OPTION } from '../controllers/cloneset/options.js';

export const MANAGER_CONTROLLER_PARTS: readonly RuntimeControllerPart[] = [
  {
    name: 'sidecarterminator',
    gate: 'SidecarTerminator',
    topic: 'Job sidecar termination',
    does: "stops a finished Job pod's marked sidecars through a ContainerRecreateRequest (after the daemon's node-local stop, when on)",
  },
  {
    name: 'imagepulljob',
    gate: 'ImagePullJobGate',
    topic: 'ImagePullJobs',
    does: "puts each ImagePullJob's image on its nodes' NodeImages, copies its pull secrets for the daemons, keeps its status and TTL",
    options: [SHARED_OPTIONS.daemonConfigNamespace],
  },
  {
    name: 'nodeimage',
    gate: 'ImagePullJobGate',
    topic: 'NodeImages',
    does: "one NodeImage per Ready node, with the node's labels; prunes finished tags, deletes it with the node",
  },
  {
    name: 'containerlaunchpriority',
    gate: 'PodWebhook',
    topic: 'launch priority',
    does: "the <pod>-barrier ConfigMap that releases a pod's containers in launch-priority order",
  },
  {
    name: 'podreadiness',
    topic: 'pod readiness',
    does: 'sets the readiness gates the pod webhook adds (KruisePodReady, InPlaceUpdateReady) True on pods without them',
  },
  {
    name: 'sidecarset',
    gate: 'PodWebhook',
    topic: 'SidecarSets',
    does: 'SidecarSet status, ControllerRevisions and in-place sidecar image upgrades',
    // The SidecarSet webhooks read it too (pinned revisions, the patch whitelist); they run in the same process.
    options: [SIDECARSET_REVISION_NAMESPACE],
  },
  {
    name: 'cloneset',
    topic: 'CloneSets',
    does: 'CloneSet pods and PVCs: scaling, lifecycle hooks, in-place and ReCreate updates, revisions, status',
    options: [EXCLUDE_PREPARING_DELETE_OPTION as ControllerOption<unknown>],
  },
  {
    name: 'advancedstatefulset',
    topic: 'Advanced StatefulSets',
    does: 'Advanced StatefulSet pods and claims: ordered identities with reserved ordinals and a start ordinal, OrderedReady or Parallel scaling, rolling update (recreate or in place; partition, maxUnavailable, pause), lifecycle hooks, revisions, status',
  },
  {
    name: 'broadcastjob',
    topic: 'BroadcastJobs',
    does: 'one pod per eligible node for each BroadcastJob: parallelism, completion and failure policies, status, TTL',
  },
  {
    name: 'daemonset',
    topic: 'Advanced DaemonSets',
    does: 'one pod per eligible node for each Advanced DaemonSet: burst creation, rolling update (recreate or in place; partition, node selector, pause, surge), lifecycle hooks, revisions, status',
  },
  {
    name: 'imagelistpulljob',
    gate: 'ImagePullJobGate',
    topic: 'ImageListPullJobs',
    does: "one ImagePullJob per image of each ImageListPullJob with the list's template; list edits, status, TTL",
  },
  {
    name: 'podprobemarker',
    gate: 'PodProbeMarkerGate',
    topic: 'PodProbeMarkers',
    does: "lists each PodProbeMarker's probes, per selected pod, in the NodePodProbe of the pod's node; finalizer, status",
  },
  {
    name: 'nodepodprobe',
    gate: 'PodProbeMarkerGate',
    topic: 'NodePodProbes',
    does: 'one NodePodProbe per Ready node; writes each probe result to its pod as the marker asks (condition, labels, annotations)',
  },
  {
    name: 'podunavailablebudget',
    gate: 'PodUnavailableBudgetDeleteGate',
    topic: 'PodUnavailableBudgets',
    does: "keeps each PodUnavailableBudget's counts and records, and annotates the pods it covers",
  },
  {
    name: 'enhancedliveness',
    gate: 'EnhancedLivenessProbe',
    topic: 'enhanced liveness',
    does: "runs the liveness probes the pod webhook moved through the node daemons and restarts a failing container only while its pod's budget allows",
  },
];

export const MANAGER_WEBHOOK_PARTS: readonly RuntimePart[] = [
  {
    name: 'containerrecreaterequest',
    does: 'ContainerRecreateRequest defaulting and validation',
  },
  {
    name: 'kruisevalidation',
    does: 'validates CloneSets, SidecarSets, ImagePullJobs, NodeImages and BroadcastJobs with the policy rules of `cdk8s-kruise validate`',
  },
  { name: 'cloneset', does: 'CloneSet defaulting and update checks' },
  { name: 'advancedstatefulset', does: 'Advanced StatefulSet defaulting, reserveOrdinals and strategy checks, immutable fields' },
  { name: 'daemonset', does: 'Advanced DaemonSet defaulting and checks (rolling update limits, selector)' },
  {
    name: 'sidecarsetvalidation',
    does: 'SidecarSet checks against the cluster: overlapping SidecarSets, the patchPodMetadata whitelist',
  },
  {
    name: 'deletionprotection',
    gate: 'ResourcesDeletionProtection',
    does: 'refuses deleting objects labelled policy.kruise.io/delete-protection (Always, or Cascading while they hold pods, replicas or custom resources)',
  },
  {
    name: 'podunavailablebudget',
    gate: 'PodUnavailableBudgetDeleteGate',
    does: 'refuses deleting, evicting or (PodUnavailableBudgetUpdateGate) updating in place a pod beyond its PodUnavailableBudget',
  },
  {
    name: 'sidecarsetinjection',
    gate: 'PodWebhook',
    does: "pod webhook: injects the SidecarSets' containers",
  },
  {
    name: 'podreadinessgates',
    gate: 'PodWebhook',
    does: 'pod webhook: readiness gates on pods of apps.kruise.io workloads',
  },
  {
    name: 'launchpriority',
    gate: 'PodWebhook',
    does: 'pod webhook: container launch priority (env and barrier)',
  },
  {
    name: 'exitpriority',
    gate: 'ContainerExitPriority',
    does: 'pod webhook: container exit priority (preStop hooks the node daemon answers)',
  },
  {
    name: 'enhancedliveness',
    gate: 'EnhancedLivenessProbe',
    does: 'pod webhook: moves the liveness probes of pods annotated apps.kruise.io/using-enhanced-liveness into apps.kruise.io/container-probe-context',
  },
];

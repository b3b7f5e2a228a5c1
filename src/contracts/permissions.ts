/**
 * The single declared list of Kubernetes API calls the bundled runtime makes.
 *
 * Why one list: the install manifests (src/install) generate the RBAC of the manager and the daemon from
 * it, and every call the runtime makes goes through `KubeClient` (`src/runtime/core/client.ts`), which knows
 * the (apiGroup, resource, verb) of the call. A test records the calls made during the e2e runs and checks
 * that each is covered here (and reports declared rules nobody used), so RBAC can neither drift from the
 * code nor grow wildcards.
 *
 * Format: RBAC PolicyRule shape, no wildcards. `resources` may name a subresource as `pods/status`.
 * Keep one rule per (apiGroups, resources) pair with a short `why` so a reviewer can audit it; the `why`
 * is dropped when the rule is rendered into a Role/ClusterRole.
 *
 * - MANAGER: cluster-wide rules for the controller-manager (ClusterRole).
 * - MANAGER_NAMESPACED: rules only needed in the manager's own namespace (Role): leader-election Lease,
 *   the webhook-certificate Secret.
 * - MANAGER_DAEMON_CONFIG: rules the manager needs in the daemon-config namespace only (Role there): the
 *   ImagePullJob pull-secret copies. Writing Secrets is the sharpest right the manager holds, so it is
 *   confined to the one namespace the copies go to.
 * - DAEMON: cluster-wide rules for the node daemon (`cdk8s-kruise daemon`).
 * - DAEMON_NAMESPACED: rules only needed in the daemon-config namespace (pull secrets copied there).
 *
 * Where each namespaced list applies is stated once, by `managerScopes` / `daemonScopes`: the client's
 * strict check, the coverage tests and the RBAC generator all read it from there.
 */
import { KRUISE_GROUP, KRUISE_POLICY_GROUP } from './groups.js';
import {
  KRUISE_CONFIGURATION_CONFIGMAP,
  MUTATING_WEBHOOK_CONFIGURATION,
  SIDECARSET_CRD,
  VALIDATING_WEBHOOK_CONFIGURATION,
  WEBHOOK_CERT_SECRET,
} from './names.js';

/** Kubernetes API verbs we use (no `*`). */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** One RBAC-shaped rule. */
export interface PermissionRule {
  /** API groups; `''` is the core group. */
  readonly apiGroups: readonly string[];
  /** Resource names in plural form, subresources as `resource/sub`. */
  readonly resources: readonly string[];
  /** Verbs allowed on every listed resource. */
  readonly verbs: readonly Verb[];
  /**
   * Optional restriction to named objects: get/update/patch/delete, and list/watch confined to one name by a
   * `metadata.name` field selector (the API server authorizes those as requests on that name).
   */
  readonly resourceNames?: readonly string[];
  /** Why the runtime needs it (documentation; not rendered into RBAC). */
  readonly why: string;
}

export const MANAGER: readonly PermissionRule[] = [
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: ['get', 'list', 'watch', 'update', 'patch'],
    why: 'informer on pods; sidecar terminator swaps sidecar images on virtual-kubelet nodes (Get+Update with conflict retry); SidecarSet controller patches sidecar images and its annotations (conditional on resourceVersion); CloneSet controller patches lifecycle state, revision labels, in-place images and owner references (adopt/release); deletion protection lists the active pods of a Cascading namespace under deletion; nodepodprobe writes the labels/annotations of PodProbeMarker results (merge patch, uid precondition); PodUnavailableBudget controller annotates covered pods with kruise.io/related-pub (merge patch) and its webhook reads the pod an eviction names',
  },
  {
    apiGroups: [''],
    resources: ['pods/status'],
    verbs: ['patch'],
    why: 'sidecar terminator sets condition SidecarTerminated and the phase for ignore-exit-code sidecars; podreadiness sets the readiness gates the pod webhook added (KruisePodReady, InPlaceUpdateReady) True when absent; nodepodprobe sets the podConditionType conditions of PodProbeMarker results; enhancedliveness sets kruise.cdk8s.io/LivenessRestartPending while a liveness restart waits for its budget',
  },
  {
    apiGroups: [''],
    resources: ['namespaces'],
    verbs: ['list', 'watch'],
    why: "pod webhook: a SidecarSet's namespaceSelector is matched against the labels of the pod's namespace",
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['sidecarsets'],
    verbs: ['list', 'watch'],
    why: 'pod webhook injects the matching SidecarSets; the SidecarSet controller upgrades their pods',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['sidecarsets'],
    verbs: ['patch'],
    why: 'SidecarSet controller keeps the kruise.io/sidecarset-hash annotations of the set equal to its spec (tools read them)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['sidecarsets/status'],
    verbs: ['patch'],
    why: 'SidecarSet status: pod counts, observedGeneration, latestRevision, the RolloutStuck condition',
  },
  {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'create', 'patch'],
    why:
      'container launch priority: the <pod>-barrier ConfigMap (owned by the pod) is read, created, and given its p_<priority> keys by merge patch; ' +
      "RBAC cannot restrict a create by name, so the install's admission policy kruise-manager-configmap-scope lets these writes reach barriers only",
  },
  {
    apiGroups: [''],
    resources: ['nodes'],
    verbs: ['get', 'list', 'watch'],
    why: 'virtual-kubelet detection (label type=virtual-kubelet) for the sidecar terminator and CRR webhook',
  },
  {
    apiGroups: [''],
    resources: ['events'],
    verbs: ['create'],
    why: 'Normal/Warning events on the objects we act on (one event per action, no aggregation patches)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['containerrecreaterequests'],
    verbs: ['list', 'watch', 'create'],
    why: 'sidecar terminator creates sidecar-termination-<pod uid> CRRs (idempotent: checked in the informer cache, AlreadyExists tolerated); enhancedliveness creates one CRR per failing container instance (name from the container id, AlreadyExists tolerated) and counts its own as restarts under way',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['imagepulljobs'],
    verbs: ['list', 'watch', 'create', 'patch', 'delete'],
    why: 'ImagePullJob controller: informer on jobs; adds the deletion-protection finalizer to an unfinished job and removes it once its pull-secret copies are let go of; deletes finished jobs after ttlSecondsAfterFinished. ImageListPullJob controller: creates one ImagePullJob per image of a list (owned by it) and deletes one whose image left the list or whose template is stale. CloneSet and Advanced StatefulSet controllers (gate PreDownloadImageForInPlaceUpdate) and Advanced DaemonSet controller (gate PreDownloadImageForDaemonSetUpdate): watch the jobs they control, create one per changed image of an update (AlreadyExists tolerated) and delete them once the update is done',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['imagepulljobs/status'],
    verbs: ['patch'],
    why: 'ImagePullJob status aggregated from the NodeImages (desired, active, succeeded, failed, failedNodes, completionTime)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['imagelistpulljobs'],
    verbs: ['list', 'watch', 'delete'],
    why: 'ImageListPullJob controller: informer on list jobs; deletes a finished one after ttlSecondsAfterFinished (its ImagePullJobs go with it by owner reference)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['imagelistpulljobs/status'],
    verbs: ['patch'],
    why: 'ImageListPullJob status aggregated from its ImagePullJobs (desired, active, completed, succeeded, failedImageStatuses, startTime, completionTime)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['nodeimages'],
    verbs: ['list', 'watch', 'create', 'patch', 'delete'],
    why: 'one NodeImage per Ready Node (created, labels synced, deleted with the node); ImagePullJob tags added and pruned by conditional merge patches',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get', 'list', 'watch'],
    why: "ImagePullJob spec.pullSecrets: the source Secret is read in the job's namespace, which can be any, and registry-credential Secrets are watched (field selector on type) so a changed source reaches its copy at once (writes go to MANAGER_DAEMON_CONFIG)",
  },
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: ['create', 'delete'],
    why: 'CloneSet, BroadcastJob and Advanced DaemonSet controllers: create their pods; CloneSet deletes pods on scale-in and recreate, BroadcastJob the active pods of a failed job and pods no longer fitting their node, DaemonSet pods on nodes that no longer fit, extra pods of a node and pods replaced by a rolling update (CloneSet and DaemonSet patch lifecycle state, revision labels, in-place images and owner references under the pods rule above)',
  },
  {
    apiGroups: [''],
    resources: ['persistentvolumeclaims'],
    verbs: ['list', 'watch', 'create', 'patch', 'delete'],
    why: "CloneSet volumeClaimTemplates: one PVC per instance, deleted with its pod; disablePVCReuse hands a dead instance's PVC to its pod (owner patch) or deletes it; deletion protection lists the Bound claims of a Cascading namespace under deletion; Advanced StatefulSet claim resizing (StatefulSetAutoResizePVCGate) raises a claim's storage request to its template's",
  },
  {
    apiGroups: ['storage.k8s.io'],
    resources: ['storageclasses'],
    verbs: ['list', 'watch'],
    why: 'Advanced StatefulSet claim resizing (StatefulSetAutoResizePVCGate): the webhook refuses growing a claim template whose StorageClass does not allow expansion, and the controller grows only claims of a class that does',
  },
  {
    apiGroups: ['apps'],
    resources: ['controllerrevisions'],
    verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
    why: 'CloneSet and Advanced DaemonSet template history: create the update revision (read the holder of its name on a collision), bump an older equal one on rollback, truncate beyond revisionHistoryLimit; CloneSet, Advanced StatefulSet and Advanced DaemonSet label the update revision once its images are sent for pre-download or ruled out (merge patch)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['clonesets'],
    verbs: ['get', 'list', 'watch', 'patch'],
    why: 'CloneSet controller: informer on CloneSets; drops names of gone pods from scaleStrategy.podsToDelete; PodUnavailableBudget controller reads the replicas and selector of a CloneSet whose pods a budget covers',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['clonesets/status'],
    verbs: ['patch'],
    why: 'CloneSet status (replicas, ready/available/updated counts, revisions, collisionCount, labelSelector for the scale subresource, conditions)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['statefulsets'],
    verbs: ['list', 'watch'],
    why: 'Advanced StatefulSet controller: informer on StatefulSets (its pods, claims and revisions are written under the pods, persistentvolumeclaims and controllerrevisions rules)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['statefulsets/status'],
    verbs: ['patch'],
    why: 'Advanced StatefulSet status (replicas, ready/available/current/updated counts, revisions, collisionCount, labelSelector for the scale subresource, conditions)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['daemonsets'],
    verbs: ['list', 'watch'],
    why: 'Advanced DaemonSet controller: informer on DaemonSets (pods, revisions and status are written under their own rules)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['daemonsets/status'],
    verbs: ['patch'],
    why: 'Advanced DaemonSet status (desired/current/ready/available/unavailable/updated/misscheduled counts, revision hash (daemonSetHash), collisionCount, observedGeneration)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['broadcastjobs'],
    verbs: ['list', 'watch', 'delete'],
    why: 'BroadcastJob controller: informer on jobs; deletes a finished job after ttlSecondsAfterFinished (its pods go with it by owner reference); creates and deletes its pods under the pods rules above',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['broadcastjobs/status'],
    verbs: ['patch'],
    why: 'BroadcastJob status (active, succeeded, failed, desired, phase, conditions, startTime, completionTime)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['podprobemarkers'],
    verbs: ['list', 'watch', 'patch'],
    why: 'PodProbeMarker controller: informer on markers; adds and removes the kruise.io/node-pod-probe-cleanup finalizer (conditional merge patch)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['podprobemarkers/status'],
    verbs: ['patch'],
    why: 'PodProbeMarker status (observedGeneration, matchedPods)',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['nodepodprobes'],
    verbs: ['list', 'watch', 'create', 'patch', 'delete'],
    why: "one NodePodProbe per Ready Node (created, deleted with the node); markers' probes written and gone pods pruned by conditional merge patches; enhancedliveness writes the moved liveness probes of its node's opted-in pods (conditional merge patch) and reads their results",
  },
  {
    apiGroups: ['policy'],
    resources: ['poddisruptionbudgets'],
    verbs: ['list', 'watch'],
    why: 'enhancedliveness: the PodDisruptionBudget selecting a pod bounds its liveness restarts where no PodUnavailableBudget covers it',
  },
  {
    apiGroups: [KRUISE_POLICY_GROUP],
    resources: ['podunavailablebudgets'],
    verbs: ['get', 'list', 'watch'],
    why: 'PodUnavailableBudget controller: informer on budgets; the pod webhook reads the budget of a pod under deletion, eviction or in-place update from the API server, and so do the CloneSet and SidecarSet controllers before they update a covered pod in place or recreate it',
  },
  {
    apiGroups: [KRUISE_POLICY_GROUP],
    resources: ['podunavailablebudgets/status'],
    verbs: ['update'],
    why: 'PodUnavailableBudget status: the controller writes the counts and prunes the records; the pod webhook, and the CloneSet and SidecarSet controllers before an update, spend unavailableAllowed and record the pod they let go (all conditional on resourceVersion)',
  },
  {
    apiGroups: ['apps'],
    resources: ['deployments', 'statefulsets'],
    verbs: ['get', 'list', 'watch'],
    why: 'PodUnavailableBudget controller: the replicas (and, for a targetRef, the selector) of the workloads whose pods a budget covers, read at each count; informers on them so a change of replicas or a deletion recounts the budgets covering their pods',
  },
  {
    apiGroups: ['apps'],
    resources: ['replicasets'],
    verbs: ['get'],
    why: "PodUnavailableBudget controller: a covered pod's ReplicaSet, to count its Deployment's replicas",
  },
  {
    apiGroups: ['admissionregistration.k8s.io'],
    resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
    verbs: ['get', 'list', 'watch', 'patch'],
    resourceNames: [MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION],
    why: 'watch our own two webhook configurations (field selector metadata.name) and keep their caBundle holding the CAs the replicas serve; a stripped caBundle is restored on the event',
  },
  {
    apiGroups: ['apiextensions.k8s.io'],
    resources: ['customresourcedefinitions'],
    verbs: ['get', 'list', 'watch', 'patch'],
    resourceNames: [SIDECARSET_CRD],
    why: "watch the SidecarSet CRD (field selector metadata.name) and keep its conversion webhook's caBundle holding the CAs the replicas serve, like the webhook configurations'",
  },
];

export const MANAGER_NAMESPACED: readonly PermissionRule[] = [
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'create', 'update'],
    why: 'leader election on a coordination.k8s.io/v1 Lease (create it once, then renew/take over by update)',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['create'],
    why: 'webhook CA + serving certificate Secret created in the runtime namespace when missing (RBAC cannot restrict create by name)',
  },
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get', 'list', 'watch', 'update'],
    resourceNames: [WEBHOOK_CERT_SECRET],
    why: 'the webhook certificate Secret, watched (field selector metadata.name) so every replica reloads the serving certificate on a change, and renewed or repaired by update',
  },
  {
    apiGroups: ['apps'],
    resources: ['controllerrevisions'],
    verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
    why: 'one ControllerRevision per SidecarSet version, kept in the runtime namespace as upstream does (created when missing, renumbered when the set returns to it, watched and deleted beyond revisionHistoryLimit unless in use); the pod webhook reads the revision injectionStrategy.revision pins (by name, or listed by custom-version label)',
  },
  {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get'],
    resourceNames: [KRUISE_CONFIGURATION_CONFIGMAP],
    why: "SidecarSet patchPodMetadata: the admin's annotation-key whitelist in ConfigMap kruise-configuration (read by the pod and SidecarSet webhooks)",
  },
];

/** Manager: rules in the daemon-config namespace only (Role + RoleBinding there). */
export const MANAGER_DAEMON_CONFIG: readonly PermissionRule[] = [
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get', 'list', 'create', 'update', 'delete'],
    why: 'ImagePullJob pull secrets copied for the daemons: read the copy, create it, update it when the source or the jobs using it change, list the copies of a finished or deleted job and delete a copy no unfinished job uses',
  },
];

/** Node daemon: cluster-wide rules. */
export const DAEMON: readonly PermissionRule[] = [
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['containerrecreaterequests'],
    verbs: ['list', 'watch', 'create', 'patch', 'delete'],
    why:
      "informer on this node's CRRs (label selector); annotate unready-acquired, drop the active label; delete after ttlSecondsAfterFinished; " +
      'node-local sidecar terminator creates the sidecar-termination-<pod uid> CRR to record a stop it made (AlreadyExists tolerated); ' +
      "the install's admission policy kruise-daemon-node-scope binds every CRR write to the node of the daemon's token",
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['containerrecreaterequests/status'],
    verbs: ['patch'],
    why: 'CRR phase, per-container recreate states, completion (merge patches)',
  },
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: ['get', 'list', 'watch'],
    why:
      'the pod of a CRR: uid, phase, container readiness after the restart, readiness gates, pod IP for httpGet preStop; ' +
      "exit priority and the node-local sidecar terminator: informer on this node's pods (field selector spec.nodeName), and a get when a hook comes before the deletion is cached",
  },
  {
    apiGroups: [''],
    resources: ['pods/status'],
    verbs: ['patch'],
    why: "unreadyGracePeriodSeconds: condition KruisePodReady=False before the kill, True again after; env from metadata: the annotation apps.kruise.io/runtime-containers-meta (pods on the daemon's node only, by kruise-daemon-node-scope)",
  },
  {
    apiGroups: [''],
    resources: ['events'],
    verbs: ['create'],
    why: 'Normal/Warning events about stopped containers and pulls',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['nodeimages'],
    verbs: ['list', 'watch'],
    why: "informer on this node's own NodeImage (field selector metadata.name)",
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['nodeimages/status'],
    verbs: ['patch'],
    why: 'per-tag pull states and counters of this node',
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['nodepodprobes'],
    verbs: ['list', 'watch'],
    why: "informer on this node's own NodePodProbe (field selector metadata.name)",
  },
  {
    apiGroups: [KRUISE_GROUP],
    resources: ['nodepodprobes/status'],
    verbs: ['patch'],
    why: "probe results of this node's pods (kruise-daemon-node-scope binds the write to the daemon's own node)",
  },
];

/** Node daemon: rules in the daemon-config namespace only. */
export const DAEMON_NAMESPACED: readonly PermissionRule[] = [
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get'],
    why: 'pull secrets the ImagePullJob controller copied into the daemon-config namespace, read when a pull needs them',
  },
];

/** Every declared list by name, for the RBAC generator and the coverage test. */
export const PERMISSIONS = {
  MANAGER,
  MANAGER_NAMESPACED,
  MANAGER_DAEMON_CONFIG,
  DAEMON,
  DAEMON_NAMESPACED,
} as const;

export type PermissionSet = keyof typeof PERMISSIONS;

/** One API call as the client wrapper records it. */
export interface ApiAccess {
  readonly apiGroup: string;
  /** Plural resource, with `/subresource` when the call targets one. */
  readonly resource: string;
  readonly verb: Verb;
  /** Namespace of the call, undefined for cluster-scoped objects or all-namespace lists/watches. */
  readonly namespace?: string;
  /** Object name for get/update/patch/delete. */
  readonly name?: string;
}

/** One rule list and where it applies: cluster-wide (a ClusterRole) or in one namespace (a Role there). */
export interface PermissionScope {
  readonly rules: readonly PermissionRule[];
  /** Namespace the rules are bound in; undefined for cluster-wide rules. */
  readonly namespace?: string;
}

/** Where the manager's lists apply. */
export function managerScopes(namespaces: { readonly runtime: string; readonly daemonConfig: string }): PermissionScope[] {
  return [
    { rules: MANAGER },
    { rules: MANAGER_NAMESPACED, namespace: namespaces.runtime },
    { rules: MANAGER_DAEMON_CONFIG, namespace: namespaces.daemonConfig },
  ];
}

/** Where the daemon's lists apply. */
export function daemonScopes(configNamespace: string): PermissionScope[] {
  return [{ rules: DAEMON }, { rules: DAEMON_NAMESPACED, namespace: configNamespace }];
}

function ruleCovers(rule: PermissionRule, access: ApiAccess): boolean {
  if (!rule.apiGroups.includes(access.apiGroup)) return false;
  if (!rule.resources.includes(access.resource)) return false;
  if (!rule.verbs.includes(access.verb)) return false;
  if (rule.resourceNames && (access.name === undefined || !rule.resourceNames.includes(access.name))) return false;
  return true;
}

/**
 * The rule that allows `access`, or undefined. A namespaced scope only counts for calls in its namespace
 * (a Role grants nothing elsewhere, and nothing for all-namespace lists or cluster-scoped objects).
 */
export function findCoveringRule(access: ApiAccess, scopes: readonly PermissionScope[]): PermissionRule | undefined {
  for (const scope of scopes) {
    if (scope.namespace !== undefined && access.namespace !== scope.namespace) continue;
    const rule = scope.rules.find((r) => ruleCovers(r, access));
    if (rule) return rule;
  }
  return undefined;
}

/** Renders rules as RBAC PolicyRules (drops `why`, sorts nothing: declaration order is kept). */
export function toPolicyRules(rules: readonly PermissionRule[]): Array<Record<string, string[]>> {
  return rules.map((r) => {
    const out: Record<string, string[]> = {
      apiGroups: [...r.apiGroups],
      resources: [...r.resources],
      verbs: [...r.verbs],
    };
    if (r.resourceNames) out.resourceNames = [...r.resourceNames];
    return out;
  });
}

/**
 * The env vars, labels, annotations, condition types and finalizers by which users, webhooks,
 * controllers and the daemon talk about pods and our objects. Upstream's spelling, so manifests and
 * tools written for OpenKruise keep working. Every other module imports these instead of spelling them.
 *
 * @module
 */

/** Env marker: `"true"` (case-insensitive) marks a sidecar that is killed once all main containers exited. */
export const ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT';
/**
 * Env marker whose value is a quick-exit image: on virtual-kubelet nodes the sidecar's image is
 * replaced by it in place, so the container restarts into something that exits at once.
 */
export const ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE';
/**
 * Env marker (`"true"`), honoured only with {@link ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT}: the pod phase
 * is decided from the main containers alone (condition SidecarTerminated + phase patch).
 */
export const ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE = 'KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE';
/** Pod condition set when the terminator decided the phase itself. */
export const CONDITION_SIDECAR_TERMINATED = 'SidecarTerminated';
/** Message of the SidecarTerminated condition. */
export const CONDITION_SIDECAR_TERMINATED_MESSAGE = 'Terminated by Sidecar Terminator';
/** Event reason of the sidecar terminator. */
export const EVENT_REASON_SIDECAR_TERMINATOR = 'SidecarTerminator';
/** Node label key/value of virtual-kubelet nodes (also copied onto CRRs for such nodes). */
export const LABEL_NODE_TYPE = 'type';
/** Value of {@link LABEL_NODE_TYPE} on virtual-kubelet nodes. */
export const NODE_TYPE_VIRTUAL_KUBELET = 'virtual-kubelet';
/** Pod annotation: JSON map container name → non-negative integer; larger exits later; default 0. */
export const ANNOTATION_CONTAINER_EXIT_PRIORITY = 'kruise.io/container-exit-priority';
/** Pod annotation asking for ordered container start (needs the PodWebhook gate). */
export const ANNOTATION_CONTAINER_LAUNCH_PRIORITY = 'apps.kruise.io/container-launch-priority';
/** Value of {@link ANNOTATION_CONTAINER_LAUNCH_PRIORITY}: start containers in spec order. */
export const LAUNCH_PRIORITY_ORDERED = 'Ordered';
/** Per-container env: integer in ±2147483647 (default 0); higher starts first. */
export const ENV_CONTAINER_PRIORITY = 'KRUISE_CONTAINER_PRIORITY';
/** Env the webhook adds to each container; valueFrom configMapKeyRef `<pod>-barrier` / `p_<prio>`. */
export const ENV_CONTAINER_BARRIER = 'KRUISE_CONTAINER_BARRIER';
/** Pod annotation set once every container was released. */
export const ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED = 'apps.kruise.io/container-launch-priority-completed';
/** CRR label: UID of the target pod (set by the CRR webhook). */
export const LABEL_CRR_POD_UID = 'crr.apps.kruise.io/pod-uid';
/** CRR label: node of the target pod (immutable; the daemon watches by it). */
export const LABEL_CRR_NODE_NAME = 'crr.apps.kruise.io/node-name';
/** `"true"` while the CRR is not completed. */
export const LABEL_CRR_ACTIVE = 'crr.apps.kruise.io/active';
/** Pod label holding the lifecycle state (changed only by the workload controller). */
export const LABEL_LIFECYCLE_STATE = 'lifecycle.apps.kruise.io/state';
/** Pod annotation: RFC 3339 time of the last lifecycle state change. */
export const ANNOTATION_LIFECYCLE_TIMESTAMP = 'lifecycle.apps.kruise.io/timestamp';
/** Readiness gate / condition type that markPodNotReady sets to False. */
export const CONDITION_KRUISE_POD_READY = 'KruisePodReady';
/**
 * Advanced DaemonSet annotation (`"true"`): v1alpha1's spelling of v1beta1's `spec.scaleStrategy.partitionedScaling`
 * (with a partition, pods are created only on as many nodes as the partition leaves to the update revision).
 */
export const ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD = 'daemonset.kruise.io/progressive-create-pod';
/** CloneSet PVC/pod label binding a PVC to its pod slot. */
export const LABEL_CLONESET_INSTANCE_ID = 'apps.kruise.io/cloneset-instance-id';
/** Pod/SidecarSet annotation: JSON map set name → {@link SidecarSetHashEntry} (hash of the sidecar spec). */
export const ANNOTATION_SIDECARSET_HASH = 'kruise.io/sidecarset-hash';
/** Like {@link ANNOTATION_SIDECARSET_HASH} with images blanked: equal values mean only images changed. */
export const ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE = 'kruise.io/sidecarset-hash-without-image';
/** Pod annotation: comma-separated names of the SidecarSets injected. */
export const ANNOTATION_SIDECARSET_INJECTED_LIST = 'kruise.io/sidecarset-injected-list';
/** Pod annotation: state of an in-place sidecar upgrade. */
export const ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE = 'kruise.io/sidecarset-inplace-update-state';
/** Pod annotation: JSON map sidecar → working hot-upgrade container (e.g. `{"X":"X-1"}`). */
export const ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER = 'kruise.io/sidecarset-working-hotupgrade-container';
/** Label on a SidecarSet that becomes spec.customVersion in v1beta1. */
export const LABEL_SIDECARSET_CUSTOM_VERSION = 'apps.kruise.io/sidecarset-custom-version';
/** Env set to "true" on every injected container. */
export const ENV_IS_INJECTED = 'IS_INJECTED';
/** Env exposing the hot-upgrade version of the container. */
export const ENV_SIDECARSET_VERSION = 'SIDECARSET_VERSION';
/** Env exposing the alternate hot-upgrade version. */
export const ENV_SIDECARSET_VERSION_ALT = 'SIDECARSET_VERSION_ALT';
/** Pod condition set by the SidecarSet in-place upgrade. */
export const CONDITION_SIDECARSET_UPGRADABLE = 'SidecarSetUpgradable';
/** Finalizer the ImagePullJob controller adds. */
export const FINALIZER_DELETION_PROTECTION = 'apps.kruise.io/deletion-protection';
/** Finalizer the PodProbeMarker controller adds: it removes the marker's probes from every NodePodProbe before the marker goes. */
export const FINALIZER_NODE_POD_PROBE_CLEANUP = 'kruise.io/node-pod-probe-cleanup';
/** NodeImage label that keeps it when its Node is gone. */
export const LABEL_FAKE_NODEIMAGE = 'apps.kruise.io/fake-nodeimage';
/** CRR label: name of the target pod (set by the CRR webhook). */
export const LABEL_CRR_POD_NAME = 'crr.apps.kruise.io/pod-name';
/** CRR annotation: RFC 3339 time at which the pod was made not-ready for this CRR. */
export const ANNOTATION_CRR_UNREADY_ACQUIRED = 'crr.apps.kruise.io/unready-acquired';
/** Namespace label `kubernetes.io/metadata.name`, set by the API server on every namespace. */
export const LABEL_NAMESPACE_NAME = 'kubernetes.io/metadata.name';
/** Pod annotation naming the PodUnavailableBudget that covers the pod (set by the PUB controller; the webhook reads it). */
export const ANNOTATION_RELATED_PUB = 'kruise.io/related-pub';
/** Pod annotation `"true"`: no PodUnavailableBudget holds back the pod's deletion, eviction or update. */
export const ANNOTATION_PUB_NO_PROTECT = 'pub.kruise.io/no-protect';
/** PodUnavailableBudget annotation: the operations it protects, comma-separated (DELETE, UPDATE, EVICT); all when unset. */
export const ANNOTATION_PUB_PROTECT_OPERATIONS = 'kruise.io/pub-protect-operations';
/** PodUnavailableBudget annotation: the replicas it counts, in place of its workloads' spec.replicas. */
export const ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS = 'pub.kruise.io/protect-total-replicas';
/** Pod label prefix: a label with it marks the pod unavailable for PodUnavailableBudgets (upstream `unavailable-pod.kruise.io/`). */
export const UNAVAILABLE_POD_LABEL_PREFIX = 'unavailable-pod.kruise.io/';
/** Label on an object that asks for deletion protection. */
export const LABEL_DELETE_PROTECTION = 'policy.kruise.io/delete-protection';
/** Pod condition (readiness gate) an in-place update sets False while the kubelet restarts containers. */
export const CONDITION_INPLACE_UPDATE_READY = 'InPlaceUpdateReady';
/**
 * Namespace label that keeps the pod webhook out of a namespace (value {@link POD_WEBHOOK_OPT_OUT_VALUE}):
 * no SidecarSet injection, readiness gates or priorities for its pods, and no dependency on the runtime.
 */
export const LABEL_POD_WEBHOOK_OPT_OUT = 'kruise.cdk8s.io/pod-webhook';
/** The value of {@link LABEL_POD_WEBHOOK_OPT_OUT} that opts a namespace out. */
export const POD_WEBHOOK_OPT_OUT_VALUE = 'disabled';
/**
 * Header of the exit-priority preStop hook carrying the container's own preStop handler (JSON), which the
 * daemon runs after the wait. The daemon reads it from the pod's spec (immutable), never from the request.
 */
export const HEADER_EXIT_PRIORITY_PRESTOP = 'X-Kruise-Exit-Priority-Prestop';
/**
 * SidecarSet annotation (value `"true"`) that injects its `containers` as Kubernetes native sidecars:
 * `initContainers` entries with `restartPolicy: Always`, so the kubelet orders their start and stop
 * (Kubernetes >= 1.29). Not an upstream key: upstream OpenKruise ignores it.
 */
export const ANNOTATION_SIDECARSET_NATIVE_SIDECARS = 'kruise.cdk8s.io/native-sidecars';
/**
 * Annotation the KruiseRuntime construct puts on the bundled controller-manager Deployment when the app forces
 * feature gates that runtime does not know (comma-separated `Name=true|false`): the overrides are kept visible in
 * the output, and the policy rule reports them, instead of vanishing from the `--feature-gates` flag.
 */
export const ANNOTATION_IGNORED_FEATURE_GATES = 'kruise.cdk8s.io/ignored-feature-gates';
/**
 * Workload annotation (value `"true"`) that opts it into pre-pull from the diff: when `cdk8s-kruise synth` finds
 * that its container images changed since the previous output, it emits one ImagePullJob per new image, aimed at the
 * nodes running the workload's pods, in a phase applied before the app. Set by `ImagePrePull.enableIn`; read only
 * by the compiler (no runtime reads it).
 */
export const ANNOTATION_PRE_PULL_CHANGED_IMAGES = 'kruise.cdk8s.io/pre-pull-changed-images';
/**
 * ImagePullJob annotation naming the workload a pre-pull job was emitted for (`<Kind>/<name>`, in the job's own
 * namespace): how a later synth recognises its own pre-pull jobs in the previous output and keeps them while that
 * workload's images stay as they are.
 */
export const ANNOTATION_PRE_PULL_FOR = 'kruise.cdk8s.io/pre-pull-for';
/** ControllerRevision label naming the SidecarSet it is a version of. */
export const LABEL_SIDECARSET_NAME = 'kruise.io/sidecarset-name';

// CloneSet (upstream's spelling; read by kubectl, HPA tooling and upstream kruise alike).
/** Pod label: the ControllerRevision name of the template the pod was created from. */
export const LABEL_CONTROLLER_REVISION_HASH = 'controller-revision-hash';
/** Pod label: the short revision hash (the part of the revision name after the last `-`). */
export const LABEL_POD_TEMPLATE_HASH = 'pod-template-hash';
/** ControllerRevision label holding the revision hash. */
export const LABEL_CONTROLLER_REVISION_HASH_KEY = 'controller.kubernetes.io/hash';
/** Pod label (any value): the CloneSet deletes this pod first (also how ReCreate updates ask Scale to recreate). */
export const LABEL_SPECIFIED_DELETE = 'apps.kruise.io/specified-delete';
/** Pod annotation: integer cost; pods with a lower cost are scaled in first. */
export const ANNOTATION_POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';
/** Pod annotation: JSON state of an in-place update (revision, timestamp, pre-update container image IDs). */
export const ANNOTATION_INPLACE_UPDATE_STATE = 'apps.kruise.io/inplace-update-state';
/**
 * Pod annotation written by the node daemon: per running container its ID, restart count and hashes (the kubelet's
 * container hash, and the hash of the env it read from the pod's labels/annotations when it started).
 */
export const ANNOTATION_RUNTIME_CONTAINERS_META = 'apps.kruise.io/runtime-containers-meta';
/** Pod annotation: the in-place patch held back for `inPlaceUpdateStrategy.gracePeriodSeconds`. */
export const ANNOTATION_INPLACE_UPDATE_GRACE = 'apps.kruise.io/inplace-update-grace';
/** ControllerRevision annotation: hash of a CloneSet's volumeClaimTemplates. */
export const ANNOTATION_CLONESET_VCT_HASH = 'kruise.io/cloneset-volumeclaimtemplate-hash';
/** CloneSet label `"true"`: PreparingDelete pods do not count when scaling. */
export const LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE = 'apps.kruise.io/cloneset-scaling-exclude-preparing-delete';
/**
 * Annotation on a `sidecar-termination-<pod uid>` ContainerRecreateRequest that the node daemon created to record a
 * sidecar stop it made itself, before any CRR existed (value: the node's name). Not an upstream key.
 */
export const ANNOTATION_SIDECARS_STOPPED_ON_NODE = 'kruise.cdk8s.io/sidecars-stopped-on-node';
/**
 * Pod annotation (ours): a JSON list of container patterns (by name, name pattern or image pattern) to stop once a Job
 * pod's main containers are done, like containers marked with {@link ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT}: for
 * containers another admission webhook adds (a mesh proxy, a secret agent), which carry no env marker. Each entry may
 * name a clean shutdown (an exec command or an HTTP POST) tried before SIGTERM, and whether its exit code is ignored.
 */
export const ANNOTATION_TERMINATE_SIDECARS = 'kruise.cdk8s.io/terminate-sidecars';
/**
 * Pod annotation (ours): a JSON list of container patterns with an exit priority, for containers not named in
 * {@link ANNOTATION_CONTAINER_EXIT_PRIORITY} (e.g. injected after synth). The bundled pod webhook resolves the
 * patterns against the pod's containers into that annotation.
 */
export const ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS = 'kruise.cdk8s.io/container-exit-priority-patterns';
/**
 * Pod-template annotation (ours) the compiler writes when it lowered the launch priority to native sidecars: a JSON
 * list of the containers it made restartable init containers, in start order. Nothing acts on it; it records in the
 * output which mechanism the pod got (the barrier pods carry upstream's annotation or env instead).
 */
export const ANNOTATION_LAUNCH_PRIORITY_LOWERED = 'kruise.cdk8s.io/launch-priority-lowered';
/**
 * Pod annotation (`"true"`) asking for the enhanced liveness probe (gate EnhancedLivenessProbe): the pod webhook moves
 * the containers' liveness probes into {@link ANNOTATION_CONTAINER_PROBE_CONTEXT}. Upstream OpenKruise stops there
 * (nothing restarts a container whose probe fails); the bundled runtime runs the probes on the node daemon and
 * restarts a failing container only while the pod's disruption budget allows.
 */
export const ANNOTATION_USING_ENHANCED_LIVENESS = 'apps.kruise.io/using-enhanced-liveness';
/**
 * Pod annotation the pod webhook writes for {@link ANNOTATION_USING_ENHANCED_LIVENESS}: a JSON list of
 * `{name, livenessProbe}`, one per container whose liveness probe it moved (upstream's key and format).
 */
export const ANNOTATION_CONTAINER_PROBE_CONTEXT = 'apps.kruise.io/container-probe-context';
/**
 * ContainerRecreateRequest label (ours): the container the enhanced-liveness controller restarts with it, after that
 * container's liveness probe failed. The controller counts the pods with such a request as restarting.
 */
export const LABEL_LIVENESS_RESTART = 'kruise.cdk8s.io/liveness-restart';
/**
 * Pod condition (ours) the enhanced-liveness controller sets True while a container whose liveness probe fails waits
 * for its disruption budget, with the budget and its counts in the message; False once nothing waits.
 */
export const CONDITION_LIVENESS_RESTART_PENDING = 'kruise.cdk8s.io/LivenessRestartPending';
/** CloneSet annotation (v1alpha1): nodes pre-pulling the new image of an in-place update at once (upstream, gate PreDownloadImageForInPlaceUpdate). */
export const ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM = 'apps.kruise.io/image-predownload-parallelism';
/** CloneSet annotation (v1alpha1): timeout of one image pre-download pull, in seconds (upstream). */
export const ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS = 'apps.kruise.io/image-predownload-timeout-seconds';
/** CloneSet annotation (v1alpha1): updated ready pods required before the next batch's images are pre-pulled (upstream). */
export const ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS = 'apps.kruise.io/image-predownload-min-updated-ready-pods';
/**
 * ControllerRevision label (upstream's spelling, "pre-predownload" included): the workload controller created the
 * ImagePullJobs pre-downloading this revision's changed images (value "true"); it never creates them again.
 */
export const LABEL_IMAGE_PREDOWNLOAD_CREATED = 'apps.kruise.io/pre-predownload-created';
/** ControllerRevision label (upstream's): this revision's images are not pre-downloaded (value "true"; see why in docs/runtime.md). */
export const LABEL_IMAGE_PREDOWNLOAD_IGNORED = 'apps.kruise.io/image-predownload-ignored';
/** Pull-secret copy in the daemon-config namespace: `<namespace>/<name>` of the Secret it was copied from (upstream's key). */
export const ANNOTATION_PULL_SECRET_SOURCE = 'imagepulljobs.kruise.io/source-key';
/**
 * Pull-secret copy: the unfinished ImagePullJobs (`<namespace>/<name>`, comma-separated) that use it; the copy is
 * deleted when none is left (upstream's key).
 */
export const ANNOTATION_PULL_SECRET_REFERENCES = 'imagepulljobs.kruise.io/references';

/**
 * Claim annotation (upstream's): the Advanced StatefulSet that resized the claim (OnPodRollingUpdate), so the
 * claim's later changes are traced to it.
 */
export const ANNOTATION_CLAIM_OWNED_BY_STATEFULSET = 'apps.kruise.io/owned-by-asts';

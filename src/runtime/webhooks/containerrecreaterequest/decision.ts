/**
 * ContainerRecreateRequest admission (upstream pkg/webhook/containerrecreaterequest): pure defaulting and
 * validation given the CRR, its pod and whether the pod's node is a virtual-kubelet one.
 */
import {
  CONDITION_SIDECAR_TERMINATED,
  LABEL_CRR_ACTIVE,
  LABEL_CRR_NODE_NAME,
  LABEL_CRR_POD_UID,
  LABEL_NODE_TYPE,
  NODE_TYPE_VIRTUAL_KUBELET,
} from '../../../api/pod-contracts.js';
import type { AdmissionResult, JsonPatchOp } from '../../core/webhook/server.js';
import { escapePointer } from '../../core/webhook/server.js';
import type { KubeObject, Pod } from '../../core/types.js';

interface CrrContainer {
  name?: string;
  statusContext?: { containerID?: string; restartCount?: number };
  [k: string]: unknown;
}

interface Crr extends KubeObject {
  spec?: {
    podName?: string;
    containers?: CrrContainer[];
    strategy?: Record<string, unknown>;
    activeDeadlineSeconds?: number;
    ttlSecondsAfterFinished?: number;
  };
}

function deny(message: string, code = 400): AdmissionResult {
  return { allowed: false, code, message };
}

/** Upstream IsPodActive, with the SidecarTerminated exception for the sidecar terminator's own CRRs. */
function podAcceptsCrr(pod: Pod): string | undefined {
  const terminated = (pod.status?.conditions ?? []).some((c) => c.type === CONDITION_SIDECAR_TERMINATED && c.status === 'True');
  if (terminated) return undefined;
  if (pod.metadata.deletionTimestamp) return 'is being deleted';
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return `is not active (phase ${pod.status.phase})`;
  return undefined;
}

/** Validation shared by CREATE (after defaulting) and UPDATE. */
export function validateCrrSpec(crr: Crr): string | undefined {
  const spec = crr.spec ?? {};
  if (!spec.podName) return 'spec.podName: Required value: name of the pod whose containers to recreate';
  const cs = spec.containers ?? [];
  if (cs.length === 0) return 'spec.containers: Required value: list at least one container, e.g. [{name: app}]';
  const seen = new Set<string>();
  for (const [i, c] of cs.entries()) {
    if (!c.name) return `spec.containers[${i}].name: Required value`;
    if (seen.has(c.name)) return `spec.containers[${i}].name: Duplicate value: "${c.name}"`;
    seen.add(c.name);
  }
  const deadline = spec.activeDeadlineSeconds;
  if (deadline !== undefined && deadline < 3) return `spec.activeDeadlineSeconds: Invalid value: ${deadline}: must be at least 3`;
  const fp = spec.strategy?.failurePolicy;
  if (fp !== undefined && fp !== 'Fail' && fp !== 'Ignore')
    return `spec.strategy.failurePolicy: Unsupported value: "${typeof fp === 'string' ? fp : JSON.stringify(fp)}": supported values: "Fail", "Ignore"`;
  return undefined;
}

/**
 * Fields of a CRR container that only the webhook writes, from the pod. A user-supplied preStop would be
 * run by the daemon inside the container (or sent as an HTTP request from the node): creating a CRR must
 * not be a way to exec into a pod.
 */
export const READ_ONLY_CONTAINER_FIELDS = ['preStop', 'ports', 'statusContext'] as const;

/** The first read-only field the user set, as a message naming it; undefined when there is none. */
export function userSetReadOnlyField(crr: Crr): string | undefined {
  for (const [i, c] of (crr.spec?.containers ?? []).entries()) {
    for (const f of READ_ONLY_CONTAINER_FIELDS) {
      if (c[f] !== undefined && c[f] !== null) {
        return `spec.containers[${i}].${f}: Forbidden: filled from the pod by the webhook; remove it (the pod's own ${f === 'preStop' ? 'lifecycle.preStop' : f === 'ports' ? 'ports' : 'container status'} is used)`;
      }
    }
  }
  return undefined;
}

/**
 * CREATE: refuses user-set preStop/ports/statusContext, checks the pod, fills labels (pod-uid, node-name, active, type=virtual-kubelet) and each
 * container's statusContext {containerID, restartCount}, preStop and ports from the pod, defaults
 * failurePolicy to Fail and terminationGracePeriodSeconds to the pod's.
 */
export function defaultCrr(crr: Crr, pod: Pod | undefined, nodeIsVirtual: boolean): AdmissionResult {
  const invalid = validateCrrSpec(crr);
  if (invalid) return deny(invalid);
  const podName = crr.spec!.podName!;
  if (!pod) return deny(`spec.podName: Not found: pod "${podName}" does not exist in namespace ${crr.metadata.namespace}`, 404);
  const inactive = podAcceptsCrr(pod);
  if (inactive) return deny(`pod ${podName} ${inactive}: a ContainerRecreateRequest needs an active pod`);
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) return deny(`pod ${podName} is not scheduled to a node yet`);
  const patch: JsonPatchOp[] = [];
  const labels: Record<string, string> = {
    [LABEL_CRR_POD_UID]: pod.metadata.uid ?? '',
    [LABEL_CRR_NODE_NAME]: nodeName,
    [LABEL_CRR_ACTIVE]: 'true',
    ...(nodeIsVirtual ? { [LABEL_NODE_TYPE]: NODE_TYPE_VIRTUAL_KUBELET } : {}),
  };
  if (!crr.metadata.labels) patch.push({ op: 'add', path: '/metadata/labels', value: labels });
  else for (const [k, v] of Object.entries(labels)) patch.push({ op: 'add', path: `/metadata/labels/${escapePointer(k)}`, value: v });

  const readOnly = userSetReadOnlyField(crr);
  if (readOnly) return deny(readOnly);
  const podContainers = pod.spec?.containers ?? [];
  const statuses = pod.status?.containerStatuses ?? [];
  for (const [i, c] of (crr.spec!.containers ?? []).entries()) {
    const pc = podContainers.find((x) => x.name === c.name);
    if (!pc) return deny(`spec.containers[${i}].name: Not found: pod ${podName} has no container "${c.name}"`);
    const st = statuses.find((s) => s.name === c.name);
    if (!st?.containerID)
      return deny(`spec.containers[${i}]: container "${c.name}" of pod ${podName} has no containerID yet (not started)`);
    patch.push({
      op: 'add',
      path: `/spec/containers/${i}/statusContext`,
      value: { containerID: st.containerID, restartCount: st.restartCount ?? 0 },
    });
    const preStop = (pc.lifecycle as { preStop?: unknown } | undefined)?.preStop;
    if (preStop) patch.push({ op: 'add', path: `/spec/containers/${i}/preStop`, value: preStop });
    if (pc.ports) patch.push({ op: 'add', path: `/spec/containers/${i}/ports`, value: pc.ports });
  }
  // The stop gets the pod's own grace period unless the CRR names one, as the kubelet would give it.
  const podGrace = pod.spec?.terminationGracePeriodSeconds as number | undefined;
  const strategy = crr.spec!.strategy;
  if (!strategy)
    patch.push({
      op: 'add',
      path: '/spec/strategy',
      value: { failurePolicy: 'Fail', ...(podGrace !== undefined ? { terminationGracePeriodSeconds: podGrace } : {}) },
    });
  else {
    if (strategy.failurePolicy === undefined) patch.push({ op: 'add', path: '/spec/strategy/failurePolicy', value: 'Fail' });
    if (strategy.terminationGracePeriodSeconds === undefined && podGrace !== undefined)
      patch.push({ op: 'add', path: '/spec/strategy/terminationGracePeriodSeconds', value: podGrace });
  }
  return { allowed: true, patch };
}

/** UPDATE: spec and the node-name/pod-uid labels are immutable. */
export function validateCrrUpdate(crr: Crr, old: Crr): AdmissionResult {
  if (JSON.stringify(crr.spec) !== JSON.stringify(old.spec))
    return deny('spec: Forbidden: the spec of a ContainerRecreateRequest is immutable');
  for (const k of [LABEL_CRR_NODE_NAME, LABEL_CRR_POD_UID]) {
    const was = old.metadata.labels?.[k];
    if (was !== undefined && crr.metadata.labels?.[k] !== was) return deny(`metadata.labels[${k}]: Forbidden: immutable`);
  }
  return { allowed: true };
}

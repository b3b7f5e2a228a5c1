// Argo CD health checks for the Kruise kinds, as `resource.customizations.health.<group>_<kind>` entries of the
// argocd-cm ConfigMap. Argo CD runs each script with the live object as `obj` and reads back a table with `status`
// (Healthy, Progressing, Degraded, Suspended) and `message`. Without them Argo CD marks a custom resource Healthy as
// soon as it exists, long before the runtime has rolled anything out. Each script reads exactly the status fields the
// bundled runtime writes (and upstream's controllers write the same ones).
import { KRUISE_KINDS } from '../contracts/resources.js';
import { ANNOTATION_PRE_PULL_FOR } from '../contracts/keys.js';
import { groupOf } from '../contracts/groups.js';

/** CloneSet: spec observed, the expected pods updated and ready, no extra pods; a passed progress deadline is Degraded. */
const CLONESET = `
local hs = { status = "Progressing", message = "Waiting for the CloneSet to be observed" }
local st = obj.status
if st == nil or st.observedGeneration == nil or obj.metadata.generation == nil or st.observedGeneration < obj.metadata.generation then
  return hs
end
if st.conditions ~= nil then
  for _, c in ipairs(st.conditions) do
    if c.type == "Progressing" and c.status == "False" and c.reason == "ProgressDeadlineExceeded" then
      hs.status = "Degraded"
      hs.message = c.message or "CloneSet has exceeded its progress deadline"
      return hs
    end
  end
end
local spec = obj.spec or {}
local want = spec.replicas or 1
if spec.updateStrategy ~= nil and spec.updateStrategy.paused == true then
  hs.status = "Suspended"
  hs.message = "CloneSet update is paused"
  return hs
end
local expected = st.expectedUpdatedReplicas or want
local updatedReady = st.updatedReadyReplicas or 0
local ready = st.readyReplicas or 0
local replicas = st.replicas or 0
if updatedReady < expected then
  hs.message = string.format("%d of %d updated pod(s) ready", updatedReady, expected)
  return hs
end
if replicas > want then
  hs.message = string.format("%d old pod(s) pending termination", replicas - want)
  return hs
end
if ready < want then
  hs.message = string.format("%d of %d pod(s) ready", ready, want)
  return hs
end
hs.status = "Healthy"
hs.message = string.format("%d of %d pod(s) updated and ready", updatedReady, want)
return hs
`;

/** SidecarSet: spec observed and every matched pod updated and ready; a stuck rollout is Degraded. */
const SIDECARSET = `
local hs = { status = "Progressing", message = "Waiting for the SidecarSet to be observed" }
local st = obj.status
if st == nil or st.observedGeneration == nil or obj.metadata.generation == nil or st.observedGeneration < obj.metadata.generation then
  return hs
end
if st.conditions ~= nil then
  for _, c in ipairs(st.conditions) do
    if c.type == "RolloutStuck" and c.status == "True" then
      hs.status = "Degraded"
      hs.message = c.message or "SidecarSet rollout is stuck"
      return hs
    end
  end
end
local spec = obj.spec or {}
if spec.updateStrategy ~= nil and spec.updateStrategy.paused == true then
  hs.status = "Suspended"
  hs.message = "SidecarSet update is paused"
  return hs
end
local matched = st.matchedPods or 0
local updatedReady = st.updatedReadyPods or 0
if updatedReady < matched then
  hs.message = string.format("%d of %d matched pod(s) updated and ready", updatedReady, matched)
  return hs
end
hs.status = "Healthy"
hs.message = string.format("%d matched pod(s) updated and ready", matched)
return hs
`;

/**
 * ImagePullJob: Healthy once completed with no failed node, Degraded once completed with one; else pulling. A
 * pre-pull job (synth --pre-pull) is Healthy once completed either way: it only saves the rollout time, and as an
 * Argo CD hook a Degraded one would fail the sync before the app, whose rollout reports a bad image itself.
 */
const IMAGEPULLJOB = `
local hs = { status = "Progressing", message = "Waiting for the pull to start" }
local st = obj.status
if st == nil then
  return hs
end
local failed = st.failed or 0
local prePull = obj.metadata ~= nil and obj.metadata.annotations ~= nil and obj.metadata.annotations["${ANNOTATION_PRE_PULL_FOR}"] ~= nil
if st.completionTime ~= nil then
  if failed > 0 and prePull then
    hs.status = "Healthy"
    hs.message = string.format("pre-pull finished; failed on %d node(s), where the rollout pulls itself", failed)
  elseif failed > 0 then
    hs.status = "Degraded"
    hs.message = st.message or string.format("image pull failed on %d node(s)", failed)
  else
    hs.status = "Healthy"
    hs.message = st.message or "job has completed"
  end
  return hs
end
hs.message = string.format("%d of %d node(s) pulled, %d active, %d failed", st.succeeded or 0, st.desired or 0, st.active or 0, failed)
return hs
`;

/** ContainerRecreateRequest: Completed with every container Succeeded is Healthy, with a Failed one Degraded. */
const CRR = `
local hs = { status = "Progressing", message = "Waiting for the daemon to pick the request up" }
local st = obj.status
if st == nil or st.phase == nil then
  return hs
end
if st.phase == "Completed" or st.phase == "Failed" then
  if st.containerRecreateStates ~= nil then
    for _, c in ipairs(st.containerRecreateStates) do
      if c.phase == "Failed" then
        hs.status = "Degraded"
        hs.message = "container " .. tostring(c.name) .. " failed: " .. (c.message or st.message or "recreate failed")
        return hs
      end
    end
  end
  if st.phase == "Failed" then
    hs.status = "Degraded"
    hs.message = st.message or "recreate failed"
    return hs
  end
  hs.status = "Healthy"
  hs.message = st.message or "containers recreated"
  return hs
end
hs.message = "phase " .. st.phase
return hs
`;

/** The health scripts, by Kruise kind. Later kinds add an entry here. */
export const ARGOCD_HEALTH_LUA: Readonly<Record<string, string>> = {
  [KRUISE_KINDS.CloneSet.kind]: CLONESET.trimStart(),
  [KRUISE_KINDS.SidecarSet.kind]: SIDECARSET.trimStart(),
  [KRUISE_KINDS.ImagePullJob.kind]: IMAGEPULLJOB.trimStart(),
  [KRUISE_KINDS.ContainerRecreateRequest.kind]: CRR.trimStart(),
};

/** The argocd-cm data key Argo CD reads a kind's health script from: `resource.customizations.health.<group>_<kind>`. */
export function healthKey(apiVersion: string, kind: string): string {
  return `resource.customizations.health.${groupOf(apiVersion)}_${kind}`;
}

// What the node daemon runs, by registered name and in registry order, for `cdk8s-kruise daemon`'s description
// and help (src/runtime/daemon/registry.ts is the registry; a unit test holds these to it).
import type { RuntimeControllerPart } from '../core/parts.js';

export const DAEMON_CONTROLLER_PARTS: readonly RuntimeControllerPart[] = [
  {
    name: 'daemon-containerrecreaterequest',
    topic: 'ContainerRecreateRequests and node-local sidecar stops',
    does:
      "executes this node's ContainerRecreateRequests (the container's preStop, then StopContainer); with " +
      "--node-local-sidecar-terminator and gate SidecarTerminator, also stops a finished Job pod's marked sidecars itself",
  },
  {
    name: 'daemon-imagepuller',
    gate: 'ImagePullJobGate',
    topic: 'ImagePullJob image pulls',
    does: "pulls the images on this node's NodeImage and reports each pull in its status",
  },
  {
    name: 'daemon-exitpriority',
    gate: 'ContainerExitPriority',
    topic: 'exit-priority preStop hooks',
    does: "answers the exit-priority preStop hooks on --exit-priority-addr once the pod's lower levels have exited",
  },
];

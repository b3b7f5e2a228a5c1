// What the node daemon runs, by registered name and in registry order, for `cdk8s-kruise daemon`'s description
// and help, and the options each controller reads, declared once here: the command's flags and the daemon's
// parsed values come from these (src/runtime/daemon/registry.ts is the registry; a unit test holds these to it).
import { SHARED_OPTIONS } from '../core/options.js';
import type { RuntimeControllerPart } from '../core/parts.js';
import { NODE_LOCAL_SIDECAR_TERMINATOR } from './crr/options.js';
import { EXIT_PRIORITY_ADDR, MAX_EXIT_PRIORITY_WAITS } from './exitpriority/options.js';
import { MAX_PULL_WORKERS } from './imagepull/options.js';
import { MAX_CONCURRENT_PROBES } from './podprobe/options.js';

export const DAEMON_CONTROLLER_PARTS: readonly RuntimeControllerPart[] = [
  {
    name: 'daemon-containerrecreaterequest',
    topic: 'ContainerRecreateRequests and node-local sidecar stops',
    does:
      "executes this node's ContainerRecreateRequests (the container's preStop, then StopContainer); with " +
      "--node-local-sidecar-terminator and gate SidecarTerminator, also stops a finished Job pod's marked sidecars itself",
    options: [NODE_LOCAL_SIDECAR_TERMINATOR],
  },
  {
    name: 'daemon-imagepuller',
    gate: 'ImagePullJobGate',
    topic: 'ImagePullJob image pulls',
    does: "pulls the images on this node's NodeImage and reports each pull in its status",
    options: [SHARED_OPTIONS.daemonConfigNamespace, MAX_PULL_WORKERS],
  },
  {
    name: 'daemon-exitpriority',
    gate: 'ContainerExitPriority',
    topic: 'exit-priority preStop hooks',
    does: "answers the exit-priority preStop hooks on --exit-priority-addr once the pod's lower levels have exited",
    options: [EXIT_PRIORITY_ADDR, MAX_EXIT_PRIORITY_WAITS],
  },
  {
    name: 'daemon-containermeta',
    gate: 'InPlaceUpdateEnvFromMetadata',
    topic: 'env from metadata',
    does:
      "records the env each container started with from its pod's labels/annotations (annotation " +
      'apps.kruise.io/runtime-containers-meta) and, during an in-place update, stops the containers whose env changed',
    options: [],
  },
  {
    name: 'daemon-podprobe',
    gate: 'PodProbeMarkerGate',
    topic: 'PodProbeMarker probes',
    does: "runs the probes of this node's NodePodProbe (exec through CRI, http and tcp to the pod IP) and writes their results to its status",
    options: [MAX_CONCURRENT_PROBES],
  },
];

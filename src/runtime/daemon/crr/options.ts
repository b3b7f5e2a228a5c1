import type { ControllerOption } from '../../core/options.js';

/**
 * Whether the daemon stops a finished Job pod's marked sidecars itself, at once (gate SidecarTerminator too). Off,
 * only the manager's ContainerRecreateRequest path stops them (as upstream does).
 */
export const NODE_LOCAL_SIDECAR_TERMINATOR: ControllerOption<boolean> = {
  key: 'nodeLocalSidecarTerminator',
  flag: '--node-local-sidecar-terminator <true|false>',
  help: "stop a finished Job pod's marked sidecars on the node as soon as its main containers exit (the manager's CRR stays the fallback)",
  defaultValue: () => true,
  parse: (raw) => {
    if (raw !== 'true' && raw !== 'false') throw new Error(`--node-local-sidecar-terminator: "${raw}" is not true or false`);
    return raw === 'true';
  },
};

/**
 * How often running containers are listed over CRI when the runtime has no container-event stream, and only while a
 * Job pod on this node waits for its main containers: half the interval is the mean delay it adds to a sidecar stop.
 */
export const CONTAINER_EXIT_POLL_MS: ControllerOption<number> = {
  key: 'containerExitPollMs',
  flag: '--container-exit-poll-ms <ms>',
  help: 'CRI poll interval for container exits when the runtime offers no event stream (only while a Job pod with marked sidecars runs here)',
  defaultValue: () => 20,
  parse: (raw) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 5 || n > 10_000)
      throw new Error(`--container-exit-poll-ms: "${raw}" is not an integer from 5 to 10000`);
    return n;
  },
};

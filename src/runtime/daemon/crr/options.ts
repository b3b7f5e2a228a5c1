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

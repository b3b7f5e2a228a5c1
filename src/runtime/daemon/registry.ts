/**
 * The one place the node daemon's controllers are registered (the manager's are in
 * src/runtime/manager/registry.ts). Each lives in its own folder under src/runtime/daemon/.
 */
import type { ControllerDefinition } from '../core/controller.js';
import type { DaemonContext } from './context.js';
import { containerRecreateController } from './crr/index.js';
import { imagePullController } from './imagepull/index.js';
import { exitPriorityController } from './exitpriority/index.js';
import { containerMetaController } from './containermeta/index.js';
import { podProbeController } from './podprobe/index.js';

export const DAEMON_CONTROLLERS: readonly ControllerDefinition<DaemonContext>[] = [
  containerRecreateController,
  imagePullController,
  exitPriorityController,
  containerMetaController,
  podProbeController,
];

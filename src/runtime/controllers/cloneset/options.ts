// The CloneSet controller's options, apart from the controller so the CLI declares the flags without loading it.
import type { ControllerOption } from '../../core/options.js';

/** Upstream's `--cloneset-scaling-exclude-preparing-delete`. */
export const EXCLUDE_PREPARING_DELETE_OPTION: ControllerOption<boolean> = {
  key: 'clonesetScalingExcludePreparingDelete',
  flag: '--cloneset-scaling-exclude-preparing-delete <bool>',
  help: 'CloneSet: pods in PreparingDelete do not count toward replicas when scaling (as the per-CloneSet label does)',
  defaultValue: () => false,
  parse: (raw) => {
    if (raw !== 'true' && raw !== 'false') throw new Error(`--cloneset-scaling-exclude-preparing-delete: "${raw}" is not true or false`);
    return raw === 'true';
  },
};

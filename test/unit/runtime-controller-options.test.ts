import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addControllerOptions, givenControllerOptions } from '../../src/cli/commands/controller-options.js';
import { ControllerOptionValues, positiveIntOption, SHARED_OPTIONS, stringOption, uniqueOptions } from '../../src/runtime/core/options.js';
import { daemonControllerOptions } from '../../src/runtime/daemon/registry.js';
import { MAX_PULL_WORKERS } from '../../src/runtime/daemon/imagepull/index.js';
import { managerControllerOptions } from '../../src/runtime/manager/registry.js';

describe('typed controller options', () => {
  it('manager and daemon share one declaration of the daemon-config namespace', () => {
    expect(managerControllerOptions()).toContain(SHARED_OPTIONS.daemonConfigNamespace);
    expect(daemonControllerOptions()).toContain(SHARED_OPTIONS.daemonConfigNamespace);
    expect(daemonControllerOptions()).toContain(MAX_PULL_WORKERS);
  });

  it('the light lists the CLI builds flags from equal what the registered controllers declare', async () => {
    const { MANAGER_CONTROLLER_OPTIONS } = await import('../../src/runtime/manager/options.js');
    const { DAEMON_CONTROLLER_OPTIONS } = await import('../../src/runtime/daemon/options.js');
    expect(new Set(MANAGER_CONTROLLER_OPTIONS)).toEqual(new Set(managerControllerOptions()));
    expect(new Set(DAEMON_CONTROLLER_OPTIONS)).toEqual(new Set(daemonControllerOptions()));
  });

  it('values: given, else the default (which may read the environment); typed by the declaring option', () => {
    const declared = [SHARED_OPTIONS.daemonConfigNamespace, MAX_PULL_WORKERS];
    const defaults = new ControllerOptionValues(declared, {}, {});
    expect(defaults.get(SHARED_OPTIONS.daemonConfigNamespace)).toBe('kruise-daemon-config');
    expect(defaults.get(MAX_PULL_WORKERS)).toBe(2);
    const fromEnv = new ControllerOptionValues(declared, {}, { KRUISE_DAEMON_CONFIG_NS: 'from-env' });
    expect(fromEnv.get(SHARED_OPTIONS.daemonConfigNamespace)).toBe('from-env');
    const given = new ControllerOptionValues(declared, { maxPullWorkers: 5 }, {});
    expect(given.get(MAX_PULL_WORKERS)).toBe(5);
  });

  it('reading an undeclared option, or declaring one key twice differently, fails loudly', () => {
    const values = new ControllerOptionValues([MAX_PULL_WORKERS], {}, {});
    expect(() => values.get(SHARED_OPTIONS.daemonConfigNamespace)).toThrow(/was not declared by any registered controller/);
    const clash = positiveIntOption('maxPullWorkers', '--other <n>', 'x', 1);
    expect(() => uniqueOptions([MAX_PULL_WORKERS, clash])).toThrow(/declared twice/);
    const flagClash = stringOption('other', '--max-workers-for-pull-image <n>', 'x', () => 'a');
    expect(() => uniqueOptions([MAX_PULL_WORKERS, flagClash])).toThrow(/declared twice/);
  });

  it('the CLI builds flags from the declarations, parses with them and refuses bad values', () => {
    const declared = [SHARED_OPTIONS.daemonConfigNamespace, MAX_PULL_WORKERS];
    const run = (args: string[]) => {
      const cmd = addControllerOptions(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined }), declared);
      cmd.parse(args, { from: 'user' });
      return givenControllerOptions(cmd.opts(), declared);
    };
    expect(run(['--daemon-config-namespace', 'secrets', '--max-workers-for-pull-image', '4'])).toEqual({
      daemonConfigNamespace: 'secrets',
      maxPullWorkers: 4,
    });
    expect(run([])).toEqual({});
    expect(() => run(['--max-workers-for-pull-image', '0'])).toThrow(/not a positive integer/);
  });
});

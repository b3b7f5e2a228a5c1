import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addControllerOptions, givenControllerOptions } from '../../../src/cli/commands/controller-options.js';
import type { ControllerDefinition } from '../../../src/runtime/core/controller.js';
import {
  ControllerOptionValues,
  positiveIntOption,
  SHARED_OPTIONS,
  stringOption,
  uniqueOptions,
} from '../../../src/runtime/core/options.js';
import { MAX_PULL_WORKERS } from '../../../src/runtime/daemon/imagepull/options.js';
import { DAEMON_CONTROLLER_OPTIONS } from '../../../src/runtime/daemon/options.js';
import { DAEMON_CONTROLLER_PARTS } from '../../../src/runtime/daemon/parts.js';
import { MANAGER_CONTROLLER_OPTIONS } from '../../../src/runtime/manager/options.js';
import { MANAGER_CONTROLLER_PARTS } from '../../../src/runtime/manager/parts.js';

describe('typed controller options', () => {
  it('manager and daemon share one declaration of the daemon-config namespace', () => {
    expect(MANAGER_CONTROLLER_OPTIONS).toContain(SHARED_OPTIONS.daemonConfigNamespace);
    expect(DAEMON_CONTROLLER_OPTIONS).toContain(SHARED_OPTIONS.daemonConfigNamespace);
    expect(DAEMON_CONTROLLER_OPTIONS).toContain(MAX_PULL_WORKERS);
  });

  it("options are declared once, on the controllers' parts: a process's options are its parts' options, each once", () => {
    expect(MANAGER_CONTROLLER_OPTIONS).toEqual(uniqueOptions(MANAGER_CONTROLLER_PARTS.flatMap((p) => p.options ?? [])));
    expect(DAEMON_CONTROLLER_OPTIONS).toEqual(uniqueOptions(DAEMON_CONTROLLER_PARTS.flatMap((p) => p.options ?? [])));
    expect(new Set(MANAGER_CONTROLLER_OPTIONS.map((o) => o.key)).size).toBe(MANAGER_CONTROLLER_OPTIONS.length);
    // A definition has no list of its own to drift from the part's.
    const definition: ControllerDefinition = {
      name: 'x',
      defaultWorkers: 1,
      reads: [],
      // @ts-expect-error options are declared on the controller's part (manager/parts.ts, daemon/parts.ts)
      options: [MAX_PULL_WORKERS],
      setup: () => ({ reconcile: () => Promise.resolve(undefined) }),
    };
    expect(definition.name).toBe('x');
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

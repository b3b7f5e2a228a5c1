// `cdk8s-kruise controller` and `daemon` say what they run: their help lists every registered controller and
// webhook with its gate, and their one-line descriptions (top-level help, README's CLI block) name every
// controller's subject. The CLI takes the text from lists beside the registries (so it need not load the
// controllers); these tests hold those lists to the registries.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerCommands } from '../../../../src/cli/commands/index.js';
import { CONTROLLER_DESCRIPTION, DAEMON_DESCRIPTION } from '../../../../src/cli/commands/runtime-help.js';
import { CONTROLLERS, WEBHOOKS } from '../../../../src/runtime/manager/registry.js';
import { DAEMON_CONTROLLERS } from '../../../../src/runtime/daemon/registry.js';
import { MANAGER_CONTROLLER_PARTS, MANAGER_WEBHOOK_PARTS } from '../../../../src/runtime/manager/parts.js';
import { DAEMON_CONTROLLER_PARTS } from '../../../../src/runtime/daemon/parts.js';
import type { RuntimeControllerPart } from '../../../../src/runtime/core/parts.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

const registered = (defs: readonly { name: string; featureGate?: string }[]) => defs.map((d) => ({ name: d.name, gate: d.featureGate }));
const described = (parts: readonly { name: string; gate?: string }[]) => parts.map((p) => ({ name: p.name, gate: p.gate }));

/** The help the CLI prints for `<command> --help` (or the top level's, without a command). */
function help(command?: string): string {
  let out = '';
  const program = new Command().name('cdk8s-kruise').configureOutput({ writeOut: (s) => (out += s) });
  registerCommands(program);
  const target = command ? program.commands.find((c) => c.name() === command)! : program;
  target.outputHelp();
  return out;
}

/** The comment of README's CLI block line for `cdk8s-kruise <command>`, continuation lines joined. */
function readmeCliComment(command: string): string {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const block = readme.slice(readme.indexOf('## The CLI'));
  const lines = block.slice(block.indexOf('```\n') + 4, block.indexOf('\n```', block.indexOf('```\n') + 4)).split('\n');
  const at = lines.findIndex((l) => l.startsWith(`cdk8s-kruise ${command} `));
  expect(at, `README's CLI block has a line for ${command}`).toBeGreaterThanOrEqual(0);
  const comment = [lines[at]!.slice(lines[at]!.indexOf('#') + 1)];
  for (const l of lines.slice(at + 1)) {
    if (!/^\s+#/.test(l)) break;
    comment.push(l.slice(l.indexOf('#') + 1));
  }
  return comment.join(' ').replace(/\s+/g, ' ');
}

describe('the runtime commands say what they run', () => {
  it('the lists the CLI describes are the registries: every controller and webhook, in order, with its gate', () => {
    expect(described(MANAGER_CONTROLLER_PARTS)).toEqual(registered(CONTROLLERS));
    expect(described(MANAGER_WEBHOOK_PARTS)).toEqual(registered(WEBHOOKS));
    expect(described(DAEMON_CONTROLLER_PARTS)).toEqual(registered(DAEMON_CONTROLLERS));
  });

  const commands: {
    command: string;
    parts: readonly { name: string; gate?: string; does: string }[];
    controllers: readonly RuntimeControllerPart[];
    description: string;
  }[] = [
    {
      command: 'controller',
      parts: [...MANAGER_CONTROLLER_PARTS, ...MANAGER_WEBHOOK_PARTS],
      controllers: MANAGER_CONTROLLER_PARTS,
      description: CONTROLLER_DESCRIPTION,
    },
    { command: 'daemon', parts: DAEMON_CONTROLLER_PARTS, controllers: DAEMON_CONTROLLER_PARTS, description: DAEMON_DESCRIPTION },
  ];

  for (const { command, parts, controllers, description } of commands) {
    it(`${command} --help lists every registered part with what it does and its gate`, () => {
      const text = help(command);
      for (const p of parts) {
        // A controller and a webhook may share a name (cloneset): the line is the one with this part's text.
        const line = text.split('\n').find((l) => l.trim().startsWith(`${p.name} `) && l.includes(p.does));
        expect(line, `${command} --help lists ${p.name}: ${p.does}`).toBeDefined();
        if (p.gate) expect(line).toMatch(new RegExp(`\\[gate ${p.gate}, (on|off) by default\\]$`));
        else expect(line).not.toContain('[gate');
      }
    });

    it(`${command}'s one-line description (top-level help, README's CLI block) names every controller's subject`, () => {
      for (const c of controllers) expect(description).toContain(c.topic);
      expect(help(command)).toContain(description.slice(0, 40));
      const topLevel = help().replace(/\s+/g, ' ');
      expect(topLevel).toContain(description);
      const readme = readmeCliComment(command);
      for (const c of controllers) expect(readme, `README's ${command} line names "${c.topic}"`).toContain(c.topic);
    });
  }

  it('the daemon shows its CRI check interval as a duration, as it takes it', () => {
    expect(help('daemon')).toMatch(/--cri-check-interval <dur>\s+how often the CRI connection is checked \(default: 5s\)/);
  });
});
